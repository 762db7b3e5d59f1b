// RefillEcho: a sliding window gives back smartlb's own sends one window later; the window is
// the one lag that explains the moments 429s name, and what the reports show came back.
#include "smartlb/routing/refill_echo.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace smartlb {
namespace refill_echo_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

constexpr base::MonoNanos kMs = 1'000'000;
constexpr std::int64_t kWindow = 1'000 * kMs;

// Sends at irregular times (as traffic comes), 200 tokens each.
routing::RefillEcho with_sends(std::initializer_list<base::MonoNanos> ms) {
  routing::RefillEcho e;
  for (base::MonoNanos t : ms) e.sent(t * kMs, 200);
  return e;
}

TEST(RefillEcho, TheLagThatExplainsEveryMoment_IsTheWindow) {
  routing::RefillEcho e = with_sends({0, 37, 90, 161, 230, 311, 402, 455, 530, 612, 700, 777, 850, 938});
  // A 1 s sliding window: room returns one window after a send.
  const base::MonoNanos moments[] = {37, 161, 311, 455, 612};
  for (std::size_t i = 0; i < std::size(moments); ++i) {
    EXPECT_FALSE(e.window()) << "after " << i << " moments";
    e.room_at(kWindow + moments[i] * kMs);
  }
  ASSERT_TRUE(e.window());
  EXPECT_EQ(*e.window(), base::Nanos(kWindow));
}

TEST(RefillEcho, TheSameMomentTwice_CountsOnce) {
  routing::RefillEcho e = with_sends({0, 37, 90, 161, 230, 311, 402});
  for (int i = 0; i < 6; ++i) e.room_at(kWindow + 37 * kMs + i * kMs / 2);  // crossing answers
  EXPECT_FALSE(e.window());
}

TEST(RefillEcho, RefillsAfterAReport_AreTheSendsAWindowLater) {
  routing::RefillEcho e = with_sends({0, 37, 90, 161, 230, 311, 402, 455, 530, 612});
  for (base::MonoNanos m : {37, 161, 311, 455, 612}) e.room_at(kWindow + m * kMs);
  ASSERT_TRUE(e.window());
  const auto r = e.refills_after(kWindow + 100 * kMs, 3);  // a report at 1.1 s
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].at, kWindow + 161 * kMs);
  EXPECT_EQ(r[0].tokens, 200);
  EXPECT_EQ(r[1].at, kWindow + 230 * kMs);
  EXPECT_EQ(r[2].tokens, 600);
  EXPECT_EQ(r[2].requests, 3);
}

TEST(RefillEcho, ASendWithoutAnEstimate_GivesBackTheAverageOfThoseWithOne) {
  // The first sends, before anything was watched, carry no estimate (0): they give back what
  // the sends with one average, not nothing.
  routing::RefillEcho e;
  for (base::MonoNanos t : {0, 37, 90}) e.sent(t * kMs, 0);
  for (base::MonoNanos t : {161, 230, 311, 402, 455, 530, 612}) e.sent(t * kMs, t % 2 ? 300 : 100);
  for (base::MonoNanos m : {37, 161, 311, 455, 612}) e.room_at(kWindow + m * kMs);
  ASSERT_TRUE(e.window());
  const std::int64_t average = (300 * 3 + 100 * 4 + 3) / 7;  // 161, 311 and 455 are odd
  EXPECT_EQ(e.refilled_between(kWindow - kMs, kWindow + 100 * kMs), 3 * average);
  EXPECT_EQ(e.refills_after(kWindow - kMs, 1).at(0).tokens, average);
  EXPECT_EQ(e.refilled_between(kWindow + 100 * kMs, kWindow + 170 * kMs), 300) << "its own estimate";
}

