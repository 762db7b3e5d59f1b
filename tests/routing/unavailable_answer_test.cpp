#include "smartlb/routing/unavailable_answer.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace unavailable_answer_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST(UnavailableAnswer, ThrottlingIs429WithTheSoonestRecovery) {
  const auto a = routing::answer_unavailable({3'500ms, true}, 2, "gpt-4o");
  EXPECT_EQ(a.status, 429u);
  EXPECT_EQ(a.code, "rate_limit_exceeded");
  EXPECT_EQ(a.type, "requests");
  EXPECT_EQ(a.retry_after, 3'500ms);
  EXPECT_EQ(a.message, "Every backend is rate limited for deployment 'gpt-4o'; retry after 3500 ms.");
}

TEST(UnavailableAnswer, FailedAttemptsWithoutThrottlingAre502) {
  const auto a = routing::answer_unavailable({2s, false}, 1, "");
  EXPECT_EQ(a.status, 502u);
  EXPECT_EQ(a.code, "upstream_error");
  EXPECT_EQ(a.message, "Every backend failed; retry after 2000 ms.");
}

// Backends that answered 429 with sub-second retry-after-ms may be back by the time the last
// attempt ends: the request was still rate limited, not failed.
TEST(UnavailableAnswer, AnAttemptAnswered429Is429EvenWhenItsCooldownEndedSince) {
  const auto a = routing::answer_unavailable({0ms, false}, 2, "gpt-4o", {}, /*rate_limited=*/true);
  EXPECT_EQ(a.status, 429u);
  EXPECT_EQ(a.code, "rate_limit_exceeded");
  EXPECT_EQ(a.retry_after, 1s);
  EXPECT_EQ(a.message, "Every backend is rate limited for deployment 'gpt-4o'; retry after 1000 ms.");
}

TEST(UnavailableAnswer, NothingTriedIs503) {
  const auto a = routing::answer_unavailable({5s, false}, 0, "embeddings");
  EXPECT_EQ(a.status, 503u);
  EXPECT_EQ(a.code, "no_backend_available");
  EXPECT_EQ(a.type, "server_error");
}

TEST(UnavailableAnswer, EveryBackendWithoutTheModelIs404NamingIt) {
  routing::Unavailability u{10s, false, true};
  const auto a = answer_unavailable(u, 2, "gpt-5");
  EXPECT_EQ(a.status, 404u);
  EXPECT_EQ(a.type, "invalid_request_error");
  EXPECT_EQ(a.code, "model_not_found");
  EXPECT_EQ(a.retry_after, std::nullopt) << "retrying would not help";
  EXPECT_EQ(a.message, "The model or deployment 'gpt-5' does not exist on any backend (each answered 404).");
}

TEST(UnavailableAnswer, NoKnownRecoveryTimeSaysOneSecond) {
  EXPECT_EQ(routing::answer_unavailable({0ms, false}, 0, "").retry_after, 1s);
  EXPECT_EQ(routing::answer_unavailable({0ms, true}, 3, "").retry_after, 1s);
}

}  // namespace unavailable_answer_test
}  // namespace smartlb
