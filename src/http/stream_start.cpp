#include "smartlb/http/stream_start.hpp"

namespace smartlb::http {

StartVerdict StreamStart::advance(std::string_view held) {
  // Only the first `limit_` bytes are read, so the verdict does not depend on how the bytes
  // were split: an event that completes past the limit is not seen, however it arrived.
  const std::string_view within = held.substr(0, limit_);
  if (verdict_ == StartVerdict::Hold && within.size() > fed_) {
    reader_.feed(within.substr(fed_), *this);
    fed_ = within.size();
  }
  if (verdict_ == StartVerdict::Hold && held.size() >= limit_)
    decide(StartVerdict::Release, StartReason::Limit);
  return verdict_;
}

void StreamStart::on_event(const SseEvent& event) {
  if (verdict_ != StartVerdict::Hold) return;  // decided by an earlier event of the same run
  // No data, or one empty data line: an SSE client dispatches nothing (a keep-alive).
  if (event.data.empty()) return;
  if (event.type == "error") {
    const StartReason r = classify_stream_error(event.data);
    decide(r == StartReason::ServerError ? StartVerdict::FailOver : StartVerdict::Release, r);
    return;
  }
  if (event.data == "[DONE]") {
    decide(StartVerdict::Release, StartReason::Done);
    return;
  }
  switch (const StartReason r = judge_stream_event(event.data)) {
    case StartReason::None:
      return;  // nothing yet: the next event decides
    case StartReason::ServerError:
      decide(StartVerdict::FailOver, r);
      return;
    default:
      decide(StartVerdict::Release, r);
      return;
  }
}

}  // namespace smartlb::http
