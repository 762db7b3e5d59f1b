#include "smartlb/config/url.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace url_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(BackendUrl, HttpsDefaults) {
  auto r = config::parse_backend_url("https://east.openai.azure.com");
  ASSERT_TRUE(r.url);
  EXPECT_TRUE(r.url->tls);
  EXPECT_EQ(r.url->port, 443);
  EXPECT_EQ(r.url->host_header, "east.openai.azure.com");
  EXPECT_EQ(r.url->base_path, "");
}

TEST(BackendUrl, HttpWithPortAndPath) {
  auto r = config::parse_backend_url("http://127.0.0.1:8081/api/");
  ASSERT_TRUE(r.url);
  EXPECT_FALSE(r.url->tls);
  EXPECT_EQ(r.url->port, 8081);
  EXPECT_EQ(r.url->host_header, "127.0.0.1:8081");
  EXPECT_EQ(r.url->base_path, "/api");
}

TEST(BackendUrl, DefaultPortIsNotRepeatedInHost) {
  auto r = config::parse_backend_url("https://x.example.com:443");
  ASSERT_TRUE(r.url);
  EXPECT_EQ(r.url->host_header, "x.example.com");
}

TEST(BackendUrl, Ipv6Literal) {
  auto r = config::parse_backend_url("http://[::1]:9000");
  ASSERT_TRUE(r.url);
  EXPECT_EQ(r.url->host, "::1");
  EXPECT_EQ(r.url->host_header, "[::1]:9000");
}

TEST(BackendUrl, Rejections) {
  for (const char* bad :
       {"east.openai.azure.com", "ftp://x", "https://", "https://:80", "https://x:0", "https://x:99999",
        "https://x:abc", "https://u:p@x", "https://x/?q=1", "https://x y", "http://[::1"}) {
    auto r = config::parse_backend_url(bad);
    EXPECT_FALSE(r.url) << bad;
    EXPECT_FALSE(r.error.empty()) << bad;
  }
}

// smartlb appends the client's path to the base path: a base path ending in what clients send
// first doubles it.
TEST(DoubledPrefix, ABasePathEndingInV1IsAlwaysDoubled) {
  const auto url = config::parse_backend_url("https://api.openai.com/v1/").url;
  ASSERT_TRUE(url);
  for (bool azure_clients : {true, false}) {
    const auto w = doubled_prefix_warning(*url, "BACKEND_3_URL", azure_clients);
    ASSERT_TRUE(w);
    EXPECT_EQ(
        *w,
        "ends in /v1, which clients put on their paths themselves (/v1/chat/completions would go out as "
        "/v1/v1/chat/completions): drop /v1 from BACKEND_3_URL: smartlb appends the client's path");
  }
}

TEST(DoubledPrefix, AzuresV1BasePathIsDroppedWhole) {
  const auto url = config::parse_backend_url("https://contoso.openai.azure.com/openai/v1").url;
  ASSERT_TRUE(url);
  const auto w = doubled_prefix_warning(*url, "backends[1].url", false);
  ASSERT_TRUE(w);
  EXPECT_NE(w->find("drop /openai/v1 from backends[1].url"), std::string::npos) << *w;
}

TEST(DoubledPrefix, OpenaiIsDoubledOnlyForAzureStyleClients) {
  const auto url = config::parse_backend_url("https://contoso.openai.azure.com/openai").url;
  ASSERT_TRUE(url);
  const auto w = doubled_prefix_warning(*url, "BACKEND_1_URL", true);
  ASSERT_TRUE(w);
  EXPECT_NE(w->find("/openai/deployments/gpt-4o/chat/completions would go out as "
                    "/openai/openai/deployments/gpt-4o/chat/completions): drop /openai from BACKEND_1_URL"),
            std::string::npos)
      << *w;
  // Only OpenAI-style clients (/v1/...): /openai/v1/... is Azure's v1 API.
  EXPECT_FALSE(doubled_prefix_warning(*url, "BACKEND_1_URL", false));
}

TEST(DoubledPrefix, OtherBasePathsAreFine) {
  for (const char* text : {"https://contoso.openai.azure.com", "https://apim.azure-api.net/aoai",
                           "http://127.0.0.1:8000/v1beta", "http://10.0.0.5:8000/openai-proxy"}) {
    const auto url = config::parse_backend_url(text).url;
    ASSERT_TRUE(url) << text;
    EXPECT_FALSE(doubled_prefix_warning(*url, "BACKEND_1_URL", true)) << text;
  }
}

}  // namespace url_test
}  // namespace smartlb
