// The Prometheus families, each declared once and rendered from its declaration: its # HELP
// and # TYPE lines once, before its samples; every sample under a declared family with the
// declared label names; the whole text valid for promtool; and docs/observability.md lists
// each family with its type and labels.
#include "smartlb/admin/prometheus_families.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "admin_promtool.hpp"

namespace smartlb {
namespace prometheus_families_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const admin::PrometheusFamily* find_family(std::string_view name) {
  for (const admin::PrometheusFamily& f : admin::prometheus_families())
    if (f.family.name == name) return &f;
  return nullptr;
}

std::vector<std::string_view> declared_labels(const admin::MetricFamily& f) {
  return {f.labels.begin(), f.labels.begin() + static_cast<std::ptrdiff_t>(f.label_count())};
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// One sample line of the text format: its name and its label names in order.
struct SampleLine {
  std::string name;
  std::vector<std::string> labels;
};

// Parses `name{a="x",b="y\"z"} value`; nullopt for a line that is not a sample.
std::optional<SampleLine> parse_sample(const std::string& line) {
  if (line.empty() || line[0] == '#') return std::nullopt;
  SampleLine s;
  std::size_t i = line.find_first_of("{ ");
  if (i == std::string::npos) return std::nullopt;
  s.name = line.substr(0, i);
  if (line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      const std::size_t eq = line.find("=\"", i);
      if (eq == std::string::npos) return std::nullopt;
      s.labels.push_back(line.substr(i, eq - i));
      for (i = eq + 2; i < line.size() && line[i] != '"'; ++i)
        if (line[i] == '\\') ++i;
      ++i;  // the closing quote
      if (i < line.size() && line[i] == ',') ++i;
    }
  }
  return s;
}

// The family a sample belongs to: its own name, or a histogram's _bucket, _sum or _count.
const admin::PrometheusFamily* family_of(const std::string& sample_name) {
  if (const auto* f = find_family(sample_name)) return f;
  for (const std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (!sample_name.ends_with(suffix)) continue;
    const auto* f = find_family(std::string_view(sample_name).substr(0, sample_name.size() - suffix.size()));
    if (f && f->family.type == admin::MetricType::Histogram) return f;
  }
  return nullptr;
}

// A state in which every family has samples: traffic on two backends (a transport failure,
// then a served answer with tokens, for a named client), a refused key, a client's budget
// refusing, a priced answer, a host-name lookup, an Entra ID credential's refresh, a reload, a cooldown, a
// declared quota in use, Redis.
class BusyState : public ::testing::Test {
 protected:
  void SetUp() override {
    states_.track(table_);
    ASSERT_TRUE(states_.reserve(table_.member(0), "gpt-4o", 250));
    telemetry::RequestRecord r;
    r.deployment = "gpt-4o";
    r.client = "search";
    r.end = 700'000'000;
    telemetry::AttemptRecord& failed = r.add_attempt();
    failed.backend = 0;
    failed.cause = routing::FailureCause::ConnectFailed;
    failed.cooldown_ms = 10'000;
    telemetry::AttemptRecord& served = r.add_attempt();
    served.backend = 1;
    served.status = 200;
    served.ttfb_us = 40'000;
    r.served_by = 1;
    r.status = 200;
    r.prompt_tokens = 11;
    r.completion_tokens = 3;
    r.cost = 57'500'000;  // priced: 11 x $2.50/1M + 3 x $10/1M
    r.cost_model = "gpt-4o";
    metrics_.on_request_start();
    metrics_.on_request(r);
    telemetry::RequestRecord refused;
    refused.status = 401;
    refused.auth_failure = "invalid_api_key";
    metrics_.on_request(refused);
    telemetry::RequestRecord limited;
    limited.deployment = "gpt-4o";
    limited.client = "search";
    limited.status = 429;
    limited.client_limited = true;
    limited.priority_class = "batch";
    limited.queued_ms = 2000;  // it waited for capacity, then got the 429
    limited.queue_class = "batch";
    metrics_.on_request(limited);
    metrics_.on_dns_lookup(1, true);
    metrics_.on_credential_refresh("east", true);
    metrics_.on_config_reload(true, 1'700'000'000);
    metrics_.enable_redis();
    metrics_.on_redis_state(true);
    metrics_.on_redis_command(0.002);
    metrics_.on_lease(100, 100);
    metrics_.enable_tracing();
    metrics_.on_spans_exported(3);
    metrics_.on_spans_dropped(0, 2);
    states_.record_failure(table_.member(0), "gpt-4o", routing::judge_status(429, true), 30s);
    admin::PoolSnapshot pool = admin::snapshot_pool(table_, states_, {});
    pool.backends[0].credential = admin::PoolSnapshot::Backend::Credential{"imds", "imds", "valid", 0, ""};
    pool.backends[0].health = {"up", 200, "", 1'700'000'000'000};
    admin::BudgetStatus batch{
        .owner = "client", .name = "batch", .principal = {}, .limits = {.max_in_flight = 4}};
    batch.in_flight = 3;
    batch.in_flight_all_replicas = 4;
    pool.budgets.push_back(batch);
    text_ = render_prometheus(metrics_.snapshot(), pool);
  }

  base::ManualClock clock_;
  routing::RoutingTable table_{
      {routing::PoolMember{"east", 1, 1, "", 1000, 10, 60s}, routing::PoolMember{"west", 2, 1, ""}}};
  routing::BackendStates states_{clock_, routing::CooldownPolicy{}};
  telemetry::Metrics metrics_{std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}, {"west", ""}}};
  std::string text_;
};

