#include "smartlb/http/header_rules.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace header_rules_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(HeaderRules, HopByHop) {
  for (auto n :
       {"Connection", "keep-alive", "Transfer-Encoding", "TE", "Upgrade", "Proxy-Authorization", "Trailer"})
    EXPECT_TRUE(http::is_hop_by_hop(n)) << n;
  for (auto n : {"Content-Type", "api-key", "x-request-id", "Content-Length"})
    EXPECT_FALSE(http::is_hop_by_hop(n)) << n;
}

TEST(HeaderRules, ProxyHeaders) {
  for (auto n : {"Proxy", "proxy", "PROXY", "Proxy-Authorization", "proxy-authorization", "Proxy-Connection",
                 "proxy-foo", "Proxy-"})
    EXPECT_TRUE(http::is_proxy_header(n)) << n;
  for (auto n : {"Proxies", "Proxyx", "proxy_foo", "X-Proxy", "x-forwarded-for", "Prox", "", "Content-Type"})
    EXPECT_FALSE(http::is_proxy_header(n)) << n;
}

TEST(HeaderRules, CredentialsAndQuotaHeaders) {
  EXPECT_TRUE(http::is_client_credential("API-Key"));
  EXPECT_TRUE(http::is_client_credential("authorization"));
  EXPECT_TRUE(http::is_client_credential("X-Api-Key"));
  EXPECT_TRUE(http::is_client_credential("Ocp-Apim-Subscription-Key"));
  EXPECT_TRUE(http::is_client_credential("x-goog-api-key"));
  EXPECT_FALSE(http::is_client_credential("x-api-key-id"));
  EXPECT_FALSE(http::is_client_credential("api-keys"));
  EXPECT_FALSE(http::is_client_credential("ocp-apim-trace"));
  EXPECT_TRUE(http::is_backend_quota_header("x-ratelimit-remaining-tokens"));
  EXPECT_TRUE(http::is_backend_quota_header("X-RateLimit-Reset-Requests"));
  EXPECT_TRUE(http::is_backend_quota_header("x-rate-limit-reset-tokens"));
  EXPECT_FALSE(http::is_backend_quota_header("retry-after"));
}

TEST(HeaderRules, ReplacedAnswerFields) {
  for (auto n :
       {"Connection", "keep-alive", "Transfer-Encoding", "TE", "upgrade", "x-ratelimit-remaining-tokens",
        "X-Rate-Limit-Reset-Tokens", "X-Request-ID", "x-smartlb-backend"})
    EXPECT_TRUE(http::is_replaced_answer_field(n)) << n;
  for (auto n : {"content-type", "Content-Length", "retry-after", "x-ms-region", "x-request-ids", "x-",
                 "apim-request-id", "x-smartlb-backends", ""})
    EXPECT_FALSE(http::is_replaced_answer_field(n)) << n;
}

TEST(HeaderRules, ConnectionTokens) {
  auto t = http::list_tokens(" keep-alive , X-Secret ,,close");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0], "keep-alive");
  EXPECT_EQ(t[1], "X-Secret");
  EXPECT_EQ(t[2], "close");
}

TEST(HeaderRules, SafeValues) {
  EXPECT_TRUE(http::is_safe_header_value("abc def"));
  EXPECT_FALSE(http::is_safe_header_value("a\r\nInjected: 1"));
  EXPECT_FALSE(http::is_safe_header_value(std::string_view("a\0b", 3)));
}

http::FramingInput with(std::vector<std::string_view> te, std::vector<std::string_view> cl,
                        std::size_t hosts = 1) {
  http::FramingInput in;
  in.transfer_encoding = std::move(te);
  in.content_length = std::move(cl);
  in.host_count = hosts;
  return in;
}

TEST(RequestFraming, AcceptsOrdinaryRequests) {
  EXPECT_EQ(check_request_framing(with({}, {"12"})), "");
  EXPECT_EQ(check_request_framing(with({"chunked"}, {})), "");
  EXPECT_EQ(check_request_framing(with({}, {})), "");
}

TEST(RequestFraming, RefusesSmugglingShapes) {
  EXPECT_NE(check_request_framing(with({"chunked"}, {"5"})), "");
  EXPECT_NE(check_request_framing(with({"gzip"}, {"5"})), "");
  EXPECT_NE(check_request_framing(with({"chunked, chunked"}, {})), "");
  EXPECT_NE(check_request_framing(with({"chunked", "chunked"}, {})), "");
  EXPECT_NE(check_request_framing(with({"xchunked"}, {})), "");
  EXPECT_NE(check_request_framing(with({"gzip, chunked"}, {})), "");
  EXPECT_NE(check_request_framing(with({}, {"5", "5"})), "");
  EXPECT_NE(check_request_framing(with({}, {"5, 5"})), "");
  EXPECT_NE(check_request_framing(with({}, {"-1"})), "");
}

TEST(RequestFraming, HostRules) {
  EXPECT_NE(check_request_framing(with({}, {}, 0)), "");
  EXPECT_NE(check_request_framing(with({}, {}, 2)), "");
  http::FramingInput http10 = with({}, {}, 0);
  http10.version = 10;
  EXPECT_EQ(check_request_framing(http10), "");
}

}  // namespace header_rules_test
}  // namespace smartlb
