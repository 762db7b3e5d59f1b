// The stateful phase without sockets (net/stateful_route): what a request loses of its tags,
// where it is placed, and which rule each try routes by.
#include <gtest/gtest.h>

#include "smartlb/config/config_file.hpp"
#include "smartlb/net/stateful_route.hpp"

namespace smartlb::net {
namespace stateful_route_test {  // named, not anonymous: tests/CMakeLists.txt

struct Placed {
  explicit Placed(std::shared_ptr<const Snapshot> s) : snap(std::move(s)) {}
  std::shared_ptr<const Snapshot> snap;
  LearntPlacements learnt;
  http1::RequestHead req;
  http::RequestTarget target;
  StatefulRoute route;
  std::optional<std::string> refused;

  void prepare(const std::string& target_text, const std::string& body = "") {
    req.target = target_text;
    req.body = body;
    target = *http::parse_request_target(req.target);
    refused = route.prepare(*snap, req, target, learnt);
  }
  std::string upstream_target() const {
    std::string out;
    append_upstream_target(out, "", target, "");
    return out;
  }
};

std::shared_ptr<const Snapshot> three_resources(routing::BackendIds& ids) {
  const auto loaded = config::load_config_text({}, R"(
backends:
  - {name: a, url: "https://res-a.openai.azure.com"}
  - {name: b, url: "https://res-b.openai.azure.com"}
  - {name: c, url: "https://res-c.openai.azure.com"}
targets: [{id: a/gpt-4o, backend: a}, {id: b/gpt-4o, backend: b}]
rules:
  - id: chat
    type: priority-based-routing
    when: {models: [gpt-4o]}
    load_balance_targets: [{target: a/gpt-4o}, {target: b/gpt-4o}]
)",
                                               "f.yaml");
  EXPECT_TRUE(loaded.config) << loaded.errors[0];
  return make_snapshot(*loaded.config, ids);
}

std::string tag(const Snapshot& s, std::size_t r) { return std::string(s.resources[r].tag.view()); }

TEST(StatefulRoute, ATaggedPathSegmentAndAfterLoseTheirTagsAndPinTheRequest) {
  routing::BackendIds ids;
  Placed p{three_resources(ids)};
  const std::string b = tag(*p.snap, 1);
  p.prepare("/openai/v1/responses/resp_1" + b + "/input_items?limit=2&after=msg_9" + b + "&order=asc");
  EXPECT_FALSE(p.refused);
  EXPECT_EQ(p.upstream_target(), "/openai/v1/responses/resp_1/input_items?limit=2&after=msg_9&order=asc");
  EXPECT_EQ(p.req.target,
            "/openai/v1/responses/resp_1" + b + "/input_items?limit=2&after=msg_9" + b + "&order=asc")
      << "the client's own request is not changed";
  EXPECT_TRUE(p.route.looks_for_object());
  EXPECT_FALSE(p.route.untagged_try());
  EXPECT_TRUE(p.route.tags_answers());
  const Rule* chat = &p.snap->rules[0];
  EXPECT_EQ(p.route.rule(*p.snap, chat, true), chat->on_resource[1].get()) << "the rule's backends on b";
  EXPECT_EQ(p.route.rule(*p.snap, nullptr, false), p.snap->resources[1].rule.get()) << "no model: any on b";
  EXPECT_EQ(p.route.rule(*p.snap, nullptr, true), nullptr) << "a model no rule serves: 404 as ever";
}

TEST(StatefulRoute, APinnedRuleWithoutBackendsThereUsesTheResourcesOwn) {
  routing::BackendIds ids;
  Placed p{three_resources(ids)};
  p.prepare("/v1/files/file-1" + tag(*p.snap, 2));
  EXPECT_EQ(p.route.rule(*p.snap, &p.snap->rules[0], true), p.snap->resources[2].rule.get());
}

TEST(StatefulRoute, BodyTagsComeOffAndTheFirstInPinOrderWins) {
  routing::BackendIds ids;
  Placed p{three_resources(ids)};
  const std::string a = tag(*p.snap, 0), b = tag(*p.snap, 1);
  p.prepare("/v1/responses", R"({"input":[{"file_id":"file-1)" + b + R"("}],"previous_response_id":"resp_0)" +
                                 a + R"(","model":"gpt-4o"})");
  EXPECT_EQ(*p.refused,
            "The ids of this request were made on two different resources (a and b); a request can only use "
            "objects of one.")
      << "resources are named by their backends' names: a URL never reaches an API client";

  Placed q{p.snap};
  q.prepare("/v1/responses",
            R"({"model":"gpt-4o", "previous_response_id" : "resp_0)" + a + R"(", "metadata": {"k": "v"}})");
  EXPECT_FALSE(q.refused);
  EXPECT_EQ(q.req.body, R"({"model":"gpt-4o", "previous_response_id" : "resp_0", "metadata": {"k": "v"}})");
  EXPECT_EQ(q.route.rule(*q.snap, &q.snap->rules[0], true), q.snap->rules[0].on_resource[0].get());
}

