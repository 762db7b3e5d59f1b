#include "smartlb/websocket/responses_socket.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace smartlb::websocket {
namespace responses_socket_test {  // named, not anonymous: tests/CMakeLists.txt

const stateful::ResourceTag kOwn = stateful::tag_from_bits(1);    // "-slbaaaaaaab"
const stateful::ResourceTag kOther = stateful::tag_from_bits(2);  // "-slbaaaaaaac"
// A tag no configured resource has.
const stateful::ResourceTag kGone = stateful::tag_from_bits(3);  // "-slbaaaaaaad"

bool configured(std::uint64_t bits) { return bits == kOwn.bits || bits == kOther.bits; }

TEST(ServerEventEditor, TagsTheIdsOfAnEvent) {
  ServerEventEditor editor(kOwn);
  std::string out;
  EXPECT_EQ(
      editor.edit(R"({"type":"response.created","response":{"id":"resp_2","previous_response_id":"resp_1"}})",
                  out),
      Edit::Replace);
  EXPECT_EQ(
      out,
      R"({"type":"response.created","response":{"id":"resp_2-slbaaaaaaab","previous_response_id":"resp_1-slbaaaaaaab"}})");
  ASSERT_EQ(editor.found.size(), 1u);
  EXPECT_TRUE(editor.found[0].created);
}

TEST(ServerEventEditor, KeepsAnEventWithoutIdsAndWhatIsNotJson) {
  ServerEventEditor editor(kOwn);
  std::string out;
  EXPECT_EQ(editor.edit(R"({"type":"response.output_text.delta","delta":"Hi"})", out), Edit::Keep);
  out.clear();
  EXPECT_EQ(editor.edit("not json", out), Edit::Keep);
}

TEST(ServerEventEditor, ReadsTheUsageOfResponseCompleted) {
  ServerEventEditor editor(kOwn);
  std::string out;
  EXPECT_EQ(
      editor.edit(
          R"({"type":"response.completed","response":{"id":"resp_3","usage":{"input_tokens":12,"output_tokens":7,"total_tokens":19}}})",
          out),
      Edit::Replace);
  ASSERT_EQ(editor.found.size(), 1u);
  EXPECT_FALSE(editor.found[0].created);
  EXPECT_EQ(editor.found[0].usage.input_tokens, 12);
  EXPECT_EQ(editor.found[0].usage.output_tokens, 7);
}

TEST(ClientRequestEditor, TakesTheSocketsOwnTagOff) {
  ClientRequestEditor editor(kOwn.bits, configured);
  std::string out;
  EXPECT_EQ(
      editor.edit(
          R"({"type":"response.create","model":"gpt-4o","previous_response_id":"resp_1-slbaaaaaaab"})", out),
      Edit::Replace);
  EXPECT_EQ(out, R"({"type":"response.create","model":"gpt-4o","previous_response_id":"resp_1"})");
  EXPECT_TRUE(editor.refusals.empty());
}

// The model each response.create names is read only for a socket whose handshake named none.
TEST(ClientRequestEditor, ReadsTheModelAMessageNamesOnlyWhenAsked) {
  const std::string create = R"({"type":"response.create","model":"gpt-4o-mini","input":"hi"})";
  std::string out;
  ClientRequestEditor reading(kOwn.bits, configured, true);
  EXPECT_EQ(reading.edit(create, out), Edit::Keep);
  EXPECT_EQ(reading.model, "gpt-4o-mini");
  EXPECT_EQ(reading.edit(R"({"type":"response.cancel"})", out), Edit::Keep);
  EXPECT_EQ(reading.model, "gpt-4o-mini") << "kept until a message names another";
  ClientRequestEditor not_reading(kOwn.bits, configured);
  EXPECT_EQ(not_reading.edit(create, out), Edit::Keep);
  EXPECT_EQ(not_reading.model, "");
}

TEST(ClientRequestEditor, TakesOffATagNoResourceHas) {
  ClientRequestEditor editor(kOwn.bits, configured);
  std::string out;
  EXPECT_EQ(editor.edit(R"({"type":"response.create","previous_response_id":"resp_1-slbaaaaaaad"})", out),
            Edit::Replace);
  EXPECT_EQ(out, R"({"type":"response.create","previous_response_id":"resp_1"})");
}

TEST(ClientRequestEditor, KeepsAMessageWithoutTags) {
  ClientRequestEditor editor(kOwn.bits, configured);
  std::string out;
  EXPECT_EQ(editor.edit(R"({"type":"response.create","previous_response_id":"resp_1"})", out), Edit::Keep);
  out.clear();
  EXPECT_EQ(editor.edit("{not json -slbaaaaaaab", out), Edit::Keep);
}

TEST(ClientRequestEditor, RefusesAnIdOfAnotherResourceWithAnErrorEvent) {
  ClientRequestEditor editor(kOwn.bits, configured);
  std::string out;
  EXPECT_EQ(
      editor.edit(
          R"({"type":"response.create","stream_id":"s1","previous_response_id":"resp_9-slbaaaaaaac","input":"hi"})",
          out),
      Edit::Drop);
  ASSERT_EQ(editor.refusals.size(), 1u);
  const nlohmann::json e = nlohmann::json::parse(editor.refusals[0]);
  EXPECT_EQ(e["type"], "error");
  EXPECT_EQ(e["status"], 400);
  EXPECT_EQ(e["stream_id"], "s1");
  EXPECT_EQ(e["error"]["code"], "resource_conflict");
  EXPECT_EQ(e["error"]["param"], "previous_response_id");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("resp_9-slbaaaaaaac"), std::string::npos);
}

TEST(ClientRequestEditor, ErrorWithoutStreamIdHasNone) {
  const nlohmann::json e = nlohmann::json::parse(foreign_id_error("conv_1-slbaaaaaaac", "conversation", ""));
  EXPECT_FALSE(e.contains("stream_id"));
  EXPECT_EQ(e["error"]["param"], "conversation");
}

}  // namespace responses_socket_test
}  // namespace smartlb::websocket
