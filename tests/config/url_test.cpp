#include "smartlb/config/url.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace {

TEST(BackendUrl, HttpsDefaults) {
  auto r = parse_backend_url("https://east.openai.azure.com");
  ASSERT_TRUE(r.url);
  EXPECT_TRUE(r.url->tls);
  EXPECT_EQ(r.url->port, 443);
  EXPECT_EQ(r.url->host_header, "east.openai.azure.com");
  EXPECT_EQ(r.url->base_path, "");
}

TEST(BackendUrl, HttpWithPortAndPath) {
  auto r = parse_backend_url("http://127.0.0.1:8081/api/");
  ASSERT_TRUE(r.url);
  EXPECT_FALSE(r.url->tls);
  EXPECT_EQ(r.url->port, 8081);
  EXPECT_EQ(r.url->host_header, "127.0.0.1:8081");
  EXPECT_EQ(r.url->base_path, "/api");
}

TEST(BackendUrl, DefaultPortIsNotRepeatedInHost) {
  auto r = parse_backend_url("https://x.example.com:443");
  ASSERT_TRUE(r.url);
  EXPECT_EQ(r.url->host_header, "x.example.com");
}

TEST(BackendUrl, Ipv6Literal) {
  auto r = parse_backend_url("http://[::1]:9000");
  ASSERT_TRUE(r.url);
  EXPECT_EQ(r.url->host, "::1");
  EXPECT_EQ(r.url->host_header, "[::1]:9000");
}

TEST(BackendUrl, Rejections) {
  for (const char* bad :
       {"east.openai.azure.com", "ftp://x", "https://", "https://:80", "https://x:0", "https://x:99999",
        "https://x:abc", "https://u:p@x", "https://x/?q=1", "https://x y", "http://[::1"}) {
    auto r = parse_backend_url(bad);
    EXPECT_FALSE(r.url) << bad;
    EXPECT_FALSE(r.error.empty()) << bad;
  }
}

}  // namespace
}  // namespace smartlb
