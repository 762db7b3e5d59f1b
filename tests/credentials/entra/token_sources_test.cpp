#include "smartlb/credentials/entra/token_sources.hpp"

#include <gtest/gtest.h>

namespace smartlb::credentials::entra {
namespace token_sources_test {  // named, not anonymous: tests/CMakeLists.txt

using Headers = std::vector<std::pair<std::string, std::string>>;

config::EntraCredentialConfig app(config::EntraSource source) {
  config::EntraCredentialConfig c;
  c.source = source;
  c.tenant_id = "72f988bf-86f1-41af-91ab-2d7cd011db47";
  c.client_id = "11111111-2222-3333-4444-555555555555";
  c.client_secret = "s3cr~et/+=";
  c.federated_token_file = "/var/run/secrets/azure/tokens/azure-identity-token";
  return c;
}

TEST(TokenSources, ClientSecretPostsTheClientCredentialsGrant) {
  const TokenRequest r = client_secret_request(app(config::EntraSource::ClientSecret));
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.url,
            "https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/v2.0/token");
  EXPECT_EQ(r.headers,
            (Headers{{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}}));
  EXPECT_EQ(r.form_body,
            "grant_type=client_credentials&client_id=11111111-2222-3333-4444-555555555555"
            "&scope=https%3A%2F%2Fcognitiveservices.azure.com%2F.default&client_secret=s3cr~et%2F%2B%3D");
}

TEST(TokenSources, ClientSecretUsesTheConfiguredAuthorityHost) {
  auto c = app(config::EntraSource::ClientSecret);
  c.authority_host = "http://127.0.0.1:8123/";
  EXPECT_EQ(client_secret_request(c).url,
            "http://127.0.0.1:8123/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/v2.0/token");
}

TEST(TokenSources, WorkloadIdentitySendsTheFederatedTokenAsClientAssertion) {
  const TokenRequest r =
      workload_identity_request(app(config::EntraSource::WorkloadIdentity), "eyJhbGc.eyJzdWI.sig");
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.url,
            "https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/oauth2/v2.0/token");
  EXPECT_EQ(r.form_body,
            "grant_type=client_credentials&client_id=11111111-2222-3333-4444-555555555555"
            "&scope=https%3A%2F%2Fcognitiveservices.azure.com%2F.default"
            "&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer"
            "&client_assertion=eyJhbGc.eyJzdWI.sig");
}

TEST(TokenSources, WorkloadIdentityRereadsTheTokenFileOnEveryRequest) {
  const auto c = app(config::EntraSource::WorkloadIdentity);
  int reads = 0;
  std::string path_read;
  const ReadFile read = [&](const std::string& path) -> std::optional<std::string> {
    path_read = path;
    return "token-" + std::to_string(++reads) + "\n";
  };
  auto first = make_token_request(c, read);
  auto second = make_token_request(c, read);
  ASSERT_TRUE(first.request && second.request);
  EXPECT_EQ(path_read, c.federated_token_file);
  EXPECT_NE(first.request->form_body.find("&client_assertion=token-1"), std::string::npos);
  EXPECT_TRUE(second.request->form_body.ends_with("&client_assertion=token-2"));  // newline trimmed
}

TEST(TokenSources, WorkloadIdentityWithAnUnreadableFileIsAnErrorNamingIt) {
  const auto r =
      make_token_request(app(config::EntraSource::WorkloadIdentity),
                         [](const std::string&) -> std::optional<std::string> { return std::nullopt; });
  EXPECT_FALSE(r.request);
  EXPECT_NE(r.error.find("AZURE_FEDERATED_TOKEN_FILE"), std::string::npos);
  EXPECT_NE(r.error.find("/var/run/secrets/azure/tokens/azure-identity-token"), std::string::npos);
}

TEST(TokenSources, AppServiceGetsTheIdentityEndpointWithItsHeader) {
  config::EntraCredentialConfig c;
  c.source = config::EntraSource::AppService;
  c.identity_endpoint = "http://localhost:42356/msi/token";
  c.identity_header = "6a3b7f1e-header";
  const TokenRequest r = app_service_request(c);
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.url,
            "http://localhost:42356/msi/token?api-version=2019-08-01"
            "&resource=https%3A%2F%2Fcognitiveservices.azure.com");
  EXPECT_EQ(r.headers, (Headers{{"X-IDENTITY-HEADER", "6a3b7f1e-header"}, {"Accept", "application/json"}}));
  EXPECT_TRUE(r.form_body.empty());
}

TEST(TokenSources, AppServiceAsksForAUserAssignedIdentityByClientId) {
  config::EntraCredentialConfig c;
  c.source = config::EntraSource::AppService;
  c.identity_endpoint = "http://localhost:42356/msi/token";
  c.client_id = "abc-123";
  EXPECT_TRUE(app_service_request(c).url.ends_with("&client_id=abc-123"));
}

TEST(TokenSources, ImdsGetsTheMetadataEndpointWithMetadataTrue) {
  config::EntraCredentialConfig c;
  c.source = config::EntraSource::Imds;
  const TokenRequest r = imds_request(c);
  EXPECT_EQ(r.method, "GET");
  EXPECT_EQ(r.url,
            "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01"
            "&resource=https%3A%2F%2Fcognitiveservices.azure.com");
  EXPECT_EQ(r.headers, (Headers{{"Metadata", "true"}, {"Accept", "application/json"}}));
  c.client_id = "abc-123";
  c.scope = "https://example.org/api/.default";
  EXPECT_EQ(imds_request(c).url,
            "http://169.254.169.254/metadata/identity/oauth2/token?api-version=2018-02-01"
            "&resource=https%3A%2F%2Fexample.org%2Fapi&client_id=abc-123");
}

TEST(TokenSources, MakeTokenRequestDispatchesOnTheSource) {
  EXPECT_EQ(make_token_request(app(config::EntraSource::ClientSecret)).request->method, "POST");
  auto imds = app(config::EntraSource::Imds);
  EXPECT_TRUE(make_token_request(imds).request->url.starts_with("http://169.254.169.254/"));
  EXPECT_FALSE(make_token_request(app(config::EntraSource::Auto)).request);
}

TEST(TokenSources, ResourceOfScopeDropsDotDefault) {
  EXPECT_EQ(resource_of_scope("https://cognitiveservices.azure.com/.default"),
            "https://cognitiveservices.azure.com");
  EXPECT_EQ(resource_of_scope("api://my-app"), "api://my-app");
}

}  // namespace token_sources_test
}  // namespace smartlb::credentials::entra
