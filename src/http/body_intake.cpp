#include "smartlb/http/body_intake.hpp"

#include "smartlb/base/text.hpp"

namespace smartlb::http {
namespace {
constexpr std::string_view kBuffered = "MAX_REQUEST_BODY_BYTES";
constexpr std::string_view kStreamed = "MAX_STREAMED_BODY_BYTES";

bool starts_with_type(std::string_view content_type, std::string_view type) {
  return content_type.size() >= type.size() && base::iequals(content_type.substr(0, type.size()), type);
}
}  // namespace

BodyKind body_kind(std::string_view content_type) {
  content_type = base::trim_ows(content_type);
  for (std::string_view upload : {"multipart/", "application/octet-stream", "audio/", "video/", "image/"})
    if (starts_with_type(content_type, upload)) return BodyKind::Upload;
  return BodyKind::Request;
}

BodyPlan plan_known_length(const BodyLimits& limits, BodyKind kind, std::uint64_t length) {
  if (kind == BodyKind::Request)
    return length <= limits.max_buffered ? BodyPlan{BodyIntake::Buffer, {}}
                                         : BodyPlan{BodyIntake::TooLarge, kBuffered};
  if (length <= limits.upload_threshold()) return BodyPlan{BodyIntake::Buffer, {}};
  return length <= limits.max_streamed ? BodyPlan{BodyIntake::Stream, {}}
                                       : BodyPlan{BodyIntake::TooLarge, kStreamed};
}

ChunkedLimit chunked_buffering_limit(const BodyLimits& limits, BodyKind kind) {
  if (kind == BodyKind::Request) return {limits.max_buffered, kBuffered};
  return {limits.max_streamed, kStreamed, limits.upload_threshold()};
}

bool stream_chunked(const BodyLimits& limits, BodyKind kind, std::uint64_t read, bool whole) {
  if (kind == BodyKind::Request) return false;
  if (!whole) return read > limits.upload_threshold();
  return read > limits.max_buffered;
}

std::string_view too_large_message(std::string_view limit) {
  if (limit == kStreamed)
    return "Request body too large; the limit for streamed bodies is MAX_STREAMED_BODY_BYTES.";
  return "Request body too large; the limit is MAX_REQUEST_BODY_BYTES.";
}

}  // namespace smartlb::http
