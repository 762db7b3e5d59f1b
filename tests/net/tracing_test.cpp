// Traces end to end over real sockets: smartlb between a client and mock backends, exporting to
// an in-process OTLP/HTTP receiver whose JSON the tests decode. One request is a SERVER and a
// CLIENT span, a failover two CLIENT spans, a client's traceparent is continued, each attempt's
// traceparent names its own CLIENT span, and nothing of a prompt, a completion or a key reaches
// the collector. (The exporter's limits: trace_export_test.cpp.)
#include <gtest/gtest.h>

#include "trace_receiver.hpp"

namespace smartlb::testing {
namespace tracing_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using namespace traces;
using tracing::DropReason;
using tracing::Tracer;

TEST(Tracing, OneRequestIsAServerSpanAndAClientSpanWhoseIdTheBackendGot) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", backend.url(), 1, 1, "BACKEND-KEY-ABC");
  t.start(trace_config(t.receiver.endpoint()));
  ASSERT_EQ(t.post().status, 200u);
  ASSERT_TRUE(t.records.await(1));
  t.tracer->flush();

  ASSERT_EQ(t.receiver.posts(), 1u);
  const SeenRequest post = t.receiver.requests()[0];
  EXPECT_EQ(post.method, "POST");
  EXPECT_EQ(post.target, "/v1/traces");
  EXPECT_EQ(post.header("content-type"), "application/json");
  EXPECT_EQ(post.header("authorization"), "Bearer COLLECTOR-TOKEN");  // OTEL_EXPORTER_OTLP_HEADERS
  const auto body = nlohmann::json::parse(post.body);
  EXPECT_EQ(body["resourceSpans"][0]["resource"]["attributes"][0]["value"]["stringValue"], "smartlb-test");

  const auto spans = t.receiver.spans();
  ASSERT_EQ(spans.size(), 2u);
  const auto& server = spans[0];
  const auto& client = spans[1];
  EXPECT_EQ(server["kind"], 2);
  EXPECT_EQ(client["kind"], 3);
  EXPECT_FALSE(server.contains("parentSpanId"));
  EXPECT_EQ(client["parentSpanId"], server["spanId"]);
  EXPECT_EQ(client["traceId"], server["traceId"]);
  EXPECT_EQ(server["name"], "chat gpt-4o");
  // The backend's traceparent: this trace, its CLIENT span as the parent, sampled.
  const std::string sent = backend.last_request().header("traceparent");
  ASSERT_EQ(sent.size(), 55u) << sent;
  EXPECT_EQ(sent.substr(0, 3), "00-");
  EXPECT_EQ(sent.substr(3, 32), server["traceId"].get<std::string>());
  EXPECT_EQ(parent_of(sent), client["spanId"].get<std::string>());
  EXPECT_EQ(sent.substr(53), "01");
  EXPECT_FALSE(backend.last_request().has_header("tracestate"));

  EXPECT_EQ(text(client, "gen_ai.operation.name"), "chat");
  EXPECT_EQ(text(client, "gen_ai.request.model"), "gpt-4o");
  EXPECT_EQ(text(client, "gen_ai.provider.name"), "azure.ai.openai");  // an /openai/ path
  EXPECT_EQ(text(client, "server.address"), "127.0.0.1");
  EXPECT_EQ(integer(client, "server.port"), std::to_string(backend.port()));
  EXPECT_EQ(integer(client, "http.response.status_code"), "200");
  EXPECT_EQ(text(client, "smartlb.backend"), "east");
  EXPECT_EQ(integer(client, "smartlb.attempt"), "1");
  EXPECT_EQ(integer(server, "gen_ai.usage.input_tokens"), "7");
  for (const auto& s : {server, client}) {  // what the answer said of itself
    EXPECT_EQ(text(s, "gen_ai.response.id"), "chatcmpl-1");
    EXPECT_EQ(text(s, "gen_ai.response.model"), "gpt-4o-2024-08-06");
    EXPECT_EQ(attribute(s, "gen_ai.response.finish_reasons"),
              nlohmann::json::parse(R"({"arrayValue":{"values":[{"stringValue":"stop"}]}})"));
  }
  EXPECT_EQ(integer(server, "gen_ai.usage.output_tokens"), "3");
  EXPECT_EQ(text(server, "smartlb.rule"), "default");
  EXPECT_EQ(text(server, "smartlb.client"), "anonymous");
  EXPECT_EQ(text(server, "url.path"), "/openai/deployments/gpt-4o/chat/completions");  // never the query
  EXPECT_EQ(t.tracer->exported(), 2u);
  const auto start = std::stoll(client["startTimeUnixNano"].get<std::string>());
  EXPECT_GE(start, std::stoll(server["startTimeUnixNano"].get<std::string>()));
  EXPECT_LE(std::stoll(client["endTimeUnixNano"].get<std::string>()),
            std::stoll(server["endTimeUnixNano"].get<std::string>()));
}

