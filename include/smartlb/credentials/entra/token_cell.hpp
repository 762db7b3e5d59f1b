#pragma once
// The current token of one Entra ID credential (a source, identity and scope), shared by the
// workers that send it and the credential service that refreshes it.
//
// The request path asks `look` (one atomic load, no lock) and writes the Authorization field
// with `append_authorization` (a mutex held for one copy of the token). A request that finds
// no valid token while a fetch is under way registers a waiter (`on_next_result`) and waits
// asynchronously (entra/token_wait.hpp); only the service fetches, one fetch at a time, so any
// number of waiting requests cause one token request.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/credentials/entra/token_request.hpp"

namespace smartlb::credentials::entra {

// What /status shows of a credential; never the token.
struct CredentialStatus {
  std::string name;  // "<source> <client id or tenant> <scope>"
  config::EntraSource source = config::EntraSource::Auto;
  std::string scope;
  std::string state;  // starting | valid | refreshing | failing (token still valid) | unavailable
  std::optional<WallTime> expires_at;
  std::string last_error;  // of the last failed fetch, while the failures last
  std::uint64_t refreshes_ok = 0, refreshes_failed = 0;
  std::vector<std::string> backends;  // names of the backends that use it
};

class TokenCell {
 public:
  TokenCell(std::string name, config::EntraSource source, std::string scope);
  TokenCell(const TokenCell&) = delete;
  TokenCell& operator=(const TokenCell&) = delete;

  // --- the request path ---
  enum class Availability {
    Ready,        // a valid token: send it
    Pending,      // none valid, a fetch is under way (or about to start): wait for it
    Unavailable,  // none valid and the last fetch failed: fail over until `retry_at`
  };
  struct Lookup {
    Availability availability;
    base::MonoNanos retry_at = 0;  // Unavailable: when the next fetch starts
  };
  Lookup look(base::MonoNanos now) const;

  // Appends "Authorization: Bearer <token>\r\n"; false (nothing appended) when no token is held.
  bool append_authorization(std::string& out) const;

  // Calls `wake` once (from the service's thread) when the fetch under way ends; returns a
  // ticket for forget_waiter, or 0 without registering when no fetch is under way (then the
  // caller looks again at once).
  std::uint64_t on_next_result(std::function<void()> wake);
  void forget_waiter(std::uint64_t ticket);

  // The backend rejected the token (401/403): the service fetches a new one soon
  // (RefreshTiming::min_forced_interval).
  void request_refresh();

  // --- the credential service ---
  void add_backend(const std::string& name);
  void on_refresh_request(std::function<void()> hook);
  void fetch_started();
  void fetch_succeeded(AccessToken token, base::MonoNanos usable_until);
  void fetch_failed(std::string error, base::MonoNanos retry_at, bool token_still_valid);

  CredentialStatus status() const;
  const std::string& name() const { return name_; }

 private:
  void wake_all(std::unique_lock<std::mutex>& lock);

  const std::string name_;
  const config::EntraSource source_;
  const std::string scope_;
  std::atomic<base::MonoNanos> usable_until_{0};
  std::atomic<base::MonoNanos> retry_at_{0};
  std::atomic<bool> fetching_{true};  // until the first fetch ends, requests wait for it

  mutable std::mutex mutex_;
  std::string header_;  // "Authorization: Bearer <token>\r\n"
  std::optional<WallTime> expires_at_;
  std::string last_error_;
  bool failing_ = false;
  std::uint64_t ok_ = 0, failed_ = 0;
  std::vector<std::string> backends_;
  std::uint64_t next_ticket_ = 1;
  std::map<std::uint64_t, std::function<void()>> waiters_;
  std::function<void()> refresh_hook_;
};

}  // namespace smartlb::credentials::entra
