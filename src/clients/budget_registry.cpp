#include "smartlb/clients/budget_registry.hpp"

#include <algorithm>
#include <mutex>

namespace smartlb::clients {

namespace {

void take_limits(ClientBudget& b, const config::ClientLimits& limits, std::uint64_t plan) {
  if (plan != 0 && b.plan.load(std::memory_order_acquire) == plan) return;
  b.set_limits(limits);
  b.plan.store(plan, std::memory_order_release);
}

}  // namespace

ClientBudget& BudgetRegistry::get(std::string_view key, const config::ClientLimits& limits,
                                  std::string_view overflow, std::uint64_t plan) {
  {
    std::shared_lock lock(mutex_);
    if (auto it = budgets_.find(key); it != budgets_.end()) {
      ClientBudget& b = *it->second;
      lock.unlock();
      take_limits(b, limits, plan);
      return b;
    }
  }
  std::unique_lock lock(mutex_);
  if (!overflow.empty() && budgets_.size() >= kMaxBudgets && !budgets_.contains(key)) key = overflow;
  return make(key, limits, plan);
}

ClientBudget& BudgetRegistry::make(std::string_view key, const config::ClientLimits& limits,
                                   std::uint64_t plan) {
  auto it = budgets_.find(key);
  if (it == budgets_.end()) {
    it = budgets_.emplace(std::string(key), std::make_unique<ClientBudget>(limits)).first;
    it->second->plan.store(plan, std::memory_order_release);
    if (broker_) it->second->share(*broker_, "budget:" + std::string(key));
    if (in_flight_broker_) it->second->share_in_flight(*in_flight_broker_, "budget:" + std::string(key));
  } else {
    take_limits(*it->second, limits, plan);
  }
  return *it->second;
}

void BudgetRegistry::set_lease_broker(routing::LeaseBroker* broker) {
  std::unique_lock lock(mutex_);
  broker_ = broker;
  if (broker_)
    for (auto& [key, budget] : budgets_)
      if (!budget->shared()) budget->share(*broker_, "budget:" + key);
}

void BudgetRegistry::set_in_flight_broker(InFlightBroker* broker) {
  std::unique_lock lock(mutex_);
  in_flight_broker_ = broker;
  if (in_flight_broker_)
    for (auto& [key, budget] : budgets_)
      if (!budget->shares_in_flight()) budget->share_in_flight(*in_flight_broker_, "budget:" + key);
}

std::vector<BudgetRegistry::Entry> BudgetRegistry::entries() const {
  std::vector<Entry> out;
  {
    std::shared_lock lock(mutex_);
    out.reserve(budgets_.size());
    for (const auto& [key, budget] : budgets_) out.push_back(Entry{key, budget.get()});
  }
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
  return out;
}

std::size_t BudgetRegistry::size() const {
  std::shared_lock lock(mutex_);
  return budgets_.size();
}

}  // namespace smartlb::clients
