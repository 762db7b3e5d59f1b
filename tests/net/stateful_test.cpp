// Stateful APIs over real sockets (docs/stateful-apis.md): three backends on three resources,
// each keeping its own store of responses, files and batches as the real services do. Ids come
// back tagged with their resource, go back upstream without the tag, and requests that name
// them reach the resource that has them -- untagged ones after trying each resource once.
#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "record_observer.hpp"

namespace smartlb::testing {
namespace stateful_test {  // named, not anonymous: tests/CMakeLists.txt

using nlohmann::json;

// One resource's objects, kept as the Responses, Files and Batches APIs keep them.
class Store {
 public:
  explicit Store(std::string name) : name_(std::move(name)) {}

  // A response made before smartlb (or through another client): its id carries no tag.
  std::string create_response() {
    std::lock_guard lock(mutex_);
    return add_response();
  }
  std::size_t responses() const {
    std::lock_guard lock(mutex_);
    return responses_.size();
  }

  MockReply handle(const SeenRequest& r) {
    std::lock_guard lock(mutex_);
    std::string path = r.target.substr(0, r.target.find('?'));
    for (const std::string prefix : {"/openai/v1", "/openai", "/v1"})
      if (path.starts_with(prefix + "/")) {
        path.erase(0, prefix.size());
        break;
      }
    const std::vector<std::string> seg = split(path);
    if (seg.size() == 1 && seg[0] == "responses" && r.method == "POST") return create(r);
    if (seg.size() == 1 && seg[0] == "files" && r.method == "GET") {
      json data = json::array();
      for (const std::string& id : files_) data.push_back({{"id", id}, {"object", "file"}});
      return answer({{"object", "list"}, {"data", data}, {"has_more", false}});
    }
    if (seg.size() == 1 && seg[0] == "files") return answer({{"id", add("file-")}, {"object", "file"}});
    if (seg.size() == 1 && seg[0] == "batches") {
      const std::string file = json::parse(r.body).value("input_file_id", "");
      if (!files_.count(file)) return not_found("No file found with id '" + file + "'.");
      return answer({{"id", "batch_" + name_ + "_1"}, {"object", "batch"}, {"input_file_id", file}});
    }
    if (seg.size() >= 2 && seg[0] == "responses") {
      if (!responses_.count(seg[1])) return not_found("No response found with id '" + seg[1] + "'.");
      if (seg.size() == 3 && seg[2] == "cancel") return answer({{"id", seg[1]}, {"status", "cancelled"}});
      if (seg.size() == 3 && seg[2] == "input_items")
        return answer({{"object", "list"},
                       {"data", {{{"id", "msg_in_" + seg[1]}, {"type", "message"}}}},
                       {"first_id", "msg_in_" + seg[1]},
                       {"last_id", "msg_in_" + seg[1]},
                       {"has_more", false}});
      if (r.method == "DELETE") {
        responses_.erase(seg[1]);
        return answer({{"id", seg[1]}, {"object", "response.deleted"}, {"deleted", true}});
      }
      return answer({{"id", seg[1]}, {"object", "response"}});
    }
    return {400, {}, "unexpected " + r.method + " " + r.target};
  }

 private:
  static std::vector<std::string> split(const std::string& path) {
    std::vector<std::string> out;
    std::size_t at = 1;
    while (at <= path.size()) {
      const std::size_t end = std::min(path.find('/', at), path.size());
      out.push_back(path.substr(at, end - at));
      at = end + 1;
    }
    return out;
  }
  static MockReply answer(const json& j) { return {200, {{"content-type", "application/json"}}, j.dump()}; }
  static MockReply not_found(const std::string& message) {
    return {404,
            {{"content-type", "application/json"}},
            json{{"error", {{"message", message}, {"type", "invalid_request_error"}}}}.dump()};
  }
  std::string add(const std::string& prefix) {
    std::string id = prefix + name_ + "_" + std::to_string(next_++);
    (prefix == "file-" ? files_ : responses_).insert(id);
    return id;
  }
  std::string add_response() { return add("resp_"); }

