#pragma once
// How a request body is taken in: buffered whole (so that failover can send it again), or
// streamed to one backend through a fixed buffer (a large upload), or refused with 413.
// docs/stateful-apis.md, "Large uploads". Pure functions.
#include <cstdint>
#include <string_view>

namespace smartlb {

struct BodyLimits {
  std::uint64_t stream_above = 0;  // STREAM_REQUEST_BODY_BYTES: a larger body is streamed
  std::uint64_t max_buffered = 0;  // MAX_REQUEST_BODY_BYTES: bounds buffered bodies only
  std::uint64_t max_streamed = 0;  // MAX_STREAMED_BODY_BYTES
};

enum class BodyIntake : std::uint8_t { Buffer, Stream, TooLarge };

struct BodyPlan {
  BodyIntake intake = BodyIntake::Buffer;
  std::string_view limit{};  // TooLarge: the setting the body is over
};

// A body whose Content-Length is `length`: buffered up to the threshold (and within the
// buffered limit), streamed above it (within the streamed limit).
BodyPlan plan_known_length(const BodyLimits& limits, std::uint64_t length);

// A chunked body is buffered first, until it ends or grows past the threshold. While it is,
// the parser holds it to `bytes` (past them: 413 naming `limit`): the buffered limit when it
// comes before the threshold, else the streamed limit (a read may overshoot the threshold by
// what one read brings, and the body goes on streamed).
struct ChunkedLimit {
  std::uint64_t bytes = 0;
  std::string_view limit{};
};
ChunkedLimit chunked_buffering_limit(const BodyLimits& limits);

// Whether a chunked body, of which `read` bytes are in memory, is streamed: when its end was
// not seen (`whole` false: it grew past the threshold), or when it came whole but over the
// buffered limit (the last read overshot).
bool stream_chunked(const BodyLimits& limits, std::uint64_t read, bool whole);

// The 413's message for a body over `limit` (a setting's name).
std::string_view too_large_message(std::string_view limit);

}  // namespace smartlb
