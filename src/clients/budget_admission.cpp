#include "smartlb/clients/budget_admission.hpp"

#include <algorithm>
#include <charconv>

namespace smartlb {

std::optional<BudgetRefused> BudgetAdmission::admit(std::int64_t tokens, BudgetTime t) {
  tokens_ = requests_ = LimitState{};
  for (std::size_t i = 0; i < count_; ++i) {
    ClientBudget::State s;
    if (auto refusal = budgets_[i].budget->admit(tokens, t, charges_[i], &s)) {
      for (std::size_t j = 0; j < i; ++j) budgets_[j].budget->cancel(charges_[j], t);
      // The headers of a refusal describe the budget that refused.
      tokens_ = s.tokens;
      requests_ = s.requests;
      return BudgetRefused{*refusal, budgets_[i]};
    }
    if (s.tokens.limit && (!tokens_.limit || s.tokens.remaining < tokens_.remaining)) tokens_ = s.tokens;
    if (s.requests.limit && (!requests_.limit || s.requests.remaining < requests_.remaining))
      requests_ = s.requests;
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

namespace {

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

void append_limit(std::string& out, std::string_view what, const LimitState& l) {
  if (!l.limit) return;
  out.append("x-ratelimit-limit-").append(what).append(": ");
  append_int(out, l.limit);
  out.append("\r\nx-ratelimit-remaining-").append(what).append(": ");
  append_int(out, l.remaining);
  out.append("\r\nx-ratelimit-reset-").append(what).append(": ");
  append_reset(out, l.reset);
  out.append("\r\n");
}

}  // namespace

void BudgetAdmission::append_fields(std::string& out) const {
  append_limit(out, "requests", requests_);
  append_limit(out, "tokens", tokens_);
}

void append_reset(std::string& out, Nanos d) {
  const std::int64_t ms = std::max<std::int64_t>(std::chrono::ceil<std::chrono::milliseconds>(d).count(), 0);
  if (ms < 1000) {
    append_int(out, ms);
    out.append("ms");
    return;
  }
  const std::int64_t h = ms / 3'600'000, m = ms / 60'000 % 60, s_ms = ms % 60'000;
  if (h) {
    append_int(out, h);
    out.push_back('h');
  }
  if (h || m) {
    append_int(out, m);
    out.push_back('m');
  }
  append_int(out, s_ms / 1000);
  if (std::int64_t frac = s_ms % 1000) {
    int digits = 3;
    while (frac % 10 == 0) {
      frac /= 10;
      --digits;
    }
    out.push_back('.');
    char buf[4];
    const auto r = std::to_chars(buf, buf + sizeof buf, frac);
    out.append(static_cast<std::size_t>(digits - (r.ptr - buf)), '0').append(buf, r.ptr);
  }
  out.push_back('s');
}

std::string format_reset(Nanos d) {
  std::string out;
  append_reset(out, d);
  return out;
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
