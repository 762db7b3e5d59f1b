#include "smartlb/clients/client_budget.hpp"

#include <algorithm>
#include <tuple>

namespace smartlb::clients {
namespace {

// 1 s buckets: a client budget is one of possibly thousands (one per caller), so it stays small
// (2 KiB), and a second of slack on a minute limit is what API Management allows too.
constexpr int kMinuteBuckets = 60;
constexpr base::Nanos kMinute = std::chrono::minutes(1);
// When to ask again after a refusal of the in-flight cap: a slot frees when any of the
// caller's requests ends, which no clock predicts; a second is short and costs no busy loop.
constexpr base::Nanos kInFlightRetry = std::chrono::seconds(1);

base::Nanos until(base::WallTime end, base::WallTime now) {
  return std::max(std::chrono::duration_cast<base::Nanos>(end - now), base::Nanos(0));
}

}  // namespace

std::string_view to_string(BudgetLimit l) {
  switch (l) {
    case BudgetLimit::TokensPerMinute:
      return "tokens_per_minute";
    case BudgetLimit::RequestsPerMinute:
      return "requests_per_minute";
    case BudgetLimit::TokensPerDay:
      return "tokens_per_day";
    case BudgetLimit::TokensPerMonth:
      return "tokens_per_month";
    case BudgetLimit::CostPerDay:
      return "cost_per_day";
    case BudgetLimit::CostPerMonth:
      return "cost_per_month";
    case BudgetLimit::InFlight:
      return "max_in_flight";
  }
  return "";
}

std::string_view describe(BudgetLimit l) {
  switch (l) {
    case BudgetLimit::TokensPerMinute:
      return "tokens per min (TPM)";
    case BudgetLimit::RequestsPerMinute:
      return "requests per min (RPM)";
    case BudgetLimit::TokensPerDay:
      return "tokens per day (UTC)";
    case BudgetLimit::TokensPerMonth:
      return "tokens per month (UTC)";
    case BudgetLimit::CostPerDay:
      return "cost per day (UTC)";
    case BudgetLimit::CostPerMonth:
      return "cost per month (UTC)";
    case BudgetLimit::InFlight:
      return "requests in flight";
  }
  return "";
}

bool counts_tokens(BudgetLimit l) {
  return l == BudgetLimit::TokensPerMinute || l == BudgetLimit::TokensPerDay ||
         l == BudgetLimit::TokensPerMonth;
}

bool counts_cost(BudgetLimit l) { return l == BudgetLimit::CostPerDay || l == BudgetLimit::CostPerMonth; }

ClientBudget::ClientBudget(const config::ClientLimits& limits)
    : limits_(limits),
      minute_tokens_(limits.tokens_per_minute, kMinute, kMinuteBuckets),
      minute_requests_(limits.requests_per_minute, kMinute, kMinuteBuckets) {}

config::ClientLimits ClientBudget::limits() const {
  std::lock_guard lock(mutex_);
  return limits_;
}

void ClientBudget::set_limits(const config::ClientLimits& limits) {
  std::lock_guard lock(mutex_);
  if (limits_ == limits) return;
  limits_ = limits;
  minute_tokens_.set_limit(limits.tokens_per_minute);
  minute_requests_.set_limit(limits.requests_per_minute);
  if (tokens_lease_) tokens_lease_->set_limit(limits.tokens_per_minute);
  if (requests_lease_) requests_lease_->set_limit(limits.requests_per_minute);
  if (day_lease_) day_lease_->set_limit(limits.tokens_per_day);
  if (month_lease_) month_lease_->set_limit(limits.tokens_per_month);
  if (day_cost_lease_) day_cost_lease_->set_limit(limits.cost_per_day);
  if (month_cost_lease_) month_cost_lease_->set_limit(limits.cost_per_month);
}

void ClientBudget::share(routing::LeaseBroker& broker, const std::string& name) {
  // Every limit gets a lease even when unset now: a reload may set it.
  const auto make = [&](std::int64_t limit, const char* what, base::Nanos window = kMinute,
                        int subwindows = routing::LeasedQuota::kDefaultSubwindows, bool months = false) {
    routing::LeasedQuota::Options o;
    o.limit = limit;
    o.window = window;
    o.subwindows = subwindows;
    o.calendar_months = months;
    o.min_lease = std::max<std::int64_t>(1, limit / routing::kMinLeaseDivisor);
    o.bridge = true;
    auto lease = std::make_unique<routing::SharedLease>(name + what, mutex_, o);
    broker.attach(*lease);
    return lease;
  };
  config::ClientLimits limits = this->limits();
  tokens_lease_ = make(limits.tokens_per_minute, ":tokens");
  requests_lease_ = make(limits.requests_per_minute, ":requests");
  // A UTC day is a whole number of days since the epoch: the day lease's window is the day, a
  // fixed one (one sub-window): the budget is per calendar day, not per sliding 24 hours.
  day_lease_ = make(limits.tokens_per_day, ":day_tokens", std::chrono::hours(24), 1);
  // A month is not a fixed length: its lease's windows are the calendar's (the longest month's
  // length only sizes the Redis key's expiry).
  month_lease_ = make(limits.tokens_per_month, ":month_tokens", std::chrono::hours(24 * 31), 1, true);
  // The cost quotas as the token quotas, in pico-units.
  day_cost_lease_ = make(limits.cost_per_day, ":day_cost", std::chrono::hours(24), 1);
  month_cost_lease_ = make(limits.cost_per_month, ":month_cost", std::chrono::hours(24 * 31), 1, true);
  broker_ = &broker;
}

void ClientBudget::share_in_flight(InFlightBroker& broker, const std::string& name) {
  in_flight_share_ = std::make_unique<InFlightLease>(name, mutex_, in_flight_, limits_.max_in_flight);
  broker.attach(*in_flight_share_);
  in_flight_broker_ = &broker;
}

std::optional<BudgetRefusal> ClientBudget::admit(std::int64_t tokens, cost::PicoUnits cost, BudgetTime t,
                                                 BudgetCharge& charge, State* after) {
  const base::PeriodSpan day = calendar_period(base::CalendarPeriod::Day, t.wall);
  const base::PeriodSpan month = calendar_period(base::CalendarPeriod::Month, t.wall);
  // What to ask the store for is sent once the lock is released: nothing waits on it.
  routing::PendingAsk asks[6];
  std::optional<InFlightShare::Ask> in_flight_ask;
  std::optional<BudgetRefusal> refusal;
  {
    std::lock_guard lock(mutex_);
    refusal = admit_locked(tokens, std::max<cost::PicoUnits>(cost, 0), t, charge, after, day, month, asks);
    if (!refusal) {  // admitted: it holds an in-flight slot until release()
      ++in_flight_;
      charge.in_flight = true;
      if (after) after->in_flight = in_flight_;
    }
    in_flight_ask.swap(in_flight_ask_);
  }
  for (const routing::PendingAsk& a : asks) send_pending(broker_, a);
  if (in_flight_ask) in_flight_broker_->send(*in_flight_share_, *in_flight_ask);
  return refusal;
}

std::optional<BudgetRefusal> ClientBudget::admit_locked(std::int64_t tokens, cost::PicoUnits cost,
                                                        BudgetTime t, BudgetCharge& charge, State* after,
                                                        const base::PeriodSpan& day,
                                                        const base::PeriodSpan& month,
                                                        routing::PendingAsk (&asks)[6]) {
  const auto refuse = [&](const BudgetRefusal& r) {
    if (after) *after = state_locked(t, day, month);
    return r;
  };
  // Of the limits that refuse, the one that admits last is the answer: a day quota spent too
  // must not hide behind the minute's shorter wait (the client would only be refused again).
  std::optional<BudgetRefusal> binding;
  const auto refused_by = [&](BudgetLimit limit, std::int64_t value, std::int64_t used,
                              std::int64_t requested, base::Nanos retry) {
    if (!binding || retry > binding->retry_after)
      binding = BudgetRefusal{limit, value, used, requested, retry};
  };
  if (limits_.tokens_per_minute && !minute_tokens_.fits(tokens, t.now))
    refused_by(BudgetLimit::TokensPerMinute, limits_.tokens_per_minute, minute_tokens_.used(t.now), tokens,
               minute_tokens_.wait_for(tokens, t.now));
  if (limits_.requests_per_minute && !minute_requests_.fits(1, t.now))
    refused_by(BudgetLimit::RequestsPerMinute, limits_.requests_per_minute, minute_requests_.used(t.now), 1,
               minute_requests_.wait_for(1, t.now));
  // A calendar quota admits again when its period ends (or never, for more than it holds: then
  // the end of the period is still the honest answer of when to ask again).
  if (const std::int64_t used = day_.used_in(day.index);
      limits_.tokens_per_day && used + tokens > limits_.tokens_per_day)
    refused_by(BudgetLimit::TokensPerDay, limits_.tokens_per_day, used, tokens, until(day.end, t.wall));
  if (const std::int64_t used = month_.used_in(month.index);
      limits_.tokens_per_month && used + tokens > limits_.tokens_per_month)
    refused_by(BudgetLimit::TokensPerMonth, limits_.tokens_per_month, used, tokens, until(month.end, t.wall));
  // A cost quota is checked with at least the smallest amount: a request whose model has no
  // price (an estimate of 0) is still refused once the quota is spent.
  const cost::PicoUnits asked = std::max<cost::PicoUnits>(cost, 1);
  if (const cost::PicoUnits used = day_cost_.used_in(day.index);
      limits_.cost_per_day && used + asked > limits_.cost_per_day)
    refused_by(BudgetLimit::CostPerDay, limits_.cost_per_day, used, cost, until(day.end, t.wall));
  if (const cost::PicoUnits used = month_cost_.used_in(month.index);
      limits_.cost_per_month && used + asked > limits_.cost_per_month)
    refused_by(BudgetLimit::CostPerMonth, limits_.cost_per_month, used, cost, until(month.end, t.wall));
  if (limits_.max_in_flight && in_flight_ >= limits_.max_in_flight)
    refused_by(BudgetLimit::InFlight, limits_.max_in_flight, in_flight_, 1, kInFlightRetry);
  if (binding) return refuse(*binding);
  if (auto r = in_flight_share_refusal(charge)) return refuse(*r);
  // Shared: the minute limits' leases must admit too (all replicas together).
  const bool lease_tokens = tokens_lease_ && limits_.tokens_per_minute;
  const bool lease_requests = requests_lease_ && limits_.requests_per_minute;
  if (lease_tokens && !take_leased(*tokens_lease_, tokens, t.wall, asks[0]))
    return refuse({BudgetLimit::TokensPerMinute, limits_.tokens_per_minute, minute_tokens_.used(t.now),
                   tokens, tokens_lease_->quota.wait_for(tokens, t.wall)});
  if (lease_requests && !take_leased(*requests_lease_, 1, t.wall, asks[1])) {
    if (lease_tokens) tokens_lease_->quota.adjust(tokens_lease_->quota.subwindow_of(t.wall), -tokens);
    return refuse({BudgetLimit::RequestsPerMinute, limits_.requests_per_minute, minute_requests_.used(t.now),
                   1, requests_lease_->quota.wait_for(1, t.wall)});
  }
  // What the leases before a refusing one took is given back (the day's and month's tokens when
  // they were taken too).
  const auto give_back_leases = [&](bool day_tokens, bool month_tokens) {
    if (lease_tokens) tokens_lease_->quota.adjust(tokens_lease_->quota.subwindow_of(t.wall), -tokens);
    if (lease_requests) requests_lease_->quota.adjust(requests_lease_->quota.subwindow_of(t.wall), -1);
    if (day_tokens && day_lease_ && limits_.tokens_per_day) day_lease_->quota.adjust(day.index, -tokens);
    if (month_tokens && month_lease_ && limits_.tokens_per_month)
      month_lease_->quota.adjust(month.index, -tokens);
  };
  if (day_lease_ && limits_.tokens_per_day && !take_leased(*day_lease_, tokens, t.wall, asks[2])) {
    give_back_leases(false, false);
    return refuse({BudgetLimit::TokensPerDay, limits_.tokens_per_day, day_.used_in(day.index), tokens,
                   day_lease_->quota.wait_for(tokens, t.wall)});
  }
  if (month_lease_ && limits_.tokens_per_month && !take_leased(*month_lease_, tokens, t.wall, asks[3])) {
    give_back_leases(true, false);
    return refuse({BudgetLimit::TokensPerMonth, limits_.tokens_per_month, month_.used_in(month.index), tokens,
                   month_lease_->quota.wait_for(tokens, t.wall)});
  }
  // Shared cost quotas last: what the leases above took is given back when one refuses.
  if (day_cost_lease_ && limits_.cost_per_day && !take_leased(*day_cost_lease_, cost, t.wall, asks[4])) {
    give_back_leases(true, true);
    return refuse({BudgetLimit::CostPerDay, limits_.cost_per_day, day_cost_.used_in(day.index), cost,
                   day_cost_lease_->quota.wait_for(cost, t.wall)});
  }
  if (month_cost_lease_ && limits_.cost_per_month &&
      !take_leased(*month_cost_lease_, cost, t.wall, asks[5])) {
    give_back_leases(true, true);
    if (day_cost_lease_ && limits_.cost_per_day) day_cost_lease_->quota.adjust(day.index, -cost);
    return refuse({BudgetLimit::CostPerMonth, limits_.cost_per_month, month_cost_.used_in(month.index), cost,
                   month_cost_lease_->quota.wait_for(cost, t.wall)});
  }
  charge.lease_window = tokens_lease_ ? tokens_lease_->quota.subwindow_of(t.wall) : -1;

  charge.tokens = tokens;
  charge.cost = cost;
  charge.minute_bucket = minute_tokens_.consume(tokens, t.now);
  minute_requests_.consume(1, t.now);
  for (auto [counter, span, amount] :
       {std::tuple{&day_, day, tokens}, std::tuple{&month_, month, tokens}, std::tuple{&day_cost_, day, cost},
        std::tuple{&month_cost_, month, cost}}) {
    if (counter->period != span.index) *counter = PeriodCounter{span.index, 0};
    counter->used += amount;
  }
  charge.day = day.index;
  charge.month = month.index;
  if (after) *after = state_locked(t, day, month);
  return std::nullopt;
}

void ClientBudget::settle(const BudgetCharge& charge, std::int64_t actual_tokens, cost::PicoUnits actual_cost,
                          BudgetTime t) {
  const std::int64_t delta = std::max<std::int64_t>(actual_tokens, 0) - charge.tokens;
  const cost::PicoUnits cost_delta = actual_cost < 0 ? 0 : actual_cost - charge.cost;
  if (delta == 0 && cost_delta == 0) return;
  std::lock_guard lock(mutex_);
  if (cost_delta != 0) {
    if (day_cost_lease_) day_cost_lease_->quota.adjust(charge.day, cost_delta);
    if (month_cost_lease_) month_cost_lease_->quota.adjust(charge.month, cost_delta);
    for (auto [counter, index] : {std::pair{&day_cost_, charge.day}, std::pair{&month_cost_, charge.month}})
      if (counter->period == index) counter->used = std::max<cost::PicoUnits>(counter->used + cost_delta, 0);
  }
  if (delta == 0) return;
  minute_tokens_.adjust(charge.minute_bucket, delta, t.now);
  if (tokens_lease_) tokens_lease_->quota.adjust(charge.lease_window, delta);
  if (day_lease_) day_lease_->quota.adjust(charge.day, delta);        // the lease's window is the day's index
  if (month_lease_) month_lease_->quota.adjust(charge.month, delta);  // and the month's
  // A period that ended meanwhile is not reopened: its successor starts from what it counts.
  for (auto [counter, index] : {std::pair{&day_, charge.day}, std::pair{&month_, charge.month}})
    if (counter->period == index) counter->used = std::max<std::int64_t>(counter->used + delta, 0);
}

// With replicas sharing the cap, this replica's lease must hold one more: short of it, an ask
// for more goes out (sent by admit() once the lock is released) and the request looks again
// once it is answered.
std::optional<BudgetRefusal> ClientBudget::in_flight_share_refusal(const BudgetCharge& charge) {
  if (!in_flight_share_ || !limits_.max_in_flight) return std::nullopt;
  InFlightShare& s = in_flight_share_->share;
  const InFlightShare::Verdict v =
      s.take(in_flight_, limits_.max_in_flight, in_flight_ask_, charge.share_waiting);
  if (v == InFlightShare::Verdict::Admit) return std::nullopt;
  BudgetRefusal r{BudgetLimit::InFlight, limits_.max_in_flight,
                  s.in_flight_everywhere(in_flight_, limits_.max_in_flight), 1, kInFlightRetry};
  r.awaiting_share = v == InFlightShare::Verdict::Wait;
  return r;
}

void ClientBudget::release(BudgetCharge& charge) {
  if (!charge.in_flight) return;
  charge.in_flight = false;
  std::lock_guard lock(mutex_);
  --in_flight_;
}

void ClientBudget::hold(BudgetCharge& charge) {
  if (charge.in_flight) return;
  charge.in_flight = true;
  std::lock_guard lock(mutex_);
  ++in_flight_;
}

void ClientBudget::cancel(BudgetCharge& charge, BudgetTime t) {
  release(charge);
  settle(charge, 0, 0, t);
  std::lock_guard lock(mutex_);
  minute_requests_.adjust(charge.minute_bucket, -1, t.now);
  if (requests_lease_) requests_lease_->quota.adjust(charge.lease_window, -1);
}

ClientBudget::State ClientBudget::state(BudgetTime t) {
  const base::PeriodSpan day = calendar_period(base::CalendarPeriod::Day, t.wall);
  const base::PeriodSpan month = calendar_period(base::CalendarPeriod::Month, t.wall);
  std::lock_guard lock(mutex_);
  return state_locked(t, day, month);
}

ClientBudget::State ClientBudget::state_locked(BudgetTime t, const base::PeriodSpan& day,
                                               const base::PeriodSpan& month) {
  State s;
  s.tokens_minute_used = minute_tokens_.used(t.now);
  s.requests_minute_used = minute_requests_.used(t.now);
  s.tokens_day_used = day_.used_in(day.index);
  s.tokens_month_used = month_.used_in(month.index);
  s.cost_day_used = day_cost_.used_in(day.index);
  s.cost_month_used = month_cost_.used_in(month.index);
  s.in_flight = in_flight_;
  s.in_flight_everywhere =
      in_flight_share_ && limits_.max_in_flight
          ? in_flight_share_->share.in_flight_everywhere(in_flight_, limits_.max_in_flight)
          : in_flight_;
  // The token limit that binds first: the least remaining of those set. Reset: until the whole
  // limit is free again (OpenAI's x-ratelimit-reset-*).
  const auto consider = [&](std::int64_t limit, std::int64_t used, auto reset) {
    if (!limit) return;
    const std::int64_t remaining = std::max<std::int64_t>(limit - used, 0);
    if (s.tokens.limit == 0 || remaining < s.tokens.remaining) s.tokens = {limit, remaining, reset()};
  };
  consider(limits_.tokens_per_minute, s.tokens_minute_used,
           [&] { return minute_tokens_.until_empty(t.now); });
  consider(limits_.tokens_per_day, s.tokens_day_used,
           [&] { return s.tokens_day_used ? until(day.end, t.wall) : base::Nanos(0); });
  consider(limits_.tokens_per_month, s.tokens_month_used,
           [&] { return s.tokens_month_used ? until(month.end, t.wall) : base::Nanos(0); });
  const auto consider_cost = [&](cost::PicoUnits limit, cost::PicoUnits used, base::WallTime end) {
    if (!limit) return;
    const cost::PicoUnits remaining = std::max<cost::PicoUnits>(limit - used, 0);
    if (s.cost.limit == 0 || remaining < s.cost.remaining)
      s.cost = {limit, remaining, used ? until(end, t.wall) : base::Nanos(0)};
  };
  consider_cost(limits_.cost_per_day, s.cost_day_used, day.end);
  consider_cost(limits_.cost_per_month, s.cost_month_used, month.end);
  if (limits_.requests_per_minute)
    s.requests = {limits_.requests_per_minute,
                  std::max<std::int64_t>(limits_.requests_per_minute - s.requests_minute_used, 0),
                  minute_requests_.until_empty(t.now)};
  return s;
}

}  // namespace smartlb::clients
