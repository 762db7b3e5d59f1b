// Routing on the backends' rate-limit reports, simulated against the limiters real services
// use: a fixed window, a sliding window and a token bucket, each over 1 s, 10 s and 60 s, none
// of which smartlb is told about. Five backends (TPM 300k:240k:150k:100k:50k, priorities
// 1,1,1,2,2, weights = TPM), Poisson arrivals of 200-token requests at 80 % and 120 % of the
// aggregate capacity, every answer carrying x-ratelimit-remaining-*, every 429 a Retry-After.
// The routing core runs as the daemon runs it (choose_target, charge_reported, observe_report,
// record_failure, failover to the next target at once), on a manual clock, with answers
// arriving after a latency. Deterministic: a seeded generator, simulated time.
#include <gtest/gtest.h>

#include <cmath>
#include <deque>
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

namespace smartlb {
namespace {

using namespace std::chrono_literals;

constexpr MonoNanos kSec = 1'000'000'000;

// What a limiter answers one request.
struct Answer {
  bool admitted = false;
  std::int64_t remaining_tokens = 0, remaining_requests = 0;
  Nanos retry_after{0};
};

class Limiter {
 public:
  virtual ~Limiter() = default;
  virtual Answer admit(std::int64_t tokens, MonoNanos now) = 0;
};

// Per-window limits, as Azure scales its per-minute quota: tokens and requests.
struct Limits {
  std::int64_t tokens = 0, requests = 0;
};

class FixedWindow final : public Limiter {
 public:
  FixedWindow(Limits l, Nanos w) : l_(l), w_(w.count()) {}
  Answer admit(std::int64_t tokens, MonoNanos now) override {
    const MonoNanos index = now / w_;
    if (index != index_) index_ = index, used_ = {};
    Answer a;
    a.admitted = used_.tokens + tokens <= l_.tokens && used_.requests + 1 <= l_.requests;
    if (a.admitted) used_.tokens += tokens, used_.requests += 1;
    a.remaining_tokens = l_.tokens - used_.tokens;
    a.remaining_requests = l_.requests - used_.requests;
    if (!a.admitted) a.retry_after = Nanos((index_ + 1) * w_ - now);
    return a;
  }

 private:
  Limits l_;
  MonoNanos w_;
  MonoNanos index_ = -1;
  Limits used_;
};

class SlidingWindow final : public Limiter {
 public:
  SlidingWindow(Limits l, Nanos w) : l_(l), w_(w.count()) {}
  Answer admit(std::int64_t tokens, MonoNanos now) override {
    while (!log_.empty() && log_.front().at <= now - w_) {
      used_.tokens -= log_.front().tokens;
      used_.requests -= 1;
      log_.pop_front();
    }
    Answer a;
    a.admitted = used_.tokens + tokens <= l_.tokens && used_.requests + 1 <= l_.requests;
    if (a.admitted) {
      log_.push_back({now, tokens});
      used_.tokens += tokens;
      used_.requests += 1;
    } else {
      // Until enough of the oldest has left the window for this request to fit.
      std::int64_t excess_tokens = used_.tokens + tokens - l_.tokens, excess_requests = used_.requests + 1 - l_.requests;
      MonoNanos until = now;
      for (const Entry& e : log_) {
        if (excess_tokens <= 0 && excess_requests <= 0) break;
        excess_tokens -= e.tokens;
        excess_requests -= 1;
        until = e.at + w_;
      }
      a.retry_after = Nanos(std::max<MonoNanos>(until - now, 1'000'000));
    }
    a.remaining_tokens = l_.tokens - used_.tokens;
    a.remaining_requests = l_.requests - used_.requests;
    return a;
  }

 private:
  struct Entry {
    MonoNanos at;
    std::int64_t tokens;
  };
  Limits l_;
  MonoNanos w_;
  std::deque<Entry> log_;
  Limits used_;
};

// Refills continuously at the window's limit per window; holds one second of it at most.
class TokenBucket final : public Limiter {
 public:
  TokenBucket(Limits l, Nanos w)
      : token_rate_(static_cast<double>(l.tokens) / static_cast<double>(w.count())),
        request_rate_(static_cast<double>(l.requests) / static_cast<double>(w.count())),
        token_cap_(token_rate_ * kSec),
        request_cap_(std::max(request_rate_ * kSec, 1.0)),
        tokens_(token_cap_),
        requests_(request_cap_) {}
  Answer admit(std::int64_t tokens, MonoNanos now) override {
    const double dt = static_cast<double>(now - last_);
    last_ = now;
    tokens_ = std::min(token_cap_, tokens_ + dt * token_rate_);
    requests_ = std::min(request_cap_, requests_ + dt * request_rate_);
    Answer a;
    a.admitted = tokens_ >= static_cast<double>(tokens) && requests_ >= 1;
    if (a.admitted) tokens_ -= static_cast<double>(tokens), requests_ -= 1;
    a.remaining_tokens = static_cast<std::int64_t>(tokens_);
    a.remaining_requests = static_cast<std::int64_t>(requests_);
    if (!a.admitted) {
      const double wait = std::max((static_cast<double>(tokens) - tokens_) / token_rate_, (1 - requests_) / request_rate_);
      a.retry_after = Nanos(static_cast<MonoNanos>(std::ceil(std::max(wait, 1e6))));
    }
    return a;
  }

