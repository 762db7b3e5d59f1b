#include "smartlb/routing/token_estimate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../http/json_generator.hpp"

namespace smartlb {
namespace token_estimate_test {  // named, not anonymous: tests/CMakeLists.txt

// The reference: the estimate as it was computed with one nlohmann SAX pass, before the
// hand-written scanner replaced it. The differential tests below hold the two equal, but for the
// one difference of the JSON lexer (http/json_lexer.hpp): nlohmann ends its input at a NUL byte,
// the lexer refuses a NUL anywhere.
class ReferenceReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit ReferenceReader(std::string_view prompt_key) : prompt_key_(prompt_key) {}

  std::size_t characters = 0;
  std::int64_t budget[3] = {0, 0, 0};  // max_tokens, max_completion_tokens, max_output_tokens
  bool root_is_object = false;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t v) override { return integer(v); }
  bool number_unsigned(number_unsigned_t v) override {
    return integer(v > static_cast<number_unsigned_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v));
  }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t& v) override {
    if (counts()) characters += v.size();
    return value();
  }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    if (frames_.size() == 1) {
      f.key_counts = k == prompt_key_;
      budget_slot_ = k == "max_tokens"              ? 0
                     : k == "max_completion_tokens" ? 1
                     : k == "max_output_tokens"     ? 2
                                                    : -1;
    } else {
      f.key_counts = f.counted && (k == "text" || k == "content");
    }
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  struct Frame {
    bool object;
    bool counted;
    bool key_counts = false;
  };
  bool counts() const {
    if (frames_.empty()) return false;
    const Frame& f = frames_.back();
    return f.object ? f.key_counts : f.counted;
  }
  bool value() {
    budget_slot_ = -1;
    return true;
  }
  bool integer(std::int64_t v) {
    if (counts()) characters += 4;
    if (frames_.size() == 1 && budget_slot_ >= 0 && v > 0 && budget[budget_slot_] == 0)
      budget[budget_slot_] = v;
    return value();
  }
  bool open(bool object) {
    if (frames_.empty()) {
      root_is_object = object;
      frames_.push_back({object, false});
    } else {
      frames_.push_back({object, counts()});
    }
    return value();
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  std::string_view prompt_key_;
  std::vector<Frame> frames_;
  int budget_slot_ = -1;
};

std::int64_t reference_estimate(std::string_view path, std::string_view body) {
  std::string_view key;
  bool completion = true;
  bool whole_body = false;
  if (path.ends_with("/chat/completions")) {
    key = "messages";
  } else if (path.ends_with("/completions")) {
    key = "prompt";
  } else if (path.ends_with("/embeddings")) {
    key = "input";
    completion = false;
  } else if (path.ends_with("/responses")) {
    key = "input";
  } else {
    whole_body = true;
  }
  ReferenceReader r(key);
  const bool nul = body.find('\0') != std::string_view::npos;
  if (nul || !nlohmann::json::sax_parse(body, &r) || !r.root_is_object)
    return static_cast<std::int64_t>((body.size() + 3) / 4) + routing::kDefaultMaxTokensEstimate;
  const std::size_t chars = whole_body ? body.size() : r.characters;
  const std::int64_t prompt = std::max<std::int64_t>(static_cast<std::int64_t>((chars + 3) / 4), 1);
  std::int64_t budget = routing::kDefaultMaxTokensEstimate;
  for (const std::int64_t b : r.budget)
    if (b > 0) {
      budget = b;
      break;
    }
  // The one change from the original: the sum saturates (it overflowed, undefined, before).
  const std::int64_t completion_budget = completion ? budget : 0;
  return completion_budget > INT64_MAX - prompt ? INT64_MAX : prompt + completion_budget;
}

TEST(TokenEstimate, ChatCountsMessageTextPlusMaxTokens) {
  const std::string body =
      R"({"messages":[{"role":"system","content":"12345678"},{"role":"user","content":[{"type":"text","text":"abcd"},{"type":"image_url","image_url":{"url":"x"}}]}],"max_tokens":100})";
  EXPECT_EQ(routing::estimate_request_tokens("/openai/deployments/d/chat/completions", body), 3 + 100);
}

