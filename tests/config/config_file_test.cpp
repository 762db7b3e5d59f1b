// What the loader builds from a file (the Config a test can look into), and the properties a
// golden file cannot hold: secrets never shown, the schema held to the keys. What --check-config
// prints for a file -- its summary, or its errors and warnings word for word -- is held by the
// golden files of tests/config/golden/ (golden_test.cpp).
#include "smartlb/config/config_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "load_result.hpp"

namespace smartlb {
namespace config_file_test {  // named, not anonymous: tests/CMakeLists.txt

const char* kGood = R"(
name: loadbalancing-config
type: gateway-load-balancing-config
backends:
  - name: eastus
    url: https://contoso-eastus.openai.azure.com
    api_key: ${EASTUS_KEY}
  - name: oai
    url: https://api.openai.com
    api_key: sk-test-1234567890
    priority: 2
targets:
  - id: eastus/gpt-4o
    backend: eastus
    deployment: gpt-4o-0806
  - id: oai/gpt-4o
    backend: oai
    model: gpt-4o
clients:
  - name: search-app
    key: ${SEARCH_KEY}
    subjects: [team:search, user:alice]
rules:
  - id: search-dev
    type: weight-based-routing
    when:
      subjects: [team:search]
      models: [gpt-4o]
      metadata: {env: dev}
    load_balance_targets:
      - target: eastus/gpt-4o
        weight: 70
        override_params:
          temperature: 0.5
          max_tokens: 800
          user: null
          stop: "7"
      - target: oai/gpt-4o
        weight: 30
  - id: fast
    type: latency-based-routing
    config:
      lookback_window_minutes: 5
      allowed_latency_overhead_percentage: 25
    load_balance_targets:
      - target: eastus/gpt-4o
      - target: oai/gpt-4o
model_configs:
  - model: eastus/gpt-4o
    usage_limits: {tokens_per_minute: 50000, requests_per_minute: 300}
    failure_tolerance: {allowed_failures_per_minute: 3, cooldown_period_minutes: 5}
  - model: gpt-4o
    usage_limits: {tokens_per_minute: 1000}
)";

config::EnvMap good_env() {
  return {{"EASTUS_KEY", "eastus-secret-key"}, {"SEARCH_KEY", "search-app-key-1"}};
}

TEST(ConfigFile, ReadsTrueFoundryRulesWithOurBackendsTargetsAndClients) {
  const auto r = config::load_config_text(good_env(), kGood, "smartlb.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  const config::Config& c = *r.config;
  ASSERT_EQ(c.backends.size(), 2u);
  EXPECT_EQ(c.backends[0].api_key, "eastus-secret-key");
  EXPECT_TRUE(c.backends[0].azure_host);
  EXPECT_EQ(c.backends[1].priority, 2);
  ASSERT_EQ(c.policy.targets.size(), 2u);
  EXPECT_EQ(c.policy.targets[0].upstream_name, "gpt-4o-0806");
  // model_configs: the target's own entry wins over the model name's.
  EXPECT_EQ(c.policy.targets[0].tpm, 50000);
  EXPECT_EQ(c.policy.targets[0].rpm, 300);
  ASSERT_TRUE(c.policy.targets[0].allowed_failures_per_minute);
  EXPECT_EQ(*c.policy.targets[0].allowed_failures_per_minute, 3u);
  EXPECT_EQ(c.policy.targets[0].breaker_cooldown, std::chrono::minutes(5));
  EXPECT_EQ(c.policy.targets[1].tpm, 1000);
  ASSERT_EQ(c.policy.rules.size(), 2u);  // no env backends: no implicit rule after the file's
  const config::RuleConfig& rule = c.policy.rules[0];
  EXPECT_EQ(rule.type, config::RuleType::Weight);
  EXPECT_EQ(rule.subjects, std::vector<std::string>{"team:search"});
  ASSERT_EQ(rule.metadata.size(), 1u);
  EXPECT_EQ(rule.metadata[0].second, "dev");
  ASSERT_EQ(rule.targets.size(), 2u);
  EXPECT_EQ(rule.targets[0].weight, 70u);
  const auto& o = rule.targets[0].override_params;
  ASSERT_EQ(o.size(), 4u);
  EXPECT_EQ(o[0].second, "0.5");
  EXPECT_EQ(o[1].second, "800");
  EXPECT_FALSE(o[2].second);        // null: remove the key
  EXPECT_EQ(o[3].second, "\"7\"");  // quoted: a string
  EXPECT_EQ(c.policy.rules[1].type, config::RuleType::Latency);
  EXPECT_EQ(c.policy.rules[1].lookback, std::chrono::minutes(5));
  EXPECT_DOUBLE_EQ(c.policy.rules[1].allowed_latency_overhead_percentage, 25);
  ASSERT_EQ(c.policy.clients.size(), 1u);
  EXPECT_EQ(c.policy.clients[0].key, "search-app-key-1");
  EXPECT_EQ(c.policy.hash.size(), 64u);
  EXPECT_EQ(c.policy.file, "smartlb.yaml");
}

TEST(ConfigFile, JsonIsAcceptedToo) {
  const char* json = R"({"backends": [{"name": "a", "url": "http://127.0.0.1:9"}],
    "targets": [{"id": "a/m", "backend": "a", "model": "m"}],
    "rules": [{"id": "r", "type": "priority-based-routing", "load_balance_targets": [{"target": "a/m"}]}]})";
  const auto r = config::load_config_text({}, json, "smartlb.json");
  ASSERT_TRUE(r.config) << all_errors(r);
  EXPECT_EQ(r.config->policy.rules.size(), 1u);
}

