#include "smartlb/http/body_intake.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace {

// Threshold 100, buffered bodies up to 1000, streamed ones up to 5000.
constexpr BodyLimits kLimits{100, 1000, 5000};

TEST(BodyIntake, AKnownLengthUpToTheThresholdIsBuffered) {
  EXPECT_EQ(plan_known_length(kLimits, 0).intake, BodyIntake::Buffer);
  EXPECT_EQ(plan_known_length(kLimits, 100).intake, BodyIntake::Buffer);
}

TEST(BodyIntake, AKnownLengthAboveTheThresholdIsStreamedUpToTheStreamedLimit) {
  EXPECT_EQ(plan_known_length(kLimits, 101).intake, BodyIntake::Stream);
  EXPECT_EQ(plan_known_length(kLimits, 5000).intake, BodyIntake::Stream);
  const BodyPlan over = plan_known_length(kLimits, 5001);
  EXPECT_EQ(over.intake, BodyIntake::TooLarge);
  EXPECT_EQ(over.limit, "MAX_STREAMED_BODY_BYTES");
}

// MAX_REQUEST_BODY_BYTES bounds buffered bodies only: below the threshold it still refuses.
TEST(BodyIntake, ABufferedLimitBelowTheThresholdRefusesWhatWouldBeBuffered) {
  const BodyLimits small_buffer{100, 50, 5000};
  EXPECT_EQ(plan_known_length(small_buffer, 50).intake, BodyIntake::Buffer);
  const BodyPlan over = plan_known_length(small_buffer, 51);
  EXPECT_EQ(over.intake, BodyIntake::TooLarge);
  EXPECT_EQ(over.limit, "MAX_REQUEST_BODY_BYTES");
  EXPECT_EQ(plan_known_length(small_buffer, 101).intake, BodyIntake::Stream);
}

TEST(BodyIntake, AChunkedBodyIsHeldToTheBufferedLimitOnlyWhenItComesFirst) {
  const ChunkedLimit usual = chunked_buffering_limit(kLimits);
  EXPECT_EQ(usual.bytes, 5000u);
  EXPECT_EQ(usual.limit, "MAX_STREAMED_BODY_BYTES");
  const ChunkedLimit small = chunked_buffering_limit({100, 50, 5000});
  EXPECT_EQ(small.bytes, 50u);
  EXPECT_EQ(small.limit, "MAX_REQUEST_BODY_BYTES");
}

TEST(BodyIntake, AChunkedBodyIsStreamedWhenItGrowsPastTheThresholdUnfinished) {
  EXPECT_FALSE(stream_chunked(kLimits, 100, false));
  EXPECT_TRUE(stream_chunked(kLimits, 101, false));
  // Whole in memory: buffered (it can be sent again), unless over the buffered limit.
  EXPECT_FALSE(stream_chunked(kLimits, 150, true));
  EXPECT_FALSE(stream_chunked(kLimits, 1000, true));
  EXPECT_TRUE(stream_chunked(kLimits, 1001, true));
}

TEST(BodyIntake, The413NamesTheLimit) {
  EXPECT_NE(too_large_message("MAX_STREAMED_BODY_BYTES").find("MAX_STREAMED_BODY_BYTES"),
            std::string_view::npos);
  EXPECT_NE(too_large_message("MAX_REQUEST_BODY_BYTES").find("MAX_REQUEST_BODY_BYTES"),
            std::string_view::npos);
}

}  // namespace
}  // namespace smartlb