  MockReply create(const SeenRequest& r) {
    const json body = json::parse(r.body);
    const std::string previous = body.value("previous_response_id", "");
    if (!previous.empty() && !responses_.count(previous))
      return {400,
              {{"content-type", "application/json"}},
              json{{"error",
                    {{"message", "Previous response with id '" + previous + "' not found."},
                     {"type", "invalid_request_error"},
                     {"param", "previous_response_id"},
                     {"code", "previous_response_not_found"}}}}
                  .dump()};
    const std::string id = add_response();
    const json prev = previous.empty() ? json(nullptr) : json(previous);
    if (body.value("stream", false)) {
      MockReply s;
      s.headers = {{"content-type", "text/event-stream"}};
      s.events = {
          "event: response.created\ndata: " +
              json{{"type", "response.created"}, {"response", {{"id", id}, {"previous_response_id", prev}}}}
                  .dump() +
              "\n\n",
          "event: response.output_item.added\ndata: " +
              json{{"type", "response.output_item.added"},
                   {"item", {{"id", "msg_" + id}, {"type", "message"}}}}
                  .dump() +
              "\n\n",
          "event: response.completed\ndata: " +
              json{{"type", "response.completed"},
                   {"response", {{"id", id}, {"usage", {{"input_tokens", 11}, {"output_tokens", 7}}}}}}
                  .dump() +
              "\n\n"};
      return s;
    }
    return answer({{"id", id},
                   {"object", "response"},
                   {"previous_response_id", prev},
                   {"output", {{{"id", "msg_" + id}, {"type", "message"}}}},
                   {"metadata", {{"id", "the-client's-own"}}},
                   {"usage", {{"input_tokens", 11}, {"output_tokens", 7}}}});
  }

  std::string name_;
  mutable std::mutex mutex_;
  std::set<std::string> responses_, files_;
  int next_ = 0;
};

// Three resources, a, b and c (each mock listens on its own port: its own origin), with
// priorities 1, 2, 3 so that a new object lands on a.
struct ThreeResources {
  explicit ThreeResources(bool one_priority = false) {
    for (int i = 0; i < 3; ++i) {
      stores.push_back(std::make_unique<Store>(std::string(1, char('a' + i))));
      Store* s = stores.back().get();
      mocks.push_back(std::make_unique<MockBackend>([s](const SeenRequest& r) { return s->handle(r); }));
      p.add_backend(std::string(1, char('a' + i)), mocks.back()->url(), one_priority ? 1 : i + 1);
    }
  }
  void start() { p.start(&last); }
  std::string tag(std::size_t backend) const {
    const auto snap = p.server->snapshot();
    return std::string(snap->resources[snap->resource_of[backend]].tag.view());
  }
  std::size_t calls(std::size_t backend) const { return mocks[backend]->request_count(); }
  HttpResponse call(const std::string& method, const std::string& target, const json& body = nullptr) {
    return http_call(p.port(), method, target, {{"content-type", "application/json"}, {"api-key", "k"}},
                     body.is_null() ? std::string() : body.dump());
  }