TEST(StatefulRoute, UntaggedIdsTryEachResourceTheLearntOneFirst) {
  routing::BackendIds ids;
  Placed p{three_resources(ids)};
  p.learnt.learn("resp_7", p.snap->resources[2].tag.bits);
  p.prepare("/v1/responses/resp_7");
  ASSERT_TRUE(p.route.untagged_try());
  EXPECT_EQ(p.route.rule(*p.snap, nullptr, false), p.snap->resources[2].rule.get());
  ASSERT_TRUE(p.route.next_resource());
  EXPECT_EQ(p.route.rule(*p.snap, nullptr, false), p.snap->resources[0].rule.get());
  ASSERT_TRUE(p.route.next_resource());
  EXPECT_EQ(p.route.rule(*p.snap, nullptr, false), p.snap->resources[1].rule.get());
  EXPECT_FALSE(p.route.next_resource());

  p.route.answered(*p.snap, 1, p.learnt);  // backend b answered
  EXPECT_EQ(p.learnt.find("resp_7"), p.snap->resources[1].tag.bits);
}

TEST(StatefulRoute, AnUntaggedTurnWithARuleTriesTheRulesResourcesOnly) {
  routing::BackendIds ids;
  Placed p{three_resources(ids)};
  p.prepare("/v1/responses", R"({"model":"gpt-4o","previous_response_id":"resp_1"})");
  const Rule* chat = &p.snap->rules[0];
  p.route.keep_resources_of(chat);
  EXPECT_EQ(p.route.rule(*p.snap, chat, true), chat->on_resource[0].get());
  ASSERT_TRUE(p.route.next_resource());
  EXPECT_EQ(p.route.rule(*p.snap, chat, true), chat->on_resource[1].get());
  EXPECT_FALSE(p.route.next_resource()) << "c has no gpt-4o";
}

TEST(StatefulRoute, RequestsThatNameNoObjectRouteAsUsual) {
  routing::BackendIds ids;
  Placed p{three_resources(ids)};
  p.prepare("/v1/responses", R"({"model":"gpt-4o","input":"hi"})");
  EXPECT_FALSE(p.route.looks_for_object());
  EXPECT_EQ(p.route.rule(*p.snap, &p.snap->rules[0], true), &p.snap->rules[0]);
  EXPECT_EQ(p.route.rule(*p.snap, nullptr, false), p.snap->any_backend.get()) << "GET /v1/files";

  Placed chat{p.snap};
  chat.prepare("/openai/deployments/gpt-4o/chat/completions?api-version=1", R"({"messages":[]})");
  EXPECT_FALSE(chat.route.tags_answers());
  EXPECT_EQ(chat.route.rule(*chat.snap, nullptr, false), nullptr) << "a stateless request needs its rule";

  Placed content{p.snap};
  content.prepare("/v1/files/file-1/content");
  EXPECT_FALSE(content.route.tags_answers()) << "a file's bytes are the client's";
}

TEST(StatefulRoute, ATagNoResourceHasIsDroppedAndTheIdTriedUntagged) {
  routing::BackendIds ids;
  Placed p{three_resources(ids)};
  p.prepare("/v1/batches/batch_1-slbaaaaaaaa");
  EXPECT_FALSE(p.refused);
  EXPECT_EQ(p.upstream_target(), "/v1/batches/batch_1");
  EXPECT_TRUE(p.route.untagged_try());
  p.route.answered(*p.snap, 2, p.learnt);
  EXPECT_EQ(p.learnt.find("batch_1"), p.snap->resources[2].tag.bits);
}

}  // namespace stateful_route_test
}  // namespace smartlb::net
