#include "smartlb/http/body_intake.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace body_intake_test {  // named, not anonymous: tests/CMakeLists.txt

// Threshold 100, buffered bodies up to 1000, streamed ones up to 5000.
constexpr http::BodyLimits kLimits{100, 1000, 5000};
constexpr http::BodyKind kRequest = http::BodyKind::Request, kUpload = http::BodyKind::Upload;

TEST(BodyKind, UploadsAreMultipartAndRawBytesEverythingElseIsARequest) {
  EXPECT_EQ(http::body_kind("multipart/form-data; boundary=x"), kUpload);
  EXPECT_EQ(http::body_kind("Multipart/Form-Data"), kUpload);
  EXPECT_EQ(http::body_kind("application/octet-stream"), kUpload);
  EXPECT_EQ(http::body_kind("audio/wav"), kUpload);
  EXPECT_EQ(http::body_kind("application/json"), kRequest);
  EXPECT_EQ(http::body_kind("application/json; charset=utf-8"), kRequest);
  EXPECT_EQ(http::body_kind("application/x-www-form-urlencoded"), kRequest) << "curl -d sends JSON so";
  EXPECT_EQ(http::body_kind(""), kRequest);
}

TEST(BodyIntake, ARequestIsBufferedUpToTheBufferedLimitWhateverTheThreshold) {
  EXPECT_EQ(plan_known_length(kLimits, kRequest, 0).intake, http::BodyIntake::Buffer);
  EXPECT_EQ(plan_known_length(kLimits, kRequest, 101).intake, http::BodyIntake::Buffer)
      << "a chat with images";
  EXPECT_EQ(plan_known_length(kLimits, kRequest, 1000).intake, http::BodyIntake::Buffer);
  const http::BodyPlan over = plan_known_length(kLimits, kRequest, 1001);
  EXPECT_EQ(over.intake, http::BodyIntake::TooLarge);
  EXPECT_EQ(over.limit, "MAX_REQUEST_BODY_BYTES");
}

TEST(BodyIntake, AnUploadAboveTheThresholdIsStreamedUpToTheStreamedLimit) {
  EXPECT_EQ(plan_known_length(kLimits, kUpload, 100).intake, http::BodyIntake::Buffer);
  EXPECT_EQ(plan_known_length(kLimits, kUpload, 101).intake, http::BodyIntake::Stream);
  EXPECT_EQ(plan_known_length(kLimits, kUpload, 5000).intake, http::BodyIntake::Stream);
  const http::BodyPlan over = plan_known_length(kLimits, kUpload, 5001);
  EXPECT_EQ(over.intake, http::BodyIntake::TooLarge);
  EXPECT_EQ(over.limit, "MAX_STREAMED_BODY_BYTES");
}

// For every kind, size and framing: once a size is refused, every larger one is too.
TEST(BodyIntake, LimitsNeverInvert) {
  for (const http::BodyLimits limits :
       {kLimits, http::BodyLimits{100, 50, 5000}, http::BodyLimits{100, 100, 100}})
    for (const http::BodyKind kind : {kRequest, kUpload}) {
      bool refused = false;
      for (std::uint64_t n = 0; n <= 6000; ++n) {
        const bool now = plan_known_length(limits, kind, n).intake == http::BodyIntake::TooLarge;
        EXPECT_TRUE(now || !refused) << n << " bytes accepted after a smaller body was refused";
        refused = refused || now;
        // Chunked: held to the parser's limit; past it, refused.
        const http::ChunkedLimit held = chunked_buffering_limit(limits, kind);
        EXPECT_EQ(n > held.bytes, now) << n << " bytes: chunked and with a length disagree";
      }
    }
}

TEST(BodyIntake, ABufferedLimitBelowTheThresholdMakesUploadsStreamSoonerAndRefusesLargerRequests) {
  const http::BodyLimits small_buffer{100, 50, 5000};  // MAX_REQUEST_BODY_BYTES below the threshold
  EXPECT_EQ(plan_known_length(small_buffer, kUpload, 50).intake, http::BodyIntake::Buffer);
  EXPECT_EQ(plan_known_length(small_buffer, kUpload, 51).intake, http::BodyIntake::Stream);
  EXPECT_EQ(plan_known_length(small_buffer, kRequest, 51).intake, http::BodyIntake::TooLarge);
  EXPECT_EQ(plan_known_length(small_buffer, kRequest, 5000).intake, http::BodyIntake::TooLarge);
}

TEST(BodyIntake, AChunkedRequestIsHeldToTheBufferedLimitAndNeverStreamed) {
  const http::ChunkedLimit held = chunked_buffering_limit(kLimits, kRequest);
  EXPECT_EQ(held.bytes, 1000u);
  EXPECT_EQ(held.limit, "MAX_REQUEST_BODY_BYTES");
  EXPECT_EQ(held.stream_past, UINT64_MAX);
  EXPECT_FALSE(stream_chunked(kLimits, kRequest, 900, false));
}

TEST(BodyIntake, AChunkedUploadIsStreamedWhenItGrowsPastTheThresholdUnfinished) {
  const http::ChunkedLimit held = chunked_buffering_limit(kLimits, kUpload);
  EXPECT_EQ(held.bytes, 5000u);
  EXPECT_EQ(held.limit, "MAX_STREAMED_BODY_BYTES");
  EXPECT_EQ(held.stream_past, 100u);
  EXPECT_FALSE(stream_chunked(kLimits, kUpload, 100, false));
  EXPECT_TRUE(stream_chunked(kLimits, kUpload, 101, false));
  // Whole in memory: buffered (it can be sent again), unless over the buffered limit.
  EXPECT_FALSE(stream_chunked(kLimits, kUpload, 150, true));
  EXPECT_FALSE(stream_chunked(kLimits, kUpload, 1000, true));
  EXPECT_TRUE(stream_chunked(kLimits, kUpload, 1001, true));
}

TEST(BodyIntake, The413NamesTheLimit) {
  EXPECT_NE(http::too_large_message("MAX_STREAMED_BODY_BYTES").find("MAX_STREAMED_BODY_BYTES"),
            std::string_view::npos);
  EXPECT_NE(http::too_large_message("MAX_REQUEST_BODY_BYTES").find("MAX_REQUEST_BODY_BYTES"),
            std::string_view::npos);
}

}  // namespace body_intake_test
}  // namespace smartlb
