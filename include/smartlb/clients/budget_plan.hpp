#pragma once
// Which budgets a caller counts against, as one configuration says: its client entry's own
// `limits`, and each `subject_limits` entry whose subject it carries (one budget shared by all
// carriers, or one per caller). Built with the snapshot; the budgets themselves live in the
// BudgetRegistry, so a reload keeps what was used.
#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "smartlb/clients/budget_registry.hpp"
#include "smartlb/clients/client_auth.hpp"
#include "smartlb/config/config.hpp"

namespace smartlb::clients {

// Registry keys: owner ("client" or "subject"), name (the client's, or the subject) and, for a
// subject's budget of one caller, the caller; joined by a byte no name or subject holds.
inline constexpr char kBudgetKeySeparator = '\x1f';
std::string budget_key(std::string_view owner, std::string_view name, std::string_view caller = {});
struct BudgetKeyParts {
  std::string_view owner, name, caller;
};
BudgetKeyParts split_budget_key(std::string_view key);

// A budget a request counts against, and what to call it in a 429's message.
struct BudgetRef {
  ClientBudget* budget = nullptr;
  std::string_view owner;     // "client", or "subject"
  std::string_view subject;   // the client's name, or the subject
  bool counts_tokens = true;  // it limits tokens (not only requests)
  bool counts_cost = false;   // it limits cost
};

class BudgetPlan {
 public:
  static constexpr std::size_t kMaxPerRequest = 8;
  using Budgets = std::array<BudgetRef, kMaxPerRequest>;

  BudgetPlan() = default;
  BudgetPlan(const config::Policy& policy, BudgetRegistry& registry);

  // No budgets at all: requests skip admission entirely.
  bool empty() const { return clients_.empty() && subjects_.empty(); }
  // The caller's budgets into `out`; how many (at most kMaxPerRequest).
  std::size_t budgets_for(const ClientIdentity& who, Budgets& out) const;

 private:
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct SubjectRule {
    std::string subject;  // "*": everyone
    bool shared = false;
    config::ClientLimits limits;
    ClientBudget* budget = nullptr;  // shared: resolved once
    std::string overflow_key;        // per caller, past BudgetRegistry::kMaxBudgets
  };
  BudgetRegistry* registry_ = nullptr;
  std::uint64_t generation_ = 0;  // unique per plan: the registry compares limits once per plan
  struct ClientEntry {
    ClientBudget* budget;
    bool counts_tokens;
    bool counts_cost;
  };
  std::unordered_map<std::string, ClientEntry, StringHash, std::equal_to<>> clients_;
  std::vector<SubjectRule> subjects_;
};

}  // namespace smartlb::clients
