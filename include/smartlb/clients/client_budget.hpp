#pragma once
// One budget of API Management's kind (azure-openai-token-limit, token-quota): tokens and
// requests per sliding minute, and tokens per calendar day and month in UTC. A request is
// admitted with its estimated cost (prompt + max_tokens) charged to every limit, and the
// charge is corrected to the real usage when the answer reports it. Plain C++ with the time
// passed in; thread-safe (one mutex per budget: a client's own requests are all that meet there).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "smartlb/base/calendar.hpp"
#include "smartlb/base/clock.hpp"
#include "smartlb/clients/in_flight_share.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/routing/shared_lease.hpp"
#include "smartlb/routing/sliding_window_budget.hpp"

namespace smartlb::clients {

struct BudgetTime {
  base::MonoNanos now = 0;  // the monotonic clock, for the minute windows
  base::WallTime wall;      // the calendar, for days and months (UTC)
};

enum class BudgetLimit : std::uint8_t {
  TokensPerMinute,
  RequestsPerMinute,
  TokensPerDay,
  TokensPerMonth,
  CostPerDay,
  CostPerMonth,
  InFlight  // max_in_flight: requests being answered at once
};
std::string_view to_string(BudgetLimit l);  // "tokens_per_minute", ...
// OpenAI's words for it in a 429's message: "tokens per min (TPM)", ...
std::string_view describe(BudgetLimit l);
bool counts_tokens(BudgetLimit l);
bool counts_cost(BudgetLimit l);  // in pico-units of the prices' currency

// What one request took from a budget: kept by the request until its usage is known.
struct BudgetCharge {
  std::int64_t tokens = 0;
  cost::PicoUnits cost = 0;
  std::int64_t minute_bucket = -1;  // the sliding windows' bucket
  std::int64_t day = -1, month = -1;
  std::int64_t lease_window = -1;  // the shared minute window (shared budgets only)
  bool in_flight = false;          // holds one of the budget's in-flight slots (release())
  bool share_waiting = false;      // waits already for the replica's share of a shared max_in_flight
};

struct BudgetRefusal {
  BudgetLimit limit = BudgetLimit::TokensPerMinute;
  std::int64_t limit_value = 0, used = 0, requested = 0;
  base::Nanos retry_after{0};  // when the request would fit again (the period's end for a quota)
  // The in-flight cap shared by replicas: this replica asked the store for a larger share, and
  // the answer (one round trip) may admit the request: look again in a moment.
  bool awaiting_share = false;
};

// One dimension's state, as OpenAI's x-ratelimit-* headers tell it.
struct LimitState {
  std::int64_t limit = 0;  // 0: no limit in this dimension
  std::int64_t remaining = 0;
  base::Nanos reset{0};  // until the whole limit is available again
};

class ClientBudget {
 public:
  explicit ClientBudget(const config::ClientLimits& limits);

  config::ClientLimits limits() const;
  // A new configuration's limits (nothing when they are the same): what was used stays counted.
  void set_limits(const config::ClientLimits& limits);

  // For headers and status: the tightest token limit (the one with the least remaining), the
  // request limit, and the tightest cost limit.
  struct State {
    LimitState tokens, requests, cost;
    std::int64_t tokens_minute_used = 0, requests_minute_used = 0, tokens_day_used = 0, tokens_month_used = 0;
    cost::PicoUnits cost_day_used = 0, cost_month_used = 0;
    std::int64_t in_flight = 0;  // requests admitted and not yet released
    // With the cap shared through Redis: the requests in flight on every replica, as far as this
    // one knows (the others' leases as last answered, at most the cap); else `in_flight`.
    std::int64_t in_flight_everywhere = 0;
  };

