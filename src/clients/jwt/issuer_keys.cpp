#include "smartlb/clients/jwt/issuer_keys.hpp"

#include <vector>

namespace smartlb::clients::jwt {

IssuerKeys::IssuerKeys(std::string name, base::Nanos min_refetch_interval)
    : name_(std::move(name)), min_interval_(min_refetch_interval) {}

std::shared_ptr<const KeySet> IssuerKeys::current() const {
  std::lock_guard lock(mutex_);
  return keys_;
}

bool IssuerKeys::request_refetch(base::MonoNanos now) {
  std::function<void()> hook;
  {
    std::lock_guard lock(mutex_);
    if (fetching_) return true;
    if (have_last_request_ && now - last_request_ < min_interval_.count()) return false;
    have_last_request_ = true;
    last_request_ = now;
    fetching_ = true;  // from now: the service starts it at once
    hook = refetch_hook_;
  }
  if (hook) hook();
  return true;
}

bool IssuerKeys::fetching() const {
  std::lock_guard lock(mutex_);
  return fetching_;
}

std::uint64_t IssuerKeys::on_next_result(std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  if (!fetching_) return 0;
  const std::uint64_t ticket = next_ticket_++;
  waiters_.emplace(ticket, std::move(wake));
  return ticket;
}

void IssuerKeys::forget_waiter(std::uint64_t ticket) {
  std::lock_guard lock(mutex_);
  waiters_.erase(ticket);
}

void IssuerKeys::on_refetch_request(std::function<void()> hook) {
  std::lock_guard lock(mutex_);
  refetch_hook_ = std::move(hook);
}

void IssuerKeys::fetch_started() {
  std::lock_guard lock(mutex_);
  fetching_ = true;
}

void IssuerKeys::fetch_succeeded(KeySet keys) {
  std::unique_lock lock(mutex_);
  keys_ = std::make_shared<const KeySet>(std::move(keys));
  fetching_ = false;
  failing_ = false;
  last_error_.clear();
  ++ok_;
  wake_all(lock);
}

void IssuerKeys::fetch_failed(std::string error) {
  std::unique_lock lock(mutex_);
  fetching_ = false;
  failing_ = true;
  last_error_ = std::move(error);
  ++failed_;
  wake_all(lock);
}

void IssuerKeys::wake_all(std::unique_lock<std::mutex>& lock) {
  std::map<std::uint64_t, std::function<void()>> waiters;
  waiters.swap(waiters_);
  lock.unlock();
  for (auto& [ticket, wake] : waiters) wake();
}

IssuerKeysStatus IssuerKeys::status() const {
  std::lock_guard lock(mutex_);
  IssuerKeysStatus s;
  s.name = name_;
  s.keys = keys_ ? keys_->by_kid.size() : 0;
  s.state = failing_ ? (keys_ ? "failing" : "unavailable") : (keys_ ? "valid" : "starting");
  s.last_error = last_error_;
  s.fetches_ok = ok_;
  s.fetches_failed = failed_;
  return s;
}

}  // namespace smartlb::clients::jwt