  std::vector<std::unique_ptr<Store>> stores;
  std::vector<std::unique_ptr<MockBackend>> mocks;
  LastRecord last;  // before p: the proxy's workers write to it until p is gone
  ProxyHarness p;
};

bool ends_with(const std::string& s, const std::string& tail) { return s.ends_with(tail); }

TEST(StatefulIds, ChainsOfTwelveTurnsStayOnTheResourceOfTheirFirstResponse) {
  ThreeResources r;
  r.start();
  for (std::size_t k = 0; k < 3; ++k) {
    const std::string seed = r.stores[k]->create_response();  // untagged: made before smartlb
    std::string previous = seed;
    for (int turn = 1; turn <= 12; ++turn) {
      const HttpResponse a =
          r.call("POST", "/v1/responses",
                 {{"model", "gpt-4o"}, {"input", "turn"}, {"previous_response_id", previous}});
      ASSERT_EQ(a.status, 200u) << "chain " << k << " turn " << turn << ": " << a.body;
      EXPECT_EQ(a.header("x-smartlb-backend"), std::string(1, char('a' + k)));
      const json j = json::parse(a.body);
      const std::string id = j["id"];
      EXPECT_TRUE(ends_with(id, r.tag(k))) << id;
      const std::string untagged_previous =
          turn == 1 ? seed : previous.substr(0, previous.size() - r.tag(k).size());
      EXPECT_EQ(r.mocks[k]->last_request().body.find("-slb"), std::string::npos)
          << "tags stay with the client";
      EXPECT_EQ(j["previous_response_id"], untagged_previous + r.tag(k));
      EXPECT_EQ(j["output"][0]["id"], "msg_" + id.substr(0, id.size() - r.tag(k).size()) + r.tag(k));
      EXPECT_EQ(j["metadata"]["id"], "the-client's-own") << "metadata is the client's data";
      previous = id;
    }
    EXPECT_EQ(r.stores[k]->responses(), 13u);
  }
  // Each chain's first turn (untagged) tried a, then b, then c until one knew its response;
  // every later turn went straight to its resource.
  EXPECT_EQ(r.calls(0), 12u + 1 + 1);
  EXPECT_EQ(r.calls(1), 12u + 1);
  EXPECT_EQ(r.calls(2), 12u);
  EXPECT_TRUE(r.p.available(0, "gpt-4o")) << "a \"not found\" cools nothing down";
  EXPECT_TRUE(r.p.available(1, "gpt-4o"));
}

TEST(StatefulIds, StreamedTurnsAreTaggedEventByEventAndTheirUsageCounts) {
  ThreeResources r;
  r.start();
  const HttpResponse first = r.call("POST", "/v1/responses", {{"model", "gpt-4o"}, {"input", "hi"}});
  ASSERT_EQ(first.status, 200u) << first.body;
  const std::string first_id = json::parse(first.body)["id"];
  const std::string tag = r.tag(0);
  ASSERT_TRUE(ends_with(first_id, tag)) << first_id;

  const HttpResponse streamed =
      r.call("POST", "/v1/responses",
             {{"model", "gpt-4o"}, {"input", "more"}, {"previous_response_id", first_id}, {"stream", true}});
  ASSERT_EQ(streamed.status, 200u) << streamed.body;
  const std::string id = "resp_a_1" + tag;
  EXPECT_EQ(
      streamed.body,
      "event: response.created\ndata: {\"response\":{\"id\":\"" + id + "\",\"previous_response_id\":\"" +
          first_id +
          "\"},\"type\":\"response.created\"}\n\n"
          "event: response.output_item.added\ndata: {\"item\":{\"id\":\"msg_resp_a_1" +
          tag +
          "\",\"type\":\"message\"},\"type\":\"response.output_item.added\"}\n\n"
          "event: response.completed\ndata: {\"response\":{\"id\":\"" +
          id +
          "\",\"usage\":{\"input_tokens\":11,\"output_tokens\":7}},\"type\":\"response.completed\"}\n\n");
  const auto rec = r.last.await(2);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->prompt_tokens, 11) << "response.completed's response.usage";
  EXPECT_EQ(rec->completion_tokens, 7);

