#pragma once
// Routing on the backends' rate-limit reports, simulated against the limiters real services
// use (smartlb-sim's own models: a fixed window, a sliding window, a token bucket), none of which
// smartlb is told about. Five backends (TPM 300k:240k:150k:100k:50k, priorities 1,1,1,2,2,
// weights = TPM), 200-token requests at a share of the aggregate capacity, every answer carrying
// x-ratelimit-remaining-* (or -1, at the cell's rate), every 429 a Retry-After: the goodput
// benchmark (bench/goodput.sh) without its sockets. The routing core runs as the daemon runs it
// (choose_target, charge_reported, observe_report, record_failure, failover to the next target
// at once), on a manual clock, with answers arriving after a latency.
//
// Several replicas (bench/scale_out.sh without its sockets): each has its own BackendStates, the
// arrivals are spread over them by their shares, and what one tells its listeners (a short
// report, a probe taken, a 429's moment, a cooldown) reaches the others `share_delay` later, as
// redis::SharedReports and redis::SharedCooldowns carry it. Deterministic: seeded generators, simulated time.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "smartlb/base/random.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/routing/selectors/priority_selector.hpp"
#include "smartlb/routing/target_choice.hpp"
#include "smartlb/sim/deployment_quota.hpp"

namespace smartlb::report_simulation {

using namespace std::chrono_literals;

constexpr base::MonoNanos kSec = 1'000'000'000;

using sim::LimiterKind;
inline sim::SteadyTime sim_time(base::MonoNanos t) { return sim::SteadyTime(base::Nanos(t)); }

struct Cell {
  LimiterKind model;
  base::Nanos window;
  int load_pct;
  bool route_on_remaining = true;
  base::Nanos latency = 20ms;
  bool poisson = true;  // else evenly spaced arrivals, as bench/tools/openloop.js sends them
  double unknown = 0;   // the share of answers that report -1 (Azure has sent them): 1 = 429s only
  std::vector<int> replicas = {1};  // each replica's share of the arrivals
  base::Nanos share_delay = 1ms;    // a message between replicas (through Redis) takes this long
  // Priority classes (bench/priority_classes.sh without its sockets): this share of the
  // requests is `batch` (evenly spread, or by a coin's toss with Poisson arrivals), the rest
  // interactive; routed as the daemon routes them (choose_and_reserve with the batch class's
  // default reserve, a refusal before any attempt counted as demand).
  double batch_share = 0;
  // The backends' TPM and priorities (default: the goodput benchmark's five).
  std::vector<std::int64_t> tpm = {300'000, 240'000, 150'000, 100'000, 50'000};
  std::vector<int> priority = {1, 1, 1, 2, 2};
  // Real sockets (bench/priority_classes.sh on one machine): each attempt's latency is
  // `latency` plus up to this much more, split unevenly between the request's way there and the
  // answer's way back, and the first request to each backend waits `connect` more on its way
  // there (the TCP connect). 0: every attempt takes exactly `latency`, half each way.
  base::Nanos jitter{0};
  base::Nanos connect{0};
};

struct Outcome {
  double served_pct = 0;  // of capacity
  std::int64_t ok = 0, client_429 = 0, upstream_429 = 0, offered = 0;
  std::int64_t interactive_sent = 0, interactive_ok = 0, batch_sent = 0, batch_ok = 0;
  std::vector<base::MonoNanos>
      interactive_refused_at;  // when each interactive request smartlb refused arrived
  double interactive_pct() const {
    return interactive_sent
               ? 100.0 * static_cast<double>(interactive_ok) / static_cast<double>(interactive_sent)
               : 100;
  }
  double upstream_429_per_ok() const {
    return ok ? static_cast<double>(upstream_429) / static_cast<double>(ok) : 0;
  }
};

class Simulation {
 public:
  explicit Simulation(const Cell& c) : cell_(c) {
    const std::vector<std::int64_t>& tpm = c.tpm;
    const std::vector<int>& priority = c.priority;
    std::vector<routing::PoolMember> members;
    sim::LimiterSettings settings;
    settings.kind = c.model;
    settings.window = std::chrono::duration_cast<std::chrono::milliseconds>(c.window);
    for (std::size_t i = 0; i < tpm.size(); ++i) {
      // Azure's ratio: 6 RPM per 1,000 TPM.
      limiters_.push_back(std::make_unique<sim::DeploymentQuota>(sim::QuotaLimits{tpm[i], tpm[i] * 6 / 1000},
                                                                 settings, sim_time(clock_.now())));
      capacity_per_ns_ += limiters_.back()->tokens().per_second() / 1e9;
      routing::PoolMember m;
      m.name = "b" + std::to_string(i);
      m.priority = priority[i];
      m.weight = static_cast<std::uint32_t>(tpm[i] / 1000);
      members.push_back(m);
    }
    table_ = routing::RoutingTable(std::move(members));
    for (std::size_t n = 0; n < c.replicas.size(); ++n) {
      replicas_.push_back(std::make_unique<Replica>(*this, n));
      share_total_ += c.replicas[n];
    }
  }

