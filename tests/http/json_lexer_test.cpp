#include "smartlb/http/json_lexer.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "json_generator.hpp"

namespace smartlb {
namespace json_lexer_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::string_literals;

// The tokens of `text` as words: `{` `}` `[` `]`, k:<key>, s:<string>, n:<number>, true, false,
// null, then END or INVALID. Keys and strings raw, numbers with their text; or, `as_nlohmann`,
// strings decoded, numbers unnamed, no END, and only INVALID for an invalid text (as SaxWords).
std::vector<std::string> words(std::string_view text, bool as_nlohmann = false) {
  std::vector<std::string> out;
  http::JsonLexer lexer(text);
  std::string buf;
  const auto text_of = [&] {
    if (!as_nlohmann) return std::string(lexer.raw());
    buf.resize(lexer.raw().size());
    const std::string decoded(http::json_short_text(lexer.raw(), lexer.escaped(), buf).value());
    EXPECT_EQ(lexer.decoded_size(), decoded.size());
    return decoded;
  };
  for (;;) {
    switch (lexer.next()) {
      case http::JsonToken::BeginObject:
        out.push_back("{");
        break;
      case http::JsonToken::EndObject:
        out.push_back("}");
        break;
      case http::JsonToken::BeginArray:
        out.push_back("[");
        break;
      case http::JsonToken::EndArray:
        out.push_back("]");
        break;
      case http::JsonToken::Key:
        out.push_back("k:" + text_of());
        break;
      case http::JsonToken::String:
        out.push_back("s:" + text_of());
        break;
      case http::JsonToken::Number:
        out.push_back(as_nlohmann ? "n" : "n:" + std::string(lexer.raw()));
        break;
      case http::JsonToken::True:
        out.push_back("true");
        break;
      case http::JsonToken::False:
        out.push_back("false");
        break;
      case http::JsonToken::Null:
        out.push_back("null");
        break;
      case http::JsonToken::End:
        if (!as_nlohmann) out.push_back("END");
        return out;
      case http::JsonToken::Invalid:
        if (as_nlohmann) out.clear();
        out.push_back("INVALID");
        return out;
    }
  }
}

using Words = std::vector<std::string>;

bool valid(std::string_view text) { return words(text).back() == "END"; }

TEST(JsonLexer, TokensOfADocument) {
  EXPECT_EQ(words(R"( {"a" : [1, "x", true, false, null, {}, []], "b":-2.5e3} )"),
            (Words{"{", "k:a", "[", "n:1", "s:x", "true", "false", "null", "{", "}", "[", "]", "]", "k:b",
                   "n:-2.5e3", "}", "END"}));
  EXPECT_EQ(words("\"just a string\""), (Words{"s:just a string", "END"}));
  EXPECT_EQ(words("0"), (Words{"n:0", "END"}));
}

TEST(JsonLexer, StopsAtTheFirstErrorAndStaysThere) {
  EXPECT_EQ(words(R"({"a":1,})"), (Words{"{", "k:a", "n:1", "INVALID"}));
  EXPECT_EQ(words("[1 2]"), (Words{"[", "n:1", "INVALID"}));
  EXPECT_EQ(words("{} {}"), (Words{"{", "}", "INVALID"}));
  http::JsonLexer lexer("[");
  EXPECT_EQ(lexer.next(), http::JsonToken::BeginArray);
  EXPECT_EQ(lexer.next(), http::JsonToken::Invalid);
  EXPECT_EQ(lexer.next(), http::JsonToken::Invalid);
  http::JsonLexer done("1");
  EXPECT_EQ(done.next(), http::JsonToken::Number);
  EXPECT_EQ(done.next(), http::JsonToken::End);
  EXPECT_EQ(done.next(), http::JsonToken::End);
}

TEST(JsonLexer, OffsetsAndDepthOfEachToken) {
  const std::string text = R"({ "key" : "v", "n": [12 ] })";
  http::JsonLexer lexer(text);
  struct Seen {
    http::JsonToken token;
    std::size_t begin, end, depth;
  };
  std::vector<Seen> seen;
  for (http::JsonToken t; (t = lexer.next()) != http::JsonToken::End;) {
    ASSERT_NE(t, http::JsonToken::Invalid);
    seen.push_back({t, lexer.begin(), lexer.end(), lexer.depth()});
  }
  const std::vector<Seen> want = {
      {http::JsonToken::BeginObject, 0, 1, 1},  {http::JsonToken::Key, 2, 7, 1},
      {http::JsonToken::String, 10, 13, 1},     {http::JsonToken::Key, 15, 18, 1},
      {http::JsonToken::BeginArray, 20, 21, 2}, {http::JsonToken::Number, 21, 23, 2},
      {http::JsonToken::EndArray, 24, 25, 1},   {http::JsonToken::EndObject, 26, 27, 0}};
  ASSERT_EQ(seen.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(seen[i].token, want[i].token);
    EXPECT_EQ(seen[i].begin, want[i].begin);
    EXPECT_EQ(seen[i].end, want[i].end);
    EXPECT_EQ(seen[i].depth, want[i].depth);
  }
}

TEST(JsonLexer, StringsKeepTheirEscapesAndKnowTheirDecodedSize) {
  http::JsonLexer lexer(R"(["plain", "a\nb\u00e9\u20ac\ud83d\ude00\/", "caf)"
                        "\xC3\xA9"
                        R"("])");
  ASSERT_EQ(lexer.next(), http::JsonToken::BeginArray);
  ASSERT_EQ(lexer.next(), http::JsonToken::String);
  EXPECT_EQ(lexer.raw(), "plain");
  EXPECT_FALSE(lexer.escaped());
  EXPECT_EQ(lexer.decoded_size(), 5u);
  ASSERT_EQ(lexer.next(), http::JsonToken::String);
  EXPECT_EQ(lexer.raw(), R"(a\nb\u00e9\u20ac\ud83d\ude00\/)");
  EXPECT_TRUE(lexer.escaped());
  EXPECT_EQ(lexer.decoded_size(), 1u + 1 + 1 + 2 + 3 + 4 + 1);
  ASSERT_EQ(lexer.next(), http::JsonToken::String);
  EXPECT_EQ(lexer.decoded_size(), 5u) << "raw UTF-8 counts its bytes";
}

