#include "smartlb/http/json_body.hpp"

#include "smartlb/http/json_lexer.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace smartlb {
namespace json_body_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::string_literals;

std::optional<std::string> edit(std::string_view body, std::vector<http::BodyEdit> edits) {
  return edit_json_body(body, edits);
}
http::BodyEdit set(std::string key, std::string json) { return {std::move(key), std::move(json)}; }
http::BodyEdit remove(std::string key) { return {std::move(key), std::nullopt}; }

// Inputs that are not one valid JSON object, each for its own reason (http/json_lexer.hpp).
const std::vector<std::string> kInvalid = {
    "",
    "   ",
    "[]",
    "\"model\"",
    "42",
    "{",
    "}",
    "{\"a\":1",
    "{\"a\":1}}",
    "{\"a\":1} x",
    "{\"a\":1}{}",
    "{\"a\":1,}",
    "{,}",
    "{\"a\" 1}",
    "{\"a\":}",
    "{a:1}",
    "{'a':1}",
    "{\"a\":[1,2}",
    "{\"a\":{]}",
    "{\"a\":[1,]}",
    "{\"a\":{\"b\"}}",
    "{\"a\":01}",
    "{\"a\":1.}",
    "{\"a\":1e400}",  // a number no double holds
    "{\"a\":-1e309}",
    "{\"a\":.5}",
    "{\"a\":-}",
    "{\"a\":1e}",
    "{\"a\":+1}",
    "{\"a\":tru}",
    "{\"a\":nul}",
    "{\"a\":True}",
    "{\"a\":\"unterminated}",
    "{\"a\":\"\\x\"}",
    "{\"a\":\"\\u12G4\"}",
    "{\"a\":\"\\ud800\"}",           // a high surrogate alone
    "{\"a\":\"\\ud800\\u0041\"}",    // followed by no low one
    "{\"a\":\"\\udc00\"}",           // a low surrogate alone
    "{\"a\":\"tab\there\"}",         // a raw control character
    "{\"a\":\"\xC0\x80\"}",          // overlong NUL
    "{\"a\":\"\xED\xA0\x80\"}",      // an encoded surrogate
    "{\"a\":\"\xF4\x90\x80\x80\"}",  // past U+10FFFF
    "{\"a\":\"\xE2\x82\"}",          // truncated
    "{\"a\":\"\x80\"}",              // a lone continuation byte
    "{\"\xFF\":1}",
    " \xEF\xBB\xBF{}",  // a byte-order mark anywhere but at the very start
    "\xEF\xBB{}",       // a partial one
    "{\"a\":1}\0"s,
    "{\"a\":\0 1}"s,
};

TEST(TopLevelString, ReadsATopLevelString) {
  EXPECT_EQ(http::top_level_string(R"({"model":"gpt-4o","stream":true})", "model"), "gpt-4o");
  EXPECT_EQ(http::top_level_string(R"({"stream":true,"model":"gpt-4o"})", "model"), "gpt-4o");
  EXPECT_EQ(http::top_level_string(R"({"model":""})", "model"), "");
}

TEST(TopLevelString, ViewPointsIntoTheBody) {
  const std::string body = R"({"messages":[],"model":"m1"})";
  const auto v = http::top_level_string(body, "model");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->data(), body.data() + body.find("m1"));
}

TEST(TopLevelString, IgnoresNestedDecoys) {
  const std::string body = R"({
    "messages": [{"role": "user", "content": "say \"model\": \"x\"", "model": "inner"}],
    "tools": {"model": {"model": "deeper"}},
    "note": "model",
    "x": ["model", {"model": "in-array"}],
    "model": "outer"
  })";
  EXPECT_EQ(http::top_level_string(body, "model"), "outer");
  EXPECT_EQ(http::top_level_string(R"({"a":{"model":"inner"}})", "model"), std::nullopt);
  EXPECT_EQ(http::top_level_string(R"({"a":"\"model\":\"x\""})", "model"), std::nullopt);
}

TEST(TopLevelString, ToleratesWhitespaceEverywhere) {
  EXPECT_EQ(http::top_level_string(" \t\r\n{ \n\"model\" \t:\r\n \"m\" \n} \n", "model"), "m");
}

TEST(TopLevelString, ReturnsRawContentsWithEscapesKept) {
  EXPECT_EQ(http::top_level_string(R"({"user":"a\"b\\c\u00e9"})", "user"), R"(a\"b\\c\u00e9)");
  EXPECT_EQ(http::top_level_string("{\"user\":\"caf\xC3\xA9\"}", "user"), "caf\xC3\xA9");
}