  Outcome run(base::Nanos duration) {
    std::mt19937_64 gen(7);
    const double rate_per_ns = capacity_per_ns_ * cell_.load_pct / 100.0 / kCost;
    std::exponential_distribution<double> gap(rate_per_ns);
    base::MonoNanos t = clock_.now();
    const base::MonoNanos start = t, end = t + duration.count();
    while ((t += static_cast<base::MonoNanos>(cell_.poisson ? gap(gen) : 1 / rate_per_ns)) < end)
      events_.push({t, next_id_++, -1});
    Outcome o;
    std::int64_t served_tokens = 0;
    while (!events_.empty() || !messages_.empty()) {
      if (!messages_.empty() && (events_.empty() || messages_.top().at <= events_.top().at)) {
        const Message msg = messages_.top();
        messages_.pop();
        clock_.advance(base::Nanos(msg.at - clock_.now()));
        msg.deliver();
        continue;
      }
      const Event e = events_.top();
      events_.pop();
      clock_.advance(base::Nanos(e.at - clock_.now()));
      if (e.attempt < 0) {
        ++o.offered;
        requests_.push_back(Request{e.at, next_replica()});
        requests_.back().batch = next_is_batch(gen);
        (requests_.back().batch ? o.batch_sent : o.interactive_sent)++;
      }
      Request& r = e.attempt < 0 ? requests_.back() : requests_[static_cast<std::size_t>(e.request)];
      routing::BackendStates& states = replicas_[r.replica]->states;
      if (e.attempt >= 0) {  // an answer
        const sim::QuotaDecision& a = r.answer;
        routing::RateLimitReport report;
        if (cell_.unknown == 0 || unknown_(gen_) >= cell_.unknown) {
          report.remaining_tokens = a.state.remaining_tokens;
          report.remaining_requests = a.state.remaining_requests;
        }
        const routing::PoolMember& m = table_.member(static_cast<std::size_t>(e.attempt));
        states.observe_report(m, "gpt", report, r.sent, r.mark, a.admitted());
        if (a.admitted()) {
          ++o.ok;
          (r.batch ? o.batch_ok : o.interactive_ok)++;
          served_tokens += kCost;
          continue;
        }
        ++o.upstream_429;
        states.record_failure(m, "gpt", throttled_, a.retry_after, r.sent);
      }
      send(r, e.attempt < 0 ? static_cast<std::int64_t>(requests_.size() - 1) : e.request, o);
    }
    o.served_pct =
        100.0 * static_cast<double>(served_tokens) / (capacity_per_ns_ * static_cast<double>(end - start));
    return o;
  }

