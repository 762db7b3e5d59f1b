#include "smartlb/sim/faults.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace faults_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(MergeFaults, AppliesOnlyGivenFields) {
  FaultConfig faults;
  faults.latency_ms = 5;
  ASSERT_EQ(merge_faults(faults, nlohmann::json::parse(R"({"error_rate":0.25,"error_status":503})")), "");
  EXPECT_EQ(faults.latency_ms, 5);
  EXPECT_DOUBLE_EQ(faults.error_rate, 0.25);
  EXPECT_EQ(faults.error_status, 503);
}

TEST(MergeFaults, AcceptsEveryField) {
  FaultConfig faults;
  const auto patch = nlohmann::json::parse(R"({"latency_ms":1,"error_rate":1,"error_status":502,
      "reset_after_chunks":3,"stall_ms":4,"stall_before_headers":true,"stall_after_chunks":2,
      "force_status":429,"force_retry_after_ms":1500,"force_count":2,"reset_rate":0.25,
      "first_token_ms":300,"first_token_ms_per_1k_prompt_tokens":12.5,"trickle_ms":40})");
  ASSERT_EQ(merge_faults(faults, patch), "");
  FaultConfig expected{1, 1.0, 502, 3, 4, true, 2, 429, 1500, 2, 0.25, 300, 12.5, 40};
  EXPECT_EQ(faults, expected);
  EXPECT_EQ(faults_to_json(faults), patch);
}

TEST(MergeFaults, RejectsBadInputWithoutChangingAnything) {
  for (const char* bad :
       {R"({"latency":1})", R"({"error_rate":1.5})", R"({"error_rate":"x"})", R"({"error_status":42})",
        R"({"force_status":700})", R"({"latency_ms":-1})", R"({"stall_before_headers":1})",
        R"({"reset_after_chunks":-2})", R"({"reset_rate":-0.1})", R"({"reset_rate":true})",
        R"({"error_status":503,"bogus":1})", R"([1])", R"({"first_token_ms":-1})", R"({"trickle_ms":-1})",
        R"({"first_token_ms":1.5})", R"({"first_token_ms_per_1k_prompt_tokens":-0.5})",
        R"({"first_token_ms_per_1k_prompt_tokens":"5"})"}) {
    FaultConfig faults;
    EXPECT_NE(merge_faults(faults, nlohmann::json::parse(bad)), "") << bad;
    EXPECT_EQ(faults, FaultConfig{}) << bad;
  }
}

TEST(DecideReset, ResetRateComparesTheDraw) {
  FaultConfig faults;
  EXPECT_FALSE(decide_reset(faults, 0.0));  // off by default, whatever the draw
  faults.reset_rate = 0.05;
  EXPECT_TRUE(decide_reset(faults, 0.0));
  EXPECT_TRUE(decide_reset(faults, 0.049));
  EXPECT_FALSE(decide_reset(faults, 0.05));
  EXPECT_FALSE(decide_reset(faults, 0.9));
}

TEST(FirstTokenDelay, IsTheBasePlusTheRatePerThousandPromptTokens) {
  using namespace std::chrono_literals;
  FaultConfig faults;
  EXPECT_EQ(first_token_delay(faults, 100'000), 0ms);  // off by default
  faults.first_token_ms = 200;
  EXPECT_EQ(first_token_delay(faults, 100'000), 200ms);
  faults.first_token_ms_per_1k_prompt_tokens = 12.5;
  EXPECT_EQ(first_token_delay(faults, 8'000), 300ms);
  EXPECT_EQ(first_token_delay(faults, 1), 200ms);                // 0.0125 ms rounds away
  EXPECT_EQ(first_token_delay(faults, 1'000'000'000'000), 24h);  // at most a day
}

TEST(DecideReset, MidStreamPointIsHalfButAtLeastOneEvent) {
  EXPECT_EQ(reset_point_mid_stream(0), 0);
  EXPECT_EQ(reset_point_mid_stream(1), 1);
  EXPECT_EQ(reset_point_mid_stream(2), 1);
  EXPECT_EQ(reset_point_mid_stream(7), 3);
}

TEST(MergeFaults, ForceStatusZeroTurnsForcingOff) {
  FaultConfig faults;
  faults.force_status = 503;
  ASSERT_EQ(merge_faults(faults, nlohmann::json::parse(R"({"force_status":0})")), "");
  EXPECT_EQ(faults.force_status, 0);
}

TEST(DecideFault, NoFaultsServeNormally) {
  FaultConfig faults;
  EXPECT_EQ(decide_fault(faults, 0.0).status, 0);
  EXPECT_FALSE(fault_needs_draw(faults));
}

TEST(DecideFault, ErrorRateComparesTheDraw) {
  FaultConfig faults;
  faults.error_rate = 0.3;
  faults.error_status = 503;
  EXPECT_TRUE(fault_needs_draw(faults));
  EXPECT_EQ(decide_fault(faults, 0.29).status, 503);
  EXPECT_EQ(decide_fault(faults, 0.3).status, 0);
  EXPECT_FALSE(decide_fault(faults, 0.0).forced);
}

TEST(DecideFault, ErrorRateOneAlwaysFails) {
  FaultConfig faults;
  faults.error_rate = 1.0;
  EXPECT_EQ(decide_fault(faults, 0.999999).status, 500);
}

TEST(DecideFault, ForcedStatusWinsAndCarriesRetryAfter) {
  FaultConfig faults;
  faults.error_rate = 1.0;
  faults.force_status = 503;
  faults.force_retry_after_ms = 2500;
  const auto decision = decide_fault(faults, 0.0);
  EXPECT_EQ(decision.status, 503);
  EXPECT_TRUE(decision.forced);
  EXPECT_EQ(decision.retry_after_ms, 2500);
}

TEST(DecideFault, Forced429DefaultsToOneSecondRetry) {
  FaultConfig faults;
  faults.force_status = 429;
  EXPECT_EQ(decide_fault(faults, 1.0).retry_after_ms, 1000);
}

TEST(DecideFault, ForcedOtherStatusHasNoRetryAfterByDefault) {
  FaultConfig faults;
  faults.force_status = 500;
  EXPECT_EQ(decide_fault(faults, 1.0).retry_after_ms, 0);
}

TEST(DecideFault, ForceCountLimitsForcedAnswers) {
  FaultConfig faults;
  faults.force_status = 429;
  faults.force_count = 2;
  EXPECT_EQ(decide_fault(faults, 1.0).status, 429);
  EXPECT_EQ(decide_fault(faults, 1.0).status, 429);
  EXPECT_EQ(decide_fault(faults, 1.0).status, 0);
  EXPECT_EQ(faults.force_count, 0);
}

}  // namespace faults_test
}  // namespace smartlb::sim
