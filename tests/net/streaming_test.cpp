// Server-sent events pass through event by event, and failures after the headers cut the
// client off instead of faking a clean end.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>

#include "await_condition.hpp"
#include "backend_over.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"

namespace smartlb::testing {
namespace streaming_test {  // named, not anonymous: tests/CMakeLists.txt

const std::string kStreamRequest =
    "POST /openai/deployments/gpt-4o/chat/completions?api-version=1 HTTP/1.1\r\n"
    "Host: proxy\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n"
    R"({"stream":true})";

MockReply sse(std::vector<std::string> events) {
  MockReply r;
  r.headers = {{"content-type", "text/event-stream"}};
  r.events = std::move(events);
  return r;
}

// Keeps the token usage of the last finished request, and lets a test await it.
class UsageObserver final : public telemetry::RequestObserver {
 public:
  void on_request_start() override {}
  void on_request(const telemetry::RequestRecord& rec) override {
    std::lock_guard lock(mutex_);
    prompt_ = rec.prompt_tokens;
    completion_ = rec.completion_tokens;
    finished_ = true;
    cv_.notify_all();
  }
  // {prompt, completion} once a request has finished ({-2, -2} after a safety deadline: a hang,
  // not a timing assertion).
  std::pair<std::int64_t, std::int64_t> await_usage() {
    std::unique_lock lock(mutex_);
    if (!cv_.wait_for(lock, std::chrono::seconds(60), [&] { return finished_; })) return {-2, -2};
    return {prompt_, completion_};
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool finished_ = false;
  std::int64_t prompt_ = -1, completion_ = -1;
};

TEST(Streaming, FirstEventReachesClientBeforeBackendSendsTheLast) {
  MockBackend backend([](const SeenRequest&) { return MockReply{}; });
  auto gate = backend.make_gate();
  backend.set_handler([gate](const SeenRequest&) {
    MockReply r = sse({"data: {\"n\":1}\n\n", "data: {\"n\":2}\n\n", "data: [DONE]\n\n"});
    r.wait_before[1] = gate;  // the backend holds events 2 and 3 until the test says so
    return r;
  });
  ProxyHarness p;
  p.add_backend("backend", backend.url());
  p.start();

  RawConnection c(p.port());
  c.send(kStreamRequest);
  const std::string first = c.read_until("data: {\"n\":1}\n\n");
  ASSERT_NE(first.find("data: {\"n\":1}"), std::string::npos) << "first event relayed at once";
  EXPECT_EQ(first.find("n\":2"), std::string::npos);
  EXPECT_NE(first.find("text/event-stream"), std::string::npos);
  EXPECT_NE(first.find("Transfer-Encoding: chunked"), std::string::npos);

  backend.open(gate);
  const std::string all = c.read_until("0\r\n\r\n");
  EXPECT_NE(all.find("data: {\"n\":2}"), std::string::npos);
  EXPECT_NE(all.find("data: [DONE]"), std::string::npos);
  EXPECT_NE(all.find("\r\n0\r\n\r\n"), std::string::npos) << "a clean end after the last event";
}

TEST(Streaming, StreamsAreRelayedByteForByte) {
  std::vector<std::string> events;
  std::string expected;
  for (int i = 0; i < 50; ++i) {
    events.push_back("data: {\"i\":" + std::to_string(i) + ",\"x\":\"" + std::string(i * 37 % 700, 'z') +
                     "\"}\n\n");
    expected += events.back();
  }
  MockBackend backend([events](const SeenRequest&) { return sse(events); });
  ProxyHarness p;
  p.add_backend("backend", backend.url());
  p.start();
  auto r = http_call(p.port(), "POST", "/openai/deployments/gpt-4o/chat/completions?api-version=1", {},
                     R"({"stream":true})");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, expected);
}

// Chunks that arrive in one read leave in one write and one chunk (not a write per chunk),
// and the usage in the last event is still found.
TEST(Streaming, ChunksThatArriveTogetherLeaveTogether) {
  const std::string usage_event = R"(data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":2}})"
                                  "\n\n";
  MockBackend backend([&](const SeenRequest&) {
    MockReply r;
    char size[8];
    std::snprintf(size, sizeof size, "%zx", usage_event.size());
    r.raw =
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
        "9\r\ndata: 1\n\n\r\n" +
        std::string(size) + "\r\n" + usage_event + "\r\n" +
        "e\r\ndata: [DONE]\n\n\r\n"
        "0\r\n\r\n";
    return r;
  });
  UsageObserver observer;
  ProxyHarness p;
  p.add_backend("backend", backend.url());
  p.start(&observer);
  RawConnection c(p.port());
  c.send(kStreamRequest);
  const std::string got = c.read_until("0\r\n\r\n");
  const std::string events = "data: 1\n\n" + usage_event + "data: [DONE]\n\n";
  char size[8];
  std::snprintf(size, sizeof size, "%zx", events.size());
  const auto body = got.find("\r\n\r\n") + 4;
  EXPECT_EQ(got.substr(body), std::string(size) + "\r\n" + events + "\r\n0\r\n\r\n") << got;
  EXPECT_EQ(observer.await_usage(), (std::pair<std::int64_t, std::int64_t>{9, 2}));
}

