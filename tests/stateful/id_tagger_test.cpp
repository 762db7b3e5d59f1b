#include "smartlb/stateful/id_tagger.hpp"

#include <gtest/gtest.h>

#include <string>

namespace smartlb::stateful {
namespace id_tagger_test {  // named, not anonymous: tests/CMakeLists.txt

const ResourceTag kTag = tag_from_bits(1);  // "-slbaaaaaaab"

std::string tagged(std::string_view json) {
  std::string out;
  EXPECT_TRUE(tag_json_ids(json, kTag, out)) << json;
  return out;
}

TEST(IdTagger, TagsIdsAndKeepsEveryOtherByte) {
  EXPECT_EQ(tagged(R"({"id":"resp_1","object":"response","model":"gpt-4o","status":"completed"})"),
            R"({"id":"resp_1-slbaaaaaaab","object":"response","model":"gpt-4o","status":"completed"})");
  EXPECT_EQ(tagged("{ \"id\" :\n \"resp_1\" ,\t\"n\": 1.5e3 , \"ok\":true,\"x\":null }"),
            "{ \"id\" :\n \"resp_1-slbaaaaaaab\" ,\t\"n\": 1.5e3 , \"ok\":true,\"x\":null }");
}

TEST(IdTagger, TagsEveryKindOfIdMember) {
  EXPECT_EQ(tagged(R"({"previous_response_id":"resp_0","conversation":"conv_1"})"),
            R"({"previous_response_id":"resp_0-slbaaaaaaab","conversation":"conv_1-slbaaaaaaab"})");
  EXPECT_EQ(tagged(R"({"conversation":{"id":"conv_1"}})"), R"({"conversation":{"id":"conv_1-slbaaaaaaab"}})");
  EXPECT_EQ(
      tagged(R"({"object":"batch","input_file_id":"file-1","output_file_id":"file-2","error_file_id":null})"),
      R"({"object":"batch","input_file_id":"file-1-slbaaaaaaab","output_file_id":"file-2-slbaaaaaaab","error_file_id":null})");
  EXPECT_EQ(
      tagged(R"({"training_file":"file-1","validation_file":"file-2","result_files":["file-3","file-4"]})"),
      R"({"training_file":"file-1-slbaaaaaaab","validation_file":"file-2-slbaaaaaaab","result_files":["file-3-slbaaaaaaab","file-4-slbaaaaaaab"]})");
  EXPECT_EQ(
      tagged(
          R"({"tool_resources":{"file_search":{"vector_store_ids":["vs_1"]},"code_interpreter":{"file_ids":[]}}})"),
      R"({"tool_resources":{"file_search":{"vector_store_ids":["vs_1-slbaaaaaaab"]},"code_interpreter":{"file_ids":[]}}})");
  EXPECT_EQ(
      tagged(
          R"({"object":"list","data":[{"id":"file-1"},{"id":"file-2"}],"first_id":"file-1","last_id":"file-2","has_more":false})"),
      R"({"object":"list","data":[{"id":"file-1-slbaaaaaaab"},{"id":"file-2-slbaaaaaaab"}],"first_id":"file-1-slbaaaaaaab","last_id":"file-2-slbaaaaaaab","has_more":false})");
}

TEST(IdTagger, LeavesMetadataAndEverythingThatIsNotAnId) {
  EXPECT_EQ(
      tagged(R"({"id":"resp_1","metadata":{"id":"mine","user_id":"u1","deep":{"x_id":"y"}},"user_id":"u2"})"),
      R"({"id":"resp_1-slbaaaaaaab","metadata":{"id":"mine","user_id":"u1","deep":{"x_id":"y"}},"user_id":"u2-slbaaaaaaab"})");
  EXPECT_EQ(tagged(R"({"metadata":"not an object","id":"a"})"),
            R"({"metadata":"not an object","id":"a-slbaaaaaaab"})");
  // Not strings, strings under other keys, ids that cannot be ids, tagged ones, keys themselves.
  const std::string untouched[] = {
      R"({"id":1,"file_id":null,"x_ids":[1,{"id":2}],"text":"resp_1","model":"m"})",
      R"({"id":"","file_id":"has space","x_id":"tab\there","y_id":"esc\u0041"})",
      R"({"id":"resp_1-slbaaaaaaab","file_id":"file-1-slbzzzzzzzz"})",
      R"({"resp_1":"id","ids":["a"],"idx":"b","file_idx":"c"})",
      R"(["id","resp_1"])",
      R"("resp_1")",
      R"({"list_ids":["a b",""],"nested_ids":[["x"]]})",
  };
  for (const std::string& json : untouched) EXPECT_EQ(tagged(json), json);
  EXPECT_EQ(tagged(R"({"id":")" + std::string(256, 'x') + "\"}"),
            R"({"id":")" + std::string(256, 'x') + std::string(kTag.view()) + "\"}");
  EXPECT_EQ(tagged(R"({"id":")" + std::string(257, 'x') + "\"}"),
            R"({"id":")" + std::string(257, 'x') + "\"}");
}

TEST(IdTagger, TagsIdsInsideArraysOfObjectsAndStreamEvents) {
  EXPECT_EQ(
      tagged(R"({"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"delta":"Hi"})"),
      R"({"type":"response.output_text.delta","item_id":"msg_1-slbaaaaaaab","output_index":0,"delta":"Hi"})");
  EXPECT_EQ(
      tagged(
          R"({"output":[{"type":"function_call","id":"fc_1","call_id":"call_1","arguments":"{\"id\":\"x\"}"}]})"),
      R"({"output":[{"type":"function_call","id":"fc_1-slbaaaaaaab","call_id":"call_1-slbaaaaaaab","arguments":"{\"id\":\"x\"}"}]})");
}

TEST(IdTagger, InvalidJsonIsRefusedAndOutIsAsItWas) {
  for (const std::string_view bad :
       {"", "{", R"({"id":"a")", R"({"id":"a"}})", R"({"id":"a",})", "[DONE]", R"({"id":"a\q"})",
        "{\"id\":\"a\x01\"}", R"({"id":01})", R"({"id":tru})", R"({"a":"b"} x)"}) {
    std::string out = "kept";
    EXPECT_FALSE(tag_json_ids(bad, kTag, out)) << bad;
    EXPECT_EQ(out, "kept") << bad;
  }
  std::string deep(1025, '[');
  std::string out;
  EXPECT_FALSE(tag_json_ids(deep + std::string(1025, ']'), kTag, out)) << "too deep";
}

TEST(IdTagger, AppendsToWhatIsThere) {
  std::string out = "data: ";
  ASSERT_TRUE(tag_json_ids(R"({"id":"a"})", kTag, out));
  EXPECT_EQ(out, R"(data: {"id":"a-slbaaaaaaab"})");
}

TEST(IdTagger, EscapedQuotesAndBackslashesDoNotEndAString) {
  EXPECT_EQ(tagged(R"({"text":"say \"id\": \\","id":"r"})"),
            R"({"text":"say \"id\": \\","id":"r-slbaaaaaaab"})");
}

}  // namespace id_tagger_test
}  // namespace smartlb::stateful
