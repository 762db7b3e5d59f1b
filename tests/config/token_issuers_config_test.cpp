// The clients' token issuers: the config file's `token_issuers` and CLIENT_ENTRA_*.
#include <gtest/gtest.h>

#include "smartlb/config/config_env.hpp"
#include "smartlb/config/config_file.hpp"

namespace smartlb {
namespace token_issuers_config_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr const char* kTenant = "aaaabbbb-cccc-4ddd-8eee-ffff00001111";

std::string errors_of(const config::ConfigLoadResult& r) {
  std::string all;
  for (const auto& e : r.errors) all += e + "\n";
  return all;
}
bool has_error(const config::ConfigLoadResult& r, std::string_view needle) {
  return errors_of(r).find(needle) != std::string::npos;
}

const config::EnvMap kBackend = {{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"BACKEND_1_APIKEY", "k-12345678"}};

TEST(TokenIssuersConfig, ReadsEveryField) {
  const std::string text = std::string(R"(
token_issuers:
  - name: contoso
    tenant_id: )") + kTenant +
                           R"(
    audiences: [api://smartlb, 0f0f0f0f-0000-0000-0000-000000000000]
    required_roles: [OpenAI.User]
    discovery_url: http://127.0.0.1:9999/openid
    clock_skew_seconds: 30
)";
  const auto r = config::load_config_text(kBackend, text, "f.yaml");
  ASSERT_TRUE(r.config) << errors_of(r);
  ASSERT_EQ(r.config->policy.token_issuers.size(), 1u);
  const auto& t = r.config->policy.token_issuers[0];
  EXPECT_EQ(t.name, "contoso");
  EXPECT_EQ(t.tenant_id, kTenant);
  EXPECT_EQ(t.audiences, (std::vector<std::string>{"api://smartlb", "0f0f0f0f-0000-0000-0000-000000000000"}));
  EXPECT_EQ(t.required_roles, std::vector<std::string>{"OpenAI.User"});
  EXPECT_EQ(t.discovery_url, "http://127.0.0.1:9999/openid");
  EXPECT_EQ(t.clock_skew, std::chrono::seconds(30));
  EXPECT_NE(config::describe_routing(*r.config).find("token issuer contoso: tenant"), std::string::npos)
      << describe_routing(*r.config);
}

TEST(TokenIssuersConfig, ReportsEachMistakeWithItsPath) {
  const auto r = config::load_config_text(kBackend, R"(
clients:
  - {name: contoso, key: abcdefgh-1}
token_issuers:
  - name: contoso
    tenant_id: contoso.onmicrosoft.com
    audience: [api://x]
    discovery_url: ftp://example
    clock_skew_seconds: 3600
)",
                                          "f.yaml");
  EXPECT_FALSE(r.config);
  EXPECT_TRUE(has_error(r, "token_issuers[0].name: duplicates another client's or token issuer's name"))
      << errors_of(r);
  EXPECT_TRUE(has_error(r, "token_issuers[0].tenant_id: must be the tenant's id, a GUID")) << errors_of(r);
  EXPECT_TRUE(has_error(r, "token_issuers[0].audience: unknown key (did you mean \"audiences\"?)"))
      << errors_of(r);
  EXPECT_TRUE(has_error(r, "token_issuers[0].audiences: needs at least one audience")) << errors_of(r);
  EXPECT_TRUE(has_error(r, "token_issuers[0].discovery_url: must start with https://")) << errors_of(r);
  EXPECT_TRUE(has_error(r, "token_issuers[0].clock_skew_seconds: must be an integer from 0 to 600"))
      << errors_of(r);
}

TEST(TokenIssuersConfig, TheEnvironmentDeclaresOneIssuer) {
  config::EnvMap env = kBackend;
  env["CLIENT_ENTRA_TENANT_ID"] = kTenant;
  env["CLIENT_ENTRA_AUDIENCE"] = "api://smartlb, api://other";
  env["CLIENT_ENTRA_ROLES"] = "OpenAI.User";
  env["AZURE_AUTHORITY_HOST"] = "http://127.0.0.1:8888";
  const auto r = config::load_config_from_env(env);
  ASSERT_TRUE(r.config) << errors_of(r);
  ASSERT_EQ(r.config->client_token_issuers.size(), 1u);
  const auto& t = r.config->client_token_issuers[0];
  EXPECT_EQ(t.name, "entra");
  EXPECT_EQ(t.audiences, (std::vector<std::string>{"api://smartlb", "api://other"}));
  EXPECT_EQ(t.required_roles, std::vector<std::string>{"OpenAI.User"});
  EXPECT_EQ(t.authority_host, "http://127.0.0.1:8888");
}

TEST(TokenIssuersConfig, TheEnvironmentsMistakesAreNamed) {
  config::EnvMap env = kBackend;
  env["CLIENT_ENTRA_TENANT_ID"] = "common";
  EXPECT_TRUE(
      has_error(config::load_config_from_env(env), "CLIENT_ENTRA_TENANT_ID: must be the tenant's id"));
  EXPECT_TRUE(has_error(config::load_config_from_env(env), "CLIENT_ENTRA_AUDIENCE: is required"));
  config::EnvMap stray = kBackend;
  stray["CLIENT_ENTRA_AUDIENCE"] = "api://x";
  EXPECT_TRUE(has_error(config::load_config_from_env(stray),
                        "CLIENT_ENTRA_AUDIENCE: applies only with CLIENT_ENTRA_TENANT_ID"));
}

}  // namespace token_issuers_config_test
}  // namespace smartlb