TEST(JsonLexer, IntegersHaveNoFractionAndNoExponent) {
  for (const auto& [number, integer] :
       std::vector<std::pair<std::string, bool>>{{"0", true},
                                                 {"-0", true},
                                                 {"123", true},
                                                 {"99999999999999999999999", true},
                                                 {"1.0", false},
                                                 {"1e2", false},
                                                 {"-1E-2", false}}) {
    http::JsonLexer lexer(number);
    ASSERT_EQ(lexer.next(), http::JsonToken::Number) << number;
    EXPECT_EQ(lexer.integer(), integer) << number;
    EXPECT_EQ(lexer.raw(), number);
  }
}

TEST(JsonLexer, NumbersADoubleCannotHoldAreInvalid) {
  EXPECT_TRUE(valid("1.7976931348623157e308"));
  EXPECT_FALSE(valid("1.7976931348623159e308"));
  EXPECT_FALSE(valid("1e400"));
  EXPECT_FALSE(valid("-1e309"));
  EXPECT_TRUE(valid("1e-400")) << "underflow is zero, not an error";
  EXPECT_TRUE(valid("0e999999"));
  EXPECT_TRUE(valid(std::string(308, '9')));
  EXPECT_FALSE(valid(std::string(309, '9')));
  EXPECT_TRUE(valid("0." + std::string(400, '0') + "1e400"));
}