 private:
  double token_rate_, request_rate_, token_cap_, request_cap_, tokens_, requests_;
  MonoNanos last_ = 0;
};

enum class Model { Fixed, Sliding, Bucket };
const char* name(Model m) { return m == Model::Fixed ? "fixed" : m == Model::Sliding ? "sliding" : "bucket"; }

struct Cell {
  Model model;
  Nanos window;
  int load_pct;
  bool route_on_remaining = true;
  Nanos latency = 20ms;
  bool poisson = true;  // else evenly spaced arrivals, as bench/tools/openloop.js sends them
};

struct Outcome {
  double served_pct = 0;  // of capacity
  std::int64_t ok = 0, client_429 = 0, upstream_429 = 0, offered = 0;
  double upstream_429_per_ok() const { return ok ? static_cast<double>(upstream_429) / static_cast<double>(ok) : 0; }
};

class Simulation {
 public:
  explicit Simulation(const Cell& c) : cell_(c), states_(clock_, CooldownPolicy{10s, 100ms, 300s}) {
    const std::int64_t tpm[] = {300'000, 240'000, 150'000, 100'000, 50'000};
    const int priority[] = {1, 1, 1, 2, 2};
    std::vector<PoolMember> members;
    for (int i = 0; i < 5; ++i) {
      const Limits l{tpm[i] * c.window.count() / 60'000'000'000, tpm[i] * 6 / 1000 * c.window.count() / 60'000'000'000};
      if (c.model == Model::Fixed) limiters_.push_back(std::make_unique<FixedWindow>(l, c.window));
      if (c.model == Model::Sliding) limiters_.push_back(std::make_unique<SlidingWindow>(l, c.window));
      if (c.model == Model::Bucket) limiters_.push_back(std::make_unique<TokenBucket>(l, c.window));
      capacity_per_ns_ += static_cast<double>(l.tokens) / static_cast<double>(c.window.count());
      PoolMember m;
      m.name = "b" + std::to_string(i);
      m.priority = priority[i];
      m.weight = static_cast<std::uint32_t>(tpm[i] / 1000);
      members.push_back(m);
    }
    table_ = RoutingTable(std::move(members));
    states_.track(table_);
    states_.set_route_on_remaining(c.route_on_remaining);
  }

  Outcome run(Nanos duration) {
    std::mt19937_64 gen(7);
    const double rate_per_ns = capacity_per_ns_ * cell_.load_pct / 100.0 / kCost;
    std::exponential_distribution<double> gap(rate_per_ns);
    MonoNanos t = clock_.now();
    const MonoNanos start = t, end = t + duration.count();
    while ((t += static_cast<MonoNanos>(cell_.poisson ? gap(gen) : 1 / rate_per_ns)) < end)
      events_.push({t, next_id_++, -1});
    Outcome o;
    std::int64_t served_tokens = 0;
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      clock_.advance(Nanos(e.at - clock_.now()));
      Request& r = e.attempt < 0 ? requests_.emplace_back(Request{e.at}) : requests_[static_cast<std::size_t>(e.request)];
      if (e.attempt < 0) ++o.offered;
      if (e.attempt >= 0) {  // an answer
        const Answer& a = r.answer;
        RateLimitReport report;
        report.remaining_tokens = a.remaining_tokens;
        report.remaining_requests = a.remaining_requests;
        const PoolMember& m = table_.member(static_cast<std::size_t>(e.attempt));
        states_.observe_report(m, "gpt", report, r.sent, r.mark, a.admitted);
        if (a.admitted) {
          ++o.ok;
          served_tokens += kCost;
          continue;
        }
        ++o.upstream_429;
        states_.record_failure(m, "gpt", throttled_, std::chrono::ceil<std::chrono::milliseconds>(a.retry_after));
      }
      send(r, e.attempt < 0 ? static_cast<std::int64_t>(requests_.size() - 1) : e.request, o);
    }
    o.served_pct = 100.0 * static_cast<double>(served_tokens) / (capacity_per_ns_ * static_cast<double>(end - start));
    return o;
  }