TEST(TopLevelString, MatchesKeysWrittenWithEscapes) {
  EXPECT_EQ(http::top_level_string(R"({"mod\u0065l":"m"})", "model"), "m");
  EXPECT_EQ(http::top_level_string(R"({"a\/b":"v"})", "a/b"), "v");
  EXPECT_EQ(http::top_level_string(R"({"caf\u00e9":"v"})", "caf\xC3\xA9"), "v");
  EXPECT_EQ(http::top_level_string(R"({"\ud83d\ude00":"v"})", "\xF0\x9F\x98\x80"), "v");
  EXPECT_EQ(http::top_level_string(R"({"mod\u0065":"m"})", "model"), std::nullopt)
      << "a prefix is not the key";
  EXPECT_EQ(http::top_level_string(R"({"model\u0065":"m"})", "model"), std::nullopt) << "nor is a longer key";
}

TEST(TopLevelString, KeyIsComparedWhole) {
  EXPECT_EQ(http::top_level_string(R"({"models":"a","mode":"b"})", "model"), std::nullopt);
}

TEST(TopLevelString, NonStringValueIsNothing) {
  for (const char* v : {"1", "-2.5e3", "true", "false", "null", "[\"m\"]", "{\"model\":\"m\"}"}) {
    EXPECT_EQ(http::top_level_string("{\"model\":"s + v + "}", "model"), std::nullopt) << v;
  }
}

TEST(TopLevelString, LastDuplicateCounts) {
  EXPECT_EQ(http::top_level_string(R"({"model":"a","model":"b"})", "model"), "b");
  EXPECT_EQ(http::top_level_string(R"({"model":"a","model":1})", "model"), std::nullopt);
  EXPECT_EQ(http::top_level_string(R"({"model":1,"model":"b"})", "model"), "b");
}

TEST(TopLevelString, AbsentOrEmptyObject) {
  EXPECT_EQ(http::top_level_string("{}", "model"), std::nullopt);
  EXPECT_EQ(http::top_level_string(R"({"a":1})", "model"), std::nullopt);
  EXPECT_EQ(http::top_level_string(R"({"":"e"})", ""), "e");
}

TEST(TopLevelString, InvalidBodyIsNothingEvenWhenTheKeyCameFirst) {
  for (const std::string& body : kInvalid) {
    EXPECT_EQ(http::top_level_string(body, "a"), std::nullopt) << body;
  }
  EXPECT_EQ(http::top_level_string(R"({"model":"m","x":[})", "model"), std::nullopt);
}

TEST(TopLevelString, SeveralKeysInOnePass) {
  const std::string_view keys[] = {"model", "user", "prompt_cache_key", "missing"};
  std::optional<std::string_view> out[4];
  ASSERT_TRUE(http::top_level_strings(
      R"({"user":"u1","model":"m","prompt_cache_key":"k","x":{"missing":"no"}})", keys, out));
  EXPECT_EQ(out[0], "m");
  EXPECT_EQ(out[1], "u1");
  EXPECT_EQ(out[2], "k");
  EXPECT_EQ(out[3], std::nullopt);

  EXPECT_FALSE(http::top_level_strings(R"({"model":"m","user":"u1",})", keys, out));
  for (const auto& o : out) EXPECT_EQ(o, std::nullopt);
}

TEST(JsonDepth, DeepNestingIsReadToItsEnd) {
  // The top-level object is one level; its value opens the others, past those kept inline.
  const auto nested = [](std::size_t depth, std::size_t closed) {
    return "{\"a\":" + std::string(depth - 1, '[') + std::string(closed, ']') + ",\"m\":\"x\"}";
  };
  const std::size_t deep = 3 * http::kInlineJsonLevels;
  EXPECT_EQ(http::top_level_string(nested(deep, deep - 1), "m"), "x");
  EXPECT_EQ(edit(nested(deep, deep - 1), {remove("m")}),
            "{\"a\":" + std::string(deep - 1, '[') + std::string(deep - 1, ']') + "}");
  EXPECT_EQ(http::top_level_string(nested(deep, deep - 2), "m"), std::nullopt);
  EXPECT_FALSE(edit(nested(deep, deep - 2), {}));
}

TEST(TopLevelString, AByteOrderMarkAtTheStartIsSkippedAndKept) {
  const std::string body = "\xEF\xBB\xBF{\"model\":\"m\",\"a\":1}";
  EXPECT_EQ(http::top_level_string(body, "model"), "m");
  EXPECT_EQ(edit(body, {remove("a")}), "\xEF\xBB\xBF{\"model\":\"m\"}");
  EXPECT_EQ(edit("\xEF\xBB\xBF{}", {set("a", "1")}), "\xEF\xBB\xBF{\"a\":1}");
}

