#include "smartlb/sim/responses_store.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace responses_store_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using nlohmann::json;

class ResponsesStoreTest : public ::testing::Test {
 protected:
  ResponsesStore& store() {
    if (!store_)
      store_ = std::make_unique<ResponsesStore>(limits_, GenerationSettings{3, 16, 5ms}, ids_, clock_);
    return *store_;
  }

  ResponsesCreate request(std::string body) {
    auto parsed = parse_responses_create(body);
    EXPECT_TRUE(parsed.request) << parsed.error.message;
    return parsed.request.value_or(ResponsesCreate{});
  }

  json create_ok(std::string body) {
    const auto answer = store().create(request(std::move(body)));
    EXPECT_EQ(answer.response.status, 200) << answer.response.body;
    return json::parse(answer.response.body);
  }

  StoreLimits limits_{100, 1'000'000};
  ManualClock clock_;
  IdMinter ids_{1};
  std::unique_ptr<ResponsesStore> store_;
};

TEST_F(ResponsesStoreTest, CreateAnswersAStoredResponse) {
  const auto answer = store().create(request(R"({"model":"gpt-4o","input":"0123456789abcdef"})"));
  ASSERT_EQ(answer.response.status, 200);
  const auto body = json::parse(answer.response.body);
  const std::string id = body["id"];
  EXPECT_TRUE(id.starts_with("resp_"));
  EXPECT_EQ(body["status"], "completed");
  EXPECT_EQ(body["created_at"], clock_.unix_seconds());
  EXPECT_EQ(body["usage"]["input_tokens"], 4);
  EXPECT_EQ(body["usage"]["output_tokens"], 3);
  EXPECT_EQ(answer.tokens_served, 7);
  EXPECT_EQ(*find_header(answer.response.headers, "x-request-id"), id);
  EXPECT_EQ(store().size(), 1u);

  const auto again = store().retrieve(id, "");
  ASSERT_EQ(again.status, 200);
  EXPECT_EQ(json::parse(again.body), body);
}

TEST_F(ResponsesStoreTest, AChainCarriesTheWholeContextForward) {
  const json first = create_ok(R"({"model":"m","input":"0123456789abcdef"})");  // 4 in, 3 out
  const json second = create_ok(R"({"model":"m","input":"01234567","previous_response_id":")" +
                                first["id"].get<std::string>() + "\"}");
  EXPECT_EQ(second["previous_response_id"], first["id"]);
  EXPECT_EQ(second["usage"]["input_tokens"], 2 + 4 + 3);
  const json third = create_ok(R"({"model":"m","input":"0123","previous_response_id":")" +
                               second["id"].get<std::string>() + "\"}");
  EXPECT_EQ(third["usage"]["input_tokens"], 1 + 9 + 3);
}

TEST_F(ResponsesStoreTest, AnUnknownPreviousResponseIs400PreviousResponseNotFound) {
  const auto answer =
      store().create(request(R"({"model":"m","input":"x","previous_response_id":"resp_other"})"));
  ASSERT_EQ(answer.response.status, 400);
  const auto error = json::parse(answer.response.body)["error"];
  EXPECT_EQ(error["code"], "previous_response_not_found");
  EXPECT_EQ(error["param"], "previous_response_id");
  EXPECT_EQ(error["type"], "invalid_request_error");
  EXPECT_EQ(error["message"], "Previous response with id 'resp_other' not found.");
  EXPECT_EQ(answer.tokens_served, 0);
  EXPECT_EQ(store().size(), 0u);
}

TEST_F(ResponsesStoreTest, UnknownIdsAre404NotFound) {
  for (const auto& response : {store().retrieve("resp_x", ""), store().remove("resp_x"),
                               store().cancel("resp_x"), store().input_items("resp_x", "")}) {
    ASSERT_EQ(response.status, 404) << response.body;
    EXPECT_EQ(json::parse(response.body)["error"]["code"], "not_found");
  }
}

TEST_F(ResponsesStoreTest, DeleteForgetsTheResponseAndItsChain) {
  const std::string id = create_ok(R"({"model":"m","input":"x"})")["id"];
  const auto deleted = store().remove(id);
  ASSERT_EQ(deleted.status, 200);
  EXPECT_EQ(json::parse(deleted.body), (json{{"id", id}, {"object", "response"}, {"deleted", true}}));
  EXPECT_EQ(store().retrieve(id, "").status, 404);
  EXPECT_EQ(store().create(request(R"({"model":"m","previous_response_id":")" + id + "\"}")).response.status,
            400);
}

TEST_F(ResponsesStoreTest, StoreFalseIsAnsweredButNotKept) {
  const std::string id = create_ok(R"({"model":"m","input":"x","store":false})")["id"];
  EXPECT_EQ(store().size(), 0u);
  EXPECT_EQ(store().retrieve(id, "").status, 404);
}

TEST_F(ResponsesStoreTest, StreamedCreateIsStoredAndPaced) {
  const auto answer = store().create(request(R"({"model":"m","input":"x","stream":true})"));
  ASSERT_TRUE(answer.response.stream);
  EXPECT_EQ(answer.response.content_type, "text/event-stream");
  EXPECT_EQ(answer.response.chunk_interval, 5ms);
  EXPECT_EQ(answer.response.events.size(), 3u + 8u);
  EXPECT_EQ(store().size(), 1u);
  const std::string id(*find_header(answer.response.headers, "x-request-id"));
  EXPECT_EQ(store().retrieve(id, "").status, 200);
}

