#pragma once
// When a credential's token is fetched again: the timing, with no I/O and no clock of its own
// (times are passed in, monotonic nanoseconds), so that it is tested with a manual clock.
//
// Like Azure's SDKs: a token is refreshed 5 minutes before it expires, or at half its life
// when it lives less than 10 minutes. A failed fetch is retried with exponential backoff
// (1 s, 2 s, 4 s, ... up to 60 s); while the current token is still valid the retries stay
// well inside its remaining life, so that several happen before it runs out.
#include <chrono>

#include "smartlb/base/clock.hpp"

namespace smartlb::credentials::entra {

struct RefreshTiming {
  base::Nanos refresh_before = std::chrono::minutes(5);
  base::Nanos first_retry = std::chrono::seconds(1);
  base::Nanos max_retry = std::chrono::seconds(60);
  // A token this close to expiry (at most a quarter of its life) is not sent any more: the
  // request could reach the backend after it expired.
  base::Nanos expiry_margin = std::chrono::seconds(10);
  // A backend that rejects the token (401/403) asks for a new one, at most this often: a
  // revoked token is replaced at once, a missing role assignment costs one request a minute.
  base::Nanos min_forced_interval = std::chrono::seconds(60);
};

class RefreshSchedule {
 public:
  explicit RefreshSchedule(RefreshTiming t = {}) : t_(t) {}

  // When the next fetch should start (0 before the first: at once).
  base::MonoNanos next_fetch() const { return next_fetch_; }
  // A token fetched at `now` that expires at `expires`.
  void succeeded(base::MonoNanos now, base::MonoNanos expires);
  void failed(base::MonoNanos now);
  // A backend rejected the token: fetch again now, or once the last fetch is
  // min_forced_interval old.
  void refresh_requested(base::MonoNanos now);

  // Whether there is a token good to send at `now`, and until when.
  bool token_valid(base::MonoNanos now) const { return now < usable_until(); }
  base::MonoNanos usable_until() const { return has_token_ ? expires_ - margin_ : 0; }
  base::MonoNanos expires() const { return expires_; }
  unsigned consecutive_failures() const { return failures_; }

 private:
  RefreshTiming t_;
  base::MonoNanos next_fetch_ = 0;
  base::MonoNanos expires_ = 0;
  base::MonoNanos margin_ = 0;
  base::MonoNanos last_fetch_ = 0;  // when the last fetch ended
  bool fetched_ = false;
  bool has_token_ = false;
  unsigned failures_ = 0;
};

}  // namespace smartlb::credentials::entra
