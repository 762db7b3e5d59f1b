// BlindBucket: a token bucket's refill rate from its 429s' Retry-After alone (the moment each
// refused request fits) and smartlb's sends between them; its level from the last 429 on.
#include "smartlb/routing/blind_bucket.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

namespace smartlb {
namespace blind_bucket_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr base::MonoNanos kMs = 1'000'000;

// The limiter: `per_second` tokens a second, holding at most `burst` (full at 0).
struct Bucket {
  double per_second, burst, level, at = 0;
  Bucket(double rate, double cap) : per_second(rate), burst(cap), level(cap) {}
  void refill(base::MonoNanos t) {
    level = std::min(burst, level + per_second * static_cast<double>(t - at) / 1e9);
    at = static_cast<double>(t);
  }
  // Takes `cost` at `t`, or says (as retry-after-ms does) when it would fit.
  std::optional<base::MonoNanos> take(base::MonoNanos t, std::int64_t cost) {
    refill(t);
    if (level >= static_cast<double>(cost)) {
      level -= static_cast<double>(cost);
      return std::nullopt;
    }
    return t +
           static_cast<base::MonoNanos>(std::ceil((static_cast<double>(cost) - level) / per_second * 1e9));
  }
};

// smartlb's side: sends of `cost` every `every_ms`, its taken sends counted, each 429 told.
struct Sender {
  routing::BlindBucket learner;
  std::int64_t taken = 0;
  void send(Bucket& b, base::MonoNanos t, std::int64_t cost) {
    if (const auto fits = b.take(t, cost)) {
      learner.refused(t, *fits, cost, taken);
    } else {
      learner.taken(t, cost, taken);
      taken += cost;
    }
  }
};

TEST(BlindBucket, TheRefillRate_FromTheMomentsItsRefusalsNameAndTheSendsBetween) {
  Bucket b(1'000, 1'000);
  Sender s;
  // 1,333 tokens a second asked of a 1,000 a second bucket: short from the first second on.
  for (base::MonoNanos t = 0; t < 8'000 * kMs; t += 150 * kMs) s.send(b, t, 200);
  ASSERT_TRUE(s.learner.known());
  EXPECT_NEAR(s.learner.rate() * 1e9, 1'000, 10);
  // And the level: what the bucket holds now.
  const base::MonoNanos now = 8'050 * kMs;
  b.refill(now);
  EXPECT_NEAR(static_cast<double>(s.learner.level(now, s.taken)), b.level, 10);
}

TEST(BlindBucket, VariedCostsAndIrregularSends_StillGiveTheRate) {
  Bucket b(2'500, 2'500);
  Sender s;
  base::MonoNanos t = 0;
  for (int i = 0; i < 200; ++i) {
    t += (37 + (i * 53) % 71) * kMs;     // 37-107 ms apart: about 3,300 tokens a second
    s.send(b, t, 100 + (i * 97) % 400);  // 100-499 tokens
  }
  ASSERT_TRUE(s.learner.known());
  EXPECT_NEAR(s.learner.rate() * 1e9, 2'500, 50);
}

TEST(BlindBucket, TwoRefusalsFarApart_AreNoSample) {
  routing::BlindBucket learner;
  // The bucket may have filled up in a gap over kMaxGap: what came back is not the refill.
  for (int i = 0; i < 6; ++i) learner.refused(i * 3'000 * kMs - 1, i * 3'000 * kMs, 200, i * 1'000);
  EXPECT_EQ(learner.rate(), 0);
  EXPECT_FALSE(learner.known());
}

TEST(BlindBucket, RefusalsThatCrossed_NameOneMoment) {
  routing::BlindBucket learner;
  // Two requests in flight refused together name the same moment: no rate from 5 ms apart.
  learner.refused(100 * kMs - 1, 100 * kMs, 200, 0);
  learner.refused(105 * kMs - 1, 105 * kMs, 200, 0);
  learner.refused(300 * kMs - 1, 300 * kMs, 200, 200);  // 200 taken, in 200 ms: 1,000 a second
  learner.refused(500 * kMs - 1, 500 * kMs, 200, 400);
  learner.refused(700 * kMs - 1, 700 * kMs, 200, 600);
  EXPECT_FALSE(learner.known()) << "on trial: 1.5 times the widest gap, 300 ms";
  learner.taken(1'000 * kMs, 200, 800);  // 200 at 700 ms + 300 back - 200 taken before
  ASSERT_TRUE(learner.known());
  EXPECT_NEAR(learner.rate() * 1e9, 1'000, 1);
}

// 1,000 tokens a second: four 429s 200 ms apart, 200 taken between each two; then (the rate
// given at 600 ms, on trial for 300 ms) 200 taken at 900 ms, and a 429 naming 1,000 ms.
routing::BlindBucket learned_bucket() {
  routing::BlindBucket learner;
  for (int i = 0; i < 4; ++i) learner.refused(i * 200 * kMs - 1, i * 200 * kMs, 200, i * 200);
  learner.taken(900 * kMs, 200, 600);
  learner.refused(999 * kMs, 1'000 * kMs, 200, 800);
  return learner;
}

TEST(BlindBucket, ARequestTakenWhereTheLevelSaidNo_RaisesTheLevelAndTheRate) {
  routing::BlindBucket learner = learned_bucket();
  ASSERT_TRUE(learner.known());
  const base::MonoNanos at = 1'050 * kMs;
  // By the model: 200 at 1,000 ms, +50 by 1,050 ms, less 150 taken since: 100.
  EXPECT_EQ(learner.level(at, 950), 100);
  learner.taken(at, 150, 950);  // the bucket took 150 then: it held at least that
  EXPECT_EQ(learner.level(at, 950), 150);
  // and it gave back at least 150 + 150 taken - 200 held = 100 in the 50 ms since 1,000 ms.
  EXPECT_NEAR(learner.rate() * 1e9, 2'000, 1);
  EXPECT_EQ(learner.level(at + 100 * kMs, 1'100), 200);
  learner.taken(at + 100 * kMs, 50, 1'100);  // what it already says: nothing changes
  EXPECT_EQ(learner.level(at + 100 * kMs, 1'100), 200);
  EXPECT_NEAR(learner.rate() * 1e9, 2'000, 1);
  // Proof of a refill far over the rate (a window's limit back at once) is no bucket's.
  learner.taken(at + 110 * kMs, 1'000, 1'100);
  EXPECT_FALSE(learner.known());
}

TEST(BlindBucket, A429ShortByMoreThanABucketCanBe_DropsTheRate) {
  routing::BlindBucket learner = learned_bucket();
  ASSERT_TRUE(learner.known());
  // 200 tokens refill in 200 ms; a 429 that names a moment 700 ms after its send is no bucket's
  // (a window's: it gives back what it admitted a window ago).
  learner.refused(1'100 * kMs, 1'800 * kMs, 200, 800);
  EXPECT_FALSE(learner.known());
  // A moment within what the cost takes to refill (and the round trip) is a bucket's.
  routing::BlindBucket bucket = learned_bucket();
  bucket.refused(1'100 * kMs, 1'320 * kMs, 200, 800);
  EXPECT_TRUE(bucket.known());
}

TEST(BlindBucket, AFixedWindowGivesItsLimitBackAtOnce_NoBucket_AndItsRateNeverRoutes) {
  // 1,000 tokens a 1 s window, asked 200 every 50 ms: five taken just after each boundary, then
  // 429s naming the next boundary. A sample a window apart says 1,000 a second, as a bucket's
  // would; the burst after the next boundary says no bucket refills that fast.
  routing::BlindBucket learner;
  std::int64_t taken = 0, left = 1'000;
  bool ever_known = false;
  for (base::MonoNanos t = 0; t < 8'000 * kMs; t += 50 * kMs) {
    if (t % (1'000 * kMs) == 0) left = 1'000;
    if (left >= 200) {
      learner.taken(t, 200, taken);
      left -= 200;
      taken += 200;
    } else {
      learner.refused(t, (t / (1'000 * kMs) + 1) * 1'000 * kMs, 200, taken);
    }
    ever_known = ever_known || learner.known();
  }
  EXPECT_FALSE(ever_known) << "a new rate is on trial until a window's boundary has passed";
  EXPECT_EQ(learner.rate(), 0) << "and caught, it is dropped";
}

TEST(BlindBucket, BeforeItsMoment_TheBucketHoldsLessThanTheRefusedCost) {
  routing::BlindBucket learner = learned_bucket();
  // The last refusal fits at 1,000 ms; at 900 ms the bucket is 100 short of it.
  EXPECT_EQ(learner.level(900 * kMs, 800), 100);
  EXPECT_EQ(learner.level(1'000 * kMs, 800), 200);
}

}  // namespace blind_bucket_test
}  // namespace smartlb
