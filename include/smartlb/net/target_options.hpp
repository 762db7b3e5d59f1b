#pragma once
// What a target's TrueFoundry options (retry_config, fallback_status_codes) make of one answer
// smartlb has judged (docs/routing-policy.md, From TrueFoundry). Without them smartlb's own
// judgement stands: fail over at once on what judge_status says, else relay. Pure.
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/routing/outcome.hpp"

namespace smartlb::net {

enum class AnswerMove : std::uint8_t {
  Relay,     // the answer goes to the client (a failure's cooldown is still recorded)
  FailOver,  // a failure: cool the target down, try the next at once
  MoveOn,    // the file's fallback status that is no failure of the backend (a 400): the next
             // target, nothing against this one
  Retry,     // the same target again, after the retry's delay
};

struct AnswerSeen {
  unsigned status = 0;
  routing::Verdict verdict;                       // smartlb's judgement of the status
  std::optional<std::chrono::milliseconds> hint;  // the backend's own retry hint
};

// `retries`: how many times this target was retried for this request already; `time_left`: of
// the request's deadline. A retry never waits past a cooldown the backend asked for (a 429 with
// Retry-After: 30 is not retried after 100 ms: it moves on), nor past the deadline.
AnswerMove move_for(const AnswerSeen& answer, const std::optional<config::RetryConfig>& retry,
                    std::uint32_t retries, const std::optional<std::vector<unsigned>>& fallback_status,
                    base::Nanos time_left);

}  // namespace smartlb::net
