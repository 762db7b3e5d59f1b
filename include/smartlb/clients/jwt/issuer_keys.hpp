#pragma once
// The signing keys of one token issuer, shared by the workers that verify tokens with them and
// the key-set service that fetches them (a thread of its own).
//
// Workers read it only when a token is not in their cache (an RSA check follows, so the mutex
// here costs nothing that shows). A token whose `kid` is unknown asks for a refetch
// (request_refetch), granted at most once per `min_refetch_interval`; while a fetch is under
// way a request may wait for its result (on_next_result; clients/jwt/key_wait.hpp).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "smartlb/base/clock.hpp"
#include "smartlb/clients/jwt/key_set.hpp"

namespace smartlb::clients::jwt {

struct IssuerKeysStatus {
  std::string name;   // the discovery URL
  std::string state;  // starting | valid | failing (keys still used) | unavailable
  std::size_t keys = 0;
  std::string last_error;
  std::uint64_t fetches_ok = 0, fetches_failed = 0;
};

class IssuerKeys {
 public:
  explicit IssuerKeys(std::string name, base::Nanos min_refetch_interval = std::chrono::minutes(1));
  IssuerKeys(const IssuerKeys&) = delete;
  IssuerKeys& operator=(const IssuerKeys&) = delete;

  // --- the request path ---
  std::shared_ptr<const KeySet> current() const;  // null until a fetch succeeded
  // A token names a kid the current keys lack (or there are none). True when a fetch is under
  // way (it may be the one just asked for): its result is worth waiting for. At most one
  // refetch per min_refetch_interval is asked for.
  bool request_refetch(base::MonoNanos now);
  bool fetching() const;
  // Calls `wake` once (from the service's thread) when the fetch under way ends; 0 without
  // registering when none is under way.
  std::uint64_t on_next_result(std::function<void()> wake);
  void forget_waiter(std::uint64_t ticket);

  // --- the key-set service ---
  void on_refetch_request(std::function<void()> hook);
  void fetch_started();
  void fetch_succeeded(KeySet keys);
  void fetch_failed(std::string error);

  IssuerKeysStatus status() const;
  const std::string& name() const { return name_; }

 private:
  void wake_all(std::unique_lock<std::mutex>& lock);

  const std::string name_;
  const base::Nanos min_interval_;
  mutable std::mutex mutex_;
  std::shared_ptr<const KeySet> keys_;
  bool fetching_ = true;  // until the first fetch ends, requests may wait for it
  bool have_last_request_ = false;
  base::MonoNanos last_request_ = 0;
  std::string last_error_;
  bool failing_ = false;
  std::uint64_t ok_ = 0, failed_ = 0;
  std::uint64_t next_ticket_ = 1;
  std::map<std::uint64_t, std::function<void()>> waiters_;
  std::function<void()> refetch_hook_;
};

}  // namespace smartlb::clients::jwt