TEST(JsonLexer, AByteOrderMarkIsSkippedOnlyAtTheStart) {
  EXPECT_EQ(words("\xEF\xBB\xBF{}"), (Words{"{", "}", "END"}));
  EXPECT_FALSE(valid(" \xEF\xBB\xBF{}"));
  EXPECT_FALSE(valid("\xEF\xBB{}"));
  EXPECT_FALSE(valid("\xEF\xBB\xBF"));
  EXPECT_FALSE(valid("{}\xEF\xBB\xBF"));
}

TEST(JsonLexer, ANulByteIsInvalidAnywhere) {
  for (const std::string& text : {"{}\0"s, "{}\0garbage"s, "\0{}"s, "{\"a\":\0 1}"s, "[\"\0\"]"s, "[1\0]"s}) {
    SCOPED_TRACE(testing::PrintToString(text));
    EXPECT_FALSE(valid(text));
  }
}

TEST(JsonLexer, DeepNestingIsReadToItsEnd) {
  for (const std::size_t depth :
       {http::kInlineJsonLevels - 1, http::kInlineJsonLevels, http::kInlineJsonLevels + 1, 5000ul}) {
    SCOPED_TRACE(depth);
    const std::string open = [&] {
      std::string s;
      for (std::size_t i = 0; i < depth; ++i) s += i % 2 ? "{\"k\":" : "[";
      return s;
    }();
    std::string close;
    for (std::size_t i = depth; i-- > 0;) close += i % 2 ? "}" : "]";
    EXPECT_TRUE(valid(open + "1" + close));
    EXPECT_FALSE(valid(open + "1" + close.substr(1)));
    std::string swapped = close;
    swapped[0] = swapped[0] == '}' ? ']' : '}';
    EXPECT_FALSE(valid(open + "1" + swapped));
    const std::string text = open + "1" + close;
    http::JsonLexer lexer(text);
    std::size_t deepest = 0;
    for (http::JsonToken t; (t = lexer.next()) != http::JsonToken::End;) {
      ASSERT_NE(t, http::JsonToken::Invalid);
      deepest = std::max(deepest, lexer.depth());
    }
    EXPECT_EQ(deepest, depth);
  }
}

TEST(JsonRawEquals, ComparesWhatTheRawTextMeans) {
  EXPECT_TRUE(http::json_raw_equals("model", "model"));
  EXPECT_TRUE(http::json_raw_equals(R"(mod\u0065l)", "model"));
  EXPECT_TRUE(http::json_raw_equals(R"(a\"b\\c\/d\n)", "a\"b\\c/d\n"));
  EXPECT_TRUE(http::json_raw_equals(R"(caf\u00e9)", "caf\xC3\xA9"));
  EXPECT_TRUE(http::json_raw_equals(R"(\ud83d\ude00)", "\xF0\x9F\x98\x80"));
  EXPECT_FALSE(http::json_raw_equals(R"(mod\u0065)", "model"));
  EXPECT_FALSE(http::json_raw_equals(R"(model\u0065)", "model"));
  EXPECT_FALSE(http::json_raw_equals("models", "model"));
}

TEST(JsonShortText, DecodesIntoTheBufferWhenItFits) {
  char buf[8];
  EXPECT_EQ(http::json_short_text("plain text longer than buf", false, buf), "plain text longer than buf");
  EXPECT_EQ(http::json_short_text(R"(t\u0065xt)", true, buf), "text");
  EXPECT_EQ(http::json_short_text(R"(\u00e9\u00e9\u00e9\u00e9)", true, buf),
            "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9");
  EXPECT_EQ(http::json_short_text(R"(\u00e9\u00e9\u00e9\u00e9\n)", true, buf), std::nullopt);
}

// ---- Differential: the lexer against nlohmann::json ------------------------------------------

