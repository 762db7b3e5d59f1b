#include "smartlb/clients/budget_admission.hpp"

#include <algorithm>
#include <cstring>

namespace smartlb::clients {

BudgetAdmission& BudgetAdmission::operator=(BudgetAdmission&& other) noexcept {
  if (this == &other) return *this;
  release();
  budgets_ = other.budgets_;
  count_ = other.count_;
  charges_ = other.charges_;
  charged_ = other.charged_;
  admitted_ = other.admitted_;
  tokens_ = other.tokens_;
  requests_ = other.requests_;
  cost_ = other.cost_;
  for (BudgetCharge& c : other.charges_) c.in_flight = false;  // the slots are this one's now
  return *this;
}

void BudgetAdmission::release() {
  for (std::size_t i = 0; i < count_; ++i)
    if (charges_[i].in_flight) budgets_[i].budget->release(charges_[i]);
}

void BudgetAdmission::hold_in_flight() {
  if (!admitted_) return;
  for (std::size_t i = 0; i < count_; ++i) budgets_[i].budget->hold(charges_[i]);
}

void BudgetAdmission::take_tightest(const ClientBudget::State& s) {
  if (s.cost.limit && (!cost_.limit || s.cost.remaining < cost_.remaining)) cost_ = s.cost;
  if (s.tokens.limit && (!tokens_.limit || s.tokens.remaining < tokens_.remaining)) tokens_ = s.tokens;
  if (s.requests.limit && (!requests_.limit || s.requests.remaining < requests_.remaining))
    requests_ = s.requests;
}

std::optional<BudgetRefused> BudgetAdmission::admit(std::int64_t tokens, cost::PicoUnits cost, BudgetTime t) {
  tokens_ = requests_ = cost_ = LimitState{};
  for (std::size_t i = 0; i < count_; ++i) {
    ClientBudget::State s;
    if (auto refusal = budgets_[i].budget->admit(tokens, cost, t, charges_[i], &s)) {
      for (std::size_t j = 0; j < i; ++j) budgets_[j].budget->cancel(charges_[j], t);
      describe_refusal(*refusal, s, i, t);
      return BudgetRefused{*refusal, budgets_[i]};
    }
    take_tightest(s);
  }
  admitted_ = count_ > 0;
  charged_ = tokens;
  return std::nullopt;
}

// The headers of a refusal: in the dimension that refused, the limit that refused, its reset the
// refusal's Retry-After (a budget's state tells the tightest of its token limits, and a reset
// until the whole limit is free: another limit, and a later time, than the one the client must
// wait for). The other dimension is the tightest of all the caller's budgets, as on an admitted
// request (those before `refused_at` as they were before this request, which is given back).
void BudgetAdmission::describe_refusal(const BudgetRefusal& refusal, const ClientBudget::State& refuser,
                                       std::size_t refused_at, BudgetTime t) {
  tokens_ = requests_ = cost_ = LimitState{};
  take_tightest(refuser);
  for (std::size_t j = 0; j < count_; ++j)
    if (j != refused_at) take_tightest(budgets_[j].budget->state(t));
  // A cap on requests in flight has no x-ratelimit-* of its own: the headers stay the budgets'.
  if (refusal.limit == BudgetLimit::InFlight) return;
  const LimitState refused{refusal.limit_value, std::max<std::int64_t>(refusal.limit_value - refusal.used, 0),
                           refusal.retry_after};
  (smartlb::clients::counts_cost(refusal.limit)     ? cost_
   : smartlb::clients::counts_tokens(refusal.limit) ? tokens_
                                                    : requests_) = refused;
}

bool BudgetAdmission::counts_tokens() const {
  for (std::size_t i = 0; i < count_; ++i)
    if (budgets_[i].counts_tokens) return true;
  return false;
}

bool BudgetAdmission::counts_cost() const {
  for (std::size_t i = 0; i < count_; ++i)
    if (budgets_[i].counts_cost) return true;
  return false;
}

void BudgetAdmission::settle(std::int64_t actual_tokens, cost::PicoUnits actual_cost, BudgetTime t) {
  if (!admitted_) return;
  admitted_ = false;
  for (std::size_t i = 0; i < count_; ++i)
    budgets_[i].budget->settle(charges_[i], actual_tokens, actual_cost, t);
}

namespace {

// The fields are written into a stack buffer and appended once: every response to a client with
// a budget carries them, so they cost what a few integer conversions cost, not six appends.
class FieldWriter {
 public:
  void text(std::string_view t) {
    std::memcpy(p_, t.data(), t.size());
    p_ += t.size();
  }
  // Decimal digits (std::to_chars costs several times this here, for numbers this small).
  void number(std::int64_t v) {
    if (v < 0) v = 0;
    char digits[20];
    char* d = digits + sizeof digits;
    do {
      *--d = static_cast<char>('0' + v % 10);
      v /= 10;
    } while (v != 0);
    text(std::string_view(d, static_cast<std::size_t>(digits + sizeof digits - d)));
  }
  void reset(base::Nanos d);
  // Pico-units as currency units in plain decimal ("0.25"): as short as exact.
  void money(cost::PicoUnits v) {
    if (v < 0) v = 0;
    number(v / cost::kPicoPerUnit);
    if (cost::PicoUnits fraction = v % cost::kPicoPerUnit) {
      char digits[12];
      for (int i = 11; i >= 0; --i, fraction /= 10) digits[i] = static_cast<char>('0' + fraction % 10);
      std::size_t n = 12;
      while (digits[n - 1] == '0') --n;
      text(".");
      text(std::string_view(digits, n));
    }
  }
  void limit(std::string_view what, const LimitState& l, bool in_money = false) {
    if (!l.limit) return;
    text("x-ratelimit-limit-");
    text(what);
    text(": ");
    in_money ? money(l.limit) : number(l.limit);
    text("\r\nx-ratelimit-remaining-");
    text(what);
    text(": ");
    in_money ? money(l.remaining) : number(l.remaining);
    text("\r\nx-ratelimit-reset-");
    text(what);
    text(": ");
    reset(l.reset);
    text("\r\n");
  }
  std::string_view done() const { return {buf_, static_cast<std::size_t>(p_ - buf_)}; }

