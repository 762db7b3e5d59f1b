// Message heads written by hand instead of by Beast's serializer.
#include <gtest/gtest.h>

#include "smartlb/http1/wire_format.hpp"

namespace smartlb::http1 {
namespace {

TEST(WireFormat, Field) {
  std::string out;
  append_field(out, "api-key", "k");
  EXPECT_EQ(out, "api-key: k\r\n");
}

TEST(WireFormat, Decimal) {
  std::string out;
  append_decimal(out, 0);
  out.push_back(' ');
  append_decimal(out, 18446744073709551615ull);
  EXPECT_EQ(out, "0 18446744073709551615");
}

TEST(WireFormat, StatusLineKeepsTheBackendsReasonOrUsesTheStandardOne) {
  std::string out;
  append_status_line(out, 11, 429, "Too Many Requests Please");
  EXPECT_EQ(out, "HTTP/1.1 429 Too Many Requests Please\r\n");
  out.clear();
  append_status_line(out, 10, 200, "");
  EXPECT_EQ(out, "HTTP/1.0 200 OK\r\n");
  out.clear();
  append_status_line(out, 11, 297, "");  // no standard reason: the line still parses
  EXPECT_EQ(out, "HTTP/1.1 297 \r\n");
}

TEST(WireFormat, ChunkSizeLine) {
  char line[20];
  EXPECT_EQ(std::string(line, chunk_size_line(26, line)), "1a\r\n");
  EXPECT_EQ(std::string(line, chunk_size_line(16384, line)), "4000\r\n");
}

}  // namespace
}  // namespace smartlb::http1
