// Message heads written by hand instead of by Beast's serializer.
#include <gtest/gtest.h>

#include "net/wire_format.hpp"

namespace smartlb::net {
namespace {

TEST(WireFormat, RequestHead) {
  http::request_header<> h;
  h.method(http::verb::post);
  h.target("/openai/deployments/d/chat/completions?api-version=1");
  h.version(11);
  h.set(http::field::host, "east.openai.azure.com");
  h.set("api-key", "k");
  h.set(http::field::content_length, "2");
  std::string out;
  append_request_head(out, h);
  EXPECT_EQ(out,
            "POST /openai/deployments/d/chat/completions?api-version=1 HTTP/1.1\r\n"
            "Host: east.openai.azure.com\r\napi-key: k\r\nContent-Length: 2\r\n\r\n");
}

TEST(WireFormat, ResponseHeadKeepsTheBackendsReasonOrUsesTheStandardOne) {
  http::response_header<> h;
  h.result(429);
  h.version(11);
  h.reason("Too Many Requests Please");
  h.set("retry-after", "3");
  std::string out;
  append_response_head(out, h);
  EXPECT_EQ(out, "HTTP/1.1 429 Too Many Requests Please\r\nretry-after: 3\r\n\r\n");

  http::response_header<> plain;
  plain.result(200);
  plain.version(10);
  out.clear();
  append_response_head(out, plain);
  EXPECT_EQ(out, "HTTP/1.0 200 OK\r\n\r\n");
}

TEST(WireFormat, ChunkSizeLine) {
  char line[20];
  EXPECT_EQ(std::string(line, chunk_size_line(26, line)), "1a\r\n");
  EXPECT_EQ(std::string(line, chunk_size_line(16384, line)), "4000\r\n");
}

}  // namespace
}  // namespace smartlb::net
