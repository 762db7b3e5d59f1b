// OTLP/HTTP's JSON body, byte for byte, and valid JSON (and valid UTF-8) whatever the strings.
#include "smartlb/tracing/otlp_json.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace smartlb::tracing {
namespace otlp_json_test {  // named, not anonymous: tests/CMakeLists.txt

Span example_span() {
  Span s;
  for (std::size_t i = 0; i < 16; ++i) s.trace_id[i] = static_cast<std::uint8_t>(i + 1);
  for (std::size_t i = 0; i < 8; ++i) s.span_id[i] = static_cast<std::uint8_t>(0xa0 + i);
  s.parent_span_id = {0, 0, 0, 0, 0, 0, 0, 9};
  s.trace_state = "rojo=1";
  s.name = "chat gpt-4o";
  s.kind = SpanKind::Client;
  s.start_unix_ns = 1'700'000'000'000'000'001;
  s.end_unix_ns = 1'700'000'000'500'000'000;
  s.attributes = {{"gen_ai.request.model", std::string("gpt-4o")},
                  {"server.port", std::int64_t{443}},
                  {"smartlb.stream.time_to_first_byte", 0.25},
                  {"smartlb.probe", true},
                  {"gen_ai.response.finish_reasons", std::vector<std::string>{"stop", "length"}}};
  s.status = SpanStatus::Error;
  return s;
}

TEST(OtlpJson, TheExportRequestByteForByte) {
  Resource r;
  r.attributes = {{"service.name", "smartlb"}};
  r.scope_version = "0.1.0";
  std::string out;
  const Span s = example_span();
  append_export_request(out, r, std::span(&s, 1));
  EXPECT_EQ(
      out,
      R"({"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"smartlb"}}]},)"
      R"("scopeSpans":[{"scope":{"name":"smartlb","version":"0.1.0"},"spans":[{)"
      R"("traceId":"0102030405060708090a0b0c0d0e0f10","spanId":"a0a1a2a3a4a5a6a7","parentSpanId":"0000000000000009",)"
      R"("traceState":"rojo=1","name":"chat gpt-4o","kind":3,)"
      R"("startTimeUnixNano":"1700000000000000001","endTimeUnixNano":"1700000000500000000","attributes":[)"
      R"({"key":"gen_ai.request.model","value":{"stringValue":"gpt-4o"}},)"
      R"({"key":"server.port","value":{"intValue":"443"}},)"
      R"({"key":"smartlb.stream.time_to_first_byte","value":{"doubleValue":0.25}},)"
      R"({"key":"smartlb.probe","value":{"boolValue":true}},)"
      R"({"key":"gen_ai.response.finish_reasons","value":{"arrayValue":{"values":[{"stringValue":"stop"},{"stringValue":"length"}]}}}],)"
      R"("status":{"code":2}}]}]}]})");
  EXPECT_TRUE(nlohmann::json::accept(out));
}

TEST(OtlpJson, ARootSpanHasNoParentAndAnUnsetStatusNoCode) {
  Span s = example_span();
  s.parent_span_id = {};
  s.trace_state.clear();
  s.status = SpanStatus::Unset;
  std::string out;
  append_export_request(out, Resource{}, std::span(&s, 1));
  const auto j = nlohmann::json::parse(out);
  const auto& span = j["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  EXPECT_FALSE(span.contains("parentSpanId"));
  EXPECT_FALSE(span.contains("traceState"));
  EXPECT_EQ(span["status"], nlohmann::json::object());
  EXPECT_FALSE(j["resourceSpans"][0]["scopeSpans"][0]["scope"].contains("version"));
}

TEST(OtlpJson, StringsAreEscapedAndInvalidUtf8Replaced) {
  const auto encode = [](std::string_view s) {
    std::string out;
    append_json_string(out, s);
    return out;
  };
  EXPECT_EQ(encode("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(encode(std::string("\n\t\x01\x7f", 4)), R"("\u000a\u0009\u0001\u007f")");
  EXPECT_EQ(encode("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  EXPECT_EQ(encode("\xff"), R"("\ufffd")");
  EXPECT_EQ(encode("\xc3"), R"("\ufffd")");                                // cut short
  EXPECT_EQ(encode("\xc0\xaf"), R"("\ufffd\ufffd")");                      // overlong
  EXPECT_EQ(encode("\xed\xa0\x80"), R"("\ufffd\ufffd\ufffd")");            // a surrogate
  EXPECT_EQ(encode("\xf4\x90\x80\x80"), R"("\ufffd\ufffd\ufffd\ufffd")");  // past U+10FFFF
  for (int c = 0; c < 256; ++c) {
    const std::string one(1, static_cast<char>(c));
    EXPECT_TRUE(nlohmann::json::accept(encode(one))) << c;
  }
}

// Long plain runs are copied 16 bytes a step: every byte that needs care is found wherever it
// falls in or after such a step.
TEST(OtlpJson, ABytesEscapeDoesNotDependOnWhereItFalls) {
  const std::pair<std::string, std::string> special[] = {{"\"", "\\\""},      {"\\", "\\\\"},
                                                         {"\x1f", "\\u001f"}, {"\x7f", "\\u007f"},
                                                         {"\xff", "\\ufffd"}, {"\xc3\xa9", "\xc3\xa9"}};
  for (const auto& [in, expected] : special)
    for (std::size_t at = 0; at < 40; ++at) {
      std::string out;
      append_json_string(out, std::string(at, 'a') + in + std::string(40 - at, 'b'));
      EXPECT_EQ(out, "\"" + std::string(at, 'a') + expected + std::string(40 - at, 'b') + "\"") << at;
    }
}

}  // namespace otlp_json_test
}  // namespace smartlb::tracing
