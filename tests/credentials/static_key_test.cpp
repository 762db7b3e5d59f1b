#include "smartlb/credentials/static_key.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace smartlb {
namespace {

std::vector<std::string> fields(const CredentialFields& f) {
  std::vector<std::string> out;
  for (const auto& x : f) out.push_back(std::string(x.name) + ": " + std::string(x.value));
  return out;
}

BackendConfig with_key(AuthStyle auth, bool azure_host) {
  BackendConfig b;
  b.api_key = "backend-key";
  b.auth = auth;
  b.azure_host = azure_host;
  return b;
}

const ClientCredential kClient{"client-key", "Bearer client-token"};

TEST(StaticKey, AzureHostGetsItsKeyAsApiKeyAndNothingOfTheClients) {
  EXPECT_EQ(fields(static_key_fields(with_key(AuthStyle::Auto, true), "Bearer backend-key", false, kClient)),
            std::vector<std::string>{"api-key: backend-key"});
}

TEST(StaticKey, AzurePathOnAnyHostGetsApiKey) {
  EXPECT_EQ(fields(static_key_fields(with_key(AuthStyle::Auto, false), "Bearer backend-key", true, kClient)),
            std::vector<std::string>{"api-key: backend-key"});
}

TEST(StaticKey, OpenAiStyleGetsBearer) {
  EXPECT_EQ(fields(static_key_fields(with_key(AuthStyle::Auto, false), "Bearer backend-key", false, kClient)),
            std::vector<std::string>{"Authorization: Bearer backend-key"});
}

TEST(StaticKey, ExplicitStyleWins) {
  EXPECT_EQ(fields(static_key_fields(with_key(AuthStyle::Bearer, true), "Bearer backend-key", true, kClient)),
            std::vector<std::string>{"Authorization: Bearer backend-key"});
  EXPECT_EQ(
      fields(static_key_fields(with_key(AuthStyle::ApiKey, false), "Bearer backend-key", false, kClient)),
      std::vector<std::string>{"api-key: backend-key"});
}

TEST(StaticKey, NoKeyPassesTheClientsCredentialsThrough) {
  const BackendConfig b;
  EXPECT_EQ(fields(static_key_fields(b, "Bearer ", true, kClient)),
            (std::vector<std::string>{"api-key: client-key", "Authorization: Bearer client-token"}));
  EXPECT_TRUE(fields(static_key_fields(b, "Bearer ", true, ClientCredential{})).empty());
}

}  // namespace
}  // namespace smartlb
