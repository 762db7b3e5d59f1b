#include "smartlb/net/target_options.hpp"

#include <algorithm>

namespace smartlb::net {

AnswerMove move_for(const AnswerSeen& a, const std::optional<config::RetryConfig>& retry,
                    std::uint32_t retries, const std::optional<std::vector<unsigned>>& fallback_status,
                    base::Nanos time_left) {
  const auto listed = [&](const std::vector<unsigned>& codes) {
    return std::find(codes.begin(), codes.end(), a.status) != codes.end();
  };
  if (retry && retries < retry->attempts && listed(retry->on_status) &&
      (!a.hint || *a.hint <= retry->delay) && time_left > retry->delay)
    return AnswerMove::Retry;
  if (fallback_status) {
    if (!listed(*fallback_status)) return AnswerMove::Relay;
    return a.verdict.fail_over ? AnswerMove::FailOver : AnswerMove::MoveOn;
  }
  return a.verdict.fail_over ? AnswerMove::FailOver : AnswerMove::Relay;
}

}  // namespace smartlb::net
