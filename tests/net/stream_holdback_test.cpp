// A 2xx event stream's start is held back until its first event with content, so a stream that
// begins with an error (after events without content, like Azure's prompt filter results) fails
// over like a 5xx; a normal stream's first content goes out as soon as it came.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <utility>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"

namespace smartlb::testing {
namespace stream_holdback_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const std::string kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=1";
const std::string kStreamRequest =
    "POST " + kChat +
    " HTTP/1.1\r\n"
    "Host: proxy\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
    R"({"stream":true})";

const std::string kServerErrorEvent =
    "data: {\"error\":{\"message\":\"The server had an error while processing your request.\",\"type\":"
    "\"server_error\",\"param\":null,\"code\":null}}\n\n";
const std::string kContentFilterEvent =
    "data: {\"error\":{\"message\":\"The response was filtered\",\"type\":null,\"param\":\"prompt\",\"code\":"
    "\"content_filter\",\"status\":400}}\n\n";

// Azure's first event when content filtering is on (filter results shortened).
const std::string kAzurePromptFilterEvent =
    "data: "
    "{\"choices\":[],\"created\":0,\"id\":\"\",\"model\":\"\",\"object\":\"\",\"prompt_filter_results\":"
    "[{\"prompt_index\":0,\"content_filter_results\":{\"hate\":{\"filtered\":false,\"severity\":\"safe\"}}}]}"
    "\n\n";

MockReply sse(std::vector<std::string> events) {
  MockReply r;
  r.headers = {{"content-type", "text/event-stream"}};
  r.events = std::move(events);
  return r;
}

std::vector<std::string> good_events() {
  return {"data: {\"choices\":[],\"prompt_filter_results\":[{\"prompt_index\":0}]}\n\n",
          "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n", "data: [DONE]\n\n"};
}

std::string joined(const std::vector<std::string>& events) {
  std::string all;
  for (const auto& e : events) all += e;
  return all;
}

HttpResponse post_stream(ProxyHarness& p) {
  return http_call(p.port(), "POST", kChat, {{"content-type", "application/json"}}, R"({"stream":true})");
}

// What the request's accounting read of its model, copied while the record was valid.
class ModelsSeen final : public telemetry::RequestObserver {
 public:
  void on_request(const telemetry::RequestRecord& rec) override {
    std::lock_guard lock(mutex_);
    deployment_ = rec.deployment;
    attempt_deployment_ = rec.attempt_count > 0 ? std::string(rec.attempts[0].deployment) : "";
    done_ = true;
    cv_.notify_all();
  }
  // {the record's model, its first attempt's}, once a request finished.
  std::pair<std::string, std::string> await() {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::seconds(60), [&] { return done_; });
    return {deployment_, attempt_deployment_};
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string deployment_, attempt_deployment_;
};

// A committed stream frees its request's body (a long prompt is not held while it lasts): the
// model the body named is still what the request is accounted under (under ASan, a view left in
// the freed body is a heap-use-after-free).
TEST(StreamHoldback, AStreamWhoseBodyNamedTheModelIsAccountedUnderItOnceTheBodyIsFreed) {
  MockBackend a([](const SeenRequest&) { return sse(good_events()); });
  ModelsSeen seen;  // outlives the proxy
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.start(&seen);
  const std::string body = R"({"model":"model-named-in-the-body","stream":true,"messages":[]})";
  const auto r =
      http_call(p.port(), "POST", "/v1/chat/completions", {{"content-type", "application/json"}}, body);
  EXPECT_EQ(r.body, joined(good_events()));
  EXPECT_EQ(a.last_request().body, body);
  const auto [deployment, attempt_deployment] = seen.await();
  EXPECT_EQ(deployment, "model-named-in-the-body");
  EXPECT_EQ(attempt_deployment, "model-named-in-the-body");
}

TEST(StreamHoldback, ErrorEventFirst_FailsOverToTheNextBackendWhoseStreamArrivesIntact) {
  MockBackend a([](const SeenRequest&) { return sse({kServerErrorEvent, "data: [DONE]\n\n"}); });
  MockBackend b([](const SeenRequest&) { return sse(good_events()); });
  LastRecord observer;  // outlives the proxy, which reports to it until it stops
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start(&observer);

  const auto r = post_stream(p);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-smartlb-backend"), "b");
  EXPECT_EQ(r.body, joined(good_events())) << "b's stream, byte for byte, and nothing of a's";
  EXPECT_EQ(a.request_count(), 1u);
  EXPECT_EQ(b.last_request().body, R"({"stream":true})") << "the original request, replayed";
  EXPECT_FALSE(p.available(0, "gpt-4o")) << "a is cooled down";

  const auto rec = observer.await();
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->attempt_count, 2u);
  EXPECT_EQ(rec->attempts[0].status, 200u);
  EXPECT_EQ(rec->attempts[0].cause, routing::FailureCause::StreamError);
  EXPECT_GT(rec->attempts[0].cooldown_ms, 0);
  EXPECT_EQ(rec->attempts[1].cause, routing::FailureCause::None);
  EXPECT_EQ(rec->served_by, static_cast<int>(p.server->snapshot()->table.member(1).id.value));
  EXPECT_EQ(rec->response_bytes, joined(good_events()).size()) << "a's held bytes are not counted";

