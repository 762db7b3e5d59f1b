// Integration: a real SimServer on 127.0.0.1:0 in this process, driven over HTTP/1.1.
// Timing checks are lower bounds only (a timer never fires early), so they cannot flake.

#include "smartlb/sim/sim_server.hpp"

#include "await_condition.hpp"
#include "http_test_client.hpp"

#include <future>
#include <memory>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace sim_server_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using nlohmann::json;
using test::HttpResult;
using test::HttpTestClient;

constexpr const char* kTinyChat = "/openai/deployments/tiny/chat/completions?api-version=2024-06-01";
constexpr const char* kChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01";
constexpr const char* kBody = R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":10})";
constexpr const char* kStreamBody =
    R"({"messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}})";
const std::vector<std::pair<std::string, std::string>> kKey{{"api-key", "k1"}};

class SimServerTest : public ::testing::Test {
 protected:
  SimServerTest() {
    settings_.name = "it";
    settings_.api_key = "k1";
    settings_.stream_chunks = 3;
    // tiny: 30 tokens per minute; each kBody request costs 1 + 10 = 11 -> two fit.
    settings_.deployments = {{"gpt-4o", {1'000'000'000, 1'000'000}}, {"tiny", {30, 100}}};
  }

  ~SimServerTest() override {
    if (server_) server_->stop();
    if (thread_.joinable()) thread_.join();
  }

  std::uint16_t start(int threads = 1) {
    engine_ = std::make_unique<SimEngine>(settings_, clock_);
    server_ = std::make_unique<SimServer>(*engine_, ServerOptions{"127.0.0.1", 0, threads, false});
    thread_ = std::thread([this] { server_->run(); });
    return server_->port();
  }

  void set_faults(HttpTestClient& client, const std::string& patch) {
    ASSERT_EQ(client.request("POST", "/_sim/faults", patch).status, 200) << patch;
  }

  SimSettings settings_;
  SystemClock clock_;
  std::unique_ptr<SimEngine> engine_;
  std::unique_ptr<SimServer> server_;
  std::thread thread_;
};

TEST_F(SimServerTest, ChatCompletionIs200WithUsage) {
  HttpTestClient client(start());
  const auto result = client.request("POST", kChat, kBody, kKey);
  ASSERT_FALSE(result.error) << result.error.message();
  ASSERT_EQ(result.status, 200) << result.body;
  EXPECT_EQ(result.header("content-type"), "application/json");
  EXPECT_EQ(result.header("x-sim-name"), "it");
  EXPECT_NE(result.header("x-ratelimit-remaining-requests"), "<absent>");
  EXPECT_NE(result.header("x-ratelimit-remaining-tokens"), "<absent>");
  const auto body = json::parse(result.body);
  EXPECT_EQ(body["usage"]["prompt_tokens"], 1);
  EXPECT_EQ(body["usage"]["completion_tokens"], 3);
  EXPECT_EQ(body["usage"]["total_tokens"], 4);
}

TEST_F(SimServerTest, StreamSendsOneChunkPerEventEndingWithUsageAndDone) {
  HttpTestClient client(start());
  const auto result = client.request("POST", kChat, kStreamBody, kKey);
  ASSERT_FALSE(result.error) << result.error.message();
  ASSERT_EQ(result.status, 200);
  EXPECT_EQ(result.header("content-type"), "text/event-stream");
  EXPECT_EQ(result.header("transfer-encoding"), "chunked");
  ASSERT_EQ(result.chunks.size(), 1u + 3u + 1u + 1u + 1u);  // role, content x3, finish, usage, DONE
  for (const auto& chunk : result.chunks) {
    EXPECT_TRUE(chunk.starts_with("data: ")) << chunk;
    EXPECT_TRUE(chunk.ends_with("\n\n")) << chunk;
  }
  const auto usage = json::parse(result.chunks[5].substr(6));
  EXPECT_EQ(usage["usage"]["completion_tokens"], 3);
  EXPECT_EQ(result.chunks.back(), "data: [DONE]\n\n");
}

TEST_F(SimServerTest, SpentQuotaIs429WithRetryAfter) {
  HttpTestClient client(start());
  ASSERT_EQ(client.request("POST", kTinyChat, kBody, kKey).status, 200);
  const auto second = client.request("POST", kTinyChat, kBody, kKey);
  ASSERT_EQ(second.status, 200);
  EXPECT_EQ(second.header("x-ratelimit-remaining-tokens"), "8");
  const auto limited = client.request("POST", kTinyChat, kBody, kKey);
  ASSERT_EQ(limited.status, 429) << limited.body;
  const int retry_after = std::stoi(limited.header("retry-after"));
  EXPECT_GE(retry_after, 1);
  EXPECT_LE(retry_after, 60);
  EXPECT_LE(std::stoi(limited.header("retry-after-ms")), 60'000);
  EXPECT_EQ(limited.header("x-ratelimit-remaining-tokens"), "8");
  EXPECT_EQ(json::parse(limited.body)["error"]["code"], "429");
}

TEST_F(SimServerTest, WrongKeyIs401) {
  HttpTestClient client(start());
  const auto result = client.request("POST", kChat, kBody, {{"api-key", "wrong"}});
  EXPECT_EQ(result.status, 401);
  EXPECT_EQ(json::parse(result.body)["error"]["code"], "401");
  EXPECT_EQ(client.request("POST", kChat, kBody, {{"Authorization", "Bearer k1"}}).status, 200);
}

TEST_F(SimServerTest, KeepAliveServesManyExchangesOnOneConnection) {
  HttpTestClient client(start());
  EXPECT_EQ(client.request("POST", kChat, kBody, kKey).status, 200);
  EXPECT_EQ(client.request("POST", kChat, kStreamBody, kKey).chunks.back(), "data: [DONE]\n\n");
  EXPECT_EQ(client.request("GET", "/nope").status, 404);
  EXPECT_EQ(client.request("POST", "/v1/embeddings", R"({"model":"gpt-4o","input":"x"})", kKey).status, 200);
  EXPECT_EQ(engine_->stats_json()["requests"], 4);
}

TEST_F(SimServerTest, ConnectionCloseIsHonoured) {
  HttpTestClient client(start());
  const auto result = client.request("POST", kChat, kBody, {{"api-key", "k1"}, {"Connection", "close"}});
  ASSERT_EQ(result.status, 200);
  const auto next = client.request("POST", kChat, kBody, kKey);
  EXPECT_TRUE(next.error);  // the server closed the connection
}

TEST_F(SimServerTest, ControlEndpointsOverHttp) {
  HttpTestClient client(start());
  set_faults(client, R"({"force_status":503,"force_count":1})");
  EXPECT_EQ(json::parse(client.request("GET", "/_sim/faults").body)["force_status"], 503);
  EXPECT_EQ(client.request("POST", kChat, kBody, kKey).status, 503);
  EXPECT_EQ(client.request("POST", kChat, kBody, {{"api-key", "k1"}, {"X-Forwarded-For", "1.2.3.4"}}).status,
            200);
  const auto stats = json::parse(client.request("GET", "/_sim/stats").body);
  EXPECT_EQ(stats["by_status"], (json{{"200", 1}, {"503", 1}}));
  EXPECT_EQ(stats["last_request_headers"]["api-key"], "k1");
  EXPECT_EQ(stats["last_request_headers"]["x-forwarded-for"], "1.2.3.4");
  EXPECT_EQ(stats["last_request_path"], kChat);
  EXPECT_EQ(client.request("POST", "/_sim/reset").status, 200);
  EXPECT_EQ(json::parse(client.request("GET", "/_sim/stats").body)["requests"], 0);
}

TEST_F(SimServerTest, ResetAfterChunksCutsTheStreamAndServerCarriesOn) {
  const auto port = start();
  {
    HttpTestClient control(port);
    set_faults(control, R"({"reset_after_chunks":2})");
  }
  HttpTestClient client(port);
  const auto result = client.request("POST", kChat, kStreamBody, kKey);
  EXPECT_TRUE(result.error);
  EXPECT_EQ(result.body.find("[DONE]"), std::string::npos);
  EXPECT_LE(result.chunks.size(), 2u);

  HttpTestClient after(port);
  set_faults(after, R"({"reset_after_chunks":-1})");
  EXPECT_EQ(after.request("POST", kChat, kStreamBody, kKey).chunks.back(), "data: [DONE]\n\n");
}

TEST_F(SimServerTest, ResetOnNonStreamAnswerCutsAfterHeaders) {
  settings_.faults.reset_after_chunks = 0;
  HttpTestClient client(start());
  const auto result = client.request("POST", kChat, kBody, kKey);
  EXPECT_TRUE(result.error);
  EXPECT_TRUE(result.body.empty());
}

TEST_F(SimServerTest, ResetRateOneCutsNonStreamAnswersBeforeTheHeaders) {
  settings_.faults.reset_rate = 1.0;
  HttpTestClient client(start());
  const auto result = client.request("POST", kChat, kBody, kKey);
  EXPECT_TRUE(result.error);
  EXPECT_TRUE(result.headers.empty());  // not even a status line came
  EXPECT_TRUE(result.body.empty());
}

TEST_F(SimServerTest, ResetRateOneCutsStreamsMidStream) {
  settings_.faults.reset_rate = 1.0;
  HttpTestClient client(start());
  const auto result = client.request("POST", kChat, kStreamBody, kKey);
  EXPECT_TRUE(result.error);
  EXPECT_EQ(result.header("content-type"), "text/event-stream");
  EXPECT_FALSE(result.chunks.empty());  // the stream had started
  EXPECT_EQ(result.body.find("[DONE]"), std::string::npos);
}

// Delays are checked from before the request leaves the client: the server's delay starts
// only after it received the request, so these lower bounds hold by causality (Asio timers
// never fire early) and cannot flake on a loaded machine.
TEST_F(SimServerTest, LatencyDelaysTheHeaders) {
  settings_.faults.latency_ms = 120;
  HttpTestClient client(start());
  const auto begin = std::chrono::steady_clock::now();
  const auto result = client.request("POST", kChat, kBody, kKey);
  ASSERT_EQ(result.status, 200);
  EXPECT_GE(result.headers_at - begin, 120ms);
}

TEST_F(SimServerTest, StallAfterHeadersDelaysTheBody) {
  settings_.faults.stall_ms = 150;
  HttpTestClient client(start());
  const auto begin = std::chrono::steady_clock::now();
  const auto result = client.request("POST", kChat, kBody, kKey);
  ASSERT_EQ(result.status, 200);
  ASSERT_FALSE(result.error);
  EXPECT_GE(result.done_at - begin, 150ms);
}

TEST_F(SimServerTest, StallMidStreamDelaysTheRestOfTheEvents) {
  settings_.faults.stall_ms = 150;
  settings_.faults.stall_after_chunks = 2;
  HttpTestClient client(start());
  const auto begin = std::chrono::steady_clock::now();
  const auto result = client.request("POST", kChat, kStreamBody, kKey);
  ASSERT_FALSE(result.error);
  EXPECT_EQ(result.chunks.back(), "data: [DONE]\n\n");
  EXPECT_GE(result.done_at - begin, 150ms);
}

TEST_F(SimServerTest, StallBeforeHeadersDelaysTheHeaders) {
  settings_.faults.stall_ms = 150;
  settings_.faults.stall_before_headers = true;
  HttpTestClient client(start());
  const auto begin = std::chrono::steady_clock::now();
  const auto result = client.request("POST", kChat, kStreamBody, kKey);
  ASSERT_FALSE(result.error);
  EXPECT_GE(result.headers_at - begin, 150ms);
}

// What a concurrency cap in front of the sim let through at once: the answers being written
// and their peak since the last reset (the control endpoints are not counted).
TEST_F(SimServerTest, AnswersInFlightAndTheirPeakAreCounted) {
  settings_.faults.stall_ms = 60'000;  // held until the server stops
  settings_.faults.stall_before_headers = true;
  const std::uint16_t port = start();
  const auto held = [port] {
    HttpTestClient c(port);
    return c.request("POST", kChat, kBody, kKey);
  };
  auto one = std::async(std::launch::async, held), two = std::async(std::launch::async, held);
  HttpTestClient control(port);
  const auto stats = [&] { return json::parse(control.request("GET", "/_sim/stats").body); };
  ASSERT_TRUE(smartlb::testing::await_condition([&] { return stats()["answers_in_flight"] == 2; }));
  EXPECT_EQ(stats()["answers_in_flight_peak"], 2);
  ASSERT_EQ(control.request("POST", "/_sim/reset").status, 200);
  EXPECT_EQ(stats()["answers_in_flight_peak"], 2) << "a reset starts the peak from what is in flight";
  // Gone with the server, its sockets closed: the held answers end.
  server_->stop();
  thread_.join();
  server_.reset();
  EXPECT_TRUE(one.get().error);
  EXPECT_TRUE(two.get().error);
}

TEST_F(SimServerTest, ChunkIntervalPacesContentChunks) {
  settings_.chunk_interval = 40ms;
  HttpTestClient client(start());
  const auto begin = std::chrono::steady_clock::now();
  const auto result = client.request("POST", kChat, kStreamBody, kKey);
  ASSERT_FALSE(result.error);
  EXPECT_EQ(result.chunks.size(), 7u);
  EXPECT_GE(result.done_at - begin, 3 * 40ms);
}

TEST_F(SimServerTest, SeveralThreadsServeSeveralConnections) {
  const auto port = start(2);
  HttpTestClient first(port);
  HttpTestClient second(port);
  EXPECT_EQ(first.request("POST", kChat, kBody, kKey).status, 200);
  EXPECT_EQ(second.request("POST", kChat, kStreamBody, kKey).chunks.back(), "data: [DONE]\n\n");
  EXPECT_EQ(first.request("POST", kChat, kBody, kKey).status, 200);
}

constexpr const char* kMessagesStreamBody =
    R"({"model":"gpt-4o","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]})";
const std::vector<std::pair<std::string, std::string>> kAnthropic{{"x-api-key", "k1"},
                                                                  {"anthropic-version", "2023-06-01"}};

TEST_F(SimServerTest, MessagesStreamSendsOneChunkPerEventInAnthropicsOrder) {
  HttpTestClient client(start());
  const auto result = client.request("POST", "/anthropic/v1/messages", kMessagesStreamBody, kAnthropic);
  ASSERT_FALSE(result.error) << result.error.message();
  ASSERT_EQ(result.status, 200) << result.body;
  EXPECT_EQ(result.header("content-type"), "text/event-stream");
  EXPECT_TRUE(result.header("request-id").starts_with("req_"));
  EXPECT_NE(result.header("anthropic-ratelimit-tokens-reset"), "<absent>");
  std::vector<std::string> names;
  for (const auto& chunk : result.chunks) {
    EXPECT_TRUE(chunk.ends_with("\n\n")) << chunk;
    names.push_back(chunk.substr(7, chunk.find('\n') - 7));
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"message_start", "content_block_start", "ping", "content_block_delta",
                                      "content_block_delta", "content_block_delta", "content_block_stop",
                                      "message_delta", "message_stop"}));
}