 private:
  static constexpr std::int64_t kCost = 200;
  struct Request {
    MonoNanos arrived;
    TriedSet tried{};
    MonoNanos sent = 0;
    ReportedBudget::Mark mark{};
    Answer answer{};
    bool probe = false;
  };
  struct Event {
    MonoNanos at;
    std::int64_t request;  // arrival: a new id; answer: the request's index
    int attempt;           // -1: an arrival; else the member that answers
    bool operator>(const Event& o) const { return at != o.at ? at > o.at : request > o.request; }
  };

  // The daemon's failover loop for one request: the next target at once, or smartlb's 429.
  void send(Request& r, std::int64_t index, Outcome& o) {
    const auto choice = choose_target(selector_, table_, states_, {"gpt", r.tried, kCost}, rng_);
    if (!choice) {
      ++o.client_429;
      return;
    }
    r.tried.add(choice->position);
    r.probe = choice->probe;
    const PoolMember& m = table_.member(choice->position);
    r.mark = states_.charge_reported(m, "gpt", kCost);
    r.sent = clock_.now();
    r.answer = limiters_[choice->position]->admit(kCost, clock_.now() + cell_.latency.count() / 2);

    events_.push({clock_.now() + cell_.latency.count(), index, static_cast<int>(choice->position)});
  }

  Cell cell_;
  ManualClock clock_{0};
  BackendStates states_;
  RoutingTable table_;
  PrioritySelector selector_;
  FastRandom rng_{11};
  Verdict throttled_ = judge_status(429, true);
  std::vector<std::unique_ptr<Limiter>> limiters_;
  double capacity_per_ns_ = 0;  // tokens
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::deque<Request> requests_;
  std::int64_t next_id_ = 0;
};

Outcome simulate(const Cell& c) {
  const Nanos duration = std::max<Nanos>(60s, 3 * c.window);
  return Simulation(c).run(duration);
}

// Each cell against the same run with report routing off (ROUTE_ON_REMAINING=off, 429s and
// their Retry-After only): fewer upstream 429s always, about as much served, and at most
// `max_429_per_ok` upstream 429s per success. The bounds are today's figures with a margin, so
// that a change that makes any cell worse fails here (docs/benchmarks.md has the real run).
struct Bound {
  Model model;
  Nanos window;
  double served_below_off;  // percentage points of capacity
  double max_429_per_ok;
};
constexpr Bound kBounds[] = {
    {Model::Fixed, 1s, 0.8, 0.01},   {Model::Fixed, 10s, 0.1, 0.01},  {Model::Fixed, 60s, 0.1, 0.01},
    {Model::Sliding, 1s, 2.0, 0.13}, {Model::Sliding, 10s, 0.6, 0.025}, {Model::Sliding, 60s, 0.1, 0.01},
    {Model::Bucket, 1s, 0.1, 0.001}, {Model::Bucket, 10s, 0.1, 0.001}, {Model::Bucket, 60s, 0.1, 0.003},
};

void check_every_cell(Nanos latency, bool poisson) {
  for (const Bound& b : kBounds) {
    for (int load : {80, 120}) {
      const Outcome on = simulate({b.model, b.window, load, true, latency, poisson});
      const Outcome off = simulate({b.model, b.window, load, false, latency, poisson});
      const std::string cell = std::string(name(b.model)) + " " + std::to_string(b.window.count() / kSec) + " s, " +
                               std::to_string(load) + " % load";
      std::printf("%-22s served %6.2f %% (off %6.2f %%), upstream 429s per success %.4f (off %.4f)\n", cell.c_str(),
                  on.served_pct, off.served_pct, on.upstream_429_per_ok(), off.upstream_429_per_ok());
      EXPECT_LE(on.upstream_429, off.upstream_429) << cell;
      EXPECT_GE(on.served_pct, off.served_pct - b.served_below_off) << cell;
      EXPECT_LE(on.upstream_429_per_ok(), b.max_429_per_ok) << cell;
      if (load == 80 && b.window >= 10s) {
        EXPECT_EQ(on.client_429, 0) << cell << ": every request served";
      }
    }
  }
}

TEST(ReportRoutingSimulation, EvenArrivalsAndQuickAnswers_AsTheGoodputBenchmarkSendsThem) {
  check_every_cell(1ms, false);
}

TEST(ReportRoutingSimulation, PoissonArrivalsAndSlowerAnswers) { check_every_cell(20ms, true); }

}  // namespace
}  // namespace smartlb
