// The exporter over real sockets: a collector that is down, slow, behind a full queue or not
// trusted costs spans, counted, never requests; an https collector is verified like a backend.
#include <cstdio>

#include <gtest/gtest.h>

#include "refusing_port.hpp"
#include "trace_receiver.hpp"

namespace smartlb::testing {
namespace trace_export_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using namespace traces;
using tracing::DropReason;
using tracing::Tracer;

TEST(Tracing, ACollectorThatIsDownCostsSpansNotRequests) {
  const RefusingPort down;
  MockBackend backend([](const SeenRequest&) { return ok(); });
  Traced t;
  t.proxy.add_backend("east", backend.url());
  t.start(trace_config(down.url() + "/v1/traces"));
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

}  // namespace trace_export_test
}  // namespace smartlb::testing