// A stream of two events whose body ends with the backend's close. The relay waits for what
// follows the first one without a pending read (net/upstream_exchange: read_body_bytes), which
// only a socket known to be quiet may do; the backend holds back at `gated` (1: the second event,
// which comes with its FIN; 2: the FIN alone). What the client gets after the first event.
std::string rest_of_close_delimited_stream(std::size_t gated) {
  MockBackend backend([](const SeenRequest&) { return MockReply{}; });
  auto gate = backend.make_gate();
  backend.set_handler([gate, gated](const SeenRequest&) {
    MockReply r = sse({"data: 1\n\n", "data: 2\n\n"});
    r.close_delimited = true;
    r.wait_before[gated] = gate;
    return r;
  });
  ProxyHarness p;
  p.add_backend("backend", backend.url());
  p.start();
  RawConnection c(p.port());
  c.send(kStreamRequest);
  EXPECT_NE(c.read_until("data: 1\n\n").find("data: 1"), std::string::npos);
  backend.open(gate);
  return c.read_until("0\r\n\r\n");
}

// The close that came with the last event ends the stream, not a wait for an event that never
// comes. (Whether the kernel reports that close once or twice is a race; the look that makes the
// wait safe either way is DrainingRead.AReportedCloseThatCameWithTheBytes....)
TEST(Streaming, AStreamThatEndsWithTheBackendsCloseEndsAfterItsLastEvent) {
  const std::string rest = rest_of_close_delimited_stream(1);
  EXPECT_NE(rest.find("data: 2\n\n"), std::string::npos);
  EXPECT_NE(rest.find("\r\n0\r\n\r\n"), std::string::npos) << "a clean end: the body ended with the close";
}

// The waiting relay wakes to the close alone (read_now finds the end of the stream): for a body
// that ends with its connection, a clean end, not a backend failure.
TEST(Streaming, AStreamWhoseBackendClosesWhileItWaitsEndsCleanly) {
  const std::string rest = rest_of_close_delimited_stream(2);
  EXPECT_NE(rest.find("data: 2\n\n"), std::string::npos);
  EXPECT_NE(rest.find("\r\n0\r\n\r\n"), std::string::npos) << "a clean end: the body ended with the close";
}

TEST(Streaming, UpstreamFailureMidStreamTruncatesTheClientStream) {
  MockBackend backend([](const SeenRequest&) {
    MockReply r = sse({"data: {\"n\":1}\n\n"});
    r.reset_after_events = true;
    return r;
  });
  MockBackend spare([](const SeenRequest&) { return MockReply{200, {}, "spare"}; });
  ProxyHarness p;
  p.add_backend("backend", backend.url(), 1);
  p.add_backend("spare", spare.url(), 2);
  p.start();
  RawConnection c(p.port());
  c.send(kStreamRequest);
  const std::string got = c.read_until_close();
  EXPECT_NE(got.find("data: {\"n\":1}"), std::string::npos);
  EXPECT_EQ(got.find("\r\n0\r\n\r\n"), std::string::npos)
      << "no final chunk: the client sees a truncated stream";
  EXPECT_TRUE(c.peer_closed());
  EXPECT_EQ(spare.request_count(), 0u) << "no failover after headers were sent";
}

