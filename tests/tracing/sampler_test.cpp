// The samplers of OTEL_TRACES_SAMPLER: the parent's decision followed by the parent-based ones,
// and the ratio decided by the trace id alone, at its exact boundary.
#include "smartlb/tracing/sampler.hpp"

#include <gtest/gtest.h>

namespace smartlb::tracing {
namespace sampler_test {  // named, not anonymous: tests/CMakeLists.txt

// A trace id whose last 8 bytes are `low` (big-endian).
telemetry::TraceId id_with_low(std::uint64_t low) {
  telemetry::TraceId id{};
  id[0] = 0xab;
  for (int i = 15; i >= 8; --i, low >>= 8)
    id[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(low & 0xff);
  return id;
}

TEST(Sampler, NamesRoundTripAndTheDefaultIsParentBasedAlwaysOn) {
  for (const auto k : {SamplerKind::AlwaysOn, SamplerKind::AlwaysOff, SamplerKind::TraceIdRatio,
                       SamplerKind::ParentBasedAlwaysOn, SamplerKind::ParentBasedAlwaysOff,
                       SamplerKind::ParentBasedTraceIdRatio})
    EXPECT_EQ(parse_sampler_kind(to_string(k)), k);
  EXPECT_FALSE(parse_sampler_kind("jaeger_remote"));
  EXPECT_FALSE(parse_sampler_kind("AlwaysOn"));
  EXPECT_EQ(SamplerConfig{}.kind, SamplerKind::ParentBasedAlwaysOn);
}

TEST(Sampler, AlwaysOnAndOffIgnoreTheParent) {
  const telemetry::TraceId id = id_with_low(1);
  for (const std::optional<bool> parent :
       {std::optional<bool>(), std::optional(true), std::optional(false)}) {
    EXPECT_TRUE(Sampler({SamplerKind::AlwaysOn}).sample(id, parent));
    EXPECT_FALSE(Sampler({SamplerKind::AlwaysOff}).sample(id, parent));
  }
}

TEST(Sampler, ParentBasedFollowsTheParentElseItsRoot) {
  const telemetry::TraceId id = id_with_low(1);
  const Sampler on({SamplerKind::ParentBasedAlwaysOn}), off({SamplerKind::ParentBasedAlwaysOff});
  EXPECT_TRUE(on.sample(id, std::nullopt));
  EXPECT_FALSE(on.sample(id, false));
  EXPECT_TRUE(on.sample(id, true));
  EXPECT_FALSE(off.sample(id, std::nullopt));
  EXPECT_TRUE(off.sample(id, true));
  EXPECT_FALSE(off.sample(id, false));
  const Sampler ratio({SamplerKind::ParentBasedTraceIdRatio, 0.0});
  EXPECT_TRUE(ratio.sample(id, true));  // the parent wins over a ratio of 0
  EXPECT_FALSE(ratio.sample(id, std::nullopt));
}

TEST(Sampler, RatioKeepsIdsBelowRatioTimesTwoToThe63) {
  // 0.25 * 2^63 = 2^61: the low 8 bytes >> 1 must be below it, so low < 2^62.
  const Sampler quarter({SamplerKind::TraceIdRatio, 0.25});
  EXPECT_TRUE(quarter.sample(id_with_low((std::uint64_t{1} << 62) - 1), std::nullopt));
  EXPECT_FALSE(quarter.sample(id_with_low(std::uint64_t{1} << 62), std::nullopt));
  EXPECT_FALSE(quarter.sample(id_with_low(~std::uint64_t{0}), std::nullopt));
  EXPECT_TRUE(quarter.sample(id_with_low(0), false));  // not parent-based: the parent does not count
}

TEST(Sampler, RatioOfOneKeepsEveryIdAndZeroNone) {
  const Sampler all({SamplerKind::TraceIdRatio, 1.0}), none({SamplerKind::TraceIdRatio, 0.0});
  for (const std::uint64_t low : {std::uint64_t{0}, std::uint64_t{1} << 62, ~std::uint64_t{0}}) {
    EXPECT_TRUE(all.sample(id_with_low(low), std::nullopt));
    EXPECT_FALSE(none.sample(id_with_low(low), std::nullopt));
  }
}

}  // namespace sampler_test
}  // namespace smartlb::tracing