  const HttpResponse next = r.call("POST", "/v1/responses",
                                   {{"model", "gpt-4o"}, {"input", "again"}, {"previous_response_id", id}});
  EXPECT_EQ(next.status, 200u) << "a streamed turn's id continues the chain: " << next.body;
}

TEST(StatefulIds, RetrieveCancelInputItemsAndDeleteGoOnlyToTheOwner) {
  ThreeResources r;
  r.start();
  const std::string untagged = r.stores[2]->create_response();
  const std::string id = untagged + r.tag(2);  // as smartlb gave it out

  const HttpResponse got = r.call("GET", "/v1/responses/" + id);
  EXPECT_EQ(got.status, 200u) << got.body;
  EXPECT_EQ(json::parse(got.body)["id"], id);
  EXPECT_EQ(r.mocks[2]->last_request().target, "/v1/responses/" + untagged);

  const HttpResponse items =
      r.call("GET", "/v1/responses/" + id + "/input_items?limit=1&after=msg_x" + r.tag(2));
  EXPECT_EQ(items.status, 200u) << items.body;
  EXPECT_EQ(json::parse(items.body)["first_id"], "msg_in_" + untagged + r.tag(2));
  EXPECT_EQ(r.mocks[2]->last_request().target,
            "/v1/responses/" + untagged + "/input_items?limit=1&after=msg_x");

  const HttpResponse cancelled = r.call("POST", "/v1/responses/" + id + "/cancel");
  EXPECT_EQ(json::parse(cancelled.body)["status"], "cancelled");
  const HttpResponse deleted = r.call("DELETE", "/v1/responses/" + id);
  EXPECT_EQ(json::parse(deleted.body)["deleted"], true);
  const HttpResponse gone = r.call("GET", "/v1/responses/" + id);
  EXPECT_EQ(gone.status, 404u) << "the owner's own answer";
  EXPECT_NE(gone.body.find("No response found with id '" + untagged + "'"), std::string::npos) << gone.body;

  EXPECT_EQ(r.calls(2), 5u);
  EXPECT_EQ(r.calls(0), 0u) << "a tagged id never wanders";
  EXPECT_EQ(r.calls(1), 0u);
}

TEST(StatefulIds, AFileUploadedOnOneResourceFeedsABatchThere) {
  ThreeResources r;
  r.start();
  const HttpResponse file =
      http_call(r.p.port(), "POST", "/v1/files",
                {{"content-type", "multipart/form-data; boundary=x"}, {"api-key", "k"}},
                "--x\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--x--\r\n");
  ASSERT_EQ(file.status, 200u) << file.body;
  const std::string file_id = json::parse(file.body)["id"];
  const std::size_t owner = file.header("x-smartlb-backend")[0] - 'a';
  ASSERT_TRUE(ends_with(file_id, r.tag(owner))) << file_id;

  const HttpResponse batch =
      r.call("POST", "/v1/batches",
             {{"input_file_id", file_id}, {"endpoint", "/v1/responses"}, {"completion_window", "24h"}});
  ASSERT_EQ(batch.status, 200u) << batch.body;
  EXPECT_EQ(batch.header("x-smartlb-backend"), file.header("x-smartlb-backend"));
  EXPECT_EQ(json::parse(batch.body)["input_file_id"], file_id);
  EXPECT_TRUE(ends_with(json::parse(batch.body)["id"], r.tag(owner)));
  EXPECT_EQ(json::parse(r.mocks[owner]->last_request().body)["input_file_id"],
            file_id.substr(0, file_id.size() - r.tag(owner).size()));
}

TEST(StatefulIds, AClientsListsAndUploadsKeepToOneResourceSoItsListShowsWhatItUploaded) {
  ThreeResources r(true);  // one priority: without a key per client, a random draw each time
  r.start();
  const auto list = [&](const std::string& key) {
    return http_call(r.p.port(), "GET", "/v1/files", {{"api-key", key}});
  };
  std::set<std::string> served;
  for (int i = 0; i < 8; ++i) served.insert(list("k").header("x-smartlb-backend"));
  ASSERT_EQ(served.size(), 1u) << "eight lists, one resource";
  const HttpResponse file =
      http_call(r.p.port(), "POST", "/v1/files",
                {{"content-type", "multipart/form-data; boundary=x"}, {"api-key", "k"}},
                "--x\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n--x--\r\n");
  ASSERT_EQ(file.status, 200u) << file.body;
  EXPECT_EQ(file.header("x-smartlb-backend"), *served.begin());
  const HttpResponse after = list("k");
  ASSERT_EQ(after.status, 200u) << after.body;
  ASSERT_EQ(json::parse(after.body)["data"].size(), 1u) << after.body;
  EXPECT_EQ(json::parse(after.body)["data"][0]["id"], json::parse(file.body)["id"]);
  // Other clients are spread over the resources, each keeping to its own.
  std::set<std::string> others;
  for (int c = 0; c < 12; ++c) {
    const std::string key = "client-" + std::to_string(c);
    const std::string first = list(key).header("x-smartlb-backend");
    EXPECT_EQ(list(key).header("x-smartlb-backend"), first) << key;
    others.insert(first);
  }
  EXPECT_GT(others.size(), 1u);
}

TEST(StatefulIds, A404FromOneBackendOfTheResourceMovesToItsNextOne) {
  Store shared("s");
  MockBackend first([](const SeenRequest&) {
    return MockReply{404, {{"content-type", "application/json"}}, R"({"error":{"message":"not here"}})"};
  });
  MockBackend second([&shared](const SeenRequest& r) { return shared.handle(r); });
  MockBackend elsewhere([](const SeenRequest&) { return MockReply{}; });
  ProxyHarness p;
  p.add_backend("first", first.url(), 1).resource = "res-s";
  p.add_backend("second", second.url(), 2).resource = "res-s";
  p.add_backend("elsewhere", elsewhere.url(), 1);
  p.start();
  const auto snap = p.server->snapshot();
  const std::string id = shared.create_response() + std::string(snap->resources[0].tag.view());
  const HttpResponse got = http_call(p.port(), "GET", "/v1/responses/" + id,
                                     {{"api-key", "k"}, {"content-type", "application/json"}});
  EXPECT_EQ(got.status, 200u) << got.body;
  EXPECT_EQ(got.header("x-smartlb-backend"), "second");
  EXPECT_EQ(first.request_count(), 1u);
  EXPECT_EQ(elsewhere.request_count(), 0u);
  EXPECT_TRUE(p.available(0, "")) << "a \"not found\" cools nothing down";
}

TEST(StatefulIds, AStatefulAnswerIsAskedForUncompressedAndItsUsageCounts) {
  ThreeResources r;
  r.start();
  const HttpResponse a = http_call(r.p.port(), "POST", "/v1/responses",
                                   {{"content-type", "application/json"}, {"accept-encoding", "gzip, br"}},
                                   R"({"model":"gpt-4o","input":"hi"})");
  EXPECT_EQ(a.status, 200u) << a.body;
  EXPECT_FALSE(r.mocks[0]->last_request().has_header("accept-encoding")) << "its ids could not be tagged";
  const auto rec = r.last.await(1);
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->prompt_tokens, 11) << "usage.input_tokens";
  EXPECT_EQ(rec->completion_tokens, 7) << "usage.output_tokens";

