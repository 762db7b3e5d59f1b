// Routing ahead of the 429 with no quota declared: the backends' own x-ratelimit-remaining-*
// headers, on every answer, move a request from a target that cannot fit it to one that can;
// smartlb answers 429 itself only while a fresh report says there is no room, and a target its
// reports hold back is tested again by one request soon after.
#include <gtest/gtest.h>

#include <atomic>

#include "chat_request.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace reported_budget_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

// A backend whose first answer is a 429 saying it takes requests again in a second, and whose
// later answers say only 150 tokens remain.
MockReply out_then_low(std::atomic<int>& calls, const std::string& body) {
  if (calls++ == 0)
    return MockReply{429,
                     {{"retry-after-ms", "1000"},
                      {"x-ratelimit-remaining-tokens", "0"},
                      {"x-ratelimit-remaining-requests", "5"}},
                     "{}"};
  return MockReply{// names in any case
                   200,
                   {{"X-RateLimit-Remaining-Tokens", "150"}, {"x-ratelimit-remaining-requests", "5"}},
                   body};
}

routing::CooldownView deployment_cooldown(ProxyHarness& p, std::size_t position) {
  return p.server->states().deployment_cooldown(p.server->snapshot()->table.member(position), "gpt-4o");
}

constexpr auto kFresh = routing::ReportedBudget::kFreshFor;

TEST(BackendReports, TargetOutOfItsReportedTokensIsSkippedWithoutAnUpstream429) {
  std::atomic<int> calls{0};
  MockBackend primary([&](const SeenRequest&) { return out_then_low(calls, "primary"); });
  MockBackend secondary([](const SeenRequest&) { return MockReply{200, {}, "secondary"}; });
  ProxyHarness p;
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "secondary");
  p.clock.advance(1s);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary") << "its Retry-After is over";
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "secondary")
      << "200 tokens do not fit in 150";
  EXPECT_EQ(primary.request_count(), 2u) << "no second 429";
  EXPECT_EQ(deployment_cooldown(p, 0).until, p.clock.now()) << "a skip, not a cooldown";
  p.clock.advance(kFresh);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary")
      << "the report is no longer fresh: one request tests the preferred target";
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "secondary") << "its answer: 150 left again";
}

TEST(BackendReports, EveryTargetOut_Answers429OnlyWhileTheReportIsFresh) {
  std::atomic<int> calls{0};
  MockBackend only([&](const SeenRequest&) { return out_then_low(calls, "ok"); });
  ProxyHarness p;
  p.add_backend("only", only.url());
  p.start();
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 429u);
  p.clock.advance(1s);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u);
  const auto r = http_call(p.port(), "POST", kChat, {}, kBody);
  EXPECT_EQ(r.status, 429u);
  EXPECT_EQ(r.header("retry-after-ms"),
            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(kFresh).count()))
      << "until the report is no longer fresh, not a guessed window";
  EXPECT_EQ(only.request_count(), 2u) << "answered by smartlb, not by another upstream 429";
  p.clock.advance(kFresh);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u) << "tested again, and served";
}

TEST(BackendReports, AStaleShortTargetIsTestedByOneRequestNotAFlood) {
  // Always 0 tokens left, and yet it takes every request (its limiter refilled meanwhile).
  MockBackend only([](const SeenRequest&) {
    return MockReply{200, {{"x-ratelimit-remaining-tokens", "0"}}, "ok"};
  });
  ProxyHarness p;
  p.add_backend("only", only.url());
  p.start();
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u);
  for (int round = 0; round < 3; ++round) {
    EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 429u) << "fresh: 0 left";
    p.clock.advance(kFresh);
    EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u) << "stale: tested";
  }
  EXPECT_EQ(only.request_count(), 4u);
}

TEST(BackendReports, AnOpenAIResetHintSkipsWithoutAny429) {
  MockBackend primary([](const SeenRequest&) {
    return MockReply{200,
                     {{"x-ratelimit-remaining-requests", "0"},
                      {"x-ratelimit-remaining-tokens", "90000"},
                      {"x-ratelimit-reset-requests", "2s"},
                      {"x-ratelimit-reset-tokens", "1ms"}},
                     "primary"};
  });
  MockBackend secondary([](const SeenRequest&) { return MockReply{200, {}, "secondary"}; });
  ProxyHarness p;
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary");
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "secondary") << "no request left for now";
  p.clock.advance(2s);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary");
  EXPECT_EQ(primary.request_count(), 2u);
}

TEST(BackendReports, NegativeReportsAreUnknownNotEmpty) {
  // Azure's Responses API has answered -1 for remaining and limit, and a reset of 0.
  MockBackend primary([](const SeenRequest&) {
    return MockReply{200,
                     {{"x-ratelimit-remaining-tokens", "-1"},
                      {"x-ratelimit-remaining-requests", "-1"},
                      {"x-ratelimit-limit-tokens", "-1"},
                      {"x-ratelimit-reset-tokens", "0"}},
                     "primary"};
  });
  MockBackend secondary([](const SeenRequest&) { return MockReply{200, {}, "secondary"}; });
  ProxyHarness p;
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary");
  EXPECT_FALSE(p.server->states().reported_budget_low());
}

TEST(BackendReports, RouteOnRemainingOff_IgnoresTheReports) {
  MockBackend primary([](const SeenRequest&) {
    return MockReply{200, {{"x-ratelimit-remaining-tokens", "0"}}, "primary"};
  });
  MockBackend secondary([](const SeenRequest&) { return MockReply{200, {}, "secondary"}; });
  ProxyHarness p;
  p.cfg.route_on_remaining = false;
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  for (int i = 0; i < 3; ++i) EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary");
}

TEST(BackendReports, A429sRetryAfterBelowTheCooldownFloor_IsWhenOneRequestTestsIt) {
  std::atomic<int> calls{0};
  MockBackend primary([&](const SeenRequest&) {
    if (calls++ == 0)
      return MockReply{429, {{"retry-after-ms", "20"}, {"x-ratelimit-remaining-tokens", "0"}}, "{}"};
    return MockReply{200, {{"x-ratelimit-remaining-tokens", "5000"}}, "primary"};
  });
  MockBackend secondary([](const SeenRequest&) { return MockReply{200, {}, "secondary"}; });
  ProxyHarness p;
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "secondary");
  EXPECT_EQ(deployment_cooldown(p, 0).until - p.clock.now(), base::Nanos(p.cfg.min_cooldown).count())
      << "smartlb's floor on cooldowns: 100 ms";
  p.clock.advance(20ms);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary")
      << "the backend named 20 ms: one request tests it then";
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary") << "5,000 left: served";
}

TEST(BackendReports, A429ForADailyQuotaIsToldApartFromARateLimit) {
  MockBackend daily([](const SeenRequest&) { return MockReply{429, {{"retry-after", "86400"}}, "{}"}; });
  MockBackend other([](const SeenRequest&) { return MockReply{200, {}, "other"}; });
  ProxyHarness p;
  p.add_backend("daily", daily.url(), 1);
  p.add_backend("other", other.url(), 2);
  p.start();
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "other");
  const routing::CooldownView c = deployment_cooldown(p, 0);
  EXPECT_EQ(c.cause, routing::FailureCause::QuotaExhausted);
  EXPECT_EQ(c.until - p.clock.now(), base::Nanos(p.cfg.max_cooldown).count()) << "still the clamped cooldown";
}

}  // namespace reported_budget_test
}  // namespace smartlb::testing