  // The cooled backend gets nothing until its cooldown ends.
  EXPECT_EQ(post_stream(p).header("x-smartlb-backend"), "b");
  EXPECT_EQ(a.request_count(), 1u);
}

TEST(StreamHoldback, AzurePromptFilterEventThenServerError_FailsOverAndOnlyTheSecondStreamIsSeen) {
  // Azure's stream opens with the prompt's filter results, which carry no content: the error
  // event after them still fails over, and nothing of a's stream reaches the client.
  MockBackend a([](const SeenRequest&) {
    return sse({kAzurePromptFilterEvent, kServerErrorEvent, "data: [DONE]\n\n"});
  });
  MockBackend b([](const SeenRequest&) { return sse(good_events()); });
  LastRecord observer;  // outlives the proxy, which reports to it until it stops
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start(&observer);

  const auto r = post_stream(p);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-smartlb-backend"), "b");
  EXPECT_EQ(r.body, joined(good_events())) << "b's stream, byte for byte, and nothing of a's";
  EXPECT_EQ(a.request_count(), 1u);
  EXPECT_EQ(b.request_count(), 1u);
  EXPECT_FALSE(p.available(0, "gpt-4o")) << "a is cooled down";
  const auto rec = observer.await();
  ASSERT_TRUE(rec);
  ASSERT_EQ(rec->attempt_count, 2u);
  EXPECT_EQ(rec->attempts[0].cause, routing::FailureCause::StreamError);
  EXPECT_EQ(rec->response_bytes, joined(good_events()).size()) << "a's held bytes are not counted";
}

TEST(StreamHoldback, ResponsesLifecycleThenErrorEvent_FailsOver) {
  MockBackend a([](const SeenRequest&) {
    return sse(
        {"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\","
         "\"status\":\"in_progress\",\"error\":null,\"output\":[]}}\n\n",
         "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"The server had "
         "an error\"}\n\n"});
  });
  MockBackend b([](const SeenRequest&) { return sse(good_events()); });
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start();
  const auto r = post_stream(p);
  EXPECT_EQ(r.header("x-smartlb-backend"), "b");
  EXPECT_EQ(r.body, joined(good_events()));
}

TEST(StreamHoldback, ErrorEventTypeFirst_FailsOverToo) {
  MockBackend a(
      [](const SeenRequest&) { return sse({": ping\n\nevent: error\ndata: upstream failed\n\n"}); });
  MockBackend b([](const SeenRequest&) { return sse(good_events()); });
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start();
  const auto r = post_stream(p);
  EXPECT_EQ(r.header("x-smartlb-backend"), "b");
  EXPECT_EQ(r.body, joined(good_events()));
}

TEST(StreamHoldback, ErrorFirstWithNoBackendLeft_Answers502) {
  MockBackend a([](const SeenRequest&) { return sse({kServerErrorEvent}); });
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.start();
  const auto r = post_stream(p);
  EXPECT_EQ(r.status, 502u) << r.body;
  EXPECT_TRUE(r.has_header("retry-after"));
  EXPECT_EQ(r.body.find("The server had an error"), std::string::npos) << "our own answer, not a's stream";
  EXPECT_FALSE(p.available(0, "gpt-4o"));
}