TEST_F(ResponsesStoreTest, RetrieveCanStreamAgainFromAGivenEvent) {
  const std::string id = create_ok(R"({"model":"m","input":"x"})")["id"];
  const auto all = store().retrieve(id, "stream=true");
  ASSERT_TRUE(all.stream);
  EXPECT_EQ(all.events.size(), 11u);
  const auto rest = store().retrieve(id, "stream=true&starting_after=8");
  ASSERT_TRUE(rest.stream);
  EXPECT_EQ(rest.events.size(), 2u);
  EXPECT_EQ(store().retrieve(id, "stream=true&starting_after=x").status, 400);
}

TEST_F(ResponsesStoreTest, BackgroundIsQueuedThenMovesOnePerRetrieve) {
  const json created = create_ok(R"({"model":"m","input":"x","background":true})");
  EXPECT_EQ(created["status"], "queued");
  EXPECT_TRUE(created["usage"].is_null());
  const std::string id = created["id"];
  EXPECT_EQ(json::parse(store().retrieve(id, "").body)["status"], "in_progress");
  const json done = json::parse(store().retrieve(id, "").body);
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["output"][0]["content"][0]["text"], generated_text(3));
  EXPECT_EQ(json::parse(store().retrieve(id, "").body)["status"], "completed");
}

TEST_F(ResponsesStoreTest, OnlyUnfinishedBackgroundResponsesCancel) {
  const std::string background = create_ok(R"({"model":"m","input":"x","background":true})")["id"];
  const auto cancelled = store().cancel(background);
  ASSERT_EQ(cancelled.status, 200);
  EXPECT_EQ(json::parse(cancelled.body)["status"], "cancelled");
  EXPECT_EQ(store().cancel(background).status, 200) << "cancelling twice is harmless";
  EXPECT_EQ(json::parse(store().retrieve(background, "").body)["status"], "cancelled") << "stays cancelled";

  const std::string plain = create_ok(R"({"model":"m","input":"x"})")["id"];
  EXPECT_EQ(store().cancel(plain).status, 400);
  const std::string finished = create_ok(R"({"model":"m","input":"x","background":true})")["id"];
  store().retrieve(finished, "");
  store().retrieve(finished, "");
  EXPECT_EQ(store().cancel(finished).status, 400);
}

TEST_F(ResponsesStoreTest, InputItemsArePagedNewestFirst) {
  const std::string id =
      create_ok(R"({"model":"m","input":[{"role":"user","content":"a"},{"role":"user","content":"b"},
                                         {"role":"user","content":"c"}]})")["id"];
  const json first = json::parse(store().input_items(id, "limit=2").body);
  EXPECT_EQ(first["object"], "list");
  ASSERT_EQ(first["data"].size(), 2u);
  EXPECT_EQ(first["data"][0]["content"][0]["text"], "c");
  EXPECT_EQ(first["data"][1]["content"][0]["text"], "b");
  EXPECT_TRUE(first["has_more"]);
  EXPECT_EQ(first["first_id"], first["data"][0]["id"]);
  EXPECT_EQ(first["last_id"], first["data"][1]["id"]);
  EXPECT_TRUE(first["data"][0]["id"].get<std::string>().starts_with("msg_"));
  EXPECT_EQ(first["data"][0]["status"], "completed");
  const json rest =
      json::parse(store().input_items(id, "limit=2&after=" + first["last_id"].get<std::string>()).body);
  ASSERT_EQ(rest["data"].size(), 1u);
  EXPECT_EQ(rest["data"][0]["content"][0]["text"], "a");
  EXPECT_FALSE(rest["has_more"]);
  const json ascending = json::parse(store().input_items(id, "order=asc").body);
  EXPECT_EQ(ascending["data"][0]["content"][0]["text"], "a");
  EXPECT_EQ(store().input_items(id, "limit=0").status, 400);
  EXPECT_EQ(store().input_items(id, "order=up").status, 400);
}

TEST_F(ResponsesStoreTest, AFullStoreDropsItsOldestResponses) {
  limits_ = {2, 1'000'000};
  const std::string a = create_ok(R"({"model":"m","input":"a"})")["id"];
  const std::string b = create_ok(R"({"model":"m","input":"b"})")["id"];
  const std::string c = create_ok(R"({"model":"m","input":"c"})")["id"];
  EXPECT_EQ(store().size(), 2u);
  EXPECT_EQ(store().retrieve(a, "").status, 404);
  EXPECT_EQ(store().retrieve(b, "").status, 200);
  EXPECT_EQ(store().retrieve(c, "").status, 200);
}

TEST_F(ResponsesStoreTest, AResponseLargerThanTheStoreIsAnsweredNotKept) {
  limits_ = {10, 600};
  const std::string id = create_ok(R"({"model":"m","input":")" + std::string(1000, 'x') + "\"}")["id"];
  EXPECT_EQ(store().retrieve(id, "").status, 404);
  EXPECT_LE(store().bytes(), 600u);
}

}  // namespace responses_store_test
}  // namespace smartlb::sim