TEST(RefillEcho, ReportsNarrowTheLags_AndOneThatDisagreesIsForgotten) {
  routing::RefillEcho e = with_sends({0, 37, 90, 161, 230, 311, 402, 455, 530, 612, 700});
  e.room_at(kWindow + 37 * kMs);  // candidates: one per send
  // Nothing came back between reports at 1.05 and 1.08 s; 200 between 1.08 and 1.10 s.
  e.refilled(kWindow + 50 * kMs, kWindow + 80 * kMs, 0);
  e.refilled(kWindow + 80 * kMs, kWindow + 100 * kMs, 200);
  e.refilled(kWindow + 100 * kMs, kWindow + 150 * kMs, 0);
  e.refilled(kWindow + 150 * kMs, kWindow + 170 * kMs, 200);
  EXPECT_FALSE(e.window()) << "a 635 ms lag explains all of it too";
  e.refilled(kWindow + 220 * kMs, kWindow + 240 * kMs, 200);
  ASSERT_TRUE(e.window()) << "one lag left, after six observations";
  EXPECT_EQ(*e.window(), base::Nanos(kWindow));
  for (int i = 0; i < 3; ++i)  // three reports in a row that a 1 s window cannot explain
    e.refilled(kWindow + (170 + 10 * i) * kMs, kWindow + (180 + 10 * i) * kMs, 5'000);
  EXPECT_FALSE(e.window());
}

TEST(RefillEcho, AFixedWindowExplainsNoLag) {
  // Boundaries every second; sends wherever traffic put them.
  routing::RefillEcho e =
      with_sends({10, 130, 245, 380, 505, 640, 770, 890, 1010, 1125, 1260, 1400, 1530, 1660, 1780, 1900});
  for (base::MonoNanos b : {2000, 3000, 4000, 5000, 6000, 7000}) e.room_at(b * kMs);
  EXPECT_FALSE(e.window());
}

TEST(RefillEcho, RefilledBetween_IsWhatTheSendsAWindowEarlierGaveBack) {
  routing::RefillEcho e = with_sends({0, 37, 90, 161, 230, 311, 402, 455, 530, 612});
  EXPECT_EQ(e.refilled_between(0, 10 * kWindow), 0) << "no window learned: nothing predicted";
  for (base::MonoNanos m : {37, 161, 311, 455, 612}) e.room_at(kWindow + m * kMs);
  ASSERT_TRUE(e.window());
  EXPECT_EQ(e.refilled_between(kWindow + 100 * kMs, kWindow + 230 * kMs), 400) << "161 and 230";
  EXPECT_EQ(e.refilled_between(kWindow + 161 * kMs, kWindow + 229 * kMs), 0) << "(from, to]";
}

TEST(RefillEcho, CoversOnlyWhatItRemembers) {
  routing::RefillEcho e = with_sends({100, 137, 190, 261, 330, 411, 502, 555, 630, 712});
  for (base::MonoNanos m : {137, 261, 411, 555, 712}) e.room_at(kWindow + m * kMs);
  ASSERT_TRUE(e.window());
  EXPECT_TRUE(e.covers(kWindow + 100 * kMs));
  EXPECT_FALSE(e.covers(kWindow + 50 * kMs)) << "sends before the first one seen are unknown";
  for (std::size_t i = 0; i < routing::RefillEcho::kSends; ++i)
    e.sent((800 + static_cast<base::MonoNanos>(i)) * kMs / 100 + 800 * kMs, 200);
  EXPECT_FALSE(e.covers(kWindow + 700 * kMs)) << "forgotten sends could give back room then";
  EXPECT_TRUE(e.covers(kWindow + 900 * kMs));
}

TEST(RefillEcho, Strict_TheMomentsNeededGrowWithTheChanceOfAMatch) {
  using routing::RefillEcho;
  EXPECT_EQ(RefillEcho::confirmations_needed(12, 0.088), RefillEcho::kConfirmations) << "sparse sends";
  // 250 candidate lags, a send every 40 ms: a moment matches one by chance 15 % of the time.
  EXPECT_EQ(RefillEcho::confirmations_needed(250, 0.15), 8);
  EXPECT_EQ(RefillEcho::confirmations_needed(500, 0.7), 0) << "too dense to tell: never";
}

TEST(RefillEcho, Strict_DenserSendsNeedMoreMomentsBeforeTheWindowIsTrusted) {
  // A send every 20-60 ms: a moment falls near one by chance about 15 % of the time. Five
  // moments teach the lax echo (reports will check it); the strict one waits for more.
  routing::RefillEcho lax, strict;
  std::vector<base::MonoNanos> sends;
  std::uint32_t x = 12345;
  for (base::MonoNanos t = 0; t < 1'500;
       t += 20 + static_cast<base::MonoNanos>((x = x * 1103515245u + 12345u) >> 16) % 41) {
    sends.push_back(t);
    lax.sent(t * kMs, 200);
    strict.sent(t * kMs, 200);
  }
  int strict_moments = 0;
  for (std::size_t i = 3; i < sends.size() && !strict.window(); i += 3) {
    const base::MonoNanos moment = kWindow + sends[i] * kMs;
    if (!lax.window()) lax.room_at(moment);
    strict.room_at(moment, /*strict=*/true);
    ++strict_moments;
    if (strict_moments == routing::RefillEcho::kConfirmations) {
      ASSERT_TRUE(lax.window());
      EXPECT_EQ(*lax.window(), base::Nanos(kWindow));
      EXPECT_FALSE(strict.window()) << "five moments among this many sends may be chance";
    }
  }
  ASSERT_TRUE(strict.window());
  EXPECT_GT(strict_moments, routing::RefillEcho::kConfirmations);
  EXPECT_EQ(*strict.window(), base::Nanos(kWindow));
}

TEST(RefillEcho, Strict_SparseSendsLearnTheWindowAsBefore) {
  routing::RefillEcho e = with_sends({0, 137, 290, 461, 630, 811, 1002, 1155, 1330, 1512});
  for (base::MonoNanos m : {137, 290, 461, 630, 811, 1002, 1155})
    if (!e.window()) e.room_at(2 * kWindow + m * kMs, /*strict=*/true);
  ASSERT_TRUE(e.window());
  EXPECT_EQ(*e.window(), base::Nanos(2 * kWindow));
}

}  // namespace refill_echo_test
}  // namespace smartlb