TEST(ConfigFile, EnvBackendsFormTheImplicitDefaultRuleAfterTheFilesRules) {
  config::EnvMap env = good_env();
  env["BACKEND_1_URL"] = "http://127.0.0.1:9";
  env["BACKEND_1_DEPLOYMENT_NAME"] = "fixed";
  env["BACKEND_1_PRIORITY"] = "3";
  const auto r = config::load_config_text(env, kGood, "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  const auto& rules = r.config->policy.rules;
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_TRUE(rules.back().implicit);
  ASSERT_EQ(rules.back().targets.size(), 1u);
  EXPECT_EQ(rules.back().targets[0].target, "backend-1");
  EXPECT_EQ(rules.back().targets[0].priority, 3);
  EXPECT_EQ(r.config->backends.size(), 3u);
}

TEST(ConfigFile, AFileWithoutRulesRoutesEveryBackendByPriority) {
  const auto r = config::load_config_text(
      {{"BACKEND_1_URL", "http://127.0.0.1:9"}},
      "backends:\n  - name: b\n    url: http://127.0.0.1:10\n    weight: 4\n", "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  ASSERT_EQ(r.config->policy.rules.size(), 1u);
  const config::RuleConfig& rule = r.config->policy.rules[0];
  EXPECT_TRUE(rule.implicit);
  EXPECT_EQ(rule.type, config::RuleType::Priority);
  ASSERT_EQ(rule.targets.size(), 2u);
  EXPECT_EQ(rule.targets[1].weight, 4u);
}

TEST(ConfigFile, EnvOnlyStillGetsTheImplicitRule) {
  const auto r = config::load_config(
      {{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"BACKEND_2_URL", "http://127.0.0.1:10"}});
  ASSERT_TRUE(r.config) << all_errors(r);
  ASSERT_EQ(r.config->policy.rules.size(), 1u);
  EXPECT_EQ(r.config->policy.rules[0].targets.size(), 2u);
  EXPECT_TRUE(r.config->policy.file.empty());
}

// An alias repeats its anchor's mapping: walked once, so a duplicate in it is reported once and
// a document of nested aliases costs no more than its text.
TEST(ConfigFile, AnAliasedMappingIsCheckedOnce) {
  const char* text = R"(
backends:
  - &b {name: a, url: "http://127.0.0.1:9", url: "http://127.0.0.1:10"}
targets: [{id: a/m, backend: a, aliases: [*b, *b, *b]}]
)";
  const auto r = config::load_config_text({}, text, "f.yaml");
  std::size_t reports = 0;
  for (const auto& e : r.errors) reports += e.find("\"url\" is given twice") != std::string::npos;
  EXPECT_EQ(reports, 1u) << all_errors(r);
}

TEST(ConfigFile, SecretsNeverAppearInErrors) {
  config::EnvMap env = good_env();
  env["SEARCH_KEY"] = "short";  // too short: refused without being shown
  env["EASTUS_KEY"] = "has space";
  const auto r = config::load_config_text(env, kGood, "f.yaml");
  EXPECT_FALSE(r.config);
  for (const auto& e : r.errors) {
    EXPECT_EQ(e.find("short\""), std::string::npos) << e;
    EXPECT_EQ(e.find("has space"), std::string::npos) << e;
  }
}

TEST(ConfigFile, DollarDollarBraceIsALiteral) {
  const char* text =
      "backends: [{name: a, url: \"http://127.0.0.1:9\"}]\n"
      "targets: [{id: a/m, backend: a}]\n"
      "rules: [{id: r, type: weight-based-routing, load_balance_targets: [{target: a/m, override_params: {x: "
      "\"$${HOME}\"}}]}]\n";
  const auto r = config::load_config_text({}, text, "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  EXPECT_EQ(r.config->policy.rules[0].targets[0].override_params[0].second, "\"${HOME}\"");
}

TEST(ConfigFile, KeyHashesAreNormalised) {
  const auto r = config::load_config_text(
      {{"BACKEND_1_URL", "http://127.0.0.1:9"}},
      "clients: [{name: c, key_sha256: "
      "\"sha256:9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08\"}]\n",
      "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  EXPECT_EQ(r.config->policy.clients[0].key_sha256,
            "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
}

TEST(ConfigFile, ReadsClientAndSubjectBudgets) {
  const auto r =
      config::load_config_text({{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"K", "search-app-key-1"}},
                               R"(clients:
  - name: search
    key: ${K}
    subjects: [team:search]
    limits: {tokens_per_minute: 20000, requests_per_minute: 100, tokens_per_day: 1000000}
subject_limits:
  - subject: team:search
    shared: true
    limits: {tokens_per_month: 50000000}
  - subject: "*"
    limits: {requests_per_minute: 60, max_in_flight: 4}
)",
                               "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  const config::Policy& p = r.config->policy;
  EXPECT_EQ(p.clients[0].limits,
            (config::ClientLimits{
                .tokens_per_minute = 20000, .requests_per_minute = 100, .tokens_per_day = 1000000}));
  ASSERT_EQ(p.subject_limits.size(), 2u);
  EXPECT_EQ(p.subject_limits[0].subject, "team:search");
  EXPECT_TRUE(p.subject_limits[0].shared);
  EXPECT_EQ(p.subject_limits[0].limits.tokens_per_month, 50000000);
  EXPECT_FALSE(p.subject_limits[1].shared);
  EXPECT_EQ(p.subject_limits[1].limits.max_in_flight, 4);
  EXPECT_NE(
      describe_routing(*r.config).find("budget of every caller (each its own): 60 requests/min, 4 in flight"),
      std::string::npos)
      << describe_routing(*r.config);
}

TEST(ConfigFile, LoadConfigReadsTheFileNamedByConfigFile) {
  const std::string path = ::testing::TempDir() + "smartlb_config_file_test.yaml";
  {
    std::ofstream out(path);
    out << "backends: [{name: a, url: \"http://127.0.0.1:9\"}]\n";
  }
  const auto r = config::load_config({{"CONFIG_FILE", path}});
  ASSERT_TRUE(r.config) << all_errors(r);
  EXPECT_EQ(r.config->policy.file, path);
  std::remove(path.c_str());
  const auto missing = config::load_config({{"CONFIG_FILE", path}});
  EXPECT_TRUE(has_error(missing, "CONFIG_FILE: cannot read the file")) << all_errors(missing);
  const auto flag = config::load_config({}, path);
  EXPECT_TRUE(has_error(flag, "--config: cannot read the file")) << all_errors(flag);
}

TEST(ConfigFile, DescribeRoutingSummarisesRulesAndTargets) {
  const auto r = config::load_config_text(good_env(), kGood, "smartlb.yaml");
  ASSERT_TRUE(r.config);
  const std::string s = describe_routing(*r.config);
  EXPECT_NE(
      s.find("rule search-dev: weight-based-routing, subject team:search, model gpt-4o, metadata env=dev"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("-> eastus/gpt-4o (as gpt-4o-0806 on eastus) weight 70, 4 override(s)"), std::string::npos)
      << s;
  EXPECT_EQ(s.find("eastus-secret-key"), std::string::npos);
  // The first line says where the configuration came from, as the start and reload lines do.
  EXPECT_EQ(s.rfind(describe_source(*r.config) + "\n", 0), 0u) << s;
  EXPECT_EQ(describe_source(*r.config).rfind("2 backend(s), 2 rule(s) from smartlb.yaml (sha256 ", 0), 0u)
      << describe_source(*r.config);
}

// config/smartlb.schema.json lists exactly the keys the loader takes, section by section.
TEST(ConfigFile, TheJsonSchemaKnowsExactlyTheKeysTheLoaderTakes) {
  std::ifstream in(std::string(SMARTLB_SOURCE_DIR) + "/config/smartlb.schema.json");
  ASSERT_TRUE(in);
  const auto schema = nlohmann::json::parse(in);
  const auto& defs = schema["definitions"];
  const auto props = [](const nlohmann::json& object) {
    std::vector<std::string> out;
    for (const auto& [k, v] : object["properties"].items()) out.push_back(k);
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::map<std::string, nlohmann::json> sections = {
      {"", schema},
      {"backends", defs["backend"]},
      {"backends.entra", defs["backend"]["properties"]["entra"]},
      {"targets", defs["target"]},
      {"clients", defs["client"]},
      {"clients.limits", defs["limits"]},
      {"subject_limits", defs["subject_limit"]},
      {"subject_limits.limits", defs["limits"]},
      {"priority_classes", defs["priority_class"]},
      {"token_issuers", defs["token_issuer"]},
      {"rules", defs["rule"]},
      {"rules.when", defs["rule"]["properties"]["when"]},
      {"rules.load_balance_targets", defs["rule_target"]},
      {"rules.load_balance_targets.retry_config", defs["rule_target"]["properties"]["retry_config"]},
      {"virtual_models", defs["virtual_model_account"]},
      {"virtual_models.integrations", defs["virtual_model"]},
      {"virtual_models.integrations.routing_config", defs["virtual_model"]["properties"]["routing_config"]},
      {"virtual_models.integrations.routing_config.sticky_routing",
       defs["virtual_model"]["properties"]["routing_config"]["properties"]["sticky_routing"]},
      {"virtual_models.integrations.routing_config.sticky_routing.session_identifiers",
       defs["virtual_model"]["properties"]["routing_config"]["properties"]["sticky_routing"]["properties"]
           ["session_identifiers"]["items"]},
      {"rules.config", defs["rule"]["properties"]["config"]},
      {"model_configs", defs["model_config"]},
      {"model_configs.usage_limits", defs["model_config"]["properties"]["usage_limits"]},
      {"model_configs.failure_tolerance", defs["model_config"]["properties"]["failure_tolerance"]},
      {"redis", schema["properties"]["redis"]},
      {"admin", schema["properties"]["admin"]},
      {"admin.tokens", defs["admin_token"]},
      {"prices", schema["properties"]["prices"]},
      {"prices.models", defs["model_price"]}};
  const auto keys = config::config_file_keys();
  ASSERT_EQ(keys.size(), sections.size());
  for (const auto& [section, object] : sections) {
    ASSERT_TRUE(keys.count(section)) << section;
    auto expected = keys.at(section);
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(props(object), expected) << "section \"" << section << "\"";
    EXPECT_EQ(object.value("additionalProperties", true), false) << "section \"" << section << "\"";
  }
}

// Found by fuzz_config_file: an override whose string is not UTF-8 made nlohmann's dump throw.
TEST(ConfigFile, AnOverrideThatIsNotUtf8IsAnErrorNotACrash) {
  const std::string text =
      "backends: [{name: a, url: \"http://127.0.0.1:9\"}]\n"
      "targets: [{id: t, backend: a}]\n"
      "rules: [{id: r, type: weight-based-routing, load_balance_targets: [{target: t, override_params: {x: "
      "\"\xff\xfe\"}}]}]\n";
  const auto r = config::load_config_text({}, text, "f.yaml");
  EXPECT_FALSE(r.config);
  EXPECT_TRUE(has_error(r, "rules[0].load_balance_targets[0].override_params.x: must be valid UTF-8"))
      << all_errors(r);
}

TEST(ConfigFile, AnEntraBackendTakesItsSettingsLikeTheEnvironment) {
  const char* text = R"(
backends:
  - name: keyless
    url: https://contoso.openai.azure.com
    auth: entra
    entra: {source: imds, client_id: 11111111-2222-3333-4444-555555555555}
)";
  const auto r = config::load_config_text({}, text, "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  const config::BackendConfig& b = r.config->backends[0];
  EXPECT_EQ(b.auth, config::AuthStyle::Entra);
  EXPECT_EQ(b.entra.source, config::EntraSource::Imds);
}

TEST(ConfigFile, AQuotaGroupHasOneQuotaWhichItsTargetsShare) {
  const char* text = R"(
backends:
  - {name: east1, url: "https://e1.openai.azure.com", quota_group: sub1-eastus}
  - {name: east2, url: "https://e2.openai.azure.com"}
targets:
  - {id: east1/gpt-4o, backend: east1, deployment: gpt-4o}
  - {id: east2/gpt-4o, backend: east2, deployment: gpt-4o, quota_group: sub1-eastus}
model_configs:
  - {model: east1/gpt-4o, usage_limits: {tokens_per_minute: 30000}}
)";
  const auto r = config::load_config_text({}, text, "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  for (const auto& t : r.config->policy.targets) {
    if (t.id == "east2") continue;  // the implicit default rule's target of east2: no group
    EXPECT_EQ(t.quota_group, "sub1-eastus") << t.id;
    EXPECT_EQ(t.tpm, 30000) << t.id << ": the group's quota";
  }
}

TEST(ConfigFile, BackendQuotaGroupFromTheEnvironment) {
  const auto r =
      config::load_config({{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"BACKEND_1_QUOTA_GROUP", "sub1"}});
  ASSERT_TRUE(r.config) << all_errors(r);
  EXPECT_EQ(r.config->backends[0].quota_group, "sub1");
  const auto bad =
      config::load_config({{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"BACKEND_1_QUOTA_GROUP", "no spaces"}});
  EXPECT_TRUE(has_error(bad, "BACKEND_1_QUOTA_GROUP: must be 1-64 characters")) << all_errors(bad);
}

TEST(ConfigFile, BackendResourceFromTheEnvironmentAndTheFile) {
  const std::string text = R"(
backends:
  - {name: project-a, url: "https://api.openai.com", resource: openai-project-a}
  - {name: plain, url: "https://api.openai.com"}
)";
  const auto r = config::load_config_text(
      {{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"BACKEND_1_RESOURCE", "https://res-a"}}, text, "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  ASSERT_EQ(r.config->backends.size(), 3u);
  EXPECT_EQ(r.config->backends[0].resource, "https://res-a");
  EXPECT_EQ(r.config->backends[1].resource, "openai-project-a");
  EXPECT_EQ(r.config->backends[2].resource, "") << "none: its URL's";
  const auto bad =
      config::load_config({{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"BACKEND_1_RESOURCE", "has space"}});
  EXPECT_TRUE(has_error(bad, "BACKEND_1_RESOURCE: must be 1-256 visible ASCII characters"))
      << all_errors(bad);
  const auto bad_file = config::load_config_text({}, R"(
backends:
  - {name: a, url: "https://a.example.com", resource: ""}
)",
                                                 "f.yaml");
  EXPECT_TRUE(has_error(bad_file, "backends[0].resource: must be 1-256 visible ASCII characters"))
      << all_errors(bad_file);
}

// Scale-out: the file's redis section overrides REDIS_URL and its variables.
TEST(ConfigFile, TheRedisSectionOverridesTheEnvironment) {
  const std::string text = R"(
backends:
  - {name: east, url: "https://east.example.com"}
redis:
  url: rediss://app:${REDIS_PASSWORD}@cache.example.net:6380/1
  key_prefix: "prod:"
  timeout_ms: 500
  replica_id: node-1
)";
  const auto r = config::load_config_text({{"REDIS_URL", "redis://other:6379"}, {"REDIS_PASSWORD", "p@ss"}},
                                          text, "f.yaml");
  ASSERT_TRUE(r.config) << r.errors.front();
  const config::RedisConfig& redis = r.config->redis;
  ASSERT_TRUE(redis.enabled());
  EXPECT_TRUE(redis.url->tls);
  EXPECT_EQ(redis.url->host, "cache.example.net");
  EXPECT_EQ(redis.url->password, "p@ss");
  EXPECT_EQ(redis.url->database, 1);
  EXPECT_EQ(redis.key_prefix, "prod:");
  EXPECT_EQ(redis.timeout.count(), 500);
  EXPECT_EQ(redis.replica_id, "node-1");
  const std::string summary = describe_routing(*r.config);
  EXPECT_NE(
      summary.find(
          "shared through Redis: rediss://app:***@cache.example.net:6380/1 (prefix prod:, replica node-1)"),
      std::string::npos)
      << summary;
  EXPECT_EQ(summary.find("p@ss"), std::string::npos);
}

TEST(ConfigFile, ABadRedisSectionIsReportedWithItsPathAndWithoutThePassword) {
  const std::string text = R"(
backends:
  - {name: east, url: "https://east.example.com"}
redis:
  url: "redis://:hunter22@cache:none"
  timeout_ms: 1
  replica: x
)";
  const auto r = config::load_config_text({}, text, "f.yaml");
  ASSERT_FALSE(r.config);
  std::string all;
  for (const auto& e : r.errors) all += e + "\n";
  EXPECT_NE(all.find("redis.url"), std::string::npos) << all;
  EXPECT_NE(all.find("redis.timeout_ms"), std::string::npos) << all;
  EXPECT_NE(all.find("redis.replica: unknown key"), std::string::npos) << all;
  EXPECT_EQ(all.find("hunter22"), std::string::npos) << all;
}

