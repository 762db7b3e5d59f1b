#pragma once
// A request's bounded wait for capacity instead of smartlb's own 429 (a priority class's
// max_queue_seconds; docs/client-budgets.md, "Waiting for capacity"). When a refusal says when
// room comes back (a cooldown's end, a declared quota's window, a client budget's) and that is
// within what is left of the class's wait and of REQUEST_TIMEOUT_SECONDS, the request waits that
// long and is routed again; a refusal no clock predicts (the in-flight cap: a slot frees when any
// of the caller's requests ends) is looked at again every kCapacityPollStep. A refusal whose room
// comes back only after the wait could end is answered at once, with its Retry-After: waiting
// would only delay the same 429. Whatever the class, a first refusal that only smartlb's own
// prediction made, whose room comes back within the grace (CAPACITY_GRACE_MS), is waited out
// too: a prediction may delay a request a backend could serve, never refuse it. Plain data in, a
// wait out.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

#include "smartlb/base/clock.hpp"

namespace smartlb::clients {

inline constexpr base::Nanos kCapacityPollStep = std::chrono::milliseconds(50);
// A refusal that says "now" (a window giving room back as it is read) still waits this long, so
// that a request never spins.
inline constexpr base::Nanos kCapacityMinWait = std::chrono::milliseconds(1);

struct CapacityWaitPolicy {
  base::Nanos max_wait{0};  // the class's max_queue_seconds (0: never waits)
  // Its max_queue_length: how many may wait at once (the caller takes a place in the queue,
  // atomically, once this says to wait).
  std::uint32_t max_waiting = 0;
  // CAPACITY_GRACE_MS: a request's first refusal, when only a prediction made it and it says its
  // room comes back within this, is waited out even where max_wait is shorter (once: refused
  // again, it is answered).
  base::Nanos grace{0};
};

struct CapacityWaitAsk {
  base::Nanos waited{0};                   // by this request so far (the sum of its waits)
  std::optional<base::Nanos> retry_after;  // when the refusal says room comes back; none: unknown
  base::Nanos request_left{0};             // of REQUEST_TIMEOUT_SECONDS
  // No backend refused: smartlb's own prediction (a backend's reports, a declared quota, a
  // class's reserve) has no room until retry_after. Only such a refusal gets the grace: one a
  // backend made (its 429, a failure's cooldown) is the client's to retry as it says, and a
  // client's own budget is a limit, so both are answered at once.
  bool predicted = false;
};

// How long to wait before routing the request again; nullopt: answer the refusal now.
std::optional<base::Nanos> capacity_wait(const CapacityWaitPolicy& policy, const CapacityWaitAsk& ask);

// A request short of its replica's share of a max_in_flight held with other replicas, while an
// ask for more is out (BudgetRefusal::awaiting_share: one round trip to Redis), waits for the
// answer whatever its class: at most kShareWaitMax in all, looking every kSharePollStep.
inline constexpr base::Nanos kSharePollStep = std::chrono::milliseconds(2);
inline constexpr base::Nanos kShareWaitMax = std::chrono::milliseconds(250);
inline CapacityWaitPolicy share_wait_policy(const CapacityWaitPolicy& of_class) {
  return {std::max(of_class.max_wait, kShareWaitMax), of_class.max_waiting, of_class.grace};
}

}  // namespace smartlb::clients
