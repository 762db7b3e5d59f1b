#include "smartlb/clients/budget_plan.hpp"

#include <algorithm>
#include <atomic>

namespace smartlb::clients {

std::string budget_key(std::string_view owner, std::string_view name, std::string_view caller) {
  std::string key(owner);
  key.append(1, kBudgetKeySeparator).append(name);
  if (!caller.empty()) key.append(1, kBudgetKeySeparator).append(caller);
  return key;
}

namespace {
bool limits_count_tokens(const config::ClientLimits& l) {
  return l.tokens_per_minute || l.tokens_per_day || l.tokens_per_month;
}
}  // namespace

BudgetKeyParts split_budget_key(std::string_view key) {
  BudgetKeyParts p;
  const auto a = key.find(kBudgetKeySeparator);
  p.owner = key.substr(0, a);
  if (a == std::string_view::npos) return p;
  const auto b = key.find(kBudgetKeySeparator, a + 1);
  p.name = key.substr(a + 1, b == std::string_view::npos ? std::string_view::npos : b - a - 1);
  if (b != std::string_view::npos) p.caller = key.substr(b + 1);
  return p;
}

BudgetPlan::BudgetPlan(const config::Policy& policy, BudgetRegistry& registry) : registry_(&registry) {
  static std::atomic<std::uint64_t> generations{0};
  generation_ = generations.fetch_add(1, std::memory_order_relaxed) + 1;
  for (const config::ClientConfig& c : policy.clients)
    if (c.limits.any())
      clients_.emplace(c.name, ClientEntry{&registry.get(budget_key("client", c.name), c.limits),
                                           limits_count_tokens(c.limits), c.limits.counts_cost()});
  for (const config::SubjectLimit& s : policy.subject_limits) {
    SubjectRule rule{s.subject, s.shared, s.limits, nullptr, budget_key("subject", s.subject, "(other)")};
    if (s.shared) rule.budget = &registry.get(budget_key("subject", s.subject), s.limits);
    subjects_.push_back(std::move(rule));
  }
}

std::size_t BudgetPlan::budgets_for(const ClientIdentity& who, Budgets& out) const {
  std::size_t n = 0;
  if (!clients_.empty())
    if (auto it = clients_.find(who.name); it != clients_.end())
      out[n++] =
          BudgetRef{it->second.budget, "client", who.name, it->second.counts_tokens, it->second.counts_cost};
  // One key buffer per thread: a per-caller budget is found without an allocation.
  thread_local std::string key;
  for (const SubjectRule& rule : subjects_) {
    if (n == kMaxPerRequest) break;
    if (rule.subject != "*" &&
        std::find(who.subjects.begin(), who.subjects.end(), rule.subject) == who.subjects.end())
      continue;
    if (rule.shared) {
      out[n++] = BudgetRef{rule.budget, "subject", rule.subject, limits_count_tokens(rule.limits),
                           rule.limits.counts_cost()};
      continue;
    }
    key.assign("subject").append(1, kBudgetKeySeparator).append(rule.subject);
    key.append(1, kBudgetKeySeparator).append(who.principal);
    ClientBudget& b = registry_->get(key, rule.limits, rule.overflow_key, generation_);
    out[n++] = BudgetRef{&b, rule.subject == "*" ? std::string_view("client") : std::string_view("subject"),
                         rule.subject == "*" ? who.principal : std::string_view(rule.subject),
                         limits_count_tokens(rule.limits), rule.limits.counts_cost()};
  }
  return n;
}

}  // namespace smartlb::clients
