// Traces end to end over real sockets: smartlb between a client and mock backends, exporting to
// an in-process OTLP/HTTP receiver (a mock backend that records what it was sent) whose JSON
// the tests decode. One request is a SERVER and a CLIENT span, a failover two CLIENT spans, a
// client's traceparent is continued, each attempt's traceparent names its own CLIENT span, and
// nothing of a prompt, a completion or a key reaches the collector. A collector that is down
// or slow costs spans, never requests.
#include <gtest/gtest.h>

#include <cstdio>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"
#include "smartlb/tracing/tracer.hpp"

namespace smartlb::testing {
namespace {

using namespace std::chrono_literals;
using tracing::DropReason;
using tracing::Tracer;

const std::string kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";
const std::string kBody = R"({"messages":[{"role":"user","content":"PROMPT-SECRET-123"}]})";
const std::string kAnswer =
    R"({"id":"chatcmpl-1","model":"gpt-4o-2024-08-06","choices":[{"index":0,"finish_reason":"stop",)"
    R"("message":{"role":"assistant","content":"COMPLETION-SECRET-456"}}],)"
    R"("usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}})";
constexpr std::string_view kClientParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

MockReply ok() { return {200, {{"content-type", "application/json"}}, kAnswer}; }

// An OTLP/HTTP receiver: takes every POST, and hands the spans sent so far to the test.
class Receiver {
 public:
  explicit Receiver(const MockBackend::TlsIdentity* tls = nullptr)
      : mock_(
            [](const SeenRequest&) {
              return MockReply{200, {{"content-type", "application/json"}}, "{}"};
            },
            tls) {}
  std::string endpoint() const { return mock_.url() + "/v1/traces"; }
  std::size_t posts() const { return mock_.request_count(); }
  std::vector<SeenRequest> requests() const { return mock_.requests(); }
  // Every span received, in order.
  std::vector<nlohmann::json> spans() const {
    std::vector<nlohmann::json> out;
    for (const SeenRequest& r : mock_.requests()) {
      const nlohmann::json body = nlohmann::json::parse(r.body);
      for (const auto& rs : body["resourceSpans"])
        for (const auto& ss : rs["scopeSpans"])
          for (const auto& s : ss["spans"]) out.push_back(s);
    }
    return out;
  }

 private:
  MockBackend mock_;
};

tracing::TraceConfig trace_config(const std::string& endpoint) {
  tracing::TraceConfig c;
  c.endpoint = endpoint;
  c.schedule_delay = 1h;  // the tests flush
  c.timeout = 5s;
  c.resource = {{"service.name", "smartlb-test"}};
  c.headers = {{"authorization", "Bearer COLLECTOR-TOKEN"}};
  return c;
}

// The attribute `key` of an OTLP span: its value object ({"stringValue": ...}), or null.
nlohmann::json attribute(const nlohmann::json& span, const std::string& key) {
  for (const auto& a : span["attributes"])
    if (a["key"] == key) return a["value"];
  return nullptr;
}
std::string text(const nlohmann::json& span, const std::string& key) {
  const auto v = attribute(span, key);
  return v.is_null() ? "<none>" : v["stringValue"].get<std::string>();
}
std::string integer(const nlohmann::json& span, const std::string& key) {
  const auto v = attribute(span, key);
  return v.is_null() ? "<none>" : v["intValue"].get<std::string>();
}

// The parent id of a traceparent value.
std::string parent_of(const std::string& traceparent) { return traceparent.substr(36, 16); }

struct Traced {
  Receiver receiver;
  LastRecord records;
  ProxyHarness proxy;
  std::unique_ptr<Tracer> tracer;

  void start(tracing::TraceConfig c) {
    tracer = std::make_unique<Tracer>(c, "");
    proxy.start(&records, tracer.get());
  }
  HttpResponse post(Headers extra = {}) {
    Headers h = {{"content-type", "application/json"}, {"api-key", "CLIENT-KEY-XYZ"}};
    h.insert(h.end(), extra.begin(), extra.end());
    return http_call(proxy.port(), "POST", kChat, h, kBody);
  }
  ~Traced() {
    proxy.stop();
    tracer.reset();
  }
};

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

