#include "smartlb/stateful/request_ids.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "smartlb/stateful/resource_tag.hpp"

namespace smartlb::stateful {
namespace request_ids_test {  // named, not anonymous: tests/CMakeLists.txt

// "-slbaaaaaaab" (1), "-slbaaaaaaac" (2), "-slbaaaaaaad" (3)
std::string t(std::uint64_t bits) { return std::string(tag_from_bits(bits).view()); }

struct Seen {
  PinRank rank;
  std::string id;
  std::uint64_t bits;
  bool operator==(const Seen&) const = default;
};
std::vector<Seen> seen(std::span<const FoundId> ids) {
  std::vector<Seen> out;
  for (const FoundId& f : ids) out.push_back({f.rank, std::string(f.id), f.bits});
  return out;
}
std::ostream& operator<<(std::ostream& os, const Seen& s) {
  return os << "{" << static_cast<int>(s.rank) << "," << s.id << "," << s.bits << "}";
}

TEST(RequestIds, PathSegmentsLoseTheirTags) {
  const std::string path = "/openai/v1/responses/resp_1" + t(1) + "/input_items";
  std::string out;
  RequestIds ids;
  strip_path(path, classify_path(path), out, ids);
  EXPECT_EQ(out, "/openai/v1/responses/resp_1/input_items");
  EXPECT_EQ(seen(ids.tagged()), (std::vector<Seen>{{PinRank::Path, "resp_1", 1}}));
  EXPECT_TRUE(ids.untagged().empty());
}

TEST(RequestIds, UntaggedIdSegmentsOfAStatefulPathAreKept) {
  const std::string path = "/v1/threads/thread_1/runs/run_2" + t(2) + "/steps";
  std::string out;
  RequestIds ids;
  strip_path(path, classify_path(path), out, ids);
  EXPECT_EQ(out, "/v1/threads/thread_1/runs/run_2/steps");
  EXPECT_EQ(seen(ids.tagged()), (std::vector<Seen>{{PinRank::Path, "run_2", 2}}));
  EXPECT_EQ(seen(ids.untagged()), (std::vector<Seen>{{PinRank::Path, "thread_1", 0}}));
}

TEST(RequestIds, APathWithoutTagsIsCopiedAsItIs) {
  for (const std::string path : {"/openai/deployments/gpt-4o/chat/completions", "/v1/files/", "/", "/a//b"}) {
    std::string out;
    RequestIds ids;
    strip_path(path, classify_path(path), out, ids);
    EXPECT_EQ(out, path);
  }
}

TEST(RequestIds, OnlyAfterAndBeforeLoseTheirTagsInTheQuery) {
  const std::string query = "limit=2&after=file-1" + t(1) + "&order=asc&before=file-0" + t(1) + "&x=y" + t(1);
  std::string out;
  RequestIds ids;
  strip_query(query, out, ids);
  EXPECT_EQ(out, "limit=2&after=file-1&order=asc&before=file-0&x=y" + t(1));
  EXPECT_EQ(seen(ids.tagged()),
            (std::vector<Seen>{{PinRank::Path, "file-1", 1}, {PinRank::Path, "file-0", 1}}));
  std::string plain;
  strip_query("api-version=2025-04-01-preview&after=", plain, ids);
  EXPECT_EQ(plain, "api-version=2025-04-01-preview&after=");
}

TEST(RequestIds, EveryStringValueOfTheBodyLosesItsTagInPinOrder) {
  const std::string body = R"({"model":"gpt-4o","input":[{"type":"function_call_output","call_id":"call_1)" +
                           t(3) + R"(","output":"x)" + t(3) + R"("}],"conversation":{"id":"conv_1)" + t(2) +
                           R"("},"previous_response_id":"resp_1)" + t(1) + R"(","metadata":{"k":"v)" + t(3) +
                           R"("}})";
  std::string out;
  RequestIds ids;
  ASSERT_TRUE(strip_json_body(body, out, ids));
  EXPECT_EQ(
      out,
      R"({"model":"gpt-4o","input":[{"type":"function_call_output","call_id":"call_1","output":"x"}],"conversation":{"id":"conv_1"},"previous_response_id":"resp_1","metadata":{"k":"v"}})");
  ids.order();
  EXPECT_EQ(seen(ids.tagged()), (std::vector<Seen>{{PinRank::PreviousResponse, "resp_1", 1},
                                                   {PinRank::Conversation, "conv_1", 2},
                                                   {PinRank::Body, "call_1", 3},
                                                   {PinRank::Body, "x", 3},
                                                   {PinRank::Body, "v", 3}}));
}