TEST(Streaming, ClientDisconnectMidStreamLeavesProxyHealthy) {
  MockBackend backend([](const SeenRequest&) { return MockReply{}; });
  auto gate = backend.make_gate();
  backend.set_handler([gate](const SeenRequest& s) {
    if (s.body.find("stream") == std::string::npos) return MockReply{200, {}, "plain"};
    MockReply r = sse({"data: 1\n\n", "data: 2\n\n", "data: 3\n\n"});
    r.wait_before[1] = gate;
    return r;
  });
  ProxyHarness p;
  p.cfg.threads = 1;
  p.add_backend("backend", backend.url());
  p.start();
  {
    RawConnection c(p.port());
    c.send(kStreamRequest);
    c.read_until("data: 1\n\n");
    c.close();  // the client goes away mid-stream
  }
  backend.open(gate);  // the backend keeps sending; the proxy must notice the client is gone

  auto r = http_call(p.port(), "POST", "/openai/deployments/gpt-4o/chat/completions?api-version=1", {}, "{}");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.body, "plain");
  EXPECT_TRUE(p.available(0, "gpt-4o")) << "a client leaving is not the backend's fault";
}

// A stream that sends one event, then nothing until the test opens `gate` (a reasoning model
// thinking), then its last event.
MockReply silent_after_one_event(const GatePtr& gate) {
  MockReply r = sse({"data: 1\n\n", "data: 2\n\n"});
  r.wait_before[1] = gate;
  return r;
}

// A backend that sends one event, then says nothing (a reasoning model thinking) until the test
// opens `gate`, behind a one-worker proxy that reports to `observer` once started.
struct SilentStretch {
  LastRecord observer;  // outlives the proxy, which reports to it until it stops
  ProxyHarness p;
  MockBackend backend{[](const SeenRequest&) { return MockReply{}; }};
  GatePtr gate = backend.make_gate();
  SilentStretch() {
    backend.set_handler([g = gate](const SeenRequest&) { return silent_after_one_event(g); });
    p.cfg.threads = 1;
    p.add_backend("backend", backend.url());
  }
  void start() { p.start(&observer); }
};

TEST(Streaming, ClientLeavingDuringASilentStretchEndsTheRequestAtOnce) {
  // The client leaves during the silent stretch: the proxy must notice without waiting for the
  // backend's next byte or HTTP_TIMEOUT_SECONDS (100 s here).
  SilentStretch s;
  s.start();
  {
    RawConnection c(s.p.port());
    c.send(kStreamRequest);
    c.read_until("data: 1\n\n");
    c.close();
  }
  const auto rec = s.observer.await();  // without the watch: only when the gate opens
  s.backend.open(s.gate);
  ASSERT_TRUE(rec) << "the request did not end while the backend was silent";
  EXPECT_TRUE(rec->client_aborted);
  EXPECT_FALSE(rec->upstream_aborted) << "the backend did nothing wrong";
  EXPECT_TRUE(s.p.available(0, "gpt-4o")) << "and is not cooled down";
}

// A stream that waits for its next event holds no coroutine of the request (docs/benchmarks.md,
// streaming memory) but is still the request under way: it counts in flight on its backend (an
// admin drain waits for it), and the request ends once, with the stream.
TEST(Streaming, AStreamWaitingForItsNextEventIsInFlightUntilItEnds) {
  SilentStretch s;
  s.start();
  ProxyHarness& p = s.p;
  const auto in_flight = [&] {
    return p.server->states().in_flight(p.server->snapshot()->table.member(0).id);
  };
  RawConnection c(p.port());
  c.send(kStreamRequest);
  c.read_until("data: 1\n\n");
  EXPECT_EQ(in_flight(), 1);
  EXPECT_EQ(s.observer.finished(), 0u) << "the request has not ended";
  s.backend.open(s.gate);
  c.read_until("0\r\n\r\n");
  const auto rec = s.observer.await();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, 200u);
  EXPECT_FALSE(rec->client_aborted);
  EXPECT_FALSE(rec->upstream_aborted);
  EXPECT_TRUE(await_condition([&] { return in_flight() == 0; }));
  EXPECT_EQ(s.observer.finished(), 1u);
}

