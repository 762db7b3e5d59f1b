#include "smartlb/clients/budget_admission.hpp"

#include <cinttypes>
#include <cstdio>

namespace smartlb {

std::optional<BudgetRefused> BudgetAdmission::admit(std::int64_t tokens, BudgetTime t) {
  for (std::size_t i = 0; i < count_; ++i) {
    if (auto refusal = budgets_[i].budget->admit(tokens, t, charges_[i])) {
      for (std::size_t j = 0; j < i; ++j) budgets_[j].budget->cancel(charges_[j], t);
      return BudgetRefused{*refusal, budgets_[i]};
    }
  }
  admitted_ = count_ > 0;
  charged_ = tokens;
  return std::nullopt;
}

void BudgetAdmission::settle(std::int64_t actual_tokens, BudgetTime t) {
  if (!admitted_) return;
  admitted_ = false;
  for (std::size_t i = 0; i < count_; ++i) budgets_[i].budget->settle(charges_[i], actual_tokens, t);
}

void BudgetAdmission::append_fields(std::string& out, BudgetTime t) const {
  LimitState tokens, requests;
  for (std::size_t i = 0; i < count_; ++i) {
    const ClientBudget::State s = budgets_[i].budget->state(t);
    if (s.tokens.limit && (!tokens.limit || s.tokens.remaining < tokens.remaining)) tokens = s.tokens;
    if (s.requests.limit && (!requests.limit || s.requests.remaining < requests.remaining))
      requests = s.requests;
  }
  const auto append = [&](const char* what, const LimitState& l) {
    if (!l.limit) return;
    char line[128];
    int n = std::snprintf(line, sizeof line,
                          "x-ratelimit-limit-%s: %" PRId64 "\r\nx-ratelimit-remaining-%s: %" PRId64
                          "\r\nx-ratelimit-reset-%s: ",
                          what, l.limit, what, l.remaining, what);
    out.append(line, static_cast<std::size_t>(n));
    out.append(format_reset(l.reset)).append("\r\n");
  };
  append("requests", requests);
  append("tokens", tokens);
}

std::string format_reset(Nanos d) {
  const std::int64_t ms = std::chrono::ceil<std::chrono::milliseconds>(d).count();
  if (ms < 1000) return std::to_string(ms < 0 ? 0 : ms) + "ms";
  std::string out;
  const std::int64_t h = ms / 3'600'000, m = ms / 60'000 % 60, s_ms = ms % 60'000;
  if (h) out += std::to_string(h) + "h";
  if (h || m) out += std::to_string(m) + "m";
  out += std::to_string(s_ms / 1000);
  if (const std::int64_t frac = s_ms % 1000) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03" PRId64, frac);
    std::string f(buf);
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "s";
}

std::string refusal_message(const BudgetRefused& r) {
  const BudgetRefusal& x = r.refusal;
  const std::string who = std::string(r.by.owner) + " '" + std::string(r.by.subject.substr(0, 128)) + "'";
  const std::string again = format_reset(x.retry_after);
  if (x.requested > x.limit_value)
    return "Request too large for " + who + " on " + std::string(describe(x.limit)) + ": Limit " +
           std::to_string(x.limit_value) + ", Requested " + std::to_string(x.requested) +
           ". The input or output tokens must be reduced (max_tokens counts in full) for the request to run.";
  return "Rate limit reached for " + who + " on " + std::string(describe(x.limit)) + ": Limit " +
         std::to_string(x.limit_value) + ", Used " + std::to_string(x.used) + ", Requested " +
         std::to_string(x.requested) + ". Please try again in " + again + ".";
}

}  // namespace smartlb
