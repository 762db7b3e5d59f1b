#pragma once
// The spans of one finished request, made from its RequestRecord after it ended: a SERVER span
// for the client's request and a CLIENT span for each upstream attempt under it (a failover is
// two CLIENT spans), with OpenTelemetry's GenAI and HTTP attributes and smartlb's own
// (docs/observability.md, "Traces"). Never a prompt, a completion, a header value or a key.
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::tracing {

enum class SpanKind : std::uint8_t { Server = 2, Client = 3 };          // OTLP's numbers
enum class SpanStatus : std::uint8_t { Unset = 0, Ok = 1, Error = 2 };  // likewise

using AttributeValue = std::variant<std::string, std::int64_t, double, bool, std::vector<std::string>>;
struct Attribute {
  std::string_view key;  // a literal, plain ASCII (the encoder writes it unescaped)
  AttributeValue value;
};

struct Span {
  telemetry::TraceId trace_id{};
  telemetry::SpanId span_id{};
  telemetry::SpanId parent_span_id{};  // all zero: a root span
  std::string trace_state;
  std::string name;
  SpanKind kind = SpanKind::Server;
  std::int64_t start_unix_ns = 0;
  std::int64_t end_unix_ns = 0;
  std::vector<Attribute> attributes;
  SpanStatus status = SpanStatus::Unset;

  const AttributeValue* attribute(std::string_view key) const;
};

// gen_ai.operation.name for a request path ("chat", "text_completion", "embeddings"), or ""
// when the path is no GenAI operation (files, batches, models).
std::string_view genai_operation(std::string_view path);

// The request's spans, SERVER first. Only for a record whose trace is on.
std::vector<Span> spans_of(const telemetry::RequestRecord& rec);
// How many that is (1 + its attempts, at most RequestRecord::kMaxAttempts of them).
std::size_t span_count(const telemetry::RequestRecord& rec);

}  // namespace smartlb::tracing
