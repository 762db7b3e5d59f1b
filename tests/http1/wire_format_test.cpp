// Message heads written by hand instead of by Beast's serializer.
#include <gtest/gtest.h>

#include "smartlb/http1/wire_format.hpp"

namespace smartlb::http1 {
namespace wire_format_test {  // named, not anonymous: tests/CMakeLists.txt

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

// The writer appends after what the string holds, grows it as the head needs (here past its
// first capacity many times) and leaves exactly what was written.
TEST(WireFormat, HeadWriterAppendsGrowsAndCutsToWhatItWrote) {
  std::string out = "kept";
  std::string expected = "keptHTTP/1.1 200 OK\r\n";
  {
    HeadWriter w(out);
    w.status_line(11, 200, "");
    for (int i = 0; i < 200; ++i) {
      const std::string name = "x-field-" + std::to_string(i);
      const std::string value(static_cast<std::size_t>(i), 'v');
      w.field(name, value);
      expected += name + ": " + value + "\r\n";
    }
    w.text("\r\n");
  }
  EXPECT_EQ(out, expected + "\r\n");
  std::string small;
  HeadWriter w(small);
  w.field("a", "");
  w.finish();
  EXPECT_EQ(small, "a: \r\n");
}

TEST(WireFormat, ChunkSizeLine) {
  char line[20];
  EXPECT_EQ(std::string(line, chunk_size_line(26, line)), "1a\r\n");
  EXPECT_EQ(std::string(line, chunk_size_line(16384, line)), "4000\r\n");
}

}  // namespace wire_format_test
}  // namespace smartlb::http1