TEST(EditJsonBody, ReplacesInPlaceAndCopiesTheRest) {
  EXPECT_EQ(edit(R"({"model":"a", "stream" : true})", {set("model", R"("b")")}),
            R"({"model":"b", "stream" : true})");
  EXPECT_EQ(edit(R"({ "x":1,  "model" :  "a" ,"y":[1, 2] })", {set("model", R"("b")")}),
            R"({ "x":1,  "model":"b" ,"y":[1, 2] })");
}

TEST(EditJsonBody, AppendsBeforeTheClosingBrace) {
  EXPECT_EQ(edit(R"({"a":1})", {set("t", "0.5")}), R"({"a":1,"t":0.5})");
  EXPECT_EQ(edit("{\"a\":1 \n}\n", {set("t", "0.5"), set("u", "\"v\"")}),
            "{\"a\":1,\"t\":0.5,\"u\":\"v\" \n}\n");
}

TEST(EditJsonBody, EmptyObject) {
  EXPECT_EQ(edit("{}", {set("t", "1")}), R"({"t":1})");
  EXPECT_EQ(edit(" { } ", {set("t", "1"), set("u", "2")}), R"( {"t":1,"u":2 } )");
  EXPECT_EQ(edit("{}", {remove("t")}), "{}");
}

TEST(EditJsonBody, RemovesMembersWherever) {
  EXPECT_EQ(edit(R"({"a":1})", {remove("a")}), "{}");
  EXPECT_EQ(edit(R"({ "a" : 1 })", {remove("a")}), "{  }");
  EXPECT_EQ(edit(R"({"a":1, "b":2, "c":3})", {remove("a")}), R"({"b":2, "c":3})");
  EXPECT_EQ(edit(R"({"a":1, "b":2, "c":3})", {remove("b")}), R"({"a":1, "c":3})");
  EXPECT_EQ(edit(R"({"a":1, "b":2, "c":3})", {remove("c")}), R"({"a":1, "b":2})");
  EXPECT_EQ(edit(R"({"a":1, "b":2, "c":3})", {remove("a"), remove("c")}), R"({"b":2})");
  EXPECT_EQ(edit(R"({"a":1, "b":2, "c":3})", {remove("a"), remove("b"), remove("c")}), "{}");
}

TEST(EditJsonBody, RemovesAndAppendsTogether) {
  EXPECT_EQ(edit(R"({"a":1,"b":2})", {remove("a"), remove("b"), set("c", "3")}), R"({"c":3})");
  EXPECT_EQ(edit(R"({"a":1,"b":2})", {remove("a"), set("c", "3")}), R"({"b":2,"c":3})");
  EXPECT_EQ(edit(R"({"a":1,"b":2})", {set("b", "[]"), remove("a")}), R"({"b":[]})");
}

TEST(EditJsonBody, DuplicatesAllGoAndTheValueIsWrittenOnceAtTheFirst) {
  EXPECT_EQ(edit(R"({"m":1,"x":0,"m":2,"m":3})", {set("m", "9")}), R"({"m":9,"x":0})");
  EXPECT_EQ(edit(R"({"x":0,"m":1,"m":2})", {remove("m")}), R"({"x":0})");
  EXPECT_EQ(edit(R"({"x":0,"x":1})", {set("m", "9")}), R"({"x":0,"x":1,"m":9})")
      << "duplicates of other keys stay";
}

TEST(EditJsonBody, MatchesEscapedKeysAndWritesThePlainOne) {
  EXPECT_EQ(edit(R"({"max_tokens":1,"max_tok\u0065ns":99999})", {set("max_tokens", "100")}),
            R"({"max_tokens":100})");
  EXPECT_EQ(edit(R"({"mod\u0065l":"a"})", {set("model", R"("b")")}), R"({"model":"b"})");
}

TEST(EditJsonBody, EscapesTheKeyItWrites) {
  EXPECT_EQ(edit("{}", {set("a\"b", "1")}), R"({"a\"b":1})");
  EXPECT_EQ(edit(R"({"a\"b":0})", {set("a\"b", "1")}), R"({"a\"b":1})");
}

TEST(EditJsonBody, FirstEditOfAKeyCounts) {
  EXPECT_EQ(edit(R"({"m":1})", {set("m", "2"), set("m", "3")}), R"({"m":2})");
  EXPECT_EQ(edit(R"({"m":1})", {remove("m"), set("m", "3")}), "{}");
  EXPECT_EQ(edit("{}", {set("m", "2"), set("m", "3")}), R"({"m":2})");
}

TEST(EditJsonBody, NestedMembersOfTheSameNameAreUntouched) {
  const std::string body = R"({"messages":[{"model":"x","temperature":1}],"o":{"temperature":2}})";
  EXPECT_EQ(edit(body, {set("temperature", "0"), remove("model")}),
            R"({"messages":[{"model":"x","temperature":1}],"o":{"temperature":2},"temperature":0})");
}

