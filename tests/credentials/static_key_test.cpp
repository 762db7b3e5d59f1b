#include "smartlb/credentials/static_key.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smartlb {
namespace static_key_test {  // named, not anonymous: tests/CMakeLists.txt

std::vector<std::string> fields(const credentials::CredentialFields& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(std::string(x.name) + ": " + std::string(x.value));
  return out;
}

config::BackendConfig with_key(config::AuthStyle auth, bool azure_host) {
  config::BackendConfig b;
  b.api_key = "backend-key";
  b.auth = auth;
  b.azure_host = azure_host;
  return b;
}

credentials::CredentialFields client() {
  credentials::CredentialFields c;
  c.add("api-key", "client-key");
  c.add("Authorization", "Bearer client-token");
  c.add("x-api-key", "client-x-key");
  return c;
}

std::vector<std::string> sent(config::AuthStyle auth, bool azure_host, http::ApiFamily family) {
  return fields(static_key_fields(with_key(auth, azure_host), "Bearer backend-key", family, client()));
}

using V = std::vector<std::string>;

TEST(StaticKey, AzureHostGetsItsKeyAsApiKeyAndNothingOfTheClients) {
  EXPECT_EQ(sent(config::AuthStyle::Auto, true, http::ApiFamily::OpenAI), V{"api-key: backend-key"});
}

TEST(StaticKey, AzurePathOnAnyHostGetsApiKey) {
  EXPECT_EQ(sent(config::AuthStyle::Auto, false, http::ApiFamily::Azure), V{"api-key: backend-key"});
}

TEST(StaticKey, OpenAiStyleGetsBearer) {
  EXPECT_EQ(sent(config::AuthStyle::Auto, false, http::ApiFamily::OpenAI),
            V{"Authorization: Bearer backend-key"});
}

TEST(StaticKey, MessagesApiGetsXApiKeyOnAnyHost) {
  EXPECT_EQ(sent(config::AuthStyle::Auto, false, http::ApiFamily::Anthropic), V{"x-api-key: backend-key"});
  EXPECT_EQ(sent(config::AuthStyle::Auto, true, http::ApiFamily::Anthropic), V{"x-api-key: backend-key"})
      << "Foundry's /anthropic/ endpoint reads x-api-key too";
}

TEST(StaticKey, ExplicitStyleWins) {
  EXPECT_EQ(sent(config::AuthStyle::Bearer, true, http::ApiFamily::Azure),
            V{"Authorization: Bearer backend-key"});
  EXPECT_EQ(sent(config::AuthStyle::ApiKey, false, http::ApiFamily::Anthropic), V{"api-key: backend-key"});
  EXPECT_EQ(sent(config::AuthStyle::XApiKey, true, http::ApiFamily::Azure), V{"x-api-key: backend-key"});
  EXPECT_EQ(sent(config::AuthStyle::Apim, true, http::ApiFamily::Azure),
            V{"Ocp-Apim-Subscription-Key: backend-key"});
}

TEST(StaticKey, NoKeyPassesTheClientsCredentialsThrough) {
  const config::BackendConfig b;
  EXPECT_EQ(fields(static_key_fields(b, "Bearer ", http::ApiFamily::Azure, client())),
            (V{"api-key: client-key", "Authorization: Bearer client-token", "x-api-key: client-x-key"}));
  EXPECT_TRUE(fields(static_key_fields(b, "Bearer ", http::ApiFamily::Azure, credentials::CredentialFields{}))
                  .empty());
}

}  // namespace static_key_test
}  // namespace smartlb
