#include "smartlb/credentials/entra/token_cell.hpp"

#include <algorithm>

namespace smartlb::credentials::entra {

TokenCell::TokenCell(std::string name, config::EntraSource source, std::string scope)
    : name_(std::move(name)), source_(source), scope_(std::move(scope)) {}

TokenCell::Lookup TokenCell::look(base::MonoNanos now) const {
  if (now < usable_until_.load(std::memory_order_acquire)) return {Availability::Ready};
  if (fetching_.load(std::memory_order_acquire)) return {Availability::Pending};
  return {Availability::Unavailable, retry_at_.load(std::memory_order_relaxed)};
}

bool TokenCell::append_authorization(std::string& out) const {
  std::lock_guard lock(mutex_);
  if (header_.empty()) return false;
  out.append(header_);
  return true;
}

std::uint64_t TokenCell::on_next_result(std::function<void()> wake) {
  std::lock_guard lock(mutex_);
  if (!fetching_.load(std::memory_order_relaxed)) return 0;
  const std::uint64_t ticket = next_ticket_++;
  waiters_.emplace(ticket, std::move(wake));
  return ticket;
}

void TokenCell::forget_waiter(std::uint64_t ticket) {
  std::lock_guard lock(mutex_);
  waiters_.erase(ticket);
}

void TokenCell::request_refresh() {
  std::function<void()> hook;
  {
    std::lock_guard lock(mutex_);
    hook = refresh_hook_;
  }
  if (hook) hook();
}

void TokenCell::on_refresh_request(std::function<void()> hook) {
  std::lock_guard lock(mutex_);
  refresh_hook_ = std::move(hook);
}

void TokenCell::add_backend(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (std::find(backends_.begin(), backends_.end(), name) == backends_.end()) backends_.push_back(name);
}

void TokenCell::fetch_started() {
  std::lock_guard lock(mutex_);
  fetching_.store(true, std::memory_order_release);
}

void TokenCell::fetch_succeeded(AccessToken token, base::MonoNanos usable_until) {
  std::unique_lock lock(mutex_);
  header_.assign("Authorization: Bearer ").append(token.token).append("\r\n");
  expires_at_ = token.expires_at;
  failing_ = false;
  last_error_.clear();
  ++ok_;
  usable_until_.store(usable_until, std::memory_order_release);
  wake_all(lock);
}

void TokenCell::fetch_failed(std::string error, base::MonoNanos retry_at, bool token_still_valid) {
  std::unique_lock lock(mutex_);
  last_error_ = std::move(error);
  failing_ = true;
  ++failed_;
  retry_at_.store(retry_at, std::memory_order_relaxed);
  if (!token_still_valid) usable_until_.store(0, std::memory_order_release);
  wake_all(lock);
}

void TokenCell::wake_all(std::unique_lock<std::mutex>& lock) {
  fetching_.store(false, std::memory_order_release);
  auto waiters = std::move(waiters_);
  waiters_.clear();
  lock.unlock();
  for (auto& [ticket, wake] : waiters) wake();
}

CredentialStatus TokenCell::status() const {
  std::lock_guard lock(mutex_);
  CredentialStatus s;
  s.name = name_;
  s.source = source_;
  s.scope = scope_;
  const bool has_token = usable_until_.load() != 0;
  const bool fetching = fetching_.load();
  if (ok_ == 0 && failed_ == 0)
    s.state = "starting";
  else if (failing_)
    s.state = has_token ? "failing" : "unavailable";
  else
    s.state = fetching ? "refreshing" : "valid";
  s.expires_at = expires_at_;
  s.last_error = last_error_;
  s.refreshes_ok = ok_;
  s.refreshes_failed = failed_;
  s.backends = backends_;
  return s;
}

}  // namespace smartlb::credentials::entra
