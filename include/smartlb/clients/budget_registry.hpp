#pragma once
// Every client budget by key, for the life of the process: a configuration reload changes
// limits, not what was used. Budgets never move once made (the plans of configurations point
// at them). Thread-safe; lookups take a shared lock only.
#include <cstddef>
#include <functional>
#include <memory>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "smartlb/clients/client_budget.hpp"

namespace smartlb::clients {

class BudgetRegistry {
 public:
  // Callers are found by their tokens' claims, so keys are unbounded: past this many budgets,
  // a new key gets `overflow`'s budget instead (shared by all latecomers of that kind).
  static constexpr std::size_t kMaxBudgets = 10'000;

  // The budget under `key`, made with `limits`, or set to them when they changed. A key new
  // past kMaxBudgets gets the budget under `overflow` (made without that bound). `plan` names
  // the configuration asking (BudgetPlan): limits are compared only when it changes.
  ClientBudget& get(std::string_view key, const config::ClientLimits& limits, std::string_view overflow = {},
                    std::uint64_t plan = 0);

  struct Entry {
    std::string key;
    ClientBudget* budget;
  };
  std::vector<Entry> entries() const;  // in key order
  // Budgets shared by replicas (docs/scale-out.md): every budget, made before or after, leases
  // its minute limits through `broker` under "budget:<key>". Before the first request.
  void set_lease_broker(routing::LeaseBroker* broker);
  // The same for max_in_flight: every budget's share of it is leased through `broker`.
  void set_in_flight_broker(InFlightBroker* broker);
  std::size_t size() const;

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  ClientBudget& make(std::string_view key, const config::ClientLimits& limits, std::uint64_t plan);

  routing::LeaseBroker* broker_ = nullptr;
  InFlightBroker* in_flight_broker_ = nullptr;
  mutable std::shared_mutex mutex_;
  std::unordered_map<std::string, std::unique_ptr<ClientBudget>, Hash, std::equal_to<>> budgets_;
};

}  // namespace smartlb::clients