 private:
  char buf_[560];  // three limits of at most ~180 bytes each (19-digit numbers, 12 decimals)
  char* p_ = buf_;
};

void FieldWriter::reset(base::Nanos d) {
  const std::int64_t ms = std::max<std::int64_t>(std::chrono::ceil<std::chrono::milliseconds>(d).count(), 0);
  if (ms < 1000) {
    number(ms);
    text("ms");
    return;
  }
  const std::int64_t h = ms / 3'600'000, m = ms / 60'000 % 60, s_ms = ms % 60'000;
  if (h) {
    number(h);
    text("h");
  }
  if (h || m) {
    number(m);
    text("m");
  }
  number(s_ms / 1000);
  if (std::int64_t frac = s_ms % 1000) {
    char digits[3] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10),
                      static_cast<char>('0' + frac % 10)};
    std::size_t n = 3;
    while (digits[n - 1] == '0') --n;
    text(".");
    text(std::string_view(digits, n));
  }
  text("s");
}

}  // namespace

void BudgetAdmission::append_fields(std::string& out) const {
  FieldWriter w;
  w.limit("requests", requests_);
  w.limit("tokens", tokens_);
  w.limit("cost", cost_, true);
  out.append(w.done());
}

void append_reset(std::string& out, base::Nanos d) {
  FieldWriter w;
  w.reset(d);
  out.append(w.done());
}

std::string format_reset(base::Nanos d) {
  std::string out;
  append_reset(out, d);
  return out;
}

std::string refusal_message(const BudgetRefused& r, std::string_view currency) {
  const BudgetRefusal& x = r.refusal;
  const std::string who = std::string(r.by.owner) + " '" + std::string(r.by.subject.substr(0, 128)) + "'";
  const std::string again = format_reset(x.retry_after);
  const bool cost = counts_cost(x.limit);
  const auto amount = [&](std::int64_t v) {
    if (!cost) return std::to_string(v);
    return cost::format_money(v) + (currency.empty() ? "" : " ") + std::string(currency);
  };
  if (x.limit == BudgetLimit::InFlight)
    return "Too many requests in flight for " + who + ": Limit " + std::to_string(x.limit_value) +
           ", In flight " + std::to_string(x.used) + ". Please try again in " + again +
           " or when one of them has ended.";
  if (x.requested > x.limit_value)
    return "Request too large for " + who + " on " + std::string(describe(x.limit)) + ": Limit " +
           amount(x.limit_value) + ", Requested " + amount(x.requested) +
           ". The input or output tokens must be reduced (max_tokens counts in full) for the request to run.";
  return "Rate limit reached for " + who + " on " + std::string(describe(x.limit)) + ": Limit " +
         amount(x.limit_value) + ", Used " + amount(x.used) + ", Requested " + amount(x.requested) +
         ". Please try again in " + again + ".";
}

}  // namespace smartlb::clients
