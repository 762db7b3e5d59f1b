#pragma once
// One request against all of its caller's budgets: admitted by every one or charged to none,
// corrected to its real cost at the end, and told to the client in OpenAI's x-ratelimit-*
// header convention. Plain C++.
#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "smartlb/clients/budget_plan.hpp"
#include "smartlb/clients/client_budget.hpp"

namespace smartlb::clients {

struct BudgetRefused {
  BudgetRefusal refusal;
  BudgetRef by;
};

class BudgetAdmission {
 public:
  // The caller's budgets (from BudgetPlan::budgets_for).
  BudgetAdmission(const BudgetPlan::Budgets& budgets, std::size_t count) : budgets_(budgets), count_(count) {}
  // An admission still holding in-flight slots gives them back when it is replaced or destroyed
  // (a request whose end was never told, its connection gone): no slot is held forever.
  ~BudgetAdmission() { release(); }
  BudgetAdmission(const BudgetAdmission&) = delete;
  BudgetAdmission& operator=(const BudgetAdmission&) = delete;
  BudgetAdmission& operator=(BudgetAdmission&& other) noexcept;

  bool empty() const { return count_ == 0; }
  // Some budget limits tokens (else a request's token estimate is not needed to admit it).
  bool counts_tokens() const;
  // Some budget limits cost (else a request's price is not needed to admit it).
  bool counts_cost() const;
  // Charges `tokens`, `cost` (its estimated price, pico-units) and one request to every budget,
  // or (refused) to none.
  std::optional<BudgetRefused> admit(std::int64_t tokens, cost::PicoUnits cost, BudgetTime t);
  std::optional<BudgetRefused> admit(std::int64_t tokens, BudgetTime t) { return admit(tokens, 0, t); }
  // Before admit(): this request waits already for its replica's share of a shared max_in_flight
  // (BudgetRefusal::awaiting_share): it is counted once among those waiting, not at every look.
  void waiting_for_share() {
    for (BudgetCharge& c : charges_) c.share_waiting = true;
  }
  // The real cost, once known: every charge becomes `actual_tokens` and `actual_cost`
  // (negative: the estimated cost stays). Once.
  void settle(std::int64_t actual_tokens, cost::PicoUnits actual_cost, BudgetTime t);
  void settle(std::int64_t actual_tokens, BudgetTime t) { settle(actual_tokens, -1, t); }
  // The request is no longer in flight (its answer ended, or it is a WebSocket session, which
  // the cap does not count): every budget's slot is free. Idempotent.
  void release();
  // In flight again (a WebSocket session's response began): a slot of every budget, whatever
  // its cap, until release(). Nothing unless admitted.
  void hold_in_flight();
  bool admitted() const { return admitted_; }
  std::int64_t charged_tokens() const { return charged_; }

  // x-ratelimit-{limit,remaining,reset}-{requests,tokens,cost} for the tightest of the budgets
  // (the one with the least remaining) as admit() left them, as "Name: value\r\n" lines
  // appended to `out` (cost in currency units: "2.5"). After a refusal, the dimension that
  // refused tells the limit that refused, reset at the refusal's Retry-After.
  void append_fields(std::string& out) const;

 private:
  void take_tightest(const ClientBudget::State& s);
  void describe_refusal(const BudgetRefusal& refusal, const ClientBudget::State& refuser,
                        std::size_t refused_at, BudgetTime t);

  BudgetPlan::Budgets budgets_;
  std::size_t count_ = 0;
  std::array<BudgetCharge, BudgetPlan::kMaxPerRequest> charges_{};
  std::int64_t charged_ = 0;
  bool admitted_ = false;
  LimitState tokens_, requests_, cost_;  // the tightest, after admit()
};

// OpenAI's message for a 429 of a budget: what limit, how much was used and asked, and when to
// try again (a cost limit's amounts in `currency`).
std::string refusal_message(const BudgetRefused& r, std::string_view currency = {});
// A duration the way OpenAI writes x-ratelimit-reset-*: "250ms", "1.5s", "6m0s", "2h3m4s".
std::string format_reset(base::Nanos d);
void append_reset(std::string& out, base::Nanos d);

}  // namespace smartlb::clients