TEST(Tracing, AFailoverIsTwoClientSpansEachTheParentOfItsOwnUpstreamRequest) {
  MockBackend throttled([](const SeenRequest&) { return MockReply{429, {{"retry-after", "5"}}, "{}"}; });
  MockBackend served([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", throttled.url(), 1);
  t.proxy.add_backend("west", served.url(), 2);
  t.start(trace_config(t.receiver.endpoint()));
  ASSERT_EQ(t.post().status, 200u);
  ASSERT_TRUE(t.records.await(1));
  t.tracer->flush();

  const auto spans = t.receiver.spans();
  ASSERT_EQ(spans.size(), 3u);
  const auto& server = spans[0];
  EXPECT_EQ(integer(server, "smartlb.attempts"), "2");
  EXPECT_EQ(text(server, "smartlb.backend"), "west");
  for (std::size_t i = 1; i < 3; ++i) {
    EXPECT_EQ(spans[i]["kind"], 3);
    EXPECT_EQ(spans[i]["parentSpanId"], server["spanId"]);
  }
  EXPECT_EQ(text(spans[1], "smartlb.backend"), "east");
  EXPECT_EQ(integer(spans[1], "http.response.status_code"), "429");
  EXPECT_EQ(text(spans[1], "smartlb.cooldown.cause"), "throttled");
  EXPECT_EQ(text(spans[1], "error.type"), "429");
  EXPECT_EQ(spans[1]["status"]["code"], 2);
  EXPECT_EQ(text(spans[2], "smartlb.backend"), "west");
  EXPECT_EQ(integer(spans[2], "smartlb.attempt"), "2");
  EXPECT_EQ(text(spans[2], "error.type"), "<none>");
  EXPECT_EQ(parent_of(throttled.last_request().header("traceparent")), spans[1]["spanId"].get<std::string>());
  EXPECT_EQ(parent_of(served.last_request().header("traceparent")), spans[2]["spanId"].get<std::string>());
}

TEST(Tracing, AClientsTraceparentIsContinuedAndItsTracestatePassedOn) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", backend.url());
  t.start(trace_config(t.receiver.endpoint()));
  ASSERT_EQ(
      t.post({{"traceparent", std::string(kClientParent)}, {"tracestate", "rojo=00f067aa0ba902b7"}}).status,
      200u);
  ASSERT_TRUE(t.records.await(1));
  t.tracer->flush();

  const auto spans = t.receiver.spans();
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0]["traceId"], "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(spans[0]["parentSpanId"], "00f067aa0ba902b7");  // the client's span
  EXPECT_EQ(spans[0]["traceState"], "rojo=00f067aa0ba902b7");
  const SeenRequest up = backend.last_request();
  EXPECT_EQ(up.header("traceparent"),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-" + spans[1]["spanId"].get<std::string>() + "-01");
  EXPECT_EQ(up.header("tracestate"), "rojo=00f067aa0ba902b7");
}

// Several tracestate fields are one list; two traceparent fields are no context at all.
TEST(Tracing, TracestateFieldsAreOneListAndTwoTraceparentsBeginANewTrace) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", backend.url());
  t.start(trace_config(t.receiver.endpoint()));
  ASSERT_EQ(
      t.post(
           {{"tracestate", "rojo=1"}, {"traceparent", std::string(kClientParent)}, {"tracestate", "congo=2"}})
          .status,
      200u);
  EXPECT_EQ(backend.last_request().header("traceparent").substr(3, 32), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(backend.last_request().header("tracestate"), "rojo=1,congo=2");
  ASSERT_EQ(t.post({{"traceparent", std::string(kClientParent)},
                    {"traceparent", std::string(kClientParent)},
                    {"tracestate", "rojo=1"}})
                .status,
            200u);
  EXPECT_NE(backend.last_request().header("traceparent").substr(3, 32), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_FALSE(backend.last_request().has_header("tracestate"));
}

TEST(Tracing, NotSampledSendsNothingAndPropagatesTheTraceWithSampledZero) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", backend.url());
  auto c = trace_config(t.receiver.endpoint());
  c.sampler.kind = tracing::SamplerKind::AlwaysOff;
  t.start(c);
  ASSERT_EQ(t.post({{"traceparent", std::string(kClientParent)}, {"tracestate", "rojo=1"}}).status, 200u);
  ASSERT_EQ(t.post().status, 200u);
  ASSERT_TRUE(t.records.await(2));
  t.tracer->flush();
  EXPECT_EQ(t.receiver.posts(), 0u);
  EXPECT_EQ(t.tracer->exported(), 0u);
  const auto seen = backend.requests();
  ASSERT_EQ(seen.size(), 2u);
  // The client's trace id, a span id of smartlb's own (not the client's), the flag 0.
  const std::string continued = seen[0].header("traceparent");
  EXPECT_EQ(continued.substr(0, 36), "00-4bf92f3577b34da6a3ce929d0e0e4736-");
  EXPECT_NE(parent_of(continued), "00f067aa0ba902b7");
  EXPECT_EQ(continued.substr(52), "-00");
  EXPECT_EQ(seen[0].header("tracestate"), "rojo=1");
  const std::string fresh = seen[1].header("traceparent");
  ASSERT_EQ(fresh.size(), 55u);
  EXPECT_EQ(fresh.substr(52), "-00");
}

TEST(Tracing, NoPromptCompletionOrKeyInAnySpan) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", backend.url(), 1, 1, "BACKEND-KEY-ABC");
  t.start(trace_config(t.receiver.endpoint()));
  ASSERT_EQ(t.post({{"authorization", "Bearer CLIENT-BEARER-789"}}).status, 200u);
  ASSERT_TRUE(t.records.await(1));
  t.tracer->flush();
  ASSERT_EQ(t.receiver.posts(), 1u);
  const std::string bytes = t.receiver.requests()[0].body;
  ASSERT_NE(bytes.find("\"spans\""), std::string::npos);
  for (const std::string secret : {"PROMPT-SECRET-123", "COMPLETION-SECRET-456", "CLIENT-KEY-XYZ",
                                   "BACKEND-KEY-ABC", "CLIENT-BEARER-789", "api-version", "COLLECTOR-TOKEN"})
    EXPECT_EQ(bytes.find(secret), std::string::npos) << secret;
}

