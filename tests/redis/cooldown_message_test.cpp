// What replicas exchange about a cooldown, the keys it lives under, and the reconnection backoff.
#include "smartlb/redis/cooldown_message.hpp"

#include <gtest/gtest.h>

#include "smartlb/redis/backoff.hpp"
#include "smartlb/redis/keys.hpp"

namespace smartlb::redis {
namespace cooldown_message_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST(CooldownMessage, RoundTripsADeploymentCooldown) {
  CooldownMessage m{"east", "gpt-4o", false, 1'700'000'123'456, routing::FailureCause::Throttled, "node-a"};
  const std::string text = encode(m);
  EXPECT_EQ(text.rfind("1700000123456 ", 0), 0u) << "the deadline first, for the Lua max: " << text;
  auto back = decode_cooldown(text);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->backend, "east");
  EXPECT_EQ(back->deployment, "gpt-4o");
  EXPECT_FALSE(back->whole_backend);
  EXPECT_EQ(back->until_ms, 1'700'000'123'456);
  EXPECT_EQ(back->cause, routing::FailureCause::Throttled);
  EXPECT_EQ(back->replica, "node-a");
}

TEST(CooldownMessage, RoundTripsAWholeBackendCooldown) {
  auto back = decode_cooldown(encode({"west", "", true, 5, routing::FailureCause::ConnectFailed, "r"}));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->whole_backend);
  EXPECT_EQ(back->cause, routing::FailureCause::ConnectFailed);
}

TEST(CooldownMessage, UnreadableMessagesAreRefused) {
  for (const char* bad :
       {"", "123", "x {\"b\":\"a\",\"d\":\"x\"}", "12 not-json", "12 {\"d\":\"x\"}", "12 {\"b\":\"a\"}",
        // found by fuzz_redis_input: a member of another type threw
        "12 {\"b\":\"a\",\"w\":\"yes\"}", "12 {\"b\":1,\"d\":\"x\"}", "12 [1]"})
    EXPECT_FALSE(decode_cooldown(bad)) << bad;
}

TEST(CooldownMessage, AnUnknownCauseIsNone) {
  EXPECT_EQ(failure_cause_named("server_error"), routing::FailureCause::ServerError);
  EXPECT_EQ(failure_cause_named("credential"), routing::FailureCause::Credential);
  // Every cause, the last included: a replica tells the others of a stalled deployment too.
  for (int c = 0; c <= static_cast<int>(routing::kLastFailureCause); ++c)
    EXPECT_EQ(failure_cause_named(to_string(static_cast<routing::FailureCause>(c))),
              static_cast<routing::FailureCause>(c));
  EXPECT_EQ(failure_cause_named("from-a-newer-version"), routing::FailureCause::None);
}

TEST(RedisKeys, CooldownKeysShareAHashTagPerBackendAndDeployment) {
  EXPECT_EQ(cooldown_key("smartlb:", "east", "gpt-4o", false), "smartlb:{east/gpt-4o}:cooldown");
  EXPECT_EQ(cooldown_key("smartlb:", "east", "", true), "smartlb:{east}:cooldown");
  EXPECT_NE(cooldown_key("p:", "east", "", true), cooldown_key("p:", "east", "", false));
  EXPECT_EQ(replicas_key("p:"), "p:{replicas}");
  EXPECT_EQ(replica_info_key("p:"), "p:{replicas}:info");
  EXPECT_EQ(glob_escape("a*b?[c]\\"), "a\\*b\\?\\[c\\]\\\\");
}

TEST(ReconnectBackoff, DoublesUpToTheCapWithJitterAndResets) {
  // Each draw is in [half, full] of the wait: these pick the top, then the bottom.
  base::ScriptedRandom rng({50, 100, 200, 400, 500, 500, 0, 50});
  ReconnectBackoff b(100ms, 1000ms);
  EXPECT_EQ(b.next(rng), 100ms);
  EXPECT_EQ(b.next(rng), 200ms);
  EXPECT_EQ(b.next(rng), 400ms);
  EXPECT_EQ(b.next(rng), 800ms);
  EXPECT_EQ(b.next(rng), 1000ms);
  EXPECT_EQ(b.next(rng), 1000ms) << "capped";
  EXPECT_EQ(b.next(rng), 500ms) << "never less than half of the full wait";
  b.reset();
  EXPECT_EQ(b.next(rng), 100ms);
}

}  // namespace cooldown_message_test
}  // namespace smartlb::redis
