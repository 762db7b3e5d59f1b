// Routing ahead of the 429 with no quota declared: the backends' own x-ratelimit-remaining-*
// headers, on every answer, keep a target that cannot fit the next request out of the way.
#include <gtest/gtest.h>

#include <atomic>

#include "chat_request.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace {

using namespace std::chrono_literals;

// A backend whose first answer is a 429 naming the end of its window (1 s away), and whose
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

CooldownView deployment_cooldown(ProxyHarness& p, std::size_t position) {
  return p.server->states().deployment_cooldown(p.server->snapshot()->table.member(position), "gpt-4o");
}

TEST(BackendReports, TargetOutOfItsReportedTokensIsSkippedWithoutAnUpstream429) {
  std::atomic<int> calls{0};
  MockBackend primary([&](const SeenRequest&) { return out_then_low(calls, "primary"); });
  MockBackend secondary([](const SeenRequest&) { return MockReply{200, {}, "secondary"}; });
  ProxyHarness p;
  p.cfg.quota_window = 10s;  // no quota declared: only the windows' length
  p.add_backend("primary", primary.url(), 1);
  p.add_backend("secondary", secondary.url(), 2);
  p.start();
  // The 429 teaches where primary's windows end: 1 s from now, then every 10 s.
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "secondary");
  p.clock.advance(1s);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary") << "150 tokens left, it says";
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "secondary") << "200 tokens do not fit";
  EXPECT_EQ(primary.request_count(), 2u) << "no second 429";
  EXPECT_EQ(deployment_cooldown(p, 0).until, p.clock.now()) << "a skip, not a cooldown";

  p.clock.advance(10s);  // the next window
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary");
}

TEST(BackendReports, EveryTargetOutAnswers429UntilTheWindowRefills) {
  std::atomic<int> calls{0};
  MockBackend only([&](const SeenRequest&) { return out_then_low(calls, "ok"); });
  ProxyHarness p;
  p.cfg.quota_window = 10s;
  p.add_backend("only", only.url());
  p.start();
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 429u);
  p.clock.advance(1s);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u);
  const auto r = http_call(p.port(), "POST", kChat, {}, kBody);
  EXPECT_EQ(r.status, 429u);
  EXPECT_EQ(r.header("retry-after-ms"), "10000") << "until the window that began 1 s in ends";
  EXPECT_EQ(only.request_count(), 2u) << "answered by smartlb, not by another upstream 429";
  p.clock.advance(10s);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).status, 200u);
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
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "secondary") << "no request left for 2 s";
  p.clock.advance(2s);
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "primary");
  EXPECT_EQ(primary.request_count(), 2u);
}

TEST(BackendReports, A429ForADailyQuotaIsToldApartFromARateLimit) {
  MockBackend daily([](const SeenRequest&) { return MockReply{429, {{"retry-after", "86400"}}, "{}"}; });
  MockBackend other([](const SeenRequest&) { return MockReply{200, {}, "other"}; });
  ProxyHarness p;
  p.add_backend("daily", daily.url(), 1);
  p.add_backend("other", other.url(), 2);
  p.start();
  EXPECT_EQ(http_call(p.port(), "POST", kChat, {}, kBody).body, "other");
  const CooldownView c = deployment_cooldown(p, 0);
  EXPECT_EQ(c.cause, FailureCause::QuotaExhausted);
  EXPECT_EQ(c.until - p.clock.now(), Nanos(p.cfg.max_cooldown).count()) << "still the clamped cooldown";
}

}  // namespace
}  // namespace smartlb::testing
