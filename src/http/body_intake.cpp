#include "smartlb/http/body_intake.hpp"

namespace smartlb {
namespace {
constexpr std::string_view kBuffered = "MAX_REQUEST_BODY_BYTES";
constexpr std::string_view kStreamed = "MAX_STREAMED_BODY_BYTES";
}  // namespace

BodyPlan plan_known_length(const BodyLimits& limits, std::uint64_t length) {
  if (length <= limits.stream_above)
    return length <= limits.max_buffered ? BodyPlan{BodyIntake::Buffer, {}}
                                         : BodyPlan{BodyIntake::TooLarge, kBuffered};
  return length <= limits.max_streamed ? BodyPlan{BodyIntake::Stream, {}}
                                       : BodyPlan{BodyIntake::TooLarge, kStreamed};
}

ChunkedLimit chunked_buffering_limit(const BodyLimits& limits) {
  if (limits.max_buffered < limits.stream_above) return {limits.max_buffered, kBuffered};
  return {limits.max_streamed, kStreamed};
}

bool stream_chunked(const BodyLimits& limits, std::uint64_t read, bool whole) {
  if (!whole) return read > limits.stream_above;
  return read > limits.max_buffered;
}

std::string_view too_large_message(std::string_view limit) {
  if (limit == kStreamed)
    return "Request body too large; the limit for streamed bodies is MAX_STREAMED_BODY_BYTES.";
  return "Request body too large; the limit is MAX_REQUEST_BODY_BYTES.";
}

}  // namespace smartlb
