#include "smartlb/clients/client_auth.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace {

TEST(ClientAuth, DisabledAllowsEveryone) {
  ClientAuthenticator a({});
  EXPECT_FALSE(a.enabled());
  EXPECT_TRUE(a.allows("", ""));
}

TEST(ClientAuth, AcceptsApiKeyOrBearer) {
  ClientAuthenticator a({"client-key-1", "client-key-2"});
  EXPECT_TRUE(a.allows("client-key-2", ""));
  EXPECT_TRUE(a.allows("", "Bearer client-key-1"));
  EXPECT_FALSE(a.allows("client-key-3", ""));
  EXPECT_FALSE(a.allows("", "Bearer "));
  EXPECT_FALSE(a.allows("", "Basic client-key-1"));
  EXPECT_FALSE(a.allows("", ""));
  EXPECT_FALSE(a.allows("client-key-1x", ""));
}

}  // namespace
}  // namespace smartlb
