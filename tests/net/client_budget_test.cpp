// Per-client budgets over sockets: admission before any backend is called, the 429 a client
// gets over its budget, the correction to the usage an answer reports (streams too), and the
// x-ratelimit-* fields that tell a client its own budget.
#include <gtest/gtest.h>

#include <thread>

#include "await_condition.hpp"
#include "chat_request.hpp"
#include "held_stream.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"
#include "smartlb/http/error_body.hpp"
#include "smartlb/net/forward.hpp"

namespace smartlb::testing {
namespace client_budget_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const std::string kUsage =
    R"({"choices":[],"usage":{"prompt_tokens":30,"completion_tokens":20,"total_tokens":50}})";

config::ClientConfig client(const std::string& name, const std::string& key, config::ClientLimits limits,
                            std::vector<std::string> subjects = {}) {
  config::ClientConfig c;
  c.name = name;
  c.key = key;
  c.subjects = std::move(subjects);
  c.limits = limits;
  return c;
}

struct ClientBudgets : ::testing::Test {
  LastRecord records;
  std::size_t sent = 0;
  HttpResponse call(const std::string& key) {
    HttpResponse r = http_call(proxy.port(), "POST", kChat, {{"api-key", key}}, kBody);
    // The budget is settled when the request ends: wait for that before the next one.
    EXPECT_TRUE(records.await(++sent));
    return r;
  }
  ProxyHarness proxy;
};

TEST_F(ClientBudgets, OverItsBudgetAClientGets429AndNoBackendIsCalled) {
  MockBackend backend([](const SeenRequest&) {
    return MockReply{200, {}, "ok"};
  });  // no usage: estimates stay
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.clients.push_back(client("search", "search-key-1", {.tokens_per_minute = 500}));
  proxy.start(&records);
  EXPECT_EQ(call("search-key-1").status, 200u);  // 200 tokens (chat_request.hpp)
  EXPECT_EQ(call("search-key-1").status, 200u);
  const HttpResponse r = call("search-key-1");
  EXPECT_EQ(r.status, 429u);
  EXPECT_EQ(backend.request_count(), 2u);
  EXPECT_EQ(r.body,
            http::openai_error_json(
                "Rate limit reached for client 'search' on tokens per min (TPM): Limit 500, Used 400, "
                "Requested 200. Please try again in 1m1s.",
                "tokens", "rate_limit_exceeded"));
  EXPECT_EQ(r.header("retry-after"), "61");
  EXPECT_EQ(r.header("retry-after-ms"), "61000");
  EXPECT_EQ(r.header("x-ratelimit-limit-tokens"), "500");
  EXPECT_EQ(r.header("x-ratelimit-remaining-tokens"), "100");
  EXPECT_TRUE(records.await(3)->client_limited);

  proxy.clock.advance(61s);
  EXPECT_EQ(call("search-key-1").status, 200u) << "admitted again when promised";
}

TEST_F(ClientBudgets, RequestsOnOneConnectionAreChargedEachInTurn) {
  // A connection keeps its budget charges' storage for its next request (forward.hpp).
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.clients.push_back(client("search", "search-key-1", {.tokens_per_minute = 500}));
  proxy.start(&records);
  RawConnection c(proxy.port());
  const std::string request = "POST " + kChat + " HTTP/1.1\r\nHost: proxy\r\napi-key: search-key-1\r\n" +
                              "Content-Length: " + std::to_string(kBody.size()) + "\r\n\r\n" + kBody;
  for (std::size_t i = 1; i <= 2; ++i) {
    c.send(request);
    c.read_until("\r\n\r\nok", i);
    ASSERT_TRUE(records.await(++sent));
  }
  c.send(request);
  const std::string got = c.read_until("rate_limit_exceeded");
  const std::size_t third = got.rfind("HTTP/1.1 ");
  EXPECT_EQ(got.find("HTTP/1.1 429", third), third) << got.substr(third);
  EXPECT_NE(got.find("x-ratelimit-remaining-tokens: 300"), std::string::npos) << got;
  EXPECT_NE(got.find("x-ratelimit-remaining-tokens: 100"), std::string::npos) << got;
  EXPECT_EQ(backend.request_count(), 2u);
}

TEST(ForwardBuffers, HoldNoBudgetChargesUnlessACallerHasBudgets) {
  // They live as long as the client connection, idle or streaming: the charges, most of their
  // size, are made only for a caller with budgets.
  EXPECT_LT(sizeof(net::ForwardBuffers), sizeof(clients::BudgetAdmission));
}

TEST_F(ClientBudgets, TheChargeIsCorrectedToTheUsageTheAnswerReports) {
  MockBackend backend([](const SeenRequest&) {
    return MockReply{200, {{"content-type", "application/json"}}, kUsage};
  });
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.clients.push_back(client("search", "search-key-1", {.tokens_per_minute = 500}));
  proxy.start(&records);
  // Admission needs 200 free (the estimate); each answer then counts 50: 50 k + 200 <= 500.
  int admitted = 0;
  while (call("search-key-1").status == 200u) ++admitted;
  EXPECT_EQ(admitted, 7) << "without the correction, only 2 fit";
}

TEST_F(ClientBudgets, AStreamsUsageCorrectsTheChargeToo) {
  MockBackend backend([](const SeenRequest&) {
    MockReply r;
    r.headers = {{"content-type", "text/event-stream"}};
    r.events = {"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n", "data: " + kUsage + "\n\n",
                "data: [DONE]\n\n"};
    return r;
  });
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.clients.push_back(client("search", "search-key-1", {.tokens_per_minute = 500}));
  proxy.start(&records);
  int admitted = 0;
  while (call("search-key-1").status == 200u) ++admitted;
  EXPECT_EQ(admitted, 7);
}

TEST_F(ClientBudgets, ResponsesTellTheClientsBudgetNotTheBackends) {
  MockBackend backend([](const SeenRequest&) {
    return MockReply{200,
                     {{"x-ratelimit-remaining-tokens", "99000"},
                      {"x-ratelimit-limit-tokens", "100000"},
                      {"x-ratelimit-remaining-requests", "99"}},
                     "ok"};
  });
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.clients.push_back(
      client("search", "search-key-1", {.tokens_per_minute = 1000, .requests_per_minute = 10}));
  proxy.cfg.policy.clients.push_back(client("free", "free-key-12", {}));
  proxy.start(&records);
  const HttpResponse r = call("search-key-1");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(r.header("x-ratelimit-limit-tokens"), "1000");
  EXPECT_EQ(r.header("x-ratelimit-remaining-tokens"), "800");
  EXPECT_EQ(r.header("x-ratelimit-limit-requests"), "10");
  EXPECT_EQ(r.header("x-ratelimit-remaining-requests"), "9");
  EXPECT_FALSE(r.header("x-ratelimit-reset-tokens").empty());
  // A client without a budget sees none (the backend's describe smartlb's quota, not its own).
  const HttpResponse unlimited = call("free-key-12");
  EXPECT_EQ(unlimited.status, 200u);
  EXPECT_FALSE(unlimited.has_header("x-ratelimit-remaining-tokens"));
}

TEST_F(ClientBudgets, ATeamSharesOneBudgetAndAFailedAnswerGivesItsTokensBack) {
  MockBackend backend([](const SeenRequest& req) {
    return req.body.find("fail") != std::string::npos ? MockReply{400, {}, "bad"} : MockReply{200, {}, "ok"};
  });
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.clients.push_back(client("a", "team-key-a1", {}, {"team:search"}));
  proxy.cfg.policy.clients.push_back(client("b", "team-key-b1", {}, {"team:search"}));
  proxy.cfg.policy.subject_limits.push_back(
      config::SubjectLimit{"team:search", true, {.tokens_per_minute = 450}});
  proxy.start(&records);
  // A 400 used no tokens: its 200 come back.
  const std::string failing = R"({"messages":[{"role":"user","content":"fail"}],"max_tokens":100})";
  EXPECT_EQ(http_call(proxy.port(), "POST", kChat, {{"api-key", "team-key-a1"}}, failing).status, 400u);
  ASSERT_TRUE(records.await(++sent));
  EXPECT_EQ(call("team-key-a1").status, 200u);
  EXPECT_EQ(call("team-key-b1").status, 200u);
  const HttpResponse r = call("team-key-a1");
  EXPECT_EQ(r.status, 429u);
  EXPECT_NE(r.body.find("subject 'team:search'"), std::string::npos) << r.body;
}

TEST_F(ClientBudgets, EveryCallerOfASubjectHasItsOwnBudget) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.clients.push_back(client("a", "each-key-a1", {}));
  proxy.cfg.policy.clients.push_back(client("b", "each-key-b1", {}));
  proxy.cfg.policy.subject_limits.push_back(config::SubjectLimit{"*", false, {.requests_per_minute = 1}});
  proxy.start(&records);
  EXPECT_EQ(call("each-key-a1").status, 200u);
  EXPECT_EQ(call("each-key-b1").status, 200u);
  EXPECT_EQ(call("each-key-a1").status, 429u);
  const HttpResponse r = call("each-key-b1");
  EXPECT_EQ(r.status, 429u);
  EXPECT_EQ(r.body, http::openai_error_json(
                        "Rate limit reached for client 'b' on requests per min (RPM): Limit 1, Used 1, "
                        "Requested 1. Please try again in 1m1s.",
                        "requests", "rate_limit_exceeded"));
}

