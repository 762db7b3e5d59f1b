// A snapshot's resources (docs/stateful-apis.md): which backends share one, its tag, and the
// rules a request pinned to it routes by.
#include <gtest/gtest.h>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "smartlb/config/config_file.hpp"
#include "smartlb/net/snapshot.hpp"

namespace smartlb::net {
namespace snapshot_resources_test {  // named, not anonymous: tests/CMakeLists.txt

config::BackendConfig backend(const std::string& name, const std::string& url,
                              const std::string& resource = "") {
  config::BackendConfig b;
  b.name = name;
  b.url = *config::parse_backend_url(url).url;
  b.resource = resource;
  return b;
}

std::vector<std::string> names(const Snapshot& s, const Resource& r) {
  std::vector<std::string> out;
  for (std::size_t b : r.backends) out.push_back(s.backends[b].name);
  return out;
}
using Names = std::vector<std::string>;

TEST(SnapshotResources, BackendsOfOneOriginAndBasePathShareAResource) {
  config::Config cfg;
  cfg.backends = {backend("a-key1", "https://res-a.openai.azure.com"),
                  backend("b", "https://res-b.openai.azure.com"),
                  backend("a-key2", "https://RES-A.openai.azure.com/openai"),
                  backend("a-v1", "https://res-a.openai.azure.com/openai/v1")};
  routing::BackendIds ids;
  const auto s = make_snapshot(cfg, ids);
  ASSERT_EQ(s->resources.size(), 2u);
  EXPECT_EQ(s->resources[0].name, "https://res-a.openai.azure.com");
  EXPECT_EQ(names(*s, s->resources[0]), (Names{"a-key1", "a-key2", "a-v1"}));
  EXPECT_EQ(s->resources[1].name, "https://res-b.openai.azure.com");
  EXPECT_EQ(s->resource_of, (std::vector<std::uint32_t>{0, 1, 0, 0}));
  EXPECT_EQ(s->resources[0].tag.view(), "-slb4bzqkc2s");
  EXPECT_EQ(s->resource_tagged(s->resources[1].tag.bits), &s->resources[1]);
  EXPECT_EQ(s->resource_tagged(stateful::resource_tag("https://res-c.openai.azure.com").bits), nullptr);
}

TEST(SnapshotResources, AConfiguredResourceMergesOrSplitsBackends) {
  config::Config cfg;
  cfg.backends = {backend("project-a", "https://api.openai.com/v1", "openai-project-a"),
                  backend("project-b", "https://api.openai.com/v1", "openai-project-b"),
                  backend("gateway", "https://gw.example.com/team", "https://api.openai.com")};
  routing::BackendIds ids;
  const auto s = make_snapshot(cfg, ids);
  ASSERT_EQ(s->resources.size(), 3u);
  EXPECT_EQ(s->resources[0].name, "openai-project-a");
  EXPECT_EQ(s->resources[2].name, "https://api.openai.com") << "named as another URL's origin: one with it";
  EXPECT_EQ(s->resources[0].tag, stateful::resource_tag("openai-project-a"));
}

TEST(SnapshotResources, EachRuleIsRestrictedToEachResourceItHasMembersOn) {
  const auto loaded = config::load_config_text({}, R"(
backends:
  - {name: a1, url: "https://res-a.openai.azure.com"}
  - {name: a2, url: "https://res-a.openai.azure.com", priority: 2}
  - {name: b, url: "https://res-b.openai.azure.com"}
  - {name: c, url: "https://res-c.openai.azure.com"}
targets:
  - {id: a1/gpt-4o, backend: a1, deployment: gpt-4o-a}
  - {id: a2/gpt-4o, backend: a2, deployment: gpt-4o}
  - {id: b/gpt-4o, backend: b, deployment: gpt-4o}
rules:
  - id: chat
    type: priority-based-routing
    when: {models: [gpt-4o]}
    load_balance_targets:
      - {target: a1/gpt-4o}
      - {target: b/gpt-4o}
      - {target: a2/gpt-4o, priority: 3}
)",
                                               "f.yaml");
  ASSERT_TRUE(loaded.config) << loaded.errors[0];
  routing::BackendIds ids;
  const auto s = make_snapshot(*loaded.config, ids);
  ASSERT_EQ(s->resources.size(), 3u);
  const Rule& chat = s->rules[0];
  EXPECT_EQ(chat.resource_at, (std::vector<std::uint32_t>{0, 1, 0}));
  ASSERT_EQ(chat.on_resource.size(), 3u);
  ASSERT_TRUE(chat.on_resource[0]);
  const Rule& on_a = *chat.on_resource[0];
  ASSERT_EQ(on_a.table.size(), 2u);
  EXPECT_EQ(on_a.table.member(0).name, "a1");
  EXPECT_EQ(on_a.table.member(1).priority, 3) << "the rule's own priorities";
  EXPECT_EQ(on_a.route[0].upstream_name, "gpt-4o-a") << "and its renames";
  EXPECT_EQ(on_a.table.member(0).id, chat.table.member(0).id) << "one backend, one state";
  ASSERT_TRUE(chat.on_resource[1]);
  EXPECT_EQ(chat.on_resource[1]->table.size(), 1u);
  EXPECT_FALSE(chat.on_resource[2]) << "the rule has no member on res-c";

  // A resource's own rule: every backend on it, by the backend's priority, without renames.
  const Rule& res_a = *s->resources[0].rule;
  ASSERT_EQ(res_a.table.size(), 2u);
  EXPECT_EQ(res_a.table.member(1).name, "a2");
  EXPECT_EQ(res_a.table.member(1).priority, 2);
  EXPECT_EQ(res_a.route[0].upstream_name, "");
  EXPECT_EQ(s->resources[2].rule->table.member(0).name, "c");
  EXPECT_EQ(s->any_backend->table.size(), 4u);
}

TEST(SnapshotResources, TwoResourcesWithOneTagAreSaidAtLoadAndTheFirstKeepsIt) {
  // Found by search: the high 40 bits of their FNV-1a-64 are equal.
  ASSERT_EQ(stateful::resource_tag("resource-1807888"), stateful::resource_tag("resource-3769267"));
  config::Config cfg;
  cfg.backends = {backend("first", "https://a.example.com", "resource-1807888"),
                  backend("second", "https://b.example.com", "resource-3769267")};
  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(8);
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", sink));
  routing::BackendIds ids;
  const auto s = make_snapshot(cfg, ids);
  spdlog::set_default_logger(previous);
  ASSERT_EQ(s->resources.size(), 2u);
  EXPECT_EQ(s->resource_tagged(s->resources[1].tag.bits), &s->resources[0]);
  const auto lines = sink->last_formatted();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("backends first and second have the same tag -slbcmijasoi"), std::string::npos)
      << lines[0];
}

}  // namespace snapshot_resources_test
}  // namespace smartlb::net
