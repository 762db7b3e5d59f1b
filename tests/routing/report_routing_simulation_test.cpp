// Routing on the backends' rate-limit reports, simulated against the limiters real services
// use: a fixed window, a sliding window and a token bucket, each over 1 s, 10 s and 60 s, none
// of which smartlb is told about. Five backends (TPM 300k:240k:150k:100k:50k, priorities
// 1,1,1,2,2, weights = TPM), 200-token requests at 80 % and 120 % of the aggregate capacity,
// every answer carrying x-ratelimit-remaining-*, every 429 a Retry-After: smartlb-sim's own
// limiter models, so this is the goodput benchmark (bench/goodput.sh) without its sockets.
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
#include "smartlb/sim/deployment_quota.hpp"

namespace smartlb {
namespace {

using namespace std::chrono_literals;

constexpr base::MonoNanos kSec = 1'000'000'000;

// The simulator's own limiter models (smartlb-sim, docs/simulator.md), on the same timeline.
using sim::LimiterKind;
sim::SteadyTime sim_time(base::MonoNanos t) { return sim::SteadyTime(base::Nanos(t)); }

struct Cell {
  LimiterKind model;
  base::Nanos window;
  int load_pct;
  bool route_on_remaining = true;
  base::Nanos latency = 20ms;
  bool poisson = true;  // else evenly spaced arrivals, as bench/tools/openloop.js sends them
  double unknown = 0;   // the share of answers that report -1 (Azure has sent them): 1 = 429s only
};

struct Outcome {
  double served_pct = 0;  // of capacity
  std::int64_t ok = 0, client_429 = 0, upstream_429 = 0, offered = 0;
  double upstream_429_per_ok() const {
    return ok ? static_cast<double>(upstream_429) / static_cast<double>(ok) : 0;
  }
};

class Simulation {
 public:
  explicit Simulation(const Cell& c) : cell_(c), states_(clock_, routing::CooldownPolicy{10s, 100ms, 300s}) {
    const std::int64_t tpm[] = {300'000, 240'000, 150'000, 100'000, 50'000};
    const int priority[] = {1, 1, 1, 2, 2};
    std::vector<routing::PoolMember> members;
    sim::LimiterSettings settings;
    settings.kind = c.model;
    settings.window = std::chrono::duration_cast<std::chrono::milliseconds>(c.window);
    for (int i = 0; i < 5; ++i) {
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
    states_.track(table_);
    states_.set_route_on_remaining(c.route_on_remaining);
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
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      clock_.advance(base::Nanos(e.at - clock_.now()));
      Request& r = e.attempt < 0 ? requests_.emplace_back(Request{e.at})
                                 : requests_[static_cast<std::size_t>(e.request)];
      if (e.attempt < 0) ++o.offered;
      if (e.attempt >= 0) {  // an answer
        const sim::QuotaDecision& a = r.answer;
        routing::RateLimitReport report;
        if (cell_.unknown == 0 || unknown_(gen_) >= cell_.unknown) {
          report.remaining_tokens = a.state.remaining_tokens;
          report.remaining_requests = a.state.remaining_requests;
        }
        const routing::PoolMember& m = table_.member(static_cast<std::size_t>(e.attempt));
        states_.observe_report(m, "gpt", report, r.sent, r.mark, a.admitted());
        if (a.admitted()) {
          ++o.ok;
          served_tokens += kCost;
          continue;
        }
        ++o.upstream_429;
        states_.record_failure(m, "gpt", throttled_, a.retry_after, r.sent);
      }
      send(r, e.attempt < 0 ? static_cast<std::int64_t>(requests_.size() - 1) : e.request, o);
    }
    o.served_pct =
        100.0 * static_cast<double>(served_tokens) / (capacity_per_ns_ * static_cast<double>(end - start));
    return o;
  }

 private:
  static constexpr std::int64_t kCost = 200;
  struct Request {
    base::MonoNanos arrived;
    routing::TriedSet tried{};
    base::MonoNanos sent = 0;
    routing::ReportedBudget::Mark mark{};
    sim::QuotaDecision answer{};
    bool probe = false;
  };
  struct Event {
    base::MonoNanos at;
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
    const routing::PoolMember& m = table_.member(choice->position);
    r.mark = states_.charge_reported(m, "gpt", kCost);
    r.sent = clock_.now();
    r.answer =
        limiters_[choice->position]->try_consume(kCost, sim_time(clock_.now() + cell_.latency.count() / 2));

    events_.push({clock_.now() + cell_.latency.count(), index, static_cast<int>(choice->position)});
  }

  Cell cell_;
  base::ManualClock clock_{0};
  routing::BackendStates states_;
  routing::RoutingTable table_;
  routing::PrioritySelector selector_;
  base::FastRandom rng_{11};
  routing::Verdict throttled_ = routing::judge_status(429, true);
  std::vector<std::unique_ptr<sim::DeploymentQuota>> limiters_;
  double capacity_per_ns_ = 0;  // tokens
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::deque<Request> requests_;
  std::int64_t next_id_ = 0;
  std::mt19937_64 gen_{3};
  std::uniform_real_distribution<double> unknown_{0.0, 1.0};
};

Outcome simulate(const Cell& c) {
  const base::Nanos duration = std::max<base::Nanos>(60s, 3 * c.window);
  return Simulation(c).run(duration);
}

// Each cell against the same run with report routing off (ROUTE_ON_REMAINING=off, 429s and
// their Retry-After only): no more upstream 429s, about as much served, and at most
// `max_429_per_ok` upstream 429s per success. The bounds are today's figures with a margin, so
// that a change that makes any cell worse fails here (docs/benchmarks.md has the real run).
struct Bound {
  LimiterKind model;
  base::Nanos window;
  double served_below_off;  // percentage points of capacity
  double max_429_per_ok;
};
constexpr Bound kBounds[] = {
    {LimiterKind::Fixed, 1s, 0.3, 0.012},   {LimiterKind::Fixed, 10s, 0.1, 0.01},
    {LimiterKind::Fixed, 60s, 0.1, 0.003},  {LimiterKind::Sliding, 1s, 0.0, 0.045},
    {LimiterKind::Sliding, 10s, 0.4, 0.02}, {LimiterKind::Sliding, 60s, 0.1, 0.013},
    {LimiterKind::Bucket, 1s, 0.1, 0.001},  {LimiterKind::Bucket, 10s, 0.1, 0.001},
    {LimiterKind::Bucket, 60s, 0.1, 0.001},
};

// A cell run as it is and with report routing off; `name` says which, and the figures are printed.
struct AgainstOff {
  Outcome on, off;
};
AgainstOff against_off(Cell cell, const std::string& name) {
  AgainstOff r;
  r.on = simulate(cell);
  cell.route_on_remaining = false;
  r.off = simulate(cell);
  std::printf("%-38s served %6.2f %% (off %6.2f %%), upstream 429s per success %.4f (off %.4f)\n",
              name.c_str(), r.on.served_pct, r.off.served_pct, r.on.upstream_429_per_ok(),
              r.off.upstream_429_per_ok());
  return r;
}

std::string cell_name(const Bound& b, const std::string& what) {
  return std::string(sim::limiter_kind_name(b.model)) + " " + std::to_string(b.window.count() / kSec) +
         " s, " + what;
}

void check_every_cell(base::Nanos latency, bool poisson) {
  for (const Bound& b : kBounds) {
    for (int load : {80, 120}) {
      const std::string cell = cell_name(b, std::to_string(load) + " % load");
      const auto [on, off] = against_off({b.model, b.window, load, true, latency, poisson}, cell);
      EXPECT_LE(on.upstream_429, std::max<std::int64_t>(off.upstream_429, 10))
          << cell << " (a handful is noise)";
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

// Reports that are all -1 (Azure has sent them): 429s and their Retry-After are all smartlb
// learns from. Against a sliding window it learns the echo of its own sends from the 429s and
// stops sending where the echo says nothing is left; against any other limiter the echo is never
// learned and routing is as with report routing off, so no cell may do worse than off. Where
// half the answers report -1, the other half's reports route, and an answer without one must
// not leave a stale report holding a target back (as reports alone, within the cell's bound).
TEST(ReportRoutingSimulation,
     ReportsThatAreAllOrHalfMinusOne_NeverWorseThanOff_AndFewer429sOnASlidingWindow) {
  for (const Bound& b : kBounds) {
    for (const auto latency : {1ms, 20ms}) {
      const std::string answers = "answers in " + std::to_string(latency.count()) + " ms";
      const auto [half, half_off] =
          against_off({b.model, b.window, 120, true, latency, latency > 1ms, /*unknown=*/0.5},
                      cell_name(b, "half -1, " + answers));
      EXPECT_LE(half.upstream_429, half_off.upstream_429 + half_off.upstream_429 / 100 + 10) << "half -1";
      EXPECT_GE(half.served_pct, half_off.served_pct - std::max(0.1, b.served_below_off)) << "half -1";
      const std::string name = cell_name(b, "all -1, " + answers);
      const auto [on, off] =
          against_off({b.model, b.window, 120, true, latency, latency > 1ms, /*unknown=*/1.0}, name);
      EXPECT_LE(on.upstream_429, off.upstream_429 + off.upstream_429 / 100 + 10) << name;
      EXPECT_GE(on.served_pct, off.served_pct - 0.1) << name;
      if (b.model == LimiterKind::Sliding && b.window <= 10s) {
        EXPECT_LT(on.upstream_429_per_ok(), off.upstream_429_per_ok() / 2) << name;
        EXPECT_LE(on.upstream_429_per_ok(), 0.06) << name;
      }
    }
  }
}

}  // namespace
}  // namespace smartlb