TEST(TokenEstimate, DefaultCompletionBudget) {
  EXPECT_EQ(routing::estimate_request_tokens("/v1/chat/completions",
                                             R"({"messages":[{"role":"user","content":"hi"}]})"),
            1 + routing::kDefaultMaxTokensEstimate);
  EXPECT_EQ(routing::estimate_request_tokens("/v1/chat/completions",
                                             R"({"messages":[],"max_completion_tokens":7})"),
            1 + 7);
}

TEST(TokenEstimate, EmbeddingsHaveNoCompletion) {
  EXPECT_EQ(routing::estimate_request_tokens("/openai/deployments/e/embeddings",
                                             R"({"input":["abcdefgh","abcd"]})"),
            3);
}

TEST(TokenEstimate, RoundsUpSoItNeverUndercountsTheBackend) {
  EXPECT_EQ(routing::estimate_request_tokens("/v1/completions", R"({"prompt":"abcde","max_tokens":1})"),
            2 + 1);
}

TEST(TokenEstimate, UnparseableBodyFallsBackToItsSize) {
  EXPECT_EQ(routing::estimate_request_tokens("/v1/chat/completions", "not json at all!"),
            4 + routing::kDefaultMaxTokensEstimate);
}

TEST(TokenEstimate, TokenArraysCountFourCharactersATokenAndEscapesTheirDecodedLength) {
  EXPECT_EQ(routing::estimate_request_tokens("/v1/completions", R"({"prompt":[1,2,3],"max_tokens":5})"),
            3 + 5);
  // "a\nb\u00e9" decodes to 5 bytes (a, newline, b, two for é): 2 tokens, not the 11 raw.
  EXPECT_EQ(routing::estimate_request_tokens("/v1/completions", R"({"prompt":"a\nb\u00e9","max_tokens":1})"),
            2 + 1);
}

TEST(TokenEstimate, OnlyTheOperationsOwnTopLevelValueCounts) {
  // "content" outside "messages", and a budget key below the top level, are not the request's.
  const std::string body =
      R"({"metadata":{"content":"xxxxxxxxxxxxxxxx"},"tools":[{"max_tokens":999}],)"
      R"("messages":[{"role":"user","content":"abcd","name":"zzzzzzzz"}],"max_output_tokens":9})";
  EXPECT_EQ(routing::estimate_request_tokens("/v1/chat/completions", body), 1 + 9);
  EXPECT_EQ(
      routing::estimate_request_tokens(
          "/v1/responses",
          R"({"input":[{"role":"user","content":[{"type":"input_text","text":"abcdefgh"}]}],"max_output_tokens":3})"),
      2 + 3);
}

TEST(TokenEstimate, AHugeBudgetSaturatesInsteadOfWrappingNegative) {
  EXPECT_EQ(routing::estimate_request_tokens("/v1/completions",
                                             R"({"prompt":"abcd","max_tokens":9223372036854775807})"),
            INT64_MAX);
  EXPECT_EQ(routing::estimate_request_tokens("/v1/completions",
                                             R"({"prompt":"abcd","max_tokens":18446744073709551615})"),
            INT64_MAX);
  EXPECT_EQ(routing::estimate_request_tokens("/v1/completions",
                                             R"({"prompt":"abcd","max_tokens":9223372036854775806})"),
            INT64_MAX);
  EXPECT_EQ(routing::estimate_request_tokens("/v1/completions",
                                             R"({"prompt":"abcd","max_tokens":9223372036854775805})"),
            INT64_MAX - 1);
  // Embeddings have no completion budget to add.
  EXPECT_EQ(routing::estimate_request_tokens("/v1/embeddings",
                                             R"({"input":"abcd","max_tokens":9223372036854775807})"),
            1);
}

TEST(TokenEstimate, ANonObjectOrTruncatedBodyFallsBackToItsSize) {
  EXPECT_EQ(routing::estimate_request_tokens("/v1/chat/completions", "[1,2,3,4]"),
            3 + routing::kDefaultMaxTokensEstimate);
  EXPECT_EQ(routing::estimate_request_tokens("/v1/chat/completions", R"({"messages":[)"),
            4 + routing::kDefaultMaxTokensEstimate);
}

// ---- Differential: the scanner against the nlohmann reference --------------------------------