// nlohmann's SAX events in the words above, strings decoded; INVALID when it refuses the text.
class SaxWords final : public nlohmann::json_sax<nlohmann::json> {
 public:
  Words out;
  bool null() override { return add("null"); }
  bool boolean(bool v) override { return add(v ? "true" : "false"); }
  bool number_integer(number_integer_t) override { return add("n"); }
  bool number_unsigned(number_unsigned_t) override { return add("n"); }
  bool number_float(number_float_t, const string_t&) override { return add("n"); }
  bool string(string_t& v) override { return add("s:" + v); }
  bool binary(binary_t&) override { return add("?"); }
  bool start_object(std::size_t) override { return add("{"); }
  bool key(string_t& k) override { return add("k:" + k); }
  bool end_object() override { return add("}"); }
  bool start_array(std::size_t) override { return add("["); }
  bool end_array() override { return add("]"); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool add(std::string w) {
    out.push_back(std::move(w));
    return true;
  }
};

void expect_same_as_nlohmann(std::string_view text) {
  SaxWords theirs;
  const bool accepted = nlohmann::json::sax_parse(text, &theirs);
  const Words ours = words(text, /*as_nlohmann=*/true);
  if (text.find('\0') != std::string_view::npos) {
    EXPECT_EQ(ours, Words{"INVALID"}) << testing::PrintToString(std::string(text));
    return;  // nlohmann ends its input at the NUL: the one difference
  }
  EXPECT_EQ(ours, accepted ? theirs.out : Words{"INVALID"}) << testing::PrintToString(std::string(text));
}

TEST(JsonLexerDifferential, TrickyTextsMatchNlohmann) {
  for (const std::string& text : {""s,
                                  " "s,
                                  "{}"s,
                                  "[]"s,
                                  "\"x\""s,
                                  "-0"s,
                                  "01"s,
                                  "1."s,
                                  ".5"s,
                                  "1e"s,
                                  "+1"s,
                                  "tru"s,
                                  "nul"s,
                                  "[1,]"s,
                                  "{\"a\"}"s,
                                  "{\"a\":1,}"s,
                                  "{1:2}"s,
                                  "[}"s,
                                  "{]"s,
                                  "\"\\x\""s,
                                  "\"\\u12\""s,
                                  "\"\\ud83d\""s,
                                  "\"\\ude00\""s,
                                  "\"\\ud83d\\u0041\""s,
                                  "\"\t\""s,
                                  "\"\x7f\""s,
                                  "\"\xc0\xaf\""s,
                                  "\"\xe0\x80\xaf\""s,
                                  "\"\xed\xa0\x80\""s,
                                  "\"\xf4\x90\x80\x80\""s,
                                  "\"\x80\""s,
                                  "\"\xc3\""s,
                                  "\xEF\xBB\xBF[1]"s,
                                  "\xEF\xBB[1]"s,
                                  "1e309"s,
                                  "1e308"s,
                                  "-1e400"s,
                                  "[1e-400]"s,
                                  "\"\\u0000\""s,
                                  "{\"\\u0000\":1}"s,
                                  "[true,false,null,{\"a\":[{\"b\":\"c\"}]}]"s,
                                  "{\"a\":1}}"s,
                                  "{\"a\":1]"s,
                                  "[\"a\"\n,\r\n1\t]"s,
                                  "{\f}"s,
                                  "{\v}"s,
                                  "[1\xC2\xA0]"s}) {
    expect_same_as_nlohmann(text);
  }
}

TEST(JsonLexerDifferential, RandomTextsMatchNlohmann) {
  JsonGenerator gen(0x1E7E1E7E5EEDULL);
  constexpr int kCases = 20'000;
  int accepted = 0;
  for (int i = 0; i < kCases; ++i) {
    const std::string text = gen.body();
    expect_same_as_nlohmann(text);
    if (valid(text)) ++accepted;
    if (::testing::Test::HasFailure()) break;  // one reproducible text is enough
  }
  EXPECT_GT(accepted, kCases / 5);
  EXPECT_LT(accepted, kCases * 4 / 5);
}

}  // namespace json_lexer_test
}  // namespace smartlb
