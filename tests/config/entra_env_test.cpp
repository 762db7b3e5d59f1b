#include "smartlb/config/entra_env.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>

#include <cstdio>

namespace smartlb {
namespace entra_env_test {  // named, not anonymous: tests/CMakeLists.txt

bool has_error(const config::ConfigLoadResult& r, std::string_view var) {
  return std::any_of(r.errors.begin(), r.errors.end(),
                     [&](const std::string& e) { return e.rfind(std::string(var) + ":", 0) == 0; });
}

std::string all_errors(const config::ConfigLoadResult& r) {
  std::string s;
  for (const auto& e : r.errors) s += e + "\n";
  return s;
}

config::EnvMap entra_backend(config::EnvMap extra) {
  extra.emplace("BACKEND_1_URL", "https://east.openai.azure.com");
  extra.emplace("BACKEND_1_AUTH", "entra");
  return extra;
}

const config::EntraCredentialConfig& entra_of(const config::ConfigLoadResult& r) {
  return r.config->backends.at(0).entra;
}

TEST(EntraEnv, AutoChoosesLikeDefaultAzureCredential) {
  const config::EnvMap secret{{"AZURE_TENANT_ID", "t"},
                              {"AZURE_CLIENT_ID", "c"},
                              {"AZURE_CLIENT_SECRET", "s"},
                              {"AZURE_FEDERATED_TOKEN_FILE", "/f"},
                              {"IDENTITY_ENDPOINT", "http://localhost:1/msi"},
                              {"IDENTITY_HEADER", "h"}};
  EXPECT_EQ(config::choose_entra_source(secret), config::EntraSource::ClientSecret);
  config::EnvMap workload = secret;
  workload.erase("AZURE_CLIENT_SECRET");
  EXPECT_EQ(config::choose_entra_source(workload), config::EntraSource::WorkloadIdentity);
  config::EnvMap app = workload;
  app.erase("AZURE_TENANT_ID");
  EXPECT_EQ(config::choose_entra_source(app), config::EntraSource::AppService);
  EXPECT_EQ(config::choose_entra_source({{"IDENTITY_ENDPOINT", "http://localhost:1/msi"}}),
            config::EntraSource::Imds);
  EXPECT_EQ(config::choose_entra_source({}), config::EntraSource::Imds);
}

TEST(EntraEnv, ClientSecretFromTheEnvironment) {
  const auto r =
      config::load_config_from_env(entra_backend({{"AZURE_TENANT_ID", "contoso.onmicrosoft.com"},
                                                  {"AZURE_CLIENT_ID", "c-1"},
                                                  {"AZURE_CLIENT_SECRET", "s3cret"},
                                                  {"AZURE_AUTHORITY_HOST", "http://127.0.0.1:9000"}}));
  ASSERT_TRUE(r.config) << all_errors(r);
  const auto& e = entra_of(r);
  EXPECT_EQ(r.config->backends[0].auth, config::AuthStyle::Entra);
  EXPECT_EQ(e.source, config::EntraSource::ClientSecret);
  EXPECT_EQ(e.tenant_id, "contoso.onmicrosoft.com");
  EXPECT_EQ(e.client_id, "c-1");
  EXPECT_EQ(e.client_secret, "s3cret");
  EXPECT_EQ(e.authority_host, "http://127.0.0.1:9000/");
  EXPECT_EQ(e.scope, "https://cognitiveservices.azure.com/.default");
}

TEST(EntraEnv, ImdsIsTheFallbackWithOptionalUserAssignedIdentityAndScope) {
  const auto r = config::load_config_from_env(
      entra_backend({{"BACKEND_1_ENTRA_CLIENT_ID", "uami-1"},
                     {"BACKEND_1_ENTRA_SCOPE", "api://gateway/.default"},
                     {"AZURE_POD_IDENTITY_AUTHORITY_HOST", "http://127.0.0.1:7000/"}}));
  ASSERT_TRUE(r.config) << all_errors(r);
  const auto& e = entra_of(r);
  EXPECT_EQ(e.source, config::EntraSource::Imds);
  EXPECT_EQ(e.client_id, "uami-1");
  EXPECT_EQ(e.scope, "api://gateway/.default");
  EXPECT_EQ(e.imds_endpoint, "http://127.0.0.1:7000/metadata/identity/oauth2/token");
}

TEST(EntraEnv, AppServiceFromItsVariables) {
  const auto r = config::load_config_from_env(
      entra_backend({{"IDENTITY_ENDPOINT", "http://localhost:42356/msi/token"}, {"IDENTITY_HEADER", "hdr"}}));
  ASSERT_TRUE(r.config) << all_errors(r);
  EXPECT_EQ(entra_of(r).source, config::EntraSource::AppService);
  EXPECT_EQ(entra_of(r).identity_endpoint, "http://localhost:42356/msi/token");
  EXPECT_EQ(entra_of(r).identity_header, "hdr");
}

TEST(EntraEnv, WorkloadIdentityNeedsAReadableTokenFile) {
  char path[] = "/tmp/smartlb-federated-XXXXXX";
  const int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  ::close(fd);
  auto r = config::load_config_from_env(entra_backend(
      {{"AZURE_TENANT_ID", "t"}, {"AZURE_CLIENT_ID", "c"}, {"AZURE_FEDERATED_TOKEN_FILE", path}}));
  ASSERT_TRUE(r.config) << all_errors(r);
  EXPECT_EQ(entra_of(r).source, config::EntraSource::WorkloadIdentity);
  EXPECT_EQ(entra_of(r).federated_token_file, path);
  std::remove(path);
  r = config::load_config_from_env(entra_backend(
      {{"AZURE_TENANT_ID", "t"}, {"AZURE_CLIENT_ID", "c"}, {"AZURE_FEDERATED_TOKEN_FILE", path}}));
  EXPECT_TRUE(has_error(r, "AZURE_FEDERATED_TOKEN_FILE")) << all_errors(r);
}

TEST(EntraEnv, AnExplicitSourceNamesEachMissingVariable) {
  const auto r = config::load_config_from_env(entra_backend({{"BACKEND_1_ENTRA_SOURCE", "client-secret"}}));
  EXPECT_FALSE(r.config);
  EXPECT_TRUE(has_error(r, "AZURE_TENANT_ID")) << all_errors(r);
  EXPECT_TRUE(has_error(r, "AZURE_CLIENT_ID"));
  EXPECT_TRUE(has_error(r, "AZURE_CLIENT_SECRET"));
  EXPECT_NE(all_errors(r).find("is required by BACKEND_1_ENTRA_SOURCE=client-secret"), std::string::npos);
  const auto app = config::load_config_from_env(entra_backend({{"BACKEND_1_ENTRA_SOURCE", "app-service"}}));
  EXPECT_TRUE(has_error(app, "IDENTITY_ENDPOINT"));
  EXPECT_TRUE(has_error(app, "IDENTITY_HEADER"));
}

TEST(EntraEnv, EntraWithAnApiKeyIsAnError) {
  const auto r = config::load_config_from_env(entra_backend({{"BACKEND_1_APIKEY", "k-secret-value"}}));
  EXPECT_TRUE(has_error(r, "BACKEND_1_APIKEY")) << all_errors(r);
  EXPECT_EQ(all_errors(r).find("k-secret-value"), std::string::npos);
}

TEST(EntraEnv, EntraSettingsWithoutEntraAuthAreErrors) {
  const auto r = config::load_config_from_env(
      {{"BACKEND_1_URL", "https://east.openai.azure.com"}, {"BACKEND_1_ENTRA_SCOPE", "api://x/.default"}});
  EXPECT_TRUE(has_error(r, "BACKEND_1_ENTRA_SCOPE")) << all_errors(r);
}

TEST(EntraEnv, BadValuesAreNamedAndSecretsNotEchoed) {
  const auto r = config::load_config_from_env(
      entra_backend({{"BACKEND_1_ENTRA_SOURCE", "cli"}, {"BACKEND_1_URL", "https://east.openai.azure.com"}}));
  EXPECT_TRUE(has_error(r, "BACKEND_1_ENTRA_SOURCE"));
  const auto insecure =
      config::load_config_from_env(entra_backend({{"AZURE_TENANT_ID", "t"},
                                                  {"AZURE_CLIENT_ID", "c"},
                                                  {"AZURE_CLIENT_SECRET", "has space secret"},
                                                  {"AZURE_AUTHORITY_HOST", "http://login.example.com/"}}));
  EXPECT_TRUE(has_error(insecure, "AZURE_AUTHORITY_HOST")) << all_errors(insecure);
  EXPECT_TRUE(has_error(insecure, "AZURE_CLIENT_SECRET"));
  EXPECT_EQ(all_errors(insecure).find("has space secret"), std::string::npos);
  const auto secret_with_own_client =
      config::load_config_from_env(entra_backend({{"AZURE_TENANT_ID", "t"},
                                                  {"AZURE_CLIENT_ID", "c"},
                                                  {"AZURE_CLIENT_SECRET", "s"},
                                                  {"BACKEND_1_ENTRA_CLIENT_ID", "x"}}));
  EXPECT_TRUE(has_error(secret_with_own_client, "BACKEND_1_ENTRA_CLIENT_ID"));
}

TEST(EntraEnv, ResolveNamesTheSettingsAsTheCallerCallsThem) {
  // As a configuration file would: its own paths for the backend's settings.
  const std::string source = "client-secret", bad_scope = "two scopes";
  config::EntraBackendSettings s;
  s.source = &source;
  s.scope = &bad_scope;
  s.source_name = "backends[1].entra.source";
  s.scope_name = "backends[1].entra.scope";
  s.client_id_name = "backends[1].entra.client_id";
  config::EntraCredentialConfig out;
  const auto errors = resolve_entra_credential({{"AZURE_TENANT_ID", "t"}, {"AZURE_CLIENT_ID", "c"}}, s, out);
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "backends[1].entra.scope: must be one scope without spaces, such as "
                        "https://cognitiveservices.azure.com/.default",
                        "AZURE_CLIENT_SECRET: is required by backends[1].entra.source=client-secret"}));
  EXPECT_EQ(out.source, config::EntraSource::ClientSecret);
}

TEST(EntraEnv, SourceNamesRoundTrip) {
  for (auto s :
       {config::EntraSource::Auto, config::EntraSource::ClientSecret, config::EntraSource::WorkloadIdentity,
        config::EntraSource::AppService, config::EntraSource::Imds})
    EXPECT_EQ(config::parse_entra_source(to_string(s)), s);
  EXPECT_FALSE(config::parse_entra_source("managed-identity"));
}

}  // namespace entra_env_test
}  // namespace smartlb