// A waiting stream keeps its idle timeout: a backend silent past HTTP_TIMEOUT_SECONDS cuts the
// client's stream (no clean end) and is blamed for it.
TEST(Streaming, AStreamSilentPastTheIdleTimeoutIsCutAndItsBackendCooled) {
  SilentStretch s;
  s.p.cfg.http_timeout = std::chrono::seconds(1);
  s.start();
  RawConnection c(s.p.port());
  c.send(kStreamRequest);
  c.read_until("data: 1\n\n");
  const std::string all = c.read_until_close();
  s.backend.open(s.gate);
  EXPECT_EQ(all.find("0\r\n\r\n"), std::string::npos) << "no clean end: the stream was cut";
  const auto rec = s.observer.await();
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->upstream_aborted);
  EXPECT_FALSE(s.p.available(0, "gpt-4o")) << "its backend cools down";
}

// A reasoning model's stream teaches the first-token deadline of its shape (its reasoning effort)
// when it ends, long after the request's body was freed (once the client had the stream's head):
// the shape the attempt keeps is its own copy, not a view into that body (ASan's build reads the
// freed body otherwise).
TEST(Streaming, AStreamsReasoningEffortOutlivesItsFreedRequestBody) {
  LastRecord observer;
  ProxyHarness p;
  MockBackend backend([&p](const SeenRequest&) {
    p.clock.advance(std::chrono::milliseconds(5));  // its first token comes 5 ms after the request
    return sse({"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n", "data: [DONE]\n\n"});
  });
  p.add_backend("backend", backend.url());
  p.start(&observer);
  const std::string body =
      R"({"stream":true,"reasoning_effort":"high","messages":[{"role":"user","content":"a prompt on the heap"}]})";
  RawConnection c(p.port());
  c.send(
      "POST /openai/deployments/gpt-4o/chat/completions?api-version=1 HTTP/1.1\r\nHost: proxy\r\n"
      "Content-Type: application/json\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body);
  const std::string all = c.read_until("0\r\n\r\n");
  EXPECT_NE(all.find("data: [DONE]"), std::string::npos);
  const auto rec = observer.await();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->status, 200u);
  EXPECT_EQ(rec->attempts[0].ttfb_us, 5000)
      << "its first content came after it was sent: its shape was learned";
}

TEST(Streaming, AWatchedClientThatStaysKeepsItsConnection) {
  // The watch must not end a connection whose client is still there: a stream with a silent
  // stretch completes, and the same connection carries the next request.
  MockBackend backend([](const SeenRequest&) { return MockReply{}; });
  auto gate = backend.make_gate();
  backend.set_handler([gate](const SeenRequest& s) {
    if (s.request_on_connection > 1 || s.body.find("stream") == std::string::npos)
      return MockReply{200, {{"content-type", "application/json"}}, "{}"};
    return silent_after_one_event(gate);
  });
  ProxyHarness p;
  p.cfg.threads = 1;
  p.add_backend("backend", backend.url());
  p.start();
  RawConnection c(p.port());
  c.send(kStreamRequest);
  c.read_until("data: 1\n\n");
  backend.open(gate);
  c.read_until("0\r\n\r\n");
  c.send(
      "POST /openai/deployments/gpt-4o/chat/completions?api-version=1 HTTP/1.1\r\n"
      "Host: proxy\r\nContent-Length: 2\r\n\r\n{}");
  const std::string all = c.read_until("\r\n\r\n{}");  // only the second response ends so
  const auto first = all.find("HTTP/1.1 200");
  ASSERT_NE(first, std::string::npos);
  EXPECT_NE(all.find("HTTP/1.1 200", first + 1), std::string::npos) << all;
  EXPECT_FALSE(c.peer_closed());
}

// The body of a chunked response, its framing taken off (the response must be whole).
std::string dechunked_body(const std::string& response) {
  std::string body;
  std::size_t at = response.find("\r\n\r\n") + 4;
  for (;;) {
    const std::size_t line_end = response.find("\r\n", at);
    const std::size_t size = std::stoul(response.substr(at, line_end - at), nullptr, 16);
    if (size == 0) return body;
    body.append(response, line_end + 2, size);
    at = line_end + 2 + size + 2;
  }
}