TEST(StreamHoldback, ContentFilterErrorFirst_IsRelayedAsItIsWithoutFailover) {
  // Another backend would filter the same prompt: the client gets the error, nobody is blamed.
  const std::vector<std::string> events = {kContentFilterEvent, "data: [DONE]\n\n"};
  MockBackend a([&](const SeenRequest&) { return sse(events); });
  MockBackend b([](const SeenRequest&) { return sse(good_events()); });
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start();
  const auto r = post_stream(p);
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-smartlb-backend"), "a");
  EXPECT_EQ(r.body, joined(events));
  EXPECT_EQ(b.request_count(), 0u);
  EXPECT_TRUE(p.available(0, "gpt-4o"));
}

TEST(StreamHoldback, FirstContentReachesTheClientBeforeTheBackendSendsMore) {
  // Comments and Azure's prompt-filter-results event come first and are held; the hold ends at
  // the first event with content, so it (with the head and what was held) reaches the client
  // while the backend still holds the next one.
  MockBackend backend([](const SeenRequest&) { return MockReply{}; });
  auto gate = backend.make_gate();
  backend.set_handler([gate](const SeenRequest&) {
    MockReply r = sse({": keep-alive\n\n", good_events()[0], good_events()[1], good_events()[2]});
    r.wait_before[3] = gate;
    return r;
  });
  ProxyHarness p;
  p.add_backend("backend", backend.url());
  p.start();
  RawConnection c(p.port());
  c.send(kStreamRequest);
  const std::string first = c.read_until("\"Hi\"}}]}\n\n");
  EXPECT_NE(first.find("HTTP/1.1 200"), std::string::npos);
  EXPECT_NE(first.find(": keep-alive\n\n"), std::string::npos);
  EXPECT_NE(first.find("prompt_filter_results"), std::string::npos);
  EXPECT_EQ(first.find("[DONE]"), std::string::npos) << "the gate is still closed";
  backend.open(gate);
  const std::string all = c.read_until("0\r\n\r\n");
  EXPECT_NE(all.find("data: [DONE]"), std::string::npos);
}

