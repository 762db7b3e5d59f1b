#pragma once
// Passive health, both steps, for one attempt: what its answer means (judge_answer: fail over or
// not, why, for how long the backend asked, what it reports remaining), and what a failed one
// changes (account_failure: the target's cooldown, its failure_tolerance breaker). Plain
// observations in, BackendStates and FailureBreakers changed: the forwarder only logs.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/http/throttle_fields.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/failure_breakers.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/routing/throttle_headers.hpp"

namespace smartlb::routing {

struct Judged {
  Verdict verdict;                                // fail over or relay
  std::optional<std::chrono::milliseconds> hint;  // the backend's retry hint (a failover's only)
  RateLimitReport report;                         // what it says remains (any answer)
};
// `names_model`: the request names a deployment or model (a 404 then means "not here").
// `quota_window` tells a long quota's 429 from a rate limit's.
Judged judge_answer(unsigned status, const http::ThrottleHeaders& h, bool names_model,
                    base::Nanos quota_window, std::chrono::system_clock::time_point wall_now);

// A target's failure_tolerance (model_configs): none, or this many failures a minute.
struct BreakerRule {
  std::optional<std::uint32_t> allowed_per_minute;
  base::Nanos cooldown{0};
  std::string_view target_id;  // for the replicas' shared count and its log
};
struct Accounted {
  std::chrono::milliseconds cooldown{0};  // applied to the target (or its backend)
  bool breaker_tripped = false;           // and it took the target out for the breaker's cooldown
};
// A failed attempt of `m` for the client's `deployment`, sent at `sent` (0: unknown): the
// target cools down for `hint` (clamped) or the default; a failure its breaker counts (not a
// missing credential: nothing was sent) may trip it, or is told to the replicas' shared count.
Accounted account_failure(BackendStates& states, FailureBreakers& breakers, const PoolMember& m,
                          std::string_view deployment, const BreakerRule& breaker, const Verdict& v,
                          std::optional<std::chrono::milliseconds> hint, base::MonoNanos sent,
                          base::MonoNanos now);

}  // namespace smartlb::routing