TEST_F(BusyState, EveryDeclaredFamilyHasItsHelpAndTypeOnceBeforeItsSamples) {
  for (const admin::PrometheusFamily& pf : admin::prometheus_families()) {
    const admin::MetricFamily& f = pf.family;
    const std::string help = "# HELP " + std::string(f.name) + " " + std::string(f.help) + "\n";
    const std::string type = "# TYPE " + std::string(f.name) + " " + std::string(to_string(f.type)) + "\n";
    EXPECT_EQ(count(text_, "# HELP " + std::string(f.name) + " "), 1u) << f.name;
    EXPECT_EQ(count(text_, help), 1u) << f.name << ": the declared help";
    EXPECT_EQ(count(text_, "# TYPE " + std::string(f.name) + " "), 1u) << f.name;
    EXPECT_EQ(count(text_, type), 1u) << f.name << ": the declared type";
  }
  EXPECT_EQ(count(text_, "# HELP "), admin::prometheus_families().size()) << "only declared families";
  EXPECT_EQ(count(text_, "# TYPE "), admin::prometheus_families().size());
}

TEST_F(BusyState, EverySampleFollowsItsFamilysDeclarationWithItsLabelNames) {
  std::set<std::string_view> with_samples;
  std::string_view declared_last;  // the family of the last # TYPE line
  std::istringstream lines(text_);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# TYPE ")) {
      const admin::PrometheusFamily* pf = find_family(line.substr(7, line.find(' ', 7) - 7));
      ASSERT_NE(pf, nullptr) << "undeclared: " << line;
      declared_last = pf->family.name;
    }
    const auto sample = parse_sample(line);
    if (!sample) continue;
    const admin::PrometheusFamily* pf = family_of(sample->name);
    ASSERT_NE(pf, nullptr) << "undeclared: " << line;
    EXPECT_EQ(pf->family.name, declared_last) << "not under its family's # TYPE: " << line;
    with_samples.insert(pf->family.name);
    std::vector<std::string> names = sample->labels;
    if (pf->family.type == admin::MetricType::Histogram && sample->name.ends_with("_bucket")) {
      ASSERT_FALSE(names.empty()) << line;
      EXPECT_EQ(names.back(), "le") << line;
      names.pop_back();
    }
    const auto declared = declared_labels(pf->family);
    ASSERT_LE(names.size(), declared.size()) << line;
    for (std::size_t i = 0; i < names.size(); ++i) EXPECT_EQ(names[i], declared[i]) << line;
  }
  for (const admin::PrometheusFamily& pf : admin::prometheus_families())
    EXPECT_TRUE(with_samples.count(pf.family.name)) << pf.family.name << " has no sample in this state";
}

TEST_F(BusyState, TheWholeTextPassesPromtool) {
  const auto check = test::promtool_check_metrics(text_);
  ASSERT_TRUE(check.ran) << check.output;
  EXPECT_EQ(check.exit_code, 0) << "promtool check metrics:\n" << check.output << "\n---\n" << text_;
}

TEST(PrometheusFamilies, TracingFamiliesOnlyWithTracing) {
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  const auto shown = [](const std::string& text) {
    return text.find("# TYPE smartlb_trace_spans_dropped_total ") != std::string::npos;
  };
  EXPECT_FALSE(shown(render_prometheus(metrics.snapshot(), admin::PoolSnapshot{})));
  metrics.enable_tracing();
  metrics.on_spans_dropped(1, 4);
  const std::string text = render_prometheus(metrics.snapshot(), admin::PoolSnapshot{});
  EXPECT_TRUE(shown(text));
  EXPECT_NE(text.find("smartlb_trace_spans_dropped_total{reason=\"export_failed\"} 4\n"), std::string::npos);
  EXPECT_NE(text.find("smartlb_trace_spans_exported_total 0\n"), std::string::npos);
}

TEST(PrometheusFamilies, RedisFamiliesOnlyWithRedis) {
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  const std::string text = render_prometheus(metrics.snapshot(), admin::PoolSnapshot{});
  for (const admin::PrometheusFamily& pf : admin::prometheus_families()) {
    const bool shown = text.find("# TYPE " + std::string(pf.family.name) + " ") != std::string::npos;
    EXPECT_EQ(shown, pf.shown == admin::PrometheusFamily::Shown::Always) << pf.family.name;
  }
}