TEST(StreamHoldback, AStartWithoutACompleteEventWithinTheLimit_IsReleasedAsItIs) {
  // 70 KB of one event's data, its end held back by the backend: past 64 KiB the proxy stops
  // waiting for the event to complete and relays what it holds.
  const std::string big = "data: {\"x\":\"" + std::string(70'000, 'x') + "END";
  MockBackend backend([](const SeenRequest&) { return MockReply{}; });
  auto gate = backend.make_gate();
  backend.set_handler([gate, big](const SeenRequest&) {
    MockReply r = sse({big, "\"}\n\n", "data: [DONE]\n\n"});
    r.wait_before[1] = gate;
    return r;
  });
  ProxyHarness p;
  p.add_backend("backend", backend.url());
  p.start();
  RawConnection c(p.port());
  c.send(kStreamRequest);
  const std::string first = c.read_until("END");
  EXPECT_NE(first.find("HTTP/1.1 200"), std::string::npos);
  EXPECT_NE(first.find("END"), std::string::npos) << "released before the event completed";
  backend.open(gate);
  const std::string all = c.read_until("0\r\n\r\n");
  EXPECT_NE(all.find("data: [DONE]"), std::string::npos);
}

TEST(StreamHoldback, ASilentStartIsReleasedWhenTheHeaderTimeoutPasses) {
  // Only a comment, then silence: after HTTP_TIMEOUT_SECONDS (1 s here) what is held goes out
  // and the stream goes on.
  MockBackend backend([](const SeenRequest&) { return MockReply{}; });
  auto gate = backend.make_gate();
  backend.set_handler([gate](const SeenRequest&) {
    MockReply r = sse({": thinking\n\n", "data: {\"n\":1}\n\n", "data: [DONE]\n\n"});
    r.wait_before[1] = gate;
    return r;
  });
  ProxyHarness p;
  p.cfg.http_timeout = 1s;
  p.add_backend("backend", backend.url());
  p.start();
  RawConnection c(p.port());
  c.send(kStreamRequest);
  const std::string first = c.read_until(": thinking\n\n");
  EXPECT_NE(first.find("HTTP/1.1 200"), std::string::npos);
  EXPECT_NE(first.find(": thinking\n\n"), std::string::npos) << "released though the gate is closed";
  backend.open(gate);
  const std::string all = c.read_until("0\r\n\r\n");
  EXPECT_NE(all.find("data: {\"n\":1}"), std::string::npos);
  EXPECT_NE(all.find("\r\n0\r\n\r\n"), std::string::npos) << "the stream ends cleanly";
}

TEST(StreamHoldback, OffWithZeroBytes_TheErrorIsRelayed) {
  MockBackend a([](const SeenRequest&) { return sse({kServerErrorEvent}); });
  MockBackend b([](const SeenRequest&) { return sse(good_events()); });
  ProxyHarness p;
  p.cfg.stream_holdback_bytes = 0;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start();
  const auto r = post_stream(p);
  EXPECT_EQ(r.header("x-smartlb-backend"), "a");
  EXPECT_EQ(r.body, kServerErrorEvent);
  EXPECT_EQ(b.request_count(), 0u);
}

TEST(StreamHoldback, OnlyEventStreamsAreHeldBack) {
  // A JSON answer whose body looks like an error event is not an event stream: relayed.
  MockBackend a([](const SeenRequest&) {
    return MockReply{200, {{"content-type", "application/json"}}, kServerErrorEvent};
  });
  MockBackend b([](const SeenRequest&) { return sse(good_events()); });
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start();
  const auto r = post_stream(p);
  EXPECT_EQ(r.header("x-smartlb-backend"), "a");
  EXPECT_EQ(b.request_count(), 0u);
}

TEST(StreamHoldback, BackendFailingWhileItsStartIsHeld_FailsOver) {
  // The head, then the connection reset before any event: nothing reached the client yet.
  MockBackend a([](const SeenRequest&) {
    MockReply r = sse({": opening\n\n"});
    r.reset_after_events = true;
    return r;
  });
  MockBackend b([](const SeenRequest&) { return sse(good_events()); });
  LastRecord observer;  // outlives the proxy, which reports to it until it stops
  ProxyHarness p;
  p.add_backend("a", a.url(), 1);
  p.add_backend("b", b.url(), 2);
  p.start(&observer);
  const auto r = post_stream(p);
  EXPECT_EQ(r.header("x-smartlb-backend"), "b");
  EXPECT_EQ(r.body, joined(good_events()));
  const auto rec = observer.await();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->attempts[0].cause, routing::FailureCause::ConnectionLost);
  EXPECT_FALSE(rec->upstream_aborted);
}

TEST(StreamHoldback, ClientLeavingWhileTheStartIsHeld_IsNoticedAtOnce) {
  MockBackend backend([](const SeenRequest&) { return MockReply{}; });
  auto gate = backend.make_gate();
  backend.set_handler([gate](const SeenRequest&) {
    MockReply r = sse({"data: {\"n\":1}\n\n"});
    r.wait_before[0] = gate;  // the head goes out, the first event waits
    return r;
  });
  LastRecord observer;  // outlives the proxy, which reports to it until it stops
  ProxyHarness p;
  p.cfg.threads = 1;
  p.add_backend("backend", backend.url());
  p.start(&observer);
  {
    RawConnection c(p.port());
    c.send(kStreamRequest);
    ASSERT_TRUE(backend.wait_for_requests(1));
    c.close();
  }
  const auto rec = observer.await();  // without the watch: only when the gate opens
  backend.open(gate);
  ASSERT_TRUE(rec) << "the request did not end while the start was held";
  EXPECT_TRUE(rec->client_aborted);
  EXPECT_EQ(rec->status, 0u) << "nothing was sent";
  EXPECT_TRUE(p.available(0, "gpt-4o")) << "the backend is not blamed";
}

}  // namespace stream_holdback_test
}  // namespace smartlb::testing
