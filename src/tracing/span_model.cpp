#include "smartlb/tracing/span_model.hpp"

#include <algorithm>

namespace smartlb::tracing {
namespace {

// GenAI's span name: "{operation} {model}"; HTTP's "{method}" for what is no GenAI operation.
std::string span_name(std::string_view operation, std::string_view model, std::string_view method) {
  if (operation.empty()) return std::string(method);
  std::string name(operation);
  if (!model.empty()) name.append(" ").append(model);
  return name;
}

class Attributes {
 public:
  explicit Attributes(std::vector<Attribute>& out) : out_(out) {}
  void text(std::string_view key, std::string_view v) {
    if (!v.empty()) out_.push_back({key, std::string(v)});
  }
  void integer(std::string_view key, std::int64_t v) { out_.push_back({key, v}); }
  void count(std::string_view key, std::int64_t v) {  // -1: unknown
    if (v >= 0) out_.push_back({key, v});
  }
  void seconds(std::string_view key, base::MonoNanos d) {
    out_.push_back({key, static_cast<double>(d) / 1e9});
  }
  void money(std::string_view key, cost::PicoUnits v) {  // -1: unknown; else in currency units
    if (v >= 0) out_.push_back({key, cost::money_as_units(v)});
  }
  void flag(std::string_view key, bool v) {
    if (v) out_.push_back({key, true});
  }

