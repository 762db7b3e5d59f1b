#include "smartlb/app/reload_notes.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace reload_notes_test {  // named, not anonymous: tests/CMakeLists.txt

config::RedisUrl url(std::string host, std::string password = "") {
  config::RedisUrl u;
  u.tls = true;
  u.host = std::move(host);
  u.port = 6380;
  u.password = std::move(password);
  return u;
}

// Redis is connected, and what is shared through it set up, at start: a reload that adds,
// changes or drops it says that it waits for a restart.
TEST(ReloadNotes, ARedisSectionAddedByAReloadNeedsARestart) {
  config::Config running, loaded;
  loaded.redis.url = url("cache.example.net", "s3cret-password");
  loaded.redis.key_prefix = "prod:";
  const auto notes = app::settings_needing_restart(running, loaded);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(
      notes[0],
      "redis.url (REDIS_URL): none -> rediss://:***@cache.example.net:6380: read at start only; restart "
      "smartlb to apply it");
  EXPECT_EQ(
      notes[1],
      "redis.key_prefix (REDIS_KEY_PREFIX): \"smartlb:\" -> \"prod:\": read at start only; restart smartlb "
      "to apply it");
  for (const auto& n : notes) EXPECT_EQ(n.find("s3cret"), std::string::npos) << n;
}

TEST(ReloadNotes, APasswordChangeIsNamedWithoutThePassword) {
  config::Config running, loaded;
  running.redis.url = url("cache.example.net", "old-password");
  loaded.redis.url = url("cache.example.net", "new-password");
  const auto notes = app::settings_needing_restart(running, loaded);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("(the password changed)"), std::string::npos) << notes[0];
  EXPECT_EQ(notes[0].find("password-"), std::string::npos) << notes[0];
}

TEST(ReloadNotes, AReloadThatKeepsTheStartOnlySettingsSaysNothing) {
  config::Config running;
  running.redis.url = url("cache.example.net", "pw");
  config::Config loaded = running;
  loaded.backends.emplace_back();  // routing changes are what a reload applies
  EXPECT_TRUE(app::settings_needing_restart(running, loaded).empty());
}

}  // namespace reload_notes_test
}  // namespace smartlb