// A stream's spans: its time to first byte, and what its events said of the answer.
TEST(Tracing, AStreamsSpansCarryTheTimeToItsFirstByteAndWhatItsEventsSaid) {
  MockBackend backend([](const SeenRequest&) {
    MockReply r;
    r.headers = {{"content-type", "text/event-stream"}};
    r.events = {
        "data: "
        "{\"id\":\"chatcmpl-s\",\"model\":\"gpt-4o-mini\",\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}"
        "\n\n",
        "data: {\"id\":\"chatcmpl-s\",\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}]}\n\n",
        "data: [DONE]\n\n"};
    return r;
  });
  Traced t;
  t.proxy.add_backend("east", backend.url());
  t.start(trace_config(t.receiver.endpoint()));
  ASSERT_EQ(t.post().status, 200u);
  ASSERT_TRUE(t.records.await(1));
  t.tracer->flush();
  const auto spans = t.receiver.spans();
  ASSERT_EQ(spans.size(), 2u);
  for (const auto& s : spans) {
    EXPECT_TRUE(attribute(s, "smartlb.stream.time_to_first_byte").contains("doubleValue")) << s.dump();
    EXPECT_EQ(text(s, "gen_ai.response.id"), "chatcmpl-s");
    EXPECT_EQ(text(s, "gen_ai.response.model"), "gpt-4o-mini");
    EXPECT_EQ(attribute(s, "gen_ai.response.finish_reasons"),
              nlohmann::json::parse(R"({"arrayValue":{"values":[{"stringValue":"length"}]}})"));
  }
}

TEST(Tracing, OffTheClientsTraceFieldsPassUnchangedAndNoneAreAdded) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  LastRecord records;
  ProxyHarness p;
  p.add_backend("east", backend.url());
  p.start(&records);
  ASSERT_EQ(http_call(p.port(), "POST", kChat,
                      {{"traceparent", std::string(kClientParent)}, {"tracestate", "rojo=1"}}, kBody)
                .status,
            200u);
  EXPECT_EQ(backend.last_request().header("traceparent"), kClientParent);
  EXPECT_EQ(backend.last_request().header("tracestate"), "rojo=1");
  ASSERT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u);
  EXPECT_FALSE(backend.last_request().has_header("traceparent"));
  const auto rec = records.await(2);
  ASSERT_TRUE(rec);
  EXPECT_FALSE(rec->trace.on);
}

}  // namespace tracing_test
}  // namespace smartlb::testing