TEST(RequestIds, UntaggedIdsOfTheBodyAreKeptButNotKeysNorMetadata) {
  const std::string body =
      R"({"previous_response_id":"resp_0","input_file_id":"file-1","tools":[{"type":"file_search","vector_store_ids":["vs_1"]}],"metadata":{"user_id":"u"},"text":"resp_9","resp_2":1})";
  std::string out;
  RequestIds ids;
  ASSERT_TRUE(strip_json_body(body, out, ids));
  EXPECT_EQ(out, body);
  ids.order();
  EXPECT_TRUE(ids.tagged().empty());
  EXPECT_EQ(seen(ids.untagged()), (std::vector<Seen>{{PinRank::PreviousResponse, "resp_0", 0},
                                                     {PinRank::Body, "file-1", 0},
                                                     {PinRank::Body, "vs_1", 0}}));
}

TEST(RequestIds, AnInvalidBodyIsLeftAsItWasAndRecordsNothing) {
  std::string out = "kept";
  RequestIds ids;
  ids.add_untagged(PinRank::Path, "thread_1");
  EXPECT_FALSE(strip_json_body(R"({"previous_response_id":"resp_1)" + t(1) + R"(", oops})", out, ids));
  EXPECT_EQ(out, "kept");
  EXPECT_EQ(ids.tagged().size(), 0u);
  EXPECT_EQ(ids.untagged().size(), 1u);
}

TEST(RequestIds, KeepsAtMostKMaxKeptOfEachKind) {
  std::string body = "[";
  for (int i = 0; i < 100; ++i) body += (i ? "," : "") + std::string("\"x") + std::to_string(i) + t(1) + "\"";
  body += "]";
  std::string out;
  RequestIds ids;
  ASSERT_TRUE(strip_json_body(body, out, ids));
  EXPECT_EQ(ids.tagged().size(), RequestIds::kMaxKept);
  EXPECT_EQ(out.find("-slb"), std::string::npos) << "every one is stripped all the same";
}

TEST(RequestIds, ABodyNestedDeeperThan1024LevelsIsNotRead) {
  // A frame per level is kept: a body of '[' must not cost a frame per byte.
  std::string out;
  RequestIds ids;
  EXPECT_TRUE(strip_json_body(std::string(1024, '[') + std::string(1024, ']'), out, ids));
  out.clear();
  EXPECT_FALSE(strip_json_body(std::string(1025, '[') + std::string(1025, ']'), out, ids));
  EXPECT_EQ(out, "");
}

TEST(RequestIds, MayHoldTagLooksForTheMark) {
  EXPECT_TRUE(may_hold_tag("x-slb"));
  EXPECT_FALSE(may_hold_tag(R"({"model":"gpt-4o"})"));
  // The mark at every place of texts around the 16-byte steps, and its near misses, in text
  // without hyphens (found by memchr) and made of them (past the first few, by the vector scan).
  for (const char filler : {'x', '-'})
    for (std::size_t size = 4; size <= 40; ++size)
      for (std::size_t at = 0; at + 4 <= size; ++at) {
        std::string text(size, filler);
        text.replace(at, 4, "-slb");
        EXPECT_TRUE(may_hold_tag(text)) << size << " " << at;
        for (std::size_t miss = 1; miss < 4; ++miss) {
          std::string near = text;
          near[at + miss] = 'x';
          EXPECT_FALSE(may_hold_tag(near)) << near;
        }
      }
}

}  // namespace request_ids_test
}  // namespace smartlb::stateful