// TrueFoundry's current target options, as its documentation writes them
// (tests/config/truefoundry_targets.yaml): retry_config, fallback_status_codes,
// fallback_candidate, and ["*"] for any subject.
TEST(ConfigFile, TrueFoundrysTargetOptionsLoadWithTheirDocumentedDefaults) {
  std::ifstream in(std::string(SMARTLB_SOURCE_DIR) + "/tests/config/truefoundry_targets.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto r = config::load_config_text({{"AZURE_KEY", "k1-0123456789"}, {"OPENAI_KEY", "k2-0123456789"}},
                                          text, "tf.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  const auto& rules = r.config->policy.rules;
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_TRUE(rules[0].subjects.empty()) << "[\"*\"]: any subject";
  const config::RuleTarget& azure = rules[0].targets[0];
  ASSERT_TRUE(azure.retry);
  EXPECT_EQ(azure.retry->attempts, 2u);
  EXPECT_EQ(azure.retry->delay, std::chrono::milliseconds(100));
  EXPECT_EQ(azure.retry->on_status, (std::vector<unsigned>{429, 500, 502, 503}));
  EXPECT_EQ(azure.fallback_status, (std::vector<unsigned>{401, 403, 404, 429, 500, 502, 503}));
  EXPECT_TRUE(rules[0].targets[1].fallback_candidate);
  EXPECT_FALSE(rules[0].targets[2].fallback_candidate);
  EXPECT_FALSE(rules[0].targets[1].retry) << "no retry_config: smartlb's own behaviour";
  EXPECT_FALSE(rules[0].targets[1].fallback_status);
  // An empty retry_config takes TrueFoundry's defaults; a 400 may fall back where the file says so.
  const config::RuleTarget& long_context = rules[1].targets[0];
  ASSERT_TRUE(long_context.retry);
  EXPECT_EQ(long_context.retry->attempts, 2u);
  EXPECT_EQ(long_context.retry->on_status, (std::vector<unsigned>{429, 500, 502, 503}));
  EXPECT_EQ(long_context.fallback_status->front(), 400u);
  EXPECT_TRUE(std::any_of(r.warnings.begin(), r.warnings.end(), [](const std::string& w) {
    return w.find("sla_cutoff") != std::string::npos;
  })) << "sla_cutoff is accepted and said to have no effect";
}

TEST(ConfigFile, ABadStatusCodeIsNamed) {
  const auto r = config::load_config_text({}, R"(
backends: [{name: a, url: "http://a.example"}]
targets: [{id: a/m, backend: a}]
rules:
  - id: r
    type: priority-based-routing
    load_balance_targets:
      - {target: a/m, fallback_status_codes: ["429", "bad", "999"], retry_config: {attempts: 11}}
)",
                                          "f.yaml");
  EXPECT_TRUE(has_error(r, "fallback_status_codes[1]: must be an HTTP status from 100 to 599"))
      << all_errors(r);
  EXPECT_TRUE(has_error(r, "fallback_status_codes[2]: must be an HTTP status")) << all_errors(r);
  EXPECT_TRUE(has_error(r, "retry_config.attempts: must be an integer from 0 to 10")) << all_errors(r);
}