TEST_F(ClientBudgets, AReloadKeepsWhatWasUsed) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.clients.push_back(client("search", "search-key-1", {.requests_per_minute = 2}));
  proxy.start(&records);
  EXPECT_EQ(call("search-key-1").status, 200u);
  EXPECT_EQ(call("search-key-1").status, 200u);
  config::Config next = proxy.cfg;
  next.policy.clients[0].limits.requests_per_minute = 3;
  proxy.server->reload(next);
  EXPECT_EQ(call("search-key-1").status, 200u);
  EXPECT_EQ(call("search-key-1").status, 429u);
}

}  // namespace client_budget_test
}  // namespace smartlb::testing

namespace smartlb::testing {
namespace client_budget_test {

// Cost budgets (docs/operations.md#cost): gpt-4o at $2.50 / $1.25 / $10 per million input,
// cached input and output tokens, in pico-dollars a token.
cost::PriceTable gpt4o_prices() {
  return cost::PriceTable{"USD", {cost::ModelPrice{"gpt-4o", {}, 2'500'000, 1'250'000, 10'000'000}}};
}

TEST_F(ClientBudgets, OverItsCostBudgetAClientGets429InOpenAIsShape) {
  MockBackend backend([](const SeenRequest&) {
    return MockReply{200, {{"content-type", "application/json"}}, kUsage};
  });
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.prices = gpt4o_prices();
  // $0.002 a day. Each request is admitted at its estimate, 100 prompt + 100 max_tokens:
  // 100 x $2.50/1M + 100 x $10/1M = $0.00125; its answer costs 30 x $2.50/1M + 20 x $10/1M
  // = $0.000275.
  proxy.cfg.policy.clients.push_back(
      client("search", "search-key-1", {.cost_per_day = 2 * cost::kPicoPerUnit / 1000}));
  proxy.start(&records);
  EXPECT_EQ(call("search-key-1").status, 200u);
  const auto first = records.await(1);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->cost, 275'000'000);
  EXPECT_EQ(first->cost_model, "gpt-4o");
  EXPECT_EQ(call("search-key-1").status, 200u);  // $0.000275 used + $0.00125 asked <= $0.002
  EXPECT_EQ(call("search-key-1").status, 200u);  // $0.00055 + $0.00125 <= $0.002
  const HttpResponse r = call("search-key-1");   // $0.000825 + $0.00125 > $0.002
  EXPECT_EQ(r.status, 429u);
  EXPECT_EQ(backend.request_count(), 3u) << "no backend is called for a refused request";
  const std::string message =
      "Rate limit reached for client 'search' on cost per day (UTC): Limit 0.002 USD, Used 0.000825 USD, "
      "Requested 0.00125 USD. Please try again in " +
      r.header("x-ratelimit-reset-cost") + ".";
  EXPECT_EQ(r.body, http::openai_error_json(message, "cost", "rate_limit_exceeded"));
  EXPECT_FALSE(r.header("retry-after").empty());
  EXPECT_EQ(r.header("x-ratelimit-limit-cost"), "0.002");
  EXPECT_EQ(r.header("x-ratelimit-remaining-cost"), "0.001175");
  const auto refused = records.await(4);
  ASSERT_TRUE(refused);
  EXPECT_TRUE(refused->client_limited);
  EXPECT_EQ(refused->cost, -1) << "a refused request cost nothing";
}

// max_in_flight: a stream holds its slot until its last event; meanwhile another request of the
// same client gets 429 with Retry-After 1 and no backend is called; the slot freed, it is admitted.
TEST_F(ClientBudgets, AStreamHoldsItsInFlightSlotUntilItEnds) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  const GatePtr last_event = backend.make_gate();
  backend.set_handler(stream_held_before_last_event(last_event));
  proxy.add_backend("only", backend.url());
  proxy.cfg.policy.clients.push_back(client("batch", "batch-key-1", {.max_in_flight = 1}));
  proxy.cfg.policy.clients.push_back(client("search", "search-key-1", {.max_in_flight = 1}));
  proxy.start(&records);
  const std::string stream_body = R"({"messages":[{"role":"user","content":"hi"}],"stream":true})";
  HttpResponse streamed;
  std::thread holder([&] {
    streamed = http_call(proxy.port(), "POST", kChat, {{"api-key", "batch-key-1"}}, stream_body);
  });
  ASSERT_TRUE(await_condition([&] { return backend.request_count() == 1; }));
  const HttpResponse refused = http_call(proxy.port(), "POST", kChat, {{"api-key", "batch-key-1"}}, kBody);
  EXPECT_EQ(refused.status, 429u);
  EXPECT_EQ(refused.body,
            http::openai_error_json("Too many requests in flight for client 'batch': Limit 1, In flight 1. "
                                    "Please try again in 1s or when one of them has ended.",
                                    "requests", "rate_limit_exceeded"));
  EXPECT_EQ(refused.header("retry-after"), "1");
  EXPECT_EQ(backend.request_count(), 1u);
  // Another client's cap is its own.
  EXPECT_EQ(http_call(proxy.port(), "POST", kChat, {{"api-key", "search-key-1"}}, kBody).status, 200u);
  backend.open(last_event);
  holder.join();
  EXPECT_EQ(streamed.status, 200u);
  EXPECT_NE(streamed.body.find("[DONE]"), std::string::npos);
  EXPECT_TRUE(records.await(3));  // the stream ended: its slot is free
  EXPECT_EQ(http_call(proxy.port(), "POST", kChat, {{"api-key", "batch-key-1"}}, kBody).status, 200u);
}

}  // namespace client_budget_test
}  // namespace smartlb::testing
