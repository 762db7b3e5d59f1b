#include "smartlb/redis/admin_message.hpp"

#include <gtest/gtest.h>

namespace smartlb::redis {
namespace admin_message_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(AdminMessage, AChangeRoundTrips) {
  routing::AdminChange c;
  c.backend = "east";
  c.deployment = "gpt-4o";
  c.kind = routing::AdminChange::Kind::Mode;
  c.mode = routing::AdminMode::Drain;
  c.stamp = {"alice (write, sha256:1a2b3c4d)", 1'700'000'000'123};
  const auto r = decode_change(encode_change(c, "replica-a"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->change, c);
  EXPECT_EQ(r->replica, "replica-a");

  routing::AdminChange hold;
  hold.backend = "west";
  hold.kind = routing::AdminChange::Kind::Hold;
  hold.hold_until_ms = 1'700'000'060'000;
  const auto h = decode_change(encode_change(hold, "b"));
  ASSERT_TRUE(h);
  EXPECT_EQ(h->change, hold);
  EXPECT_FALSE(h->change.deployment);
}

TEST(AdminMessage, SettingsRoundTrip) {
  routing::AdminSettings s;
  s.mode = routing::AdminMode::Disable;
  s.mode_set = {"bob (write, sha256:00ff00ff)", 42};
  s.hold = routing::AdminHold{1234, {"carol (write, sha256:12345678)", 7}};
  const auto back = decode_settings(encode_settings(s));
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, s);
  EXPECT_EQ(*decode_settings(encode_settings(routing::AdminSettings{})), routing::AdminSettings{});
}

TEST(AdminMessage, WhatCannotBeReadIsRefusedNotGuessed) {
  for (const char* bad :
       {"", "not json", "[]", R"({"b":"east"})", R"({"b":"east","k":"explode"})", R"({"b":1,"k":"lift"})",
        R"({"b":"east","k":"mode"})", R"({"b":"east","k":"mode","m":"sleep"})",
        R"({"b":"east","k":"hold","u":-5})", R"({"b":"east","k":"lift","d":""})",
        R"({"b":"east","k":"lift","s":{"by":3}})", R"({"b":"","k":"lift"})"})
    EXPECT_FALSE(decode_change(bad)) << bad;
  for (const char* bad : {"", "{}", R"({"m":"off"})", R"({"m":"drain","h":{"u":"soon"}})",
                          R"({"m":"drain","s":{"at":"noon"}})", R"({"m":"drain","h":[]})"})
    EXPECT_FALSE(decode_settings(bad)) << bad;
}

TEST(AdminMessage, FieldsNameABackendOrOneOfItsDeployments) {
  EXPECT_EQ(admin_field("east", std::nullopt), "east");
  EXPECT_EQ(admin_field("east", std::string("gpt-4o")), "east/gpt-4o");
  EXPECT_EQ(admin_scope_of("east").backend, "east");
  EXPECT_FALSE(admin_scope_of("east").deployment);
  EXPECT_EQ(admin_scope_of("east/gpt-4o").backend, "east");
  EXPECT_EQ(admin_scope_of("east/gpt-4o").deployment, "gpt-4o");
}

}  // namespace admin_message_test
}  // namespace smartlb::redis
