// The first-token deadline: fixed, off, or learned per (backend, deployment) and request shape,
// scaled by the prompt, never for the last candidate, never past the ceiling.
#include "smartlb/routing/first_token.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace first_token_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

constexpr routing::BackendId kA{1}, kB{2};
constexpr base::Nanos kCeiling = 100s;
const base::MonoNanos kNow = base::Nanos(1h).count();

void observe_n(routing::FirstTokenStats& s, std::size_t n, base::Nanos took, std::int64_t prompt = 0,
               std::string_view shape = "", base::MonoNanos at = kNow) {
  for (std::size_t i = 0; i < n; ++i) s.observe(kA, "gpt", shape, prompt, took, at);
}

TEST(FirstToken, NothingIsLearnedFromTooFewFirstTokens) {
  routing::FirstTokenStats s;
  observe_n(s, routing::FirstTokenStats::kEnough - 1, 200ms);
  EXPECT_EQ(s.learned(kA, "gpt", "", 0, kNow), std::nullopt);
  observe_n(s, 1, 200ms);
  EXPECT_TRUE(s.learned(kA, "gpt", "", 0, kNow));
}

TEST(FirstToken, AFastDeploymentGetsTheFloor) {
  routing::FirstTokenStats s;
  observe_n(s, 20, 200ms);
  EXPECT_EQ(s.learned(kA, "gpt", "", 200, kNow), routing::FirstTokenStats::kFloor);
}

TEST(FirstToken, TheDeadlineIsAMarginOverTheSlowestRecentFirstTokenScaledByThePrompt) {
  routing::FirstTokenStats s;
  observe_n(s, 10, 1s, 1000);  // 1 s for 1000 + 1000 tokens: 0.5 ms a token
  observe_n(s, 1, 4s, 1000);   // the slowest: 2 ms a token
  EXPECT_EQ(s.learned(kA, "gpt", "", 1000, kNow), 12s) << "3 x 4 s";
  // A prompt of 100k tokens on a deployment that answers short prompts at once: scaled up.
  EXPECT_EQ(s.learned(kA, "gpt", "", 99'000, kNow), 600s) << "3 x 2 ms x 100k";
}

TEST(FirstToken, AShapeNeverSeenGetsNoDeadline) {
  routing::FirstTokenStats s;
  observe_n(s, 20, 300ms, 0, "low");
  EXPECT_TRUE(s.learned(kA, "gpt", "low", 0, kNow));
  EXPECT_EQ(s.learned(kA, "gpt", "high", 0, kNow), std::nullopt) << "high effort thinks far longer";
  EXPECT_EQ(s.learned(kB, "gpt", "low", 0, kNow), std::nullopt) << "another backend";
  EXPECT_EQ(s.learned(kA, "other", "low", 0, kNow), std::nullopt) << "another deployment";
}

TEST(FirstToken, OldFirstTokensSayNothing) {
  routing::FirstTokenStats s;
  observe_n(s, 20, 300ms, 0, "", kNow);
  EXPECT_EQ(s.learned(kA, "gpt", "", 0, kNow + base::Nanos(routing::FirstTokenStats::kKeep + 1s).count()),
            std::nullopt);
}

TEST(FirstToken, OnlyTheLatestFirstTokensCount) {
  routing::FirstTokenStats s;
  observe_n(s, 1, 20s);
  observe_n(s, routing::FirstTokenStats::kSamples, 300ms);
  EXPECT_EQ(s.learned(kA, "gpt", "", 0, kNow), routing::FirstTokenStats::kFloor)
      << "the slow one has left the window";
}

TEST(FirstToken, TheAttemptsDeadline) {
  routing::FirstTokenStats s;
  observe_n(s, 20, 1s);
  const routing::FirstTokenSetting learned{};
  const routing::FirstTokenSetting off{routing::FirstTokenSetting::Mode::Off};
  const routing::FirstTokenSetting fixed{routing::FirstTokenSetting::Mode::Fixed, 5s};
  EXPECT_EQ(first_token_deadline(learned, s, kA, "gpt", "", 0, kCeiling, false, kNow), 8s);
  EXPECT_EQ(first_token_deadline(learned, s, kA, "gpt", "", 0, kCeiling, true, kNow), std::nullopt)
      << "the last candidate is never cut";
  EXPECT_EQ(first_token_deadline(off, s, kA, "gpt", "", 0, kCeiling, false, kNow), std::nullopt);
  EXPECT_EQ(first_token_deadline(fixed, s, kB, "x", "", 0, kCeiling, false, kNow), 5s);
  EXPECT_EQ(first_token_deadline(fixed, s, kB, "x", "", 0, 4s, false, kNow), std::nullopt)
      << "not past the ceiling: the attempt's own timeout decides";
  EXPECT_EQ(first_token_deadline(learned, s, kA, "gpt", "", 1'000'000, kCeiling, false, kNow), std::nullopt)
      << "a learned deadline past the ceiling is none";
}

}  // namespace first_token_test
}  // namespace smartlb
