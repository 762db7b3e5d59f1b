#pragma once
// How a request body is taken in: buffered whole (so that failover can send it again), or
// streamed to one backend through a fixed buffer (a large upload), or refused with 413.
// docs/stateful-apis.md, "Large uploads". Pure functions.
//
// A request (JSON, or anything but an upload) is buffered up to MAX_REQUEST_BODY_BYTES and keeps
// failover, rules on its model, overrides, quotas and the token estimate whatever its size (a chat
// completion with images is 5-50 MiB of base64); a larger one gets 413. An upload (multipart, raw
// bytes: files, upload parts, audio) is buffered up to the threshold (STREAM_REQUEST_BODY_BYTES,
// and never above MAX_REQUEST_BODY_BYTES), streamed above it, and refused above
// MAX_STREAMED_BODY_BYTES. Either way the limits never invert: when a body of n bytes is refused,
// every larger body of its kind is too, whether it came with a Content-Length or chunked.
#include <cstdint>
#include <string_view>

namespace smartlb::http {

struct BodyLimits {
  std::uint64_t stream_above = 0;  // STREAM_REQUEST_BODY_BYTES: a larger upload is streamed
  std::uint64_t max_buffered = 0;  // MAX_REQUEST_BODY_BYTES: any buffered body
  std::uint64_t max_streamed = 0;  // MAX_STREAMED_BODY_BYTES
  // The size over which an upload streams: the threshold, and never above the buffered limit
  // (a body between the two would otherwise be refused while larger ones streamed).
  std::uint64_t upload_threshold() const { return stream_above < max_buffered ? stream_above : max_buffered; }
};

enum class BodyKind : std::uint8_t {
  Request,  // buffered or refused: JSON and every other API request
  Upload,   // may stream above the threshold: multipart/*, application/octet-stream, audio/*, ...
};

// From the request's Content-Type: multipart bodies and raw media or bytes are uploads; anything
// else, an absent type included, is a request.
BodyKind body_kind(std::string_view content_type);

enum class BodyIntake : std::uint8_t { Buffer, Stream, TooLarge };

struct BodyPlan {
  BodyIntake intake = BodyIntake::Buffer;
  std::string_view limit{};  // TooLarge: the setting the body is over
};

// A body whose Content-Length is `length`.
BodyPlan plan_known_length(const BodyLimits& limits, BodyKind kind, std::uint64_t length);

// A chunked body is buffered first, until it ends, or (an upload) grows past the threshold and
// goes on streamed. Meanwhile the parser holds it to `bytes` (past them: 413 naming `limit`):
// the buffered limit for a request, the streamed limit for an upload. `stream_past`: the size
// past which an unfinished upload is streamed (never, for a request).
struct ChunkedLimit {
  std::uint64_t bytes = 0;
  std::string_view limit{};
  std::uint64_t stream_past = UINT64_MAX;
};
ChunkedLimit chunked_buffering_limit(const BodyLimits& limits, BodyKind kind);

// Whether a chunked upload, of which `read` bytes are in memory, is streamed: when its end was
// not seen (`whole` false: it grew past the threshold), or when it came whole but over the
// buffered limit (the last read overshot). A request never is.
bool stream_chunked(const BodyLimits& limits, BodyKind kind, std::uint64_t read, bool whole);

// The 413's message for a body over `limit` (a setting's name).
std::string_view too_large_message(std::string_view limit);

}  // namespace smartlb::http