  // Charges one request of `tokens` (and `cost`, its estimated price) to every limit when all
  // admit it; otherwise charges nothing and says which limit refused (of several, the one that
  // admits last). `after`, when given, gets the state once the request is counted (or
  // refused), in the same look.
  std::optional<BudgetRefusal> admit(std::int64_t tokens, cost::PicoUnits cost, BudgetTime t,
                                     BudgetCharge& charge, State* after = nullptr);
  std::optional<BudgetRefusal> admit(std::int64_t tokens, BudgetTime t, BudgetCharge& charge,
                                     State* after = nullptr) {
    return admit(tokens, 0, t, charge, after);
  }
  // The request's real cost, once known: the token charge becomes `actual_tokens`, and the
  // cost charge `actual_cost` (negative: the estimate stays).
  void settle(const BudgetCharge& charge, std::int64_t actual_tokens, cost::PicoUnits actual_cost,
              BudgetTime t);
  void settle(const BudgetCharge& charge, std::int64_t actual_tokens, BudgetTime t) {
    settle(charge, actual_tokens, -1, t);
  }
  // Takes an admitted request back entirely (another budget refused it).
  void cancel(BudgetCharge& charge, BudgetTime t);
  // The request ended: its in-flight slot is free (once; nothing when it holds none).
  void release(BudgetCharge& charge);
  // An admitted request in flight again (a WebSocket session's response began): it takes a slot
  // whatever the cap (what it does has begun), once; release() gives it back.
  void hold(BudgetCharge& charge);

  State state(BudgetTime t);

  // Shared by replicas (docs/scale-out.md): the minute limits and the day and month quotas are
  // also leased through `broker`, under `name` (the same on every replica). Before the budget's
  // first request.
  void share(routing::LeaseBroker& broker, const std::string& name);
  bool shared() const { return broker_ != nullptr; }
  // max_in_flight held by the replicas together (docs/scale-out.md): this replica's share is
  // leased through `broker`, under `name`. Before the budget's first request.
  void share_in_flight(InFlightBroker& broker, const std::string& name);
  bool shares_in_flight() const { return in_flight_broker_ != nullptr; }

  // The configuration whose limits this budget last took (BudgetRegistry: one look, not a
  // lock, per request once they are taken).
  std::atomic<std::uint64_t> plan{0};

 private:
  State state_locked(BudgetTime t, const base::PeriodSpan& day, const base::PeriodSpan& month);
  std::optional<BudgetRefusal> admit_locked(std::int64_t tokens, cost::PicoUnits cost, BudgetTime t,
                                            BudgetCharge& charge, State* after, const base::PeriodSpan& day,
                                            const base::PeriodSpan& month, routing::PendingAsk (&asks)[6]);
  std::optional<BudgetRefusal> in_flight_share_refusal(const BudgetCharge& charge);  // under mutex_

  // A calendar quota: what was used in the current period.
  struct PeriodCounter {
    std::int64_t period = -1;
    std::int64_t used = 0;
    std::int64_t used_in(std::int64_t p) const { return p == period ? used : 0; }
  };

  mutable std::mutex mutex_;
  config::ClientLimits limits_;
  routing::SlidingWindowBudget minute_tokens_, minute_requests_;
  PeriodCounter day_, month_;
  PeriodCounter day_cost_, month_cost_;  // pico-units
  std::int64_t in_flight_ = 0;           // admitted, not yet released (counted with or without a cap)
  // Shared budgets only: the minute limits' and the calendar quotas' leases (guarded by mutex_).
  routing::LeaseBroker* broker_ = nullptr;
  std::unique_ptr<routing::SharedLease> tokens_lease_, requests_lease_, day_lease_, month_lease_;
  std::unique_ptr<routing::SharedLease> day_cost_lease_, month_cost_lease_;
  // max_in_flight shared by replicas: this replica's share, and its ask to send once the lock
  // is released (guarded by mutex_).
  InFlightBroker* in_flight_broker_ = nullptr;
  std::unique_ptr<InFlightLease> in_flight_share_;
  std::optional<InFlightShare::Ask> in_flight_ask_;
};

}  // namespace smartlb::clients
