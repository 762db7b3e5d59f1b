// A request's trace as the request path begins it, and the spans made from its record: one
// SERVER span, one CLIENT span per attempt under it, with the ids, times and attributes exact.
#include "smartlb/tracing/span_model.hpp"

#include <gtest/gtest.h>

#include "smartlb/tracing/request_trace.hpp"
#include "smartlb/tracing/trace_context.hpp"

namespace smartlb::tracing {
namespace span_model_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr std::string_view kParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
constexpr base::MonoNanos kStart = 5'000'000'000;
constexpr std::int64_t kWall = 1'700'000'000'000'000'000;

std::string text(const Span& s, std::string_view key) {
  const AttributeValue* v = s.attribute(key);
  return v && std::holds_alternative<std::string>(*v) ? std::get<std::string>(*v) : "<none>";
}
std::int64_t integer(const Span& s, std::string_view key) {
  const AttributeValue* v = s.attribute(key);
  return v && std::holds_alternative<std::int64_t>(*v) ? std::get<std::int64_t>(*v) : -99;
}

TEST(RequestTrace, ContinuesAValidParentWithItsTraceState) {
  base::ScriptedRandom rng({0x1111111111111111});
  telemetry::RequestTrace t;
  const std::string_view parents[] = {kParent};
  const std::string_view states[] = {"rojo=1", "congo=2"};
  begin_request_trace(t, Sampler{}, parents, states, rng, kWall);
  EXPECT_TRUE(t.on);
  EXPECT_TRUE(t.has_parent);
  EXPECT_TRUE(t.sampled);  // parent-based, and the parent is sampled
  EXPECT_EQ(to_hex(t.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(to_hex(t.parent_id), "00f067aa0ba902b7");
  EXPECT_EQ(to_hex(t.span_id), "1111111111111111");
  EXPECT_EQ(t.tracestate, "rojo=1,congo=2");
  EXPECT_EQ(t.wall_start_unix_ns, kWall);
}

TEST(RequestTrace, WithoutOneValidParentANewTraceBeginsAndTraceStateIsNotRead) {
  base::ScriptedRandom rng({0x0102030405060708, 0x090a0b0c0d0e0f10, 0x2222222222222222});
  const std::string_view two[] = {kParent, kParent};
  const std::string_view states[] = {"rojo=1"};
  telemetry::RequestTrace t;
  begin_request_trace(t, Sampler({SamplerKind::ParentBasedAlwaysOff}), two, states, rng, kWall);
  EXPECT_FALSE(t.has_parent);
  EXPECT_FALSE(t.sampled);  // a root, under parentbased_always_off
  EXPECT_EQ(to_hex(t.trace_id), "0102030405060708090a0b0c0d0e0f10");
  EXPECT_EQ(to_hex(t.span_id), "2222222222222222");
  EXPECT_EQ(t.tracestate, "");
  const std::string_view bad[] = {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"};
  begin_request_trace(t, Sampler{}, bad, states, rng, kWall);
  EXPECT_FALSE(t.has_parent);
  EXPECT_TRUE(t.sampled);
}

TEST(RequestTrace, AnAttemptGetsItsOwnSpanAsTheUpstreamParent) {
  base::ScriptedRandom rng({0x1111111111111111, 0x3333333333333333});
  telemetry::RequestTrace t;
  const std::string_view parents[] = {kParent};
  const std::string_view states[] = {"rojo=1"};
  begin_request_trace(t, Sampler({SamplerKind::AlwaysOff}), parents, states, rng, kWall);
  telemetry::AttemptRecord a;
  std::string head;
  begin_attempt_trace(t, a, rng, head);
  EXPECT_EQ(to_hex(a.span_id), "3333333333333333");
  // Not sampled: the trace id propagates with the sampled flag 0, under the attempt's span.
  EXPECT_EQ(head,
            "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-3333333333333333-00\r\ntracestate: rojo=1\r\n");
  EXPECT_TRUE(is_trace_context_field("TraceParent"));
  EXPECT_TRUE(is_trace_context_field("tracestate"));
  EXPECT_FALSE(is_trace_context_field("traceparent2"));
}

// A chat request that failed over: 429 from east, then served by west (a stream).
telemetry::RequestRecord failed_over_stream() {
  telemetry::RequestRecord r;
  r.method = "POST";
  r.path = "/openai/deployments/gpt-4o/chat/completions";
  r.deployment = "gpt-4o";
  r.request_id = "req-1";
  r.client = "team-a";
  r.rule = "default";
  r.start = kStart;
  r.end = kStart + 900'000'000;
  r.status = 200;
  r.prompt_tokens = 12;
  r.completion_tokens = 34;
  r.response.model = "gpt-4o-2024-08-06";
  r.response.id = "chatcmpl-9";
  r.response.finish_reasons = {"stop"};
  r.event_stream = true;
  r.first_byte = kStart + 300'000'000;
  base::ScriptedRandom rng({0xaaaaaaaaaaaaaaaa, 0xbbbbbbbbbbbbbbbb, 0xcccccccccccccccc});
  const std::string_view parents[] = {kParent};
  begin_request_trace(r.trace, Sampler{}, parents, {}, rng, kWall);
  std::string head;
  telemetry::AttemptRecord& east = r.add_attempt();
  east.backend = 0;
  east.status = 429;
  east.cause = routing::FailureCause::Throttled;
  east.cooldown_ms = 2000;
  east.deployment = "gpt-4o";
  east.sent = kStart + 10'000'000;
  east.ended = kStart + 60'000'000;
  east.backend_name = "east";
  east.server_address = "east.openai.azure.com";
  east.server_port = 443;
  east.provider = telemetry::AttemptRecord::Provider::AzureOpenAI;
  begin_attempt_trace(r.trace, east, rng, head);
  telemetry::AttemptRecord& west = r.add_attempt();
  west.backend = 1;
  west.status = 200;
  west.deployment = "gpt-4o-west";
  west.sent = kStart + 70'000'000;
  west.backend_name = "west";
  west.server_address = "10.0.0.5";
  west.server_port = 8000;
  begin_attempt_trace(r.trace, west, rng, head);
  r.served_by = 1;
  return r;
}

TEST(SpanModel, AFailoverIsTwoClientSpansUnderOneServerSpan) {
  const telemetry::RequestRecord r = failed_over_stream();
  const std::vector<Span> spans = spans_of(r);
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(span_count(r), 3u);
  const Span& server = spans[0];
  EXPECT_EQ(server.kind, SpanKind::Server);
  EXPECT_EQ(server.name, "chat gpt-4o");
  EXPECT_EQ(to_hex(server.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(to_hex(server.span_id), "aaaaaaaaaaaaaaaa");
  EXPECT_EQ(to_hex(server.parent_span_id), "00f067aa0ba902b7");
  EXPECT_EQ(server.start_unix_ns, kWall);
  EXPECT_EQ(server.end_unix_ns, kWall + 900'000'000);
  EXPECT_EQ(server.status, SpanStatus::Unset);
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(spans[i].kind, SpanKind::Client);
    EXPECT_EQ(spans[i].trace_id, server.trace_id);
    EXPECT_EQ(spans[i].parent_span_id, server.span_id);
  }
  EXPECT_EQ(to_hex(spans[1].span_id), "bbbbbbbbbbbbbbbb");
  EXPECT_EQ(to_hex(spans[2].span_id), "cccccccccccccccc");
  EXPECT_EQ(spans[1].start_unix_ns, kWall + 10'000'000);
  EXPECT_EQ(spans[1].end_unix_ns, kWall + 60'000'000);
  EXPECT_EQ(spans[2].start_unix_ns, kWall + 70'000'000);
  EXPECT_EQ(spans[2].end_unix_ns, kWall + 900'000'000);  // the served attempt ends with the request
}

TEST(SpanModel, TheServerSpansAttributes) {
  const Span s = spans_of(failed_over_stream())[0];
  EXPECT_EQ(text(s, "gen_ai.operation.name"), "chat");
  EXPECT_EQ(text(s, "gen_ai.request.model"), "gpt-4o");
  EXPECT_EQ(text(s, "gen_ai.provider.name"), "openai");  // the served backend's
  EXPECT_EQ(text(s, "gen_ai.response.model"), "gpt-4o-2024-08-06");
  EXPECT_EQ(text(s, "gen_ai.response.id"), "chatcmpl-9");
  EXPECT_EQ(std::get<std::vector<std::string>>(*s.attribute("gen_ai.response.finish_reasons")),
            std::vector<std::string>{"stop"});
  EXPECT_EQ(integer(s, "gen_ai.usage.input_tokens"), 12);
  EXPECT_EQ(integer(s, "gen_ai.usage.output_tokens"), 34);
  EXPECT_EQ(text(s, "http.request.method"), "POST");
  EXPECT_EQ(text(s, "url.path"), "/openai/deployments/gpt-4o/chat/completions");
  EXPECT_EQ(integer(s, "http.response.status_code"), 200);
  EXPECT_EQ(text(s, "smartlb.request_id"), "req-1");
  EXPECT_EQ(text(s, "smartlb.client"), "team-a");
  EXPECT_EQ(text(s, "smartlb.rule"), "default");
  EXPECT_EQ(text(s, "smartlb.backend"), "west");
  EXPECT_EQ(integer(s, "smartlb.attempts"), 2);
  EXPECT_DOUBLE_EQ(std::get<double>(*s.attribute("smartlb.stream.time_to_first_byte")), 0.3);
  EXPECT_EQ(s.attribute("error.type"), nullptr);
  EXPECT_EQ(s.attribute("smartlb.client_aborted"), nullptr);  // flags only when set
}

TEST(SpanModel, APricedAnswerHasItsCostOnTheServerSpan) {
  telemetry::RequestRecord r = failed_over_stream();
  EXPECT_EQ(spans_of(r)[0].attribute("smartlb.cost"), nullptr) << "no price, no cost";
  r.cost = 42'500'000;  // $0.0000425 in pico-dollars, as the forwarder priced it
  r.cost_model = "gpt-4o";
  const std::vector<Span> spans = spans_of(r);
  EXPECT_DOUBLE_EQ(std::get<double>(*spans[0].attribute("smartlb.cost")), 0.0000425);
  EXPECT_EQ(text(spans[0], "smartlb.cost.model"), "gpt-4o");
  EXPECT_EQ(spans[2].attribute("smartlb.cost"), nullptr) << "the request's cost, once";
}

TEST(SpanModel, TheClientSpansAttributes) {
  const std::vector<Span> spans = spans_of(failed_over_stream());
  const Span& east = spans[1];
  EXPECT_EQ(east.name, "chat gpt-4o");
  EXPECT_EQ(text(east, "gen_ai.provider.name"), "azure.ai.openai");
  EXPECT_EQ(text(east, "server.address"), "east.openai.azure.com");
  EXPECT_EQ(integer(east, "server.port"), 443);
  EXPECT_EQ(integer(east, "http.response.status_code"), 429);
  EXPECT_EQ(text(east, "smartlb.backend"), "east");
  EXPECT_EQ(integer(east, "smartlb.attempt"), 1);
  EXPECT_EQ(text(east, "smartlb.cooldown.cause"), "throttled");
  EXPECT_EQ(integer(east, "smartlb.cooldown.ms"), 2000);
  EXPECT_EQ(text(east, "error.type"), "429");
  EXPECT_EQ(east.status, SpanStatus::Error);
  EXPECT_EQ(east.attribute("gen_ai.response.id"), nullptr);  // what the answer said is the served one's
  EXPECT_EQ(east.attribute("gen_ai.usage.input_tokens"), nullptr);
  const Span& west = spans[2];
  EXPECT_EQ(west.name, "chat gpt-4o-west");  // the deployment the backend was asked for
  EXPECT_EQ(text(west, "gen_ai.request.model"), "gpt-4o-west");
  EXPECT_EQ(text(west, "gen_ai.provider.name"), "openai");
  EXPECT_EQ(integer(west, "smartlb.attempt"), 2);
  EXPECT_EQ(text(west, "gen_ai.response.id"), "chatcmpl-9");
  EXPECT_EQ(integer(west, "gen_ai.usage.output_tokens"), 34);
  EXPECT_DOUBLE_EQ(std::get<double>(*west.attribute("smartlb.stream.time_to_first_byte")), 0.23);
  EXPECT_EQ(west.attribute("smartlb.cooldown.cause"), nullptr);
  EXPECT_EQ(west.attribute("error.type"), nullptr);
  EXPECT_EQ(west.status, SpanStatus::Unset);
}

TEST(SpanModel, ErrorsAreServerErrorsOnTheServerSpanAndAnyFailureOnAClientSpan) {
  telemetry::RequestRecord r = failed_over_stream();
  r.status = 502;
  r.served_by = -1;
  r.attempts[1].status = 0;
  r.attempts[1].cause = routing::FailureCause::Timeout;
  r.attempts[1].ended = r.end;
  const std::vector<Span> spans = spans_of(r);
  EXPECT_EQ(text(spans[0], "error.type"), "502");
  EXPECT_EQ(spans[0].status, SpanStatus::Error);
  EXPECT_EQ(spans[0].attribute("smartlb.backend"), nullptr);
  EXPECT_EQ(text(spans[2], "error.type"), "timeout");
  EXPECT_EQ(spans[2].attribute("http.response.status_code"), nullptr);
  EXPECT_EQ(spans[2].attribute("gen_ai.response.id"), nullptr);  // not served
  r.status = 400;                                                // the client's mistake: no server error
  EXPECT_EQ(spans_of(r)[0].attribute("error.type"), nullptr);
}

TEST(SpanModel, ARequestRefusedBeforeAnyAttemptIsOneServerSpan) {
  telemetry::RequestRecord r;
  r.method = "GET";
  r.path = "/v1/files/file-1";
  r.status = 401;
  r.auth_failure = "invalid_api_key";
  r.start = kStart;
  r.end = kStart + 1000;
  base::ScriptedRandom rng({7});
  begin_request_trace(r.trace, Sampler{}, {}, {}, rng, kWall);
  const std::vector<Span> spans = spans_of(r);
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].name, "GET");  // no GenAI operation: HTTP's name
  EXPECT_EQ(spans[0].parent_span_id, telemetry::SpanId{});
  EXPECT_EQ(spans[0].attribute("gen_ai.operation.name"), nullptr);
  EXPECT_EQ(text(spans[0], "smartlb.auth_failure"), "invalid_api_key");
}

TEST(SpanModel, OperationsByPath) {
  EXPECT_EQ(genai_operation("/openai/deployments/x/chat/completions"), "chat");
  EXPECT_EQ(genai_operation("/v1/chat/completions"), "chat");
  EXPECT_EQ(genai_operation("/v1/completions"), "text_completion");
  EXPECT_EQ(genai_operation("/openai/deployments/x/embeddings"), "embeddings");
  EXPECT_EQ(genai_operation("/openai/v1/responses"), "chat");
  EXPECT_EQ(genai_operation("/v1/files"), "");
}

}  // namespace span_model_test
}  // namespace smartlb::tracing