TEST_F(SimServerTest, ProbesNeedNoKeyAndAreNotCountedAsRequests) {
  HttpTestClient client(start());
  const auto probe = client.request("GET", "/openai/models?api-version=2024-10-21");
  ASSERT_EQ(probe.status, 200) << probe.body;
  EXPECT_EQ(json::parse(probe.body)["data"][0]["id"], "gpt-4o");
  EXPECT_EQ(client.request("GET", "/v1/models").status, 200);
  EXPECT_EQ(client.request("POST", kChat, kBody, kKey).status, 200);
  const auto stats = json::parse(client.request("GET", "/_sim/stats").body);
  EXPECT_EQ(stats["requests"], 1);
  EXPECT_EQ(stats["probes"], 2);
}

TEST_F(SimServerTest, ProbesOfADeadBackendStallBeforeTheHeaders) {
  settings_.faults.stall_ms = 150;
  settings_.faults.stall_before_headers = true;
  HttpTestClient client(start());
  const auto begin = std::chrono::steady_clock::now();
  const auto probe = client.request("GET", "/v1/models");
  ASSERT_EQ(probe.status, 200);
  EXPECT_GE(probe.headers_at - begin, 150ms);
}

TEST_F(SimServerTest, FirstTokenDelaysTheHeadOfAPlainAnswer) {
  settings_.faults.first_token_ms = 120;
  HttpTestClient client(start());
  const auto begin = std::chrono::steady_clock::now();
  const auto result = client.request("POST", kChat, kBody, kKey);
  ASSERT_EQ(result.status, 200);
  EXPECT_GE(result.headers_at - begin, 120ms);
}