  http_call(r.p.port(), "POST", "/v1/chat/completions", {{"accept-encoding", "gzip"}},
            R"({"model":"gpt-4o"})");
  EXPECT_EQ(r.mocks[0]->last_request().header("accept-encoding"), "gzip") << "stateless APIs unchanged";
}

TEST(StatefulIds, AnUntaggedIdIsTriedOnEachResourceOnceThenLearnt) {
  ThreeResources r;
  r.start();
  const std::string id = r.stores[2]->create_response();
  const HttpResponse first = r.call("GET", "/v1/responses/" + id);
  EXPECT_EQ(first.status, 200u) << first.body;
  EXPECT_EQ(first.header("x-smartlb-backend"), "c");
  EXPECT_EQ(json::parse(first.body)["id"], id + r.tag(2)) << "tagged from now on";
  EXPECT_EQ(r.calls(0), 1u);
  EXPECT_EQ(r.calls(1), 1u);
  EXPECT_EQ(r.calls(2), 1u);

  const HttpResponse again = r.call("GET", "/v1/responses/" + id);
  EXPECT_EQ(again.header("x-smartlb-backend"), "c");
  EXPECT_EQ(r.calls(0), 1u) << "learnt: straight to c";
  EXPECT_EQ(r.calls(1), 1u);
  EXPECT_EQ(r.calls(2), 2u);

  // Nobody has it: every resource once, and the last "not found" is the answer.
  const HttpResponse nowhere = r.call("GET", "/v1/responses/resp_nowhere");
  EXPECT_EQ(nowhere.status, 404u);
  EXPECT_EQ(nowhere.header("x-smartlb-backend"), "c");
  EXPECT_EQ(r.calls(0) + r.calls(1) + r.calls(2), 4u + 3);

  // The "not found"s cooled nothing down: a new response still lands on a.
  const HttpResponse fresh = r.call("POST", "/v1/responses", {{"model", "gpt-4o"}, {"input", "hi"}});
  EXPECT_EQ(fresh.header("x-smartlb-backend"), "a");
}