// While a stream waits between events its read buffer is cut to kEventStreamBufferBytes
// (1 KiB); events of 3 and 40 KB after the wait grow it again, and pass byte for byte.
void expect_events_larger_than_a_waiting_buffer_arrive_whole(bool tls) {
  const std::string small = "data: {\"n\":1}\n\n";
  const std::string large = "data: {\"x\":\"" + std::string(3000, 'a') + "\"}\n\n";
  const std::string huge = "data: {\"y\":\"" + std::string(40000, 'b') + "\"}\n\n";
  BackendOver b(tls);
  auto gate = b.backend.make_gate();
  b.backend.set_handler([small, large, huge, gate](const SeenRequest&) {
    MockReply r = sse({small, large, huge, small, large, "data: [DONE]\n\n"});
    r.wait_before[1] = gate;
    return r;
  });
  ProxyHarness p;
  p.cfg.threads = 1;
  b.add_to(p);
  p.start();
  RawConnection c(p.port());
  c.send(kStreamRequest);
  c.read_until(small);  // the proxy now waits on the backend, its buffer cut
  b.backend.open(gate);
  const std::string all = c.read_until("\r\n0\r\n\r\n");
  EXPECT_EQ(dechunked_body(all), small + large + huge + small + large + "data: [DONE]\n\n");
}

TEST(Streaming, EventsLargerThanAWaitingStreamsBufferArriveWhole) {
  expect_events_larger_than_a_waiting_buffer_arrive_whole(false);
}

TEST(Streaming, EventsLargerThanAWaitingStreamsBufferArriveWholeFromAnHttpsBackend) {
  expect_events_larger_than_a_waiting_buffer_arrive_whole(true);
}

// A client that takes its stream slower than it comes (small socket buffers, and nothing read
// until the backend has sent it all), from a backend whose events come apart (each one wakes the
// waiting stream): once the client's socket is full, a woken round's write goes out in part
// (net/upstream_exchange_committed.cpp), its rest once there is room, and the stream goes on after
// it, in order, byte for byte, its usage read.
void expect_a_stream_outpacing_its_client_arrives_whole(bool tls) {
  const std::string first = "data: {\"n\":0}\n\n";
  const std::string usage = R"(data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}})"
                            "\n\n";
  std::vector<std::string> events{first};
  for (int i = 0; i < 200; ++i)  // each within a waiting stream's 1 KiB room: read whole on its wake
    events.push_back("data: {\"i\":" + std::to_string(i) + ",\"x\":\"" +
                     std::string(300 + i * 7 % 600, 'a' + i % 26) + "\"}\n\n");
  events.push_back(usage);
  events.push_back("data: [DONE]\n\n");
  std::string expected;
  for (const std::string& e : events) expected += e;
  std::atomic<bool> all_sent{false};
  BackendOver b(tls);
  MockBackend& backend = b.backend;
  auto gate = backend.make_gate();
  backend.set_handler([&](const SeenRequest&) {
    MockReply r = sse(events);
    r.wait_before[1] = gate;
    r.pace = std::chrono::microseconds(500);
    r.after_events = [&all_sent] { all_sent = true; };
    return r;
  });
  UsageObserver observer;
  ProxyHarness p;
  p.cfg.threads = 1;
  b.add_to(p);
  p.start(&observer);
  RawConnection c(p.port(), 4096);
  c.send(kStreamRequest);
  c.read_until(first);  // the stream is committed and waits
  // The proxy's end holds little too (as a slow client's would, once its window closed): the 120
  // KB that come fill both ends many times over.
  const int proxy_end = c.proxy_end();
  ASSERT_GE(proxy_end, 0);
  const int small = 4096;
  ASSERT_EQ(::setsockopt(proxy_end, SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
  backend.open(gate);
  ASSERT_TRUE(await_condition([&] { return all_sent.load(); }));
  const std::string all = c.read_until("\r\n0\r\n\r\n");
  EXPECT_EQ(dechunked_body(all), expected);
  EXPECT_EQ(observer.await_usage(), (std::pair<std::int64_t, std::int64_t>{7, 3}));
}

TEST(Streaming, AStreamOutpacingItsClientArrivesWholeAndInOrder) {
  expect_a_stream_outpacing_its_client_arrives_whole(false);
}

TEST(Streaming, AStreamFromAnHttpsBackendOutpacingItsClientArrivesWholeAndInOrder) {
  expect_a_stream_outpacing_its_client_arrives_whole(true);
}

}  // namespace streaming_test
}  // namespace smartlb::testing