// TrueFoundry's virtual models (tests/config/truefoundry_virtual_model.yaml): the file is the
// account; each integration a rule for the model clients call as {account}/{name}.
TEST(ConfigFile, TrueFoundrysVirtualModelsLoadAsRules) {
  std::ifstream in(std::string(SMARTLB_SOURCE_DIR) + "/tests/config/truefoundry_virtual_model.yaml");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto r = config::load_config_text({{"AZURE_KEY", "k1-0123456789"}, {"OPENAI_KEY", "k2-0123456789"}},
                                          text, "vm.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  const auto& rules = r.config->policy.rules;
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].id, "chat-router/production-chat");
  EXPECT_EQ(rules[0].models, std::vector<std::string>{"chat-router/production-chat"});
  EXPECT_EQ(rules[0].type, config::RuleType::Weight);
  EXPECT_TRUE(rules[0].affinity) << "sticky routing";
  EXPECT_EQ(rules[0].affinity_header, "x-user-id");
  ASSERT_EQ(rules[0].targets.size(), 2u);
  EXPECT_EQ(rules[0].targets[0].weight, 80u);
  EXPECT_TRUE(rules[0].targets[1].retry);
  EXPECT_EQ(rules[1].type, config::RuleType::Priority);
  // ... or listed under virtual_models beside rules, ahead of them.
  const auto listed = config::load_config_text({}, R"(
backends: [{name: a, url: "http://a.example"}]
targets: [{id: a/m, backend: a}]
virtual_models:
  - name: group
    type: provider-account/virtual-model
    integrations:
      - name: model
        type: integration/model/virtual
        routing_config: {type: weight-based-routing, load_balance_targets: [{target: a/m, weight: 100}]}
rules:
  - {id: rest, type: priority-based-routing, load_balance_targets: [{target: a/m}]}
)",
                                               "f.yaml");
  ASSERT_TRUE(listed.config) << all_errors(listed);
  EXPECT_EQ(listed.config->policy.rules[0].id, "group/model");
  EXPECT_EQ(listed.config->policy.rules[1].id, "rest");
}

}  // namespace config_file_test
}  // namespace smartlb