 private:
  std::vector<Attribute>& out_;
};

std::string_view provider(const telemetry::AttemptRecord& a) {
  switch (a.provider) {
    case telemetry::AttemptRecord::Provider::AzureOpenAI:
      return "azure.ai.openai";
    case telemetry::AttemptRecord::Provider::Anthropic:
      return "anthropic";
    default:
      return "openai";
  }
}

// The attempt that produced the client's answer, or none.
const telemetry::AttemptRecord* served_attempt(const telemetry::RequestRecord& rec, std::size_t shown) {
  if (rec.served_by < 0 || shown == 0) return nullptr;
  const telemetry::AttemptRecord& last = rec.attempts[shown - 1];
  return last.cause == routing::FailureCause::None && static_cast<int>(last.backend) == rec.served_by
             ? &last
             : nullptr;
}

// What the answer said of itself: the response's model, id, finish reasons and usage.
void add_response(Attributes& at, std::vector<Attribute>& out, const telemetry::RequestRecord& rec) {
  at.text("gen_ai.response.model", rec.response.model);
  at.text("gen_ai.response.id", rec.response.id);
  if (!rec.response.finish_reasons.empty())
    out.push_back({"gen_ai.response.finish_reasons", rec.response.finish_reasons});
  at.count("gen_ai.usage.input_tokens", rec.prompt_tokens);
  at.count("gen_ai.usage.output_tokens", rec.completion_tokens);
}

std::int64_t unix_ns(const telemetry::RequestRecord& rec, base::MonoNanos t) {
  return rec.trace.wall_start_unix_ns + (t - rec.start);
}

Span server_span(const telemetry::RequestRecord& rec, std::string_view operation,
                 const telemetry::AttemptRecord* served) {
  Span s;
  s.trace_id = rec.trace.trace_id;
  s.span_id = rec.trace.span_id;
  if (rec.trace.has_parent) s.parent_span_id = rec.trace.parent_id;
  s.trace_state = rec.trace.tracestate;
  s.kind = SpanKind::Server;
  s.name = span_name(operation, rec.deployment, rec.method);
  s.start_unix_ns = unix_ns(rec, rec.start);
  s.end_unix_ns = unix_ns(rec, std::max(rec.end, rec.start));
  s.attributes.reserve(24);  // at most 24: one allocation
  Attributes at(s.attributes);
  at.text("gen_ai.operation.name", operation);
  at.text("gen_ai.request.model", rec.deployment);
  if (served) at.text("gen_ai.provider.name", provider(*served));
  add_response(at, s.attributes, rec);
  at.text("http.request.method", rec.method);
  at.text("url.path", rec.path);
  if (rec.status != 0) at.integer("http.response.status_code", rec.status);
  at.text("smartlb.request_id", rec.request_id);
  at.text("smartlb.client", rec.client);
  at.text("smartlb.rule", rec.rule);
  at.text("smartlb.priority_class", rec.priority_class);
  if (served) at.text("smartlb.backend", served->backend_name);
  at.integer("smartlb.attempts", static_cast<std::int64_t>(rec.attempt_count));
  at.money("smartlb.cost", rec.cost);
  if (rec.cost >= 0) at.text("smartlb.cost.model", rec.cost_model);
  at.flag("smartlb.client_limited", rec.client_limited);
  at.text("smartlb.auth_failure", rec.auth_failure);
  at.flag("smartlb.client_aborted", rec.client_aborted);
  at.flag("smartlb.upstream_aborted", rec.upstream_aborted);
  if (rec.event_stream && rec.first_byte != 0)
    at.seconds("smartlb.stream.time_to_first_byte", rec.first_byte - rec.start);
  // A server's error is a 5xx, or an answer cut short; a 4xx is the client's.
  if (rec.upstream_aborted)
    at.text("error.type", "upstream_aborted");
  else if (rec.status >= 500)
    at.text("error.type", std::to_string(rec.status));
  if (rec.upstream_aborted || rec.status >= 500) s.status = SpanStatus::Error;
  return s;
}

Span client_span(const telemetry::RequestRecord& rec, std::size_t i, std::string_view operation,
                 bool served) {
  const telemetry::AttemptRecord& a = rec.attempts[i];
  Span s;
  s.trace_id = rec.trace.trace_id;
  s.span_id = a.span_id;
  s.parent_span_id = rec.trace.span_id;
  s.trace_state = rec.trace.tracestate;
  s.kind = SpanKind::Client;
  s.name = span_name(operation, a.deployment, rec.method);
  // An attempt that never left (no credential) has no send time: it is the moment it failed.
  const base::MonoNanos end = a.ended != 0 ? a.ended : std::max(rec.end, rec.start);
  s.start_unix_ns = unix_ns(rec, a.sent != 0 ? a.sent : end);
  s.end_unix_ns = unix_ns(rec, end);
  s.attributes.reserve(20);  // at most 20: one allocation
  Attributes at(s.attributes);
  at.text("gen_ai.operation.name", operation);
  at.text("gen_ai.request.model", a.deployment);
  at.text("gen_ai.provider.name", provider(a));
  if (served) add_response(at, s.attributes, rec);
  at.text("server.address", a.server_address);
  if (a.server_port != 0) at.integer("server.port", a.server_port);
  at.text("http.request.method", rec.method);
  if (a.status != 0) at.integer("http.response.status_code", a.status);
  at.text("smartlb.backend", a.backend_name);
  at.integer("smartlb.attempt", static_cast<std::int64_t>(i + 1));
  at.flag("smartlb.probe", a.probe);
  if (a.cause != routing::FailureCause::None) {
    at.text("smartlb.cooldown.cause", to_string(a.cause));
    at.integer("smartlb.cooldown.ms", a.cooldown_ms);
    at.flag("smartlb.breaker_tripped", a.breaker_tripped);
  }
  if (served && rec.event_stream && rec.first_byte != 0 && a.sent != 0)
    at.seconds("smartlb.stream.time_to_first_byte", rec.first_byte - a.sent);
  // A client's error is any status from 400, or no answer at all (named by its cause).
  std::string error;
  if (a.status >= 400)
    error = std::to_string(a.status);
  else if (a.cause != routing::FailureCause::None)
    error = to_string(a.cause);
  else if (served && rec.upstream_aborted)
    error = "upstream_aborted";
  if (!error.empty()) {
    at.text("error.type", error);
    s.status = SpanStatus::Error;
  }
  return s;
}

}  // namespace

const AttributeValue* Span::attribute(std::string_view key) const {
  for (const Attribute& a : attributes)
    if (a.key == key) return &a.value;
  return nullptr;
}

std::string_view genai_operation(std::string_view path) {
  if (path.ends_with("/chat/completions")) return "chat";
  if (path.ends_with("/completions")) return "text_completion";
  if (path.ends_with("/embeddings")) return "embeddings";
  if (path.ends_with("/responses")) return "chat";  // the Responses API
  return {};
}

std::size_t span_count(const telemetry::RequestRecord& rec) {
  return 1 + std::min(rec.attempt_count, telemetry::RequestRecord::kMaxAttempts);
}

std::vector<Span> spans_of(const telemetry::RequestRecord& rec) {
  const std::size_t shown = std::min(rec.attempt_count, telemetry::RequestRecord::kMaxAttempts);
  const std::string_view operation = genai_operation(rec.path);
  const telemetry::AttemptRecord* served = served_attempt(rec, shown);
  std::vector<Span> spans;
  spans.reserve(1 + shown);
  spans.push_back(server_span(rec, operation, served));
  for (std::size_t i = 0; i < shown; ++i)
    spans.push_back(client_span(rec, i, operation, served == &rec.attempts[i]));
  return spans;
}

}  // namespace smartlb::tracing