TEST(Tracing, ACollectorThatIsDownCostsSpansNotRequests) {
  std::uint16_t closed = 0;
  {
    MockBackend tmp([](const SeenRequest&) { return MockReply{}; });
    closed = tmp.port();
  }
  MockBackend backend([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", backend.url());
  t.start(trace_config("http://127.0.0.1:" + std::to_string(closed) + "/v1/traces"));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(t.post().status, 200u);
  ASSERT_TRUE(t.records.await(3));
  t.tracer->flush();
  EXPECT_EQ(t.tracer->exported(), 0u);
  EXPECT_EQ(t.tracer->dropped(DropReason::ExportFailed), 6u);
  EXPECT_EQ(t.tracer->dropped(DropReason::QueueFull), 0u);
}

// An https collector: its certificate verified like a backend's, against UPSTREAM_CA_FILE.
TEST(Tracing, AnHttpsCollectorIsTrustedOnlyThroughItsCa) {
  TestCa ca;
  const auto identity = ca.issue("localhost");
  const std::string ca_file = ca.write_cert_file();
  Receiver receiver(&identity);
  ASSERT_EQ(receiver.endpoint().rfind("https://localhost:", 0), 0u) << receiver.endpoint();
  MockBackend backend([](const SeenRequest&) { return ok(); });
  for (const bool trusted : {true, false}) {
    LastRecord records;
    Tracer tracer(trace_config(receiver.endpoint()), trusted ? ca_file : "");
    ProxyHarness proxy;
    proxy.add_backend("east", backend.url());
    proxy.start(&records, &tracer);
    ASSERT_EQ(http_call(proxy.port(), "POST", kChat, {{"content-type", "application/json"}}, kBody).status,
              200u);
    ASSERT_TRUE(records.await(1));
    tracer.flush();
    EXPECT_EQ(tracer.exported(), trusted ? 2u : 0u) << trusted;
    EXPECT_EQ(tracer.dropped(DropReason::ExportFailed), trusted ? 0u : 2u) << trusted;
    proxy.stop();
  }
  EXPECT_EQ(receiver.spans().size(), 2u);  // the untrusted exporter never sent its batch
  std::remove(ca_file.c_str());
}

TEST(Tracing, AFullQueueDropsWholeRequestsAndCountsThem) {
  MockBackend backend([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", backend.url());
  auto c = trace_config(t.receiver.endpoint());
  c.max_queue_spans = 3;  // one request's two spans fit, a second's do not
  c.max_batch_spans = 3;
  t.start(c);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(t.post().status, 200u);
  ASSERT_TRUE(t.records.await(3));
  EXPECT_EQ(t.tracer->dropped(DropReason::QueueFull), 4u);
  t.tracer->flush();
  EXPECT_EQ(t.tracer->exported(), 2u);
  EXPECT_EQ(t.receiver.spans().size(), 2u);
}

TEST(Tracing, ASlowCollectorNeitherDelaysRequestsNorHoldsTheirSpansBeyondTheQueue) {
  MockBackend collector([](const SeenRequest&) { return MockReply{}; });
  const GatePtr hold = collector.make_gate();
  collector.set_handler([hold](const SeenRequest&) {
    MockReply r{200, {}, "{}"};
    r.hold_headers = hold;
    return r;
  });
  MockBackend backend([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", backend.url());
  auto c = trace_config(collector.url() + "/v1/traces");
  c.max_queue_spans = 4;
  c.max_batch_spans = 2;  // the first request's spans go at once, and their export hangs
  c.timeout = 120s;       // (longer than the test: the export is held, never timed out)
  t.start(c);
  ASSERT_EQ(t.post().status, 200u);
  ASSERT_TRUE(collector.wait_for_requests(1));                   // the export is under way, unanswered
  for (int i = 0; i < 4; ++i) ASSERT_EQ(t.post().status, 200u);  // requests go on meanwhile
  ASSERT_TRUE(t.records.await(5));
  EXPECT_EQ(t.tracer->dropped(DropReason::QueueFull), 4u);  // 2 requests queued (4 spans), 2 dropped
  collector.open(hold);
  t.tracer->flush();
  EXPECT_EQ(t.tracer->exported(), 6u);
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

}  // namespace
}  // namespace smartlb::testing
