// The model catalog: which requests ask for it, the names a caller may ask for, and their shapes.
#include "smartlb/net/model_catalog.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"
#include "smartlb/config/config_file.hpp"

namespace smartlb::net {
namespace model_catalog_test {  // named, not anonymous: tests/CMakeLists.txt

const config::EnvMap kUrls{{"EAST", "http://east.example"}, {"WEST", "http://west.example"}};

std::shared_ptr<const Snapshot> snapshot_of(const std::string& yaml) {
  auto r = config::load_config_text(kUrls, yaml, "t.yaml");
  EXPECT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0]);
  routing::BackendIds ids;
  return make_snapshot(*r.config, ids);
}

const char* kConfig = R"(
backends:
  - {name: east, url: "${EAST}"}
  - {name: west, url: "${WEST}"}
targets:
  - {id: east/gpt-4o, backend: east, deployment: gpt4o-prod, aliases: [gpt4o]}
  - {id: west/gpt-4o, backend: west}
  - {id: east/o3, backend: east}
rules:
  - id: chat
    type: weight-based-routing
    when: {models: [gpt-4o, gpt-4o-latest]}
    load_balance_targets: [{target: east/gpt-4o}, {target: west/gpt-4o}]
  - id: research
    type: priority-based-routing
    when: {subjects: ["team:research"]}
    load_balance_targets: [{target: east/o3}]
)";

TEST(ModelCatalog, WhichRequestsAskForIt) {
  EXPECT_EQ(catalog_request("GET", "/v1/models", false)->model, "");
  EXPECT_FALSE(catalog_request("GET", "/v1/models", false)->anthropic);
  EXPECT_TRUE(catalog_request("GET", "/v1/models", true)->anthropic) << "an anthropic-version header";
  EXPECT_TRUE(catalog_request("GET", "/anthropic/v1/models", false)->anthropic);
  EXPECT_EQ(catalog_request("GET", "/openai/models", false)->model, "");
  EXPECT_EQ(catalog_request("GET", "/openai/v1/models/gpt-4o", false)->model, "gpt-4o");
  EXPECT_FALSE(catalog_request("POST", "/v1/models", false));
  EXPECT_FALSE(catalog_request("GET", "/v1/modelsx", false));
  EXPECT_FALSE(catalog_request("GET", "/v1/models/", false));
  EXPECT_FALSE(catalog_request("GET", "/v1/models/a/b", false));
}

TEST(ModelCatalog, TheNamesACallersRulesLetItReach) {
  const auto snap = snapshot_of(kConfig);
  const std::vector<std::string> none;
  EXPECT_EQ(catalog_names(*snap, none), (std::vector<std::string_view>{"gpt-4o", "gpt-4o-latest"}))
      << "a rule's when.models; the research rule needs a subject";
  const std::vector<std::string> research{"team:research"};
  EXPECT_EQ(catalog_names(*snap, research), (std::vector<std::string_view>{"gpt-4o", "gpt-4o-latest", "o3"}))
      << "a rule without models lists what its targets serve";
}

TEST(ModelCatalog, TargetsWithoutModelsListTheirDeploymentsAliasesAndIdTails) {
  const auto snap = snapshot_of(R"(
backends:
  - {name: east, url: "http://east.example"}
targets:
  - {id: east/gpt-4o, backend: east, deployment: gpt4o-prod, aliases: [gpt4o]}
rules:
  - id: all
    type: priority-based-routing
    load_balance_targets: [{target: east/gpt-4o}]
)");
  EXPECT_EQ(catalog_names(*snap, {}), (std::vector<std::string_view>{"gpt-4o", "gpt4o", "gpt4o-prod"}));
}

TEST(ModelCatalog, EnvironmentBackendsListOnlyTheirDeploymentNames) {
  config::Config cfg;
  config::BackendConfig a;
  a.name = "a";
  a.deployment_name = "gpt-4o-prod";
  config::BackendConfig b;
  b.name = "b";  // passes any name through: nothing to list for it
  cfg.backends = {a, b};
  routing::BackendIds ids;
  EXPECT_EQ(catalog_names(*make_snapshot(cfg, ids), {}), (std::vector<std::string_view>{"gpt-4o-prod"}));
  cfg.backends = {b};
  EXPECT_TRUE(catalog_names(*make_snapshot(cfg, ids), {}).empty())
      << "no catalog: the list goes to a backend";
}

TEST(ModelCatalog, OpenAisAndAnthropicsShapes) {
  const std::vector<std::string_view> names{"a", "b"};
  const auto openai = nlohmann::json::parse(catalog_json(names, false, 1'700'000'000));
  EXPECT_EQ(openai["object"], "list");
  EXPECT_EQ(openai["data"][1]["id"], "b");
  EXPECT_EQ(openai["data"][1]["object"], "model");
  EXPECT_EQ(openai["data"][1]["created"], 1'700'000'000);
  const auto anthropic = nlohmann::json::parse(catalog_json(names, true, 1'700'000'000));
  EXPECT_EQ(anthropic["data"][0]["type"], "model");
  EXPECT_EQ(anthropic["data"][0]["created_at"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(anthropic["first_id"], "a");
  EXPECT_EQ(anthropic["last_id"], "b");
  EXPECT_FALSE(anthropic["has_more"]);
  EXPECT_EQ(nlohmann::json::parse(catalog_entry_json("a", false, 1))["id"], "a");
}

TEST(ModelCatalog, SmartlbAnswersTheListAndOneModelWithoutCallingABackend) {
  testing::MockBackend backend([](const testing::SeenRequest&) {
    return testing::MockReply{200, {}, R"({"data":[]})"};
  });
  testing::ProxyHarness p;
  ASSERT_EQ(p.use_config_text({{"EAST", backend.url()}, {"WEST", backend.url()}}, kConfig), "");
  p.start();
  auto r = testing::http_call(p.port(), "GET", "/v1/models");
  ASSERT_EQ(r.status, 200u) << r.body;
  EXPECT_EQ(nlohmann::json::parse(r.body)["data"].size(), 2u);
  r = testing::http_call(p.port(), "GET", "/openai/models/gpt-4o-latest?api-version=2024-10-21");
  EXPECT_EQ(nlohmann::json::parse(r.body)["id"], "gpt-4o-latest");
  r = testing::http_call(p.port(), "GET", "/v1/models/o3");
  EXPECT_EQ(r.status, 404u) << "not for this caller";
  EXPECT_NE(r.body.find("model_not_found"), std::string::npos);
  EXPECT_EQ(backend.request_count(), 0u);
}

TEST(ModelCatalog, OffTheListGoesToABackend) {
  testing::MockBackend backend([](const testing::SeenRequest&) {
    return testing::MockReply{200, {}, R"({"data":[]})"};
  });
  testing::ProxyHarness p;
  p.add_backend("b", backend.url()).deployment_name = "gpt-4o";
  p.cfg.model_catalog = false;
  p.start();
  EXPECT_EQ(testing::http_call(p.port(), "GET", "/v1/models").body, R"({"data":[]})");
  EXPECT_EQ(backend.request_count(), 1u);
}

}  // namespace model_catalog_test
}  // namespace smartlb::net