constexpr std::string_view kPaths[] = {"/openai/deployments/d/chat/completions", "/v1/completions",
                                       "/openai/deployments/e/embeddings", "/v1/responses",
                                       "/v1/images/generations"};

// The body as a C++ string literal, to reproduce a mismatch.
std::string escaped(std::string_view body) {
  std::string out = "\"";
  for (const unsigned char c : body) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02X\"\"", c);  // "" ends the hex escape
      out += buf;
    }
  }
  return out + "\"";
}

// Expects the scanner to equal the reference on every path.
void expect_same(std::string_view body) {
  for (const std::string_view path : kPaths) {
    const std::int64_t want = reference_estimate(path, body);
    const std::int64_t got = routing::estimate_request_tokens(path, body);
    if (got != want) {
      ADD_FAILURE() << "path " << path << ": got " << got << ", nlohmann reference " << want << "\n  body ("
                    << body.size() << " bytes): " << escaped(body);
      return;
    }
  }
}

// Tricky inputs, valid and invalid, wrapped where useful so the interesting part is counted.
std::vector<std::string> corpus() {
  std::vector<std::string> c = {
      // empty, whitespace, non-objects
      "",
      " ",
      "\t\r\n",
      "{",
      "}",
      "[",
      "]",
      "{}",
      " {} ",
      "\n{}\n",
      "[]",
      "[1]",
      "\"x\"",
      "1",
      "true",
      "null",
      "{}{}",
      "{} []",
      "{},",
      "{}x",
      "{} \x01",
      "{}\x7F",
      // NUL: nlohmann's lexer reads it as the end of input between tokens; invalid here
      std::string("{}\0", 3),
      std::string("{}\0garbage", 10),
      std::string("{} \0 x", 6),
      std::string("\0{}", 3),
      std::string("{\"a\":\0}", 7),
      std::string("{\"a\":\"\0\"}", 9),
      std::string("{\"a\":1\0}", 8),
      std::string("{\"messages\":\"ab\"}\0[", 20),
      // byte order mark
      "\xEF\xBB\xBF{}",
      "\xEF\xBB\xBF{\"prompt\":\"abc\"}",
      " \xEF\xBB\xBF{}",
      "\xEF\xBB{}",
      "\xEF{}",
      "\xEF",
      "\xEF\xBB",
      "\xEF\xBB\xBF",
      "\xEF\xBB\xBF\xEF\xBB\xBF{}",
      "{}\xEF\xBB\xBF",
      // structure
      "{,}",
      "{\"a\"}",
      "{\"a\":}",
      "{\"a\" 1}",
      "{\"a\":1,}",
      "{\"a\":1 \"b\":2}",
      "{\"a\":[1,]}",
      "{\"a\":[,1]}",
      "{\"a\":[1 2]}",
      "{\"a\":{}}",
      "{\"a\":[]}",
      "{\"a\":[[]]}",
      "{\"a\":[{}]}",
      "{\"a\":]}",
      "{\"a\":[}",
      "{\"a\":{]}",
      "{1:2}",
      "{a:1}",
      "{'a':1}",
      "{\"a\"::1}",
      "{\"a\":1}}",
      "{\"a\":1]",
      "{\"messages\":[",
      "{\"messages\":[\"x\"",
      "{\"messages\":[\"x\",",
      "{\"messages\":{\"content\":\"x\"",
      // literals
      "{\"a\":true}",
      "{\"a\":false}",
      "{\"a\":null}",
      "{\"a\":tru}",
      "{\"a\":truex}",
      "{\"a\":True}",
      "{\"a\":nul}",
      "{\"a\":nulll}",
      "{\"a\":fals}",
      "{\"a\":t}",
      "{\"a\":n",
      "{\"a\":f",
      // numbers
      "{\"prompt\":[0]}",
      "{\"prompt\":[-0]}",
      "{\"prompt\":[01]}",
      "{\"prompt\":[-01]}",
      "{\"prompt\":[00]}",
      "{\"prompt\":[-]}",
      "{\"prompt\":[--1]}",
      "{\"prompt\":[+1]}",
      "{\"prompt\":[1.]}",
      "{\"prompt\":[.5]}",
      "{\"prompt\":[1.5]}",
      "{\"prompt\":[1e5]}",
      "{\"prompt\":[1E5]}",
      "{\"prompt\":[1e]}",
      "{\"prompt\":[1e+]}",
      "{\"prompt\":[1e-]}",
      "{\"prompt\":[1e+5]}",
      "{\"prompt\":[1.e5]}",
      "{\"prompt\":[1.5e-3]}",
      "{\"prompt\":[0x10]}",
      "{\"prompt\":[1-2]}",
      "{\"prompt\":[1 2]}",
      "{\"prompt\":[1,-2,3]}",
      "{\"prompt\":[Infinity]}",
      "{\"prompt\":[NaN]}",
      "{\"prompt\":[-Infinity]}",
      "{\"prompt\":[9223372036854775807]}",
      "{\"prompt\":[9223372036854775808]}",
      "{\"prompt\":[18446744073709551615]}",
      "{\"prompt\":[18446744073709551616]}",
      "{\"prompt\":[99999999999999999999]}",
      "{\"prompt\":[-9223372036854775808]}",
      "{\"prompt\":[-9223372036854775809]}",
      "{\"prompt\":[-18446744073709551615]}",
      "{\"prompt\":[1e308]}",
      "{\"prompt\":[1e309]}",
      "{\"prompt\":[-1e309]}",
      "{\"prompt\":[1.7976931348623157e308]}",
      "{\"prompt\":[1.7976931348623158e308]}",
      "{\"prompt\":[1.7976931348623159e308]}",
      "{\"prompt\":[1e-400]}",
      "{\"prompt\":[0e999999]}",
      "{\"prompt\":[0.000e99999999999999999999999]}",
      "{\"prompt\":[1e99999999999999999999999]}",
      "{\"prompt\":[1e-99999999999999999999999]}",
      "{\"prompt\":[0.0001e312]}",
      "{\"prompt\":[0.1e309]}",
      "{\"prompt\":1}",
      "{\"prompt\":1.0}",
      "{\"prompt\":-5}",
      // budgets
      "{\"max_tokens\":5}",
      "{\"max_tokens\":0}",
      "{\"max_tokens\":-5}",
      "{\"max_tokens\":-0}",
      "{\"max_tokens\":5.0}",
      "{\"max_tokens\":5e0}",
      "{\"max_tokens\":\"5\"}",
      "{\"max_tokens\":[5]}",
      "{\"max_tokens\":{\"max_tokens\":5}}",
      "{\"max_tokens\":true}",
      "{\"max_tokens\":null}",
      "{\"max_tokens\":9223372036854775807}",
      "{\"max_tokens\":9223372036854775808}",
      "{\"max_tokens\":18446744073709551615}",
      "{\"max_tokens\":18446744073709551616}",
      "{\"max_tokens\":0,\"max_tokens\":7}",
      "{\"max_tokens\":3,\"max_tokens\":7}",
      "{\"max_tokens\":[],\"max_tokens\":4}",
      "{\"max_completion_tokens\":9,\"max_tokens\":2}",
      "{\"max_output_tokens\":9,\"max_completion_tokens\":-1}",
      "{\"max_output_tokens\":11}",
      "{\"max_tokens\":1,\"max_completion_tokens\":2,\"max_output_tokens\":3}",
      "{\"m\\u0061x_tokens\":12}",
      "{\"max_tokens\\u0000\":12}",
      "{\"max_tokens \":12}",
      "{\"MAX_TOKENS\":12}",
      "{\"x\":{\"max_tokens\":12}}",
      "{\"max_\\u0063ompletion_tokens\":13}",
      "{\"max_output_token\\u0073\":14}",
      "{\"max_tokens\":1 2}",
      // counting
      "{\"messages\":\"abcdefghi\"}",
      "{\"messages\":[\"abcdefghi\"]}",
      "{\"messages\":[[[\"abcdefghi\",1]]]}",
      "{\"messages\":{\"content\":\"abcdefghi\"}}",
      "{\"messages\":{\"text\":\"abcdefghi\"}}",
      "{\"messages\":{\"other\":\"abcdefghi\"}}",
      "{\"messages\":{\"other\":{\"text\":\"abcdefghi\"}}}",
      "{\"messages\":{\"content\":{\"text\":\"abcdefghi\"}}}",
      "{\"messages\":{\"content\":[{\"content\":[\"abcdefghi\"]}]}}",
      "{\"messages\":[{\"role\":\"user\",\"content\":\"abcdefghi\",\"name\":\"zzzzzzzzzz\"}]}",
      "{\"messages\":[{\"tool_calls\":[{\"text\":\"abcdefghi\"}]}]}",
      "{\"messages\":[{\"content\":[1,2,3,4,5]}]}",
      "{\"messages\":[{\"content\":[1.5,2e3,true,null]}]}",
      "{\"messages\":\"a\",\"messages\":\"bcdefghij\"}",
      "{\"m\\u0065ssages\":\"abcdefghi\"}",
      "{\"messages\":{\"t\\u0065xt\":\"abcdefghi\"}}",
      "{\"messages\":{\"c\\u006Fntent\":\"abcdefghi\"}}",
      "{\"messages\":{\"text\\u0000\":\"abcdefghi\"}}",
      "{\"messages\":{\"\\u0074\\u0065\\u0078\\u0074\":\"abcdefghi\"}}",
      "{\"content\":\"abcdefghi\"}",
      "{\"text\":\"abcdefghi\"}",
      "{\"prompt\":\"abcdefghi\"}",
      "{\"input\":\"abcdefghi\"}",
      "{\"input\":[[1,2],[3]]}",
      "{\"\":\"abcdefghi\"}",
      "{\"prompt\":[\"a\",\"bc\",[\"def\",{\"text\":\"ghij\",\"x\":\"klmnop\"}]]}",
      // string escapes and their decoded lengths
      "{\"prompt\":\"\\n\\t\\r\\b\\f\\/\\\\\\\"\"}",
      "{\"prompt\":\"\\u0000\"}",
      "{\"prompt\":\"\\u007f\\u0080\"}",
      "{\"prompt\":\"\\u07FF\\u0800\"}",
      "{\"prompt\":\"\\uFFFF\\uffff\"}",
      "{\"prompt\":\"\\u00e9\\u00E9\"}",
      "{\"prompt\":\"\\ud83d\\ude00\"}",
      "{\"prompt\":\"\\uD83D\\uDE00x\"}",
      "{\"prompt\":\"\\udbff\\udfff\"}",
      "{\"prompt\":\"\\ud800\\udc00\"}",
      "{\"prompt\":\"\\ud800\"}",
      "{\"prompt\":\"\\udc00\"}",
      "{\"prompt\":\"\\ud800x\"}",
      "{\"prompt\":\"\\ud800\\u0041\"}",
      "{\"prompt\":\"\\ud800\\ud800\"}",
      "{\"prompt\":\"\\ud800\\\\\"}",
      "{\"prompt\":\"\\ud800\\n\"}",
      "{\"prompt\":\"\\ud800\\ue000\"}",
      "{\"prompt\":\"\\ud800xu0041\"}",
      "{\"prompt\":\"\\ude00\\ud83d\"}",
      "{\"prompt\":\"\\u12\"}",
      "{\"prompt\":\"\\u12G4\"}",
      "{\"prompt\":\"\\u\"}",
      "{\"prompt\":\"\\U0041\"}",
      "{\"prompt\":\"\\x41\"}",
      "{\"prompt\":\"\\a\"}",
      "{\"prompt\":\"\\'\"}",
      "{\"prompt\":\"\\0\"}",
      "{\"prompt\":\"\\\"}",
      "{\"prompt\":\"\\",
      "{\"prompt\":\"\\u00",
      "{\"prompt\":\"\\ud83d\\ude0",
      "{\"prompt\":\"\\ud83d\\",
      "{\"prompt\":\"abc",
      // control characters and DEL
      "{\"prompt\":\"a\tb\"}",
      "{\"prompt\":\"a\nb\"}",
      "{\"prompt\":\"a\x1F b\"}",
      "{\"prompt\":\"a\x7F b\"}",
      "{\"prompt\":\"a\x01\"}",
      "{\"prompt\":\"\x20\"}",
      // raw UTF-8
      "{\"prompt\":\"\xC3\xA9\"}",
      "{\"prompt\":\"\xE2\x82\xAC\"}",
      "{\"prompt\":\"\xF0\x9F\x98\x80\"}",
      "{\"prompt\":\"\xF0\x9F\x98\x41\"}",
      "{\"prompt\":\"\xF0\x9F\x41\x80\"}",
      "{\"prompt\":\"\xF4\x8F\xBF\xBF\"}",
      "{\"prompt\":\"\xF4\x90\x80\x80\"}",
      "{\"prompt\":\"\xF5\x80\x80\x80\"}",
      "{\"prompt\":\"\xC0\x80\"}",
      "{\"prompt\":\"\xC1\xBF\"}",
      "{\"prompt\":\"\xC2\x80\"}",
      "{\"prompt\":\"\xDF\xBF\"}",
      "{\"prompt\":\"\xE0\x80\x80\"}",
      "{\"prompt\":\"\xE0\x9F\xBF\"}",
      "{\"prompt\":\"\xE0\xA0\x80\"}",
      "{\"prompt\":\"\xED\x9F\xBF\"}",
      "{\"prompt\":\"\xED\xA0\x80\"}",
      "{\"prompt\":\"\xED\xBF\xBF\"}",
      "{\"prompt\":\"\xEE\x80\x80\"}",
      "{\"prompt\":\"\xEF\xBF\xBF\"}",
      "{\"prompt\":\"\xF0\x8F\xBF\xBF\"}",
      "{\"prompt\":\"\xF0\x90\x80\x80\"}",
      "{\"prompt\":\"\xF3\xBF\xBF\xBF\"}",
      "{\"prompt\":\"\x80\"}",
      "{\"prompt\":\"\xBF\"}",
      "{\"prompt\":\"\xFF\"}",
      "{\"prompt\":\"\xFE\"}",
      "{\"prompt\":\"\xC3\"}",
      "{\"prompt\":\"\xC3\"",
      "{\"prompt\":\"\xE2\x82\"}",
      "{\"prompt\":\"\xE2\x82",
      "{\"prompt\":\"\xF0\x9F\x98\"}",
      "{\"prompt\":\"\xF0\x9F\x98",
      "{\"prompt\":\"\xC3\x41\"}",
      "{\"prompt\":\"\xE2\x41\xAC\"}",
      "{\"p\xC3\xA9\":\"x\"}",
      "{\"prompt\":\"a\",\xC3\xA9:1}",
      "{\"prompt\":\xC3\xA9}",
      "{\"prompt\":\"x\"}\xC3\xA9",
      // long strings cross the 8-byte fast path at every offset
      "{\"prompt\":\"0123456789abcdef0123456789abcdef\"}",
      "{\"prompt\":\"0123456789abcdef\\n0123456789abcdef\"}",
      "{\"prompt\":\"0123456\xC3\xA9"
      "89abcdef0123456789abcdef\"}",
      "{\"prompt\":\"0123456789abcde\x01"
      "0123456789\"}",
      "{\"prompt\":\"0123456789abcdef\\\"0123456789abcdef\"}",
      "{\"prompt\":"
      "\"\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C\xE4\xBD\xA0\xE5\xA5\xBD\xE4\xB8\x96\xE7\x95\x8C\"}",
      // keys
      "{\"\\u0000\":1}",
      "{\"\\ud800\":1}",
      "{\"\\ud83d\\ude00\":1}",
      "{\"a\\\"b\":1}",
      "{\"\xC3\":1}",
      "{\"a\x01\":1}",
      "{\"prompt\":\"x\",\"pr\\u006fmpt\":\"yy\"}",
      "{\"\\u0070rompt\":\"abcdefghi\"}",
      "{\"i\\u006e\\u0070\\u0075t\":\"abcdefghi\",\"max_\\u006futput_tokens\":3}",
      "{\"messages\":[{\"\\u0063\\u006f\\u006e\\u0074\\u0065\\u006e\\u0074\":\"abcdefghi\"}]}",
      "{\"verylongkeythatneedsnodecodingatall\\n\":1,\"prompt\":\"x\"}",
      "{\"max_completion_tokens\\n\":5}",
      "{\"\\u006dax_completion_tokens\":5}",
      // whitespace
      " { \"prompt\" : [ \"ab\" , 1 ] , \"max_tokens\" : 3 } ",
      "{\t\"prompt\"\r:\n\"ab\"}",
      "{\f\"prompt\":1}",
      "{\v\"prompt\":1}",
      "{\"prompt\":1\xC2\xA0}",
      // comments are not JSON here
      "{/*c*/\"prompt\":1}",
      "{\"prompt\":1}//c",
      "{\"prompt\":1}/*",
  };
  // Deep nesting, past the scanner's inline frames.
  for (const int depth : {63, 64, 65, 66, 200, 5000}) {
    std::string open, close;
    for (int i = 0; i < depth; ++i) {
      open += i % 2 ? "{\"content\":" : "[";
      close.insert(0, i % 2 ? "}" : "]");
    }
    c.push_back("{\"messages\":" + open + "\"abcdefghij\"" + close + ",\"max_tokens\":3}");
    c.push_back("{\"messages\":" + open + "\"abcdefghij\"" + close.substr(1) + ",\"max_tokens\":3}");
    c.push_back("{\"messages\":" + open + "1" + close + "}");
  }
  // Every offset of an escape, a multi-byte character and a bad byte against the 8-byte fast path.
  for (int pad = 0; pad < 17; ++pad) {
    for (const char* piece :
         {"\\n", "\\u00e9", "\\ud83d\\ude00", "\xC3\xA9", "\xF0\x9F\x98\x80", "\x01", "\xFF", "\\q"})
      c.push_back("{\"prompt\":\"" + std::string(static_cast<std::size_t>(pad), 'x') + piece +
                  "yyyyyyyyy\"}");
  }
  // The overflow boundary of a double: 2^1024 - 2^970 becomes infinity, one less does not.
  const std::string m =
      "179769313486231580793728971405303415079934132710037826936173778980444968292764750946649017977587207096"
      "330286"
      "416692887910946555547851940402630657488671505820681908902000708383676273854845817711531764475730270069"
      "855571"
      "366959622842914819860834936475292719074168444365510704342711559699508093042880177904174497792";
  std::string m_minus = m;
  m_minus.back() = '1';
  for (const std::string& n : {m,
                               m_minus,
                               m + "0",
                               m_minus + "9999999999",
                               m + "e-1",
                               m + "0e-1",
                               m + "1e-1",
                               m.substr(0, 1) + "." + m.substr(1) + "e308",
                               m_minus.substr(0, 1) + "." + m_minus.substr(1) + "e308",
                               "0." + m + "e309",
                               "0." + m_minus + "e309",
                               "0.000" + m + "e312",
                               "0.000" + m_minus + "e312",
                               "-" + m,
                               "-" + m_minus,
                               m.substr(0, 308),
                               m.substr(0, 300) + ".5e8",
                               m.substr(0, 309) + ".000",
                               m_minus.substr(0, 309) + ".999999",
                               std::string(400, '9'),
                               "0." + std::string(400, '0') + "1e709",
                               "0." + std::string(400, '0') + "1e710"})
    c.push_back("{\"prompt\":[" + n + "],\"max_tokens\":" + n + "}");
  return c;
}

TEST(TokenEstimateDifferential, TrickyInputsMatchNlohmann) {
  const std::vector<std::string> bodies = corpus();
  for (const std::string& body : bodies) expect_same(body);
  // And every truncation of each (a prefix of valid JSON is mostly invalid).
  for (const std::string& body : bodies)
    if (body.size() <= 200)
      for (std::size_t n = 0; n < body.size(); ++n) expect_same(std::string_view(body).substr(0, n));
}

TEST(TokenEstimateDifferential, RandomBodiesMatchNlohmann) {
  JsonGenerator gen(0x5EED5EED12345678ULL);
  constexpr int kCases = 20'000;
  int valid = 0;
  for (int i = 0; i < kCases; ++i) {
    const std::string body = gen.body();
    expect_same(body);
    if (nlohmann::json::accept(body)) ++valid;
    if (::testing::Test::HasFailure()) break;  // one reproducible body is enough
  }
  // Both kinds are well represented.
  EXPECT_GT(valid, kCases / 5);
  EXPECT_LT(valid, kCases * 4 / 5);
}

}  // namespace token_estimate_test
}  // namespace smartlb
