// A health probe's result as replicas keep it in Redis (redis/shared_probes): written and read
// back whole, and what another writer left there is checked member by member.
#include <gtest/gtest.h>

#include "smartlb/redis/shared_probes.hpp"

namespace smartlb::redis {
namespace probe_result_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(ProbeResult, ReadsBackWhatItWrote) {
  routing::SharedProbeResult r{false, 503, "HTTP 503", 1'700'000'000'123, "replica-2"};
  const auto back = decode_probe_result(encode(r));
  ASSERT_TRUE(back);
  EXPECT_FALSE(back->up);
  EXPECT_EQ(back->status, 503u);
  EXPECT_EQ(back->detail, "HTTP 503");
  EXPECT_EQ(back->unix_ms, 1'700'000'000'123);
  EXPECT_EQ(back->replica, "replica-2");
}

TEST(ProbeResult, AnythingElseIsNotAResult) {
  for (const char* text :
       {"", "nope", "[]", R"({"up":true})", R"({"t":1})", R"({"up":"yes","t":1})", R"({"up":true,"t":-5})",
        R"({"up":true,"t":1,"s":"200"})", R"({"up":true,"t":1,"r":7})", R"({"up":true,"t":1,"d":[]})"})
    EXPECT_FALSE(decode_probe_result(text)) << text;
  EXPECT_TRUE(decode_probe_result(R"({"up":true,"t":1})")) << "the rest may be left out";
}

}  // namespace probe_result_test
}  // namespace smartlb::redis