bool valid_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (const char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

TEST(PrometheusFamilies, DeclarationsAreWellFormedAndUnique) {
  std::set<std::string_view> names;
  for (const admin::PrometheusFamily& pf : admin::prometheus_families()) {
    const admin::MetricFamily& f = pf.family;
    EXPECT_TRUE(names.insert(f.name).second) << f.name << " is declared twice";
    EXPECT_TRUE(f.name.starts_with("smartlb_") && valid_name(f.name)) << f.name;
    EXPECT_FALSE(f.help.empty()) << f.name;
    EXPECT_EQ(f.help.find('\n'), std::string_view::npos) << f.name;
    EXPECT_EQ(f.name.ends_with("_total"), f.type == admin::MetricType::Counter) << f.name;
    EXPECT_EQ(!f.buckets.empty(), f.type == admin::MetricType::Histogram) << f.name;
    std::set<std::string_view> labels;
    for (const std::string_view l : declared_labels(f)) {
      EXPECT_TRUE(valid_name(l) && !l.starts_with("__") && l != "le") << f.name << ": " << l;
      EXPECT_TRUE(labels.insert(l).second) << f.name << ": " << l << " twice";
    }
    for (std::size_t i = f.label_count(); i < f.labels.size(); ++i)
      EXPECT_TRUE(f.labels[i].empty()) << f.name << ": a label after an empty one";
    EXPECT_NE(pf.collect, nullptr) << f.name;
  }
}

// docs/observability.md's metric tables: name -> {type, label names (values in parentheses
// left out)}.
std::map<std::string, std::pair<std::string, std::set<std::string>>> documented_families() {
  std::ifstream doc(std::string(SMARTLB_SOURCE_DIR) + "/docs/observability.md");
  std::map<std::string, std::pair<std::string, std::set<std::string>>> out;
  const auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(' '));
    s.erase(s.find_last_not_of(' ') + 1);
    return s;
  };
  for (std::string line; std::getline(doc, line);) {
    if (!line.starts_with("| `smartlb_")) continue;
    std::vector<std::string> cells;
    std::istringstream row(line.substr(1));
    for (std::string cell; std::getline(row, cell, '|');) cells.push_back(trim(cell));
    if (cells.size() < 3) continue;
    std::string labels_cell = cells[2];
    for (auto open = labels_cell.find('('); open != std::string::npos; open = labels_cell.find('('))
      labels_cell.erase(open, labels_cell.find(')', open) - open + 1);
    std::set<std::string> labels;
    for (auto at = labels_cell.find('`'); at != std::string::npos; at = labels_cell.find('`', at)) {
      const auto end = labels_cell.find('`', at + 1);
      labels.insert(labels_cell.substr(at + 1, end - at - 1));
      at = end + 1;
    }
    out[cells[0].substr(1, cells[0].size() - 2)] = {cells[1], labels};
  }
  return out;
}

TEST(PrometheusFamilies, ObservabilityDocListsEachFamilyWithItsTypeAndLabels) {
  const auto documented = documented_families();
  ASSERT_FALSE(documented.empty()) << "no metric table in docs/observability.md";
  for (const admin::PrometheusFamily& pf : admin::prometheus_families()) {
    const admin::MetricFamily& f = pf.family;
    const auto it = documented.find(std::string(f.name));
    ASSERT_NE(it, documented.end()) << f.name << " is not in docs/observability.md";
    EXPECT_EQ(it->second.first, to_string(f.type)) << f.name;
    const auto declared = declared_labels(f);
    EXPECT_EQ(it->second.second, std::set<std::string>(declared.begin(), declared.end())) << f.name;
  }
  for (const auto& [name, row] : documented)
    EXPECT_NE(find_family(name), nullptr)
        << "docs/observability.md lists " << name << ", which is not declared";
}

// A budget's in-flight count beside its cap; a subject's budgets of single callers (thousands)
// are left to /status.
TEST(PrometheusFamilies, BudgetsWithACapShowTheirRequestsInFlight) {
  telemetry::Metrics metrics(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  admin::PoolSnapshot pool;
  admin::BudgetStatus batch{
      .owner = "client", .name = "batch", .principal = {}, .limits = {.max_in_flight = 4}};
  batch.in_flight = 3;
  batch.in_flight_all_replicas = 4;
  admin::BudgetStatus one_caller{
      .owner = "subject-caller", .name = "*", .principal = "user:1", .limits = {.max_in_flight = 2}};
  admin::BudgetStatus uncapped{
      .owner = "client", .name = "search", .principal = {}, .limits = {.tokens_per_minute = 100}};
  pool.budgets = {batch, one_caller, uncapped};
  const std::string text = render_prometheus(metrics.snapshot(), pool);
  EXPECT_NE(text.find("smartlb_budget_in_flight{owner=\"client\",name=\"batch\"} 3\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("smartlb_budget_max_in_flight{owner=\"client\",name=\"batch\"} 4\n"),
            std::string::npos);
  EXPECT_NE(text.find("smartlb_budget_in_flight_all_replicas{owner=\"client\",name=\"batch\"} 4\n"),
            std::string::npos)
      << "with the other replicas' (Redis)";
  EXPECT_EQ(text.find("user:1"), std::string::npos);
  EXPECT_EQ(text.find("name=\"search\""), std::string::npos);
}

}  // namespace prometheus_families_test
}  // namespace smartlb
