#include "smartlb/clients/client_auth.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace client_auth_test {  // named, not anonymous: tests/CMakeLists.txt

clients::ClientAuthenticator from_keys(const std::vector<std::string>& keys) {
  return clients::ClientAuthenticator(clients::ClientAuthenticator::from_key_list(keys));
}

TEST(ClientAuth, DisabledLetsEveryoneInAsTheAnonymousClient) {
  const auto a = from_keys({});
  EXPECT_FALSE(a.enabled());
  const auto who = a.identify("", "");
  ASSERT_TRUE(who);
  EXPECT_EQ(who->name, "anonymous");
  EXPECT_TRUE(who->subjects.empty());
}

TEST(ClientAuth, AcceptsApiKeyOrBearer) {
  const auto a = from_keys({"client-key-1", "client-key-2"});
  EXPECT_TRUE(a.identify("client-key-2", ""));
  EXPECT_TRUE(a.identify("", "Bearer client-key-1"));
  EXPECT_FALSE(a.identify("client-key-3", ""));
  EXPECT_FALSE(a.identify("", "Bearer "));
  EXPECT_FALSE(a.identify("", "Basic client-key-1"));
  EXPECT_FALSE(a.identify("", ""));
  EXPECT_FALSE(a.identify("client-key-1x", ""));
}

TEST(ClientAuth, KeyListEntriesAreNamedByPositionNeverByTheKey) {
  const auto a = from_keys({"secret-one", "secret-two"});
  EXPECT_EQ(a.identify("secret-two", "")->name, "client-2");
  EXPECT_EQ(a.identify("", "Bearer secret-one")->name, "client-1");
}

TEST(ClientAuth, IdentityCarriesTheKeysNameAndSubjects) {
  const clients::ClientAuthenticator a(
      {{"search-app", "k1", {"team:search", "user:alice"}, {}}, {"batch", "k2", {}, {}}});
  const auto who = a.identify("k1", "");
  ASSERT_TRUE(who);
  EXPECT_EQ(who->name, "search-app");
  ASSERT_EQ(who->subjects.size(), 2u);
  EXPECT_EQ(who->subjects[0], "team:search");
  EXPECT_EQ(who->subjects[1], "user:alice");
  EXPECT_EQ(a.identify("k2", "")->name, "batch");
}

}  // namespace client_auth_test
}  // namespace smartlb
