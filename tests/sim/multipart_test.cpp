#include "smartlb/sim/multipart.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace multipart_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::string_literals;

// What the OpenAI Node SDK sends for files.create (FormData through undici).
const std::string kUpload =
    "------formdata-undici-0123\r\n"
    "Content-Disposition: form-data; name=\"purpose\"\r\n"
    "\r\n"
    "batch\r\n"
    "------formdata-undici-0123\r\n"
    "Content-Disposition: form-data; name=\"file\"; filename=\"in put.jsonl\"\r\n"
    "Content-Type: application/jsonl\r\n"
    "\r\n"
    "{\"a\":1}\r\n{\"b\":2}\r\n"
    "------formdata-undici-0123--\r\n";

TEST(MultipartBoundary, FromTheContentType) {
  EXPECT_EQ(multipart_boundary("multipart/form-data; boundary=----formdata-undici-0123"),
            "----formdata-undici-0123");
  EXPECT_EQ(multipart_boundary("Multipart/Form-Data;charset=utf-8; BOUNDARY=\"a b\""), "a b");
}

TEST(MultipartBoundary, NoneForOtherTypesOrBadBoundaries) {
  EXPECT_FALSE(multipart_boundary("application/json"));
  EXPECT_FALSE(multipart_boundary("multipart/mixed; boundary=x"));
  EXPECT_FALSE(multipart_boundary("multipart/form-data"));
  EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary="));
  EXPECT_FALSE(multipart_boundary("multipart/form-data; boundary=" + std::string(71, 'x')));
}

TEST(ParseMultipart, NamesFilenamesTypesAndBodies) {
  const auto parsed = parse_multipart(kUpload, "----formdata-undici-0123");
  ASSERT_EQ(parsed.error, "");
  ASSERT_EQ(parsed.parts.size(), 2u);
  EXPECT_EQ(parsed.parts[0].name, "purpose");
  EXPECT_FALSE(parsed.parts[0].filename);
  EXPECT_EQ(parsed.parts[0].body, "batch");
  const MultipartPart* file = find_part(parsed, "file");
  ASSERT_NE(file, nullptr);
  EXPECT_EQ(file->filename, "in put.jsonl");
  EXPECT_EQ(file->content_type, "application/jsonl");
  EXPECT_EQ(file->body, "{\"a\":1}\r\n{\"b\":2}") << "CRLFs inside a part are its own";
  EXPECT_EQ(find_part(parsed, "other"), nullptr);
}

TEST(ParseMultipart, BinaryBodiesPreambleAndEpilogue) {
  const std::string binary = "\0\r\n--not-the-boundary\xff"s;
  const std::string body =
      "preamble\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x\"\r\n\r\n" + binary +
      "\r\n--B--\r\nepilogue";
  const auto parsed = parse_multipart(body, "B");
  ASSERT_EQ(parsed.error, "");
  ASSERT_EQ(parsed.parts.size(), 1u);
  EXPECT_EQ(parsed.parts[0].body, binary);
}

TEST(ParseMultipart, EmptyPartBodies) {
  const auto parsed = parse_multipart(
      "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n\r\n--B\r\n"
      "Content-Disposition: form-data; name=\"b\"\r\n\r\n--B--",
      "B");
  ASSERT_EQ(parsed.error, "");
  ASSERT_EQ(parsed.parts.size(), 2u);
  EXPECT_EQ(parsed.parts[0].body, "");
  EXPECT_EQ(parsed.parts[1].body, "");
}

TEST(ParseMultipart, ErrorsForMalformedBodies) {
  for (const std::string& body : {
           "no delimiter at all"s, "--B\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nunterminated"s,
           "--B\r\nContent-Disposition: form-data\r\n\r\nx\r\n--B--"s,  // no name
           "--B\r\nContent-Disposition: attachment; name=\"a\"\r\n\r\nx\r\n--B--"s,
           "--B\r\nno colon here\r\n\r\nx\r\n--B--"s,
           "--Bjunk\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--B--"s,
           "--B\nContent-Disposition: form-data; name=\"a\"\n\nx\n--B--"s,  // LF only
       }) {
    EXPECT_NE(parse_multipart(body, "B").error, "") << body;
  }
}

}  // namespace multipart_test
}  // namespace smartlb::sim