TEST(StatefulIds, AnUntaggedTurnTriesOnlyTheResourcesItsRuleHasBackendsOn) {
  ThreeResources r;
  const config::EnvMap env{{"A", r.mocks[0]->url()}, {"B", r.mocks[1]->url()}, {"C", r.mocks[2]->url()}};
  ASSERT_EQ(r.p.use_config_text(env, R"(
backends:
  - {name: a, url: "${A}"}
  - {name: b, url: "${B}"}
  - {name: c, url: "${C}"}
targets: [{id: a/gpt-4o, backend: a}, {id: c/gpt-4o, backend: c}]
rules:
  - id: chat
    type: priority-based-routing
    when: {models: [gpt-4o]}
    load_balance_targets: [{target: a/gpt-4o}, {target: c/gpt-4o}]
)"),
            "");
  r.start();
  const std::string seed = r.stores[2]->create_response();
  const HttpResponse turn =
      r.call("POST", "/v1/responses", {{"model", "gpt-4o"}, {"input", "x"}, {"previous_response_id", seed}});
  EXPECT_EQ(turn.status, 200u) << turn.body;
  EXPECT_EQ(turn.header("x-smartlb-backend"), "c");
  EXPECT_EQ(r.calls(0), 1u);
  EXPECT_EQ(r.calls(1), 0u) << "b has no gpt-4o: its answer would be about the model";
}

TEST(StatefulIds, AnOwnerThatCannotAnswerSaysWhenToComeBackAndNoOtherResourceIsCalled) {
  ThreeResources r;
  r.start();
  const std::string id = r.stores[1]->create_response() + r.tag(1);
  r.mocks[1]->set_handler([](const SeenRequest&) {
    return MockReply{429, {{"retry-after", "7"}, {"content-type", "application/json"}}, R"({"error":{}})"};
  });
  const HttpResponse throttled = r.call("GET", "/v1/responses/" + id);
  EXPECT_EQ(throttled.status, 429u) << throttled.body;
  EXPECT_EQ(throttled.header("retry-after"), "7");
  const HttpResponse again = r.call("GET", "/v1/responses/" + id);
  EXPECT_EQ(again.status, 429u) << "the owner is cooling down: " << again.body;
  EXPECT_EQ(json::parse(again.body)["error"]["message"].get<std::string>().rfind(
                "Every backend of resource 'b' (where this request's objects are) is rate limited", 0),
            0u)
      << again.body;
  EXPECT_FALSE(again.header("retry-after").empty());
  EXPECT_EQ(r.calls(1), 1u);
  EXPECT_EQ(r.calls(0), 0u) << "never another resource's answer";
  EXPECT_EQ(r.calls(2), 0u);
}

TEST(StatefulIds, TagsOfTwoResourcesInOneRequestAre400AndAnUnknownTagIsDropped) {
  ThreeResources r;
  r.start();
  const HttpResponse both =
      r.call("POST", "/v1/responses",
             {{"model", "gpt-4o"},
              {"previous_response_id", "resp_a_0" + r.tag(0)},
              {"input", {{{"type", "input_file"}, {"file_id", "file-b_0" + r.tag(1)}}}}});
  EXPECT_EQ(both.status, 400u);
  EXPECT_EQ(json::parse(both.body)["error"]["code"], "resource_conflict");
  EXPECT_EQ(r.calls(0) + r.calls(1) + r.calls(2), 0u);

  // A tag this configuration does not have (a resource since removed): dropped, the id untagged.
  const std::string id = r.stores[1]->create_response();
  const HttpResponse old = r.call("GET", "/v1/responses/" + id + "-slbaaaaaaaa");
  EXPECT_EQ(old.status, 200u) << old.body;
  EXPECT_EQ(r.mocks[1]->last_request().target, "/v1/responses/" + id);
}

TEST(StatefulIds, BothUrlStylesAreTaggedAndStripped) {
  ThreeResources r;
  r.start();
  const std::string untagged = r.stores[1]->create_response();
  const std::string id = untagged + r.tag(1);
  const HttpResponse azure = r.call("GET", "/openai/responses/" + id + "?api-version=2025-04-01-preview");
  EXPECT_EQ(azure.status, 200u) << azure.body;
  EXPECT_EQ(json::parse(azure.body)["id"], id);
  EXPECT_EQ(r.mocks[1]->last_request().target,
            "/openai/responses/" + untagged + "?api-version=2025-04-01-preview");
  const HttpResponse v1 = r.call("GET", "/openai/v1/responses/" + id);
  EXPECT_EQ(json::parse(v1.body)["id"], id);
  EXPECT_EQ(r.mocks[1]->last_request().target, "/openai/v1/responses/" + untagged);
  EXPECT_EQ(r.calls(0) + r.calls(2), 0u);
}

}  // namespace stateful_test
}  // namespace smartlb::testing