 private:
  static constexpr std::int64_t kCost = 200;
  static constexpr routing::ClassReserve kBatch{1, 500};  // the batch class's default: at most 50 %
  struct Request {
    base::MonoNanos arrived;
    std::size_t replica = 0;
    routing::TriedSet tried{};
    base::MonoNanos sent = 0;
    routing::ReportedBudget::Mark mark{};
    sim::QuotaDecision answer{};
    bool batch = false;
  };
  struct Event {
    base::MonoNanos at;
    std::int64_t request;  // arrival: a new id; answer: the request's index
    int attempt;           // -1: an arrival; else the member that answers
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : request > o.request; }
  };
  struct Message {  // between replicas
    base::MonoNanos at;
    std::int64_t seq;
    std::function<void()> deliver;
    bool operator>(const Message& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  // One replica: its own routing state, telling the others what redis::SharedReports and
  // redis::SharedCooldowns would (a short report at most once per target every 10 ms, a 429
  // moment once within 10 ms).
  struct Replica final : routing::ReportListener, routing::CooldownListener {
    Replica(Simulation& s, std::size_t n)
        : sim(s), index(n), states(s.clock_, routing::CooldownPolicy{10s, 100ms, 300s}), rng(11 + n) {
      states.track(s.table_);
      states.set_route_on_remaining(s.cell_.route_on_remaining);
      if (s.cell_.replicas.size() > 1) {
        states.set_report_listener(this);
        states.set_cooldown_listener(this);
      }
    }
    void on_report(const routing::ReportNotice& n) override {
      const std::int64_t sent_ms = states.to_epoch_ms(n.sent);
      std::int64_t& last = last_published_ms[std::string(n.backend)];
      if (sent_ms < last + 10) return;
      last = sent_ms;
      sim.tell_others(index, [backend = std::string(n.backend), report = n.report, sent_ms](Replica& r) {
        r.states.apply_shared_report(backend, "gpt", report, sent_ms);
      });
    }
    void on_moment(const routing::MomentNotice& n) override {
      const std::int64_t at_ms = states.to_epoch_ms(n.at);
      if (n.kind == routing::MomentNotice::Kind::Retry) {  // 429s naming one moment: one message
        std::int64_t& last = last_retry_ms[std::string(n.backend)];
        if (at_ms >= last - 10 && at_ms < last + 10) return;
        last = at_ms;
      }
      sim.tell_others(index, [backend = std::string(n.backend), kind = n.kind, at_ms](Replica& r) {
        r.states.apply_shared_moment(backend, "gpt", kind, at_ms);
      });
    }
    void on_cooldown(const routing::CooldownNotice& n) override {
      if (n.whole_backend) return;
      const std::int64_t until_ms = states.to_epoch_ms(n.until);
      sim.tell_others(index, [backend = std::string(n.backend), until_ms, cause = n.cause](Replica& r) {
        r.states.apply_remote_cooldown(backend, "gpt", false, until_ms, cause);
      });
    }
    Simulation& sim;
    std::size_t index;
    routing::BackendStates states;
    routing::PrioritySelector selector;
    base::FastRandom rng;
    std::map<std::string, std::int64_t> last_published_ms, last_retry_ms;
  };

  void tell_others(std::size_t from, std::function<void(Replica&)> apply) {
    for (std::size_t n = 0; n < replicas_.size(); ++n)
      if (n != from)
        messages_.push({clock_.now() + cell_.share_delay.count(), next_message_++,
                        [this, n, apply] { apply(*replicas_[n]); }});
  }

  // Whether the next arrival is batch: evenly spread as bench/tools/openloop.js spreads them, or
  // a coin's toss with Poisson arrivals.
  bool next_is_batch(std::mt19937_64& gen) {
    if (cell_.batch_share <= 0) return false;
    const std::uint64_t i = batch_index_++;
    if (cell_.poisson) return unknown_(gen) < cell_.batch_share;
    return std::floor(static_cast<double>(i + 1) * cell_.batch_share) >
           std::floor(static_cast<double>(i) * cell_.batch_share);
  }

  // The arrivals in turn by the replicas' shares (3:1:1: three to the first, one to each other).
  std::size_t next_replica() {
    const int slot = static_cast<int>(arrivals_++ % share_total_);
    int sum = 0;
    for (std::size_t n = 0; n < cell_.replicas.size(); ++n)
      if (slot < (sum += cell_.replicas[n])) return n;
    return 0;
  }

  // The daemon's failover loop for one request: the next target at once, or smartlb's 429.
  void send(Request& r, std::int64_t index, Outcome& o) {
    Replica& rep = *replicas_[r.replica];
    const routing::ClassReserve cls = r.batch ? kBatch : routing::ClassReserve{};
    const routing::PickRequest pick("gpt", r.tried, kCost, {}, base::Nanos{0}, cls);
    const auto choice = choose_and_reserve(rep.selector, table_, rep.states, pick, r.tried, rep.rng);
    if (!choice) {
      if (r.tried.count() == 0) rep.states.count_refused(table_, "gpt", kCost, cls.level);
      ++o.client_429;
      if (!r.batch && cell_.batch_share > 0) o.interactive_refused_at.push_back(r.arrived);
      return;
    }
    const routing::PoolMember& m = table_.member(choice->position);
    // As the daemon does: a request's cost is estimated only once some deployment is watched.
    r.mark = rep.states.charge_reported(m, "gpt", rep.states.reported_budget_low() ? kCost : 0);
    r.sent = clock_.now();
    base::MonoNanos there = cell_.latency.count() / 2, back = cell_.latency.count() - there;
    if (cell_.jitter.count() > 0) {
      const double extra = jitter_(jitter_gen_) * static_cast<double>(cell_.jitter.count());
      const double split = jitter_(jitter_gen_);
      there += static_cast<base::MonoNanos>(extra * split);
      back += static_cast<base::MonoNanos>(extra * (1 - split));
    }
    if (connected_.size() < limiters_.size()) {
      connected_.resize(limiters_.size());
      last_admitted_.resize(limiters_.size());
    }
    if (!connected_[choice->position]) {
      connected_[choice->position] = true;
      there += cell_.connect.count();
      r.sent += cell_.connect.count();  // the daemon reads its answers from then (AttemptTicket::went)
    }
    // A backend takes requests in turn: never one before the last it took.
    there = std::max(there, last_admitted_[choice->position] - clock_.now());
    last_admitted_[choice->position] = clock_.now() + there;
    r.answer = limiters_[choice->position]->try_consume(kCost, sim_time(clock_.now() + there));
    events_.push({clock_.now() + there + back, index, static_cast<int>(choice->position)});
  }

  Cell cell_;
  base::ManualClock clock_{0};
  routing::RoutingTable table_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  int share_total_ = 0;
  std::uint64_t arrivals_ = 0, batch_index_ = 0;
  routing::Verdict throttled_ = routing::judge_status(429, true);
  std::vector<std::unique_ptr<sim::DeploymentQuota>> limiters_;
  double capacity_per_ns_ = 0;  // tokens
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::priority_queue<Message, std::vector<Message>, std::greater<>> messages_;
  std::int64_t next_message_ = 0;
  std::deque<Request> requests_;
  std::int64_t next_id_ = 0;
  std::mt19937_64 gen_{3};
  std::uniform_real_distribution<double> unknown_{0.0, 1.0};
  std::mt19937_64 jitter_gen_{5};
  std::uniform_real_distribution<double> jitter_{0.0, 1.0};
  std::vector<bool> connected_;                 // a connection to each backend is open (Cell::connect paid)
  std::vector<base::MonoNanos> last_admitted_;  // when each backend last took a request
};

inline Outcome simulate(const Cell& c) {
  const base::Nanos duration = std::max<base::Nanos>(60s, 3 * c.window);
  return Simulation(c).run(duration);
}

}  // namespace smartlb::report_simulation