TEST_F(SimServerTest, FirstTokenDelaysTheFirstContentOfAStream) {
  settings_.faults.first_token_ms = 120;
  HttpTestClient client(start());
  const auto begin = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point first_content_at{};
  const auto result = client.request("POST", kChat, kStreamBody, kKey, [&](const std::string& chunk) {
    if (first_content_at == std::chrono::steady_clock::time_point{} &&
        chunk.find("\"content\":\"This\"") != std::string::npos)
      first_content_at = std::chrono::steady_clock::now();
  });
  ASSERT_FALSE(result.error) << result.error.message();
  EXPECT_EQ(result.chunks.size(), 7u);  // nothing lost: the stream goes on as usual
  ASSERT_NE(first_content_at, std::chrono::steady_clock::time_point{});
  EXPECT_GE(first_content_at - begin, 120ms);
}

// A reasoning deployment sends the head and opening events of its stream at once, then thinks:
// with one I/O thread, other connections are served meanwhile (the wait is a timer).
TEST_F(SimServerTest, AReasoningStreamSendsItsOpeningEventsThenWaitsWithoutBlockingOthers) {
  settings_.deployments.push_back({"o3", {1'000'000'000, 1'000'000}, std::chrono::hours(1)});
  const auto port = start(1);
  std::mutex mutex;
  std::vector<std::string> seen;
  std::thread thinking([&] {
    HttpTestClient client(port);
    client.request(
        "POST", "/v1/messages",
        R"({"model":"o3","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]})",
        kAnthropic, [&](const std::string& chunk) {
          std::lock_guard lock(mutex);
          seen.push_back(chunk);
        });  // ends when the server goes
  });
  const auto seen_count = [&] {
    std::lock_guard lock(mutex);
    return seen.size();
  };
  std::future<int> other;
  [&] {  // the checks; whatever they find, the server and the thread are ended below
    ASSERT_TRUE(smartlb::testing::await_condition([&] { return seen_count() >= 3; }));
    other = std::async(std::launch::async, [port] {
      HttpTestClient client(port);
      return client.request("POST", kChat, kBody, kKey).status;
    });
    ASSERT_TRUE(smartlb::testing::await_condition(
        [&] { return other.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }));
    EXPECT_EQ(other.get(), 200);
    std::lock_guard lock(mutex);
    ASSERT_EQ(seen.size(), 3u);  // still thinking: no content yet
    EXPECT_TRUE(seen[0].starts_with("event: message_start\n")) << seen[0];
    EXPECT_TRUE(seen[1].starts_with("event: content_block_start\n")) << seen[1];
    EXPECT_TRUE(seen[2].starts_with("event: ping\n")) << seen[2];
  }();
  server_->stop();
  thread_.join();
  server_.reset();  // closes the thinking stream's connection
  thinking.join();
}

}  // namespace sim_server_test
}  // namespace smartlb::sim