TEST(EditJsonBody, WithoutChangesTheBodyIsCopiedExactly) {
  const std::string body = "\n{ \"a\" : [1, {\"b\": null}] ,\"c\":\"\\u00e9\\n\" , \"d\":-0.5E+3 }\t";
  EXPECT_EQ(edit(body, {}), body);
  EXPECT_EQ(edit(body, {remove("zzz")}), body);
}

TEST(EditJsonBody, InvalidBodiesAreRefused) {
  for (const std::string& body : kInvalid) {
    EXPECT_EQ(edit(body, {set("model", "\"m\"")}), std::nullopt) << body;
    EXPECT_EQ(edit(body, {}), std::nullopt) << body;
  }
}

TEST(EditJsonBody, AcceptsEveryKindOfValue) {
  const std::string body =
      R"({"s":"x\"y","n":-0,"f":1.25e-3,"F":2E+2,"t":true,"fa":false,"nu":null,"e":[],"o":{},)"
      R"("deep":[[{"k":[1,{"k2":"v"}]}]],"u":"\ud83d\ude00\u0000\/"})";
  EXPECT_EQ(edit(body, {}), body);
  EXPECT_EQ(edit(body, {remove("deep")}).value().find("deep"), std::string::npos);
}

TEST(EditJsonBody, LargeBody) {
  // ~200 KiB of messages, the model last.
  std::string body = R"({"messages":[)";
  for (int i = 0; body.size() < 200 * 1024; ++i) {
    if (i) body += ',';
    body += R"({"role":"user","content":"line )" + std::to_string(i) +
            R"( with \"quotes\", caf\u00e9 and \u00e9t\u00e9 {\"model\":\"nope\"}"})";
  }
  body += R"(],"model":"gpt-4o","temperature":0.7})";
  EXPECT_EQ(http::top_level_string(body, "model"), "gpt-4o");
  const auto out =
      edit(body, {set("model", http::json_string("prod-4o")), remove("temperature"), set("user", "\"u\"")});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->size(), body.size() - std::string(R"("gpt-4o","temperature":0.7)").size() +
                             std::string(R"("prod-4o","user":"u")").size());
  EXPECT_EQ(http::top_level_string(*out, "model"), "prod-4o");
  EXPECT_EQ(out->substr(0, 100), body.substr(0, 100));
}

TEST(EditJsonBody, OutputParsesAsTheExpectedMerge) {
  const std::string body =
      R"( {"model":"a","messages":[{"role":"user","content":"hi \"there\""}],"temperature":1,)"
      R"("max_tokens":5,"max_tokens":6,"stop":null} )";
  const std::vector<http::BodyEdit> edits = {
      set("model", http::json_string("b\n\"c\"")), remove("max_tokens"), set("temperature", "0.2"),
      set("top_p", "0.9"), set("response_format", R"({"type":"json_object"})")};
  const auto out = edit_json_body(body, edits);
  ASSERT_TRUE(out);
  nlohmann::json expected = nlohmann::json::parse(body);
  expected["model"] = "b\n\"c\"";
  expected.erase("max_tokens");
  expected["temperature"] = 0.2;
  expected["top_p"] = 0.9;
  expected["response_format"] = {{"type", "json_object"}};
  EXPECT_EQ(nlohmann::json::parse(*out), expected) << *out;
}

TEST(JsonString, EscapesPerRfc8259) {
  EXPECT_EQ(http::json_string(""), R"("")");
  EXPECT_EQ(http::json_string("gpt-4o"), R"("gpt-4o")");
  EXPECT_EQ(http::json_string("a\"b\\c/d"), R"("a\"b\\c/d")");
  EXPECT_EQ(http::json_string("\b\f\n\r\t"), R"("\b\f\n\r\t")");
  EXPECT_EQ(http::json_string("\x01\x1f"s + '\0'), R"("\u0001\u001f\u0000")");
  EXPECT_EQ(http::json_string("caf\xC3\xA9 \x7f"), "\"caf\xC3\xA9 \x7f\"");
  for (const std::string s : {"", "x", "a\"\\\n\x01\xC3\xA9"}) {
    EXPECT_EQ(http::json_string(s).size(), http::json_string_size(s));
    EXPECT_EQ(nlohmann::json::parse(http::json_string(s)), nlohmann::json(s));
  }
}

TEST(JsonString, AppendsToWhatIsThere) {
  std::string out = "x=";
  http::append_json_string(out, "a\"");
  EXPECT_EQ(out, R"(x="a\"")");
}

}  // namespace json_body_test
}  // namespace smartlb
