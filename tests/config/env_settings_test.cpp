// The table of environment settings (config/env_settings.hpp) against what reads it, what
// prints it and what documents it: --help is printed from it, docs/configuration.md's tables
// list exactly its settings, and its defaults are the ones the loader applies.
#include "smartlb/config/env_settings.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "smartlb/config/config_env.hpp"

namespace smartlb {
namespace env_settings_test {  // named, not anonymous: tests/CMakeLists.txt

std::vector<std::string> cells_of(const std::string& row) {
  std::vector<std::string> cells;
  std::string cell;
  for (std::size_t i = 1; i < row.size(); ++i) {                      // after the leading '|'
    if (row[i] == '\\' && i + 1 < row.size() && row[i + 1] == '|') {  // an escaped \|
      cell += '|';
      ++i;
    } else if (row[i] == '|') {
      cells.push_back(cell);
      cell.clear();
    } else {
      cell += row[i];
    }
  }
  return cells;
}

// The environment variables docs/configuration.md's tables list: the `NAME`s in the column
// headed "Variable" or "Variables" of each table.
std::set<std::string> documented_settings() {
  std::ifstream in(std::string(SMARTLB_SOURCE_DIR) + "/docs/configuration.md");
  EXPECT_TRUE(in) << "cannot read docs/configuration.md";
  const std::regex name("`([A-Z][A-Z0-9_]*)`");
  std::set<std::string> names;
  int column = -1;  // the variables' column of the table being read; -1: none
  bool header = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind('|', 0) != 0) {
      column = -1;
      header = false;
      continue;
    }
    const auto cells = cells_of(line);
    if (!header) {  // a table's first row: its header
      header = true;
      for (std::size_t i = 0; i < cells.size(); ++i) {
        std::string h = cells[i];
        h.erase(0, h.find_first_not_of(' '));
        h.erase(h.find_last_not_of(' ') + 1);
        if (h == "Variable" || h == "Variables") column = static_cast<int>(i);
      }
      continue;
    }
    if (column < 0 || column >= static_cast<int>(cells.size())) continue;
    const std::string& cell = cells[column];
    for (auto m = std::sregex_iterator(cell.begin(), cell.end(), name); m != std::sregex_iterator(); ++m)
      names.insert((*m)[1]);
  }
  return names;
}

TEST(EnvSettings, TheDocsTablesListExactlyTheTablesSettings) {
  const std::set<std::string> documented = documented_settings();
  ASSERT_GT(documented.size(), 40u) << "the docs' tables were not found";
  std::set<std::string> table;
  for (const config::EnvSetting& s : config::env_settings()) table.insert(std::string(s.name));
  for (const auto& name : table)
    EXPECT_TRUE(documented.count(name))
        << name << " is a setting but no table of docs/configuration.md lists it";
  for (const auto& name : documented)
    EXPECT_TRUE(table.count(name)) << "docs/configuration.md lists " << name
                                   << ", which is not in src/config/env_settings.cpp";
}

TEST(EnvSettings, NamesAreUniqueAndEachSaysWhatItDoes) {
  std::set<std::string_view> seen;
  for (const config::EnvSetting& s : config::env_settings()) {
    EXPECT_TRUE(seen.insert(s.name).second) << s.name << " is listed twice";
    EXPECT_FALSE(s.meaning.empty()) << s.name;
    EXPECT_EQ(s.meaning.find('\n'), std::string_view::npos) << s.name << ": one line";
  }
}

TEST(EnvSettings, ABackendsSettingsAreOneFamily) {
  ASSERT_NE(config::find_env_setting("BACKEND_12_DEPLOYMENT_NAME"), nullptr);
  EXPECT_EQ(config::find_env_setting("BACKEND_12_DEPLOYMENT_NAME")->name, "BACKEND_X_DEPLOYMENT_NAME");
  EXPECT_EQ(config::find_env_setting("BACKEND_X_URL")->name, "BACKEND_X_URL");
  EXPECT_EQ(config::find_env_setting("BACKEND_1_URLS"), nullptr);
  EXPECT_EQ(config::find_env_setting("BACKEND__URL"), nullptr);
  EXPECT_EQ(config::find_env_setting("PORTS"), nullptr);
  EXPECT_EQ(config::find_env_setting("PORT")->default_text, "8080");
  const auto fields = config::backend_fields();
  ASSERT_GE(fields.size(), 2u);
  EXPECT_EQ(fields.front(), "URL");
}

// --help's look: "  NAME (default)" and the meaning from column 29 (two spaces after a name;
// on the next line after a longer one), wrapped at 80 characters onto lines indented to it.
TEST(EnvSettings, HelpPrintsEverySettingInColumns) {
  const std::string help = config::env_settings_help();
  EXPECT_NE(help.find("\n  PORT (8080)                the API port\n"), std::string::npos) << help;
  EXPECT_NE(help.find("\n  BACKEND_X_APIKEY           the backend's key (in the header BACKEND_X_AUTH\n" +
                      std::string(29, ' ') + "names)\n"),
            std::string::npos)
      << help;
  EXPECT_NE(help.find("\n  CONFIG_WATCH_INTERVAL_MS (1000)\n" + std::string(29, ' ') +
                      "how often the file is checked for a change\n"),
            std::string::npos)
      << help;
  std::istringstream lines(help);
  std::size_t settings = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(line.size(), 80u) << line;
    if (line.rfind("   ", 0) != 0) ++settings;  // not a continuation
  }
  EXPECT_EQ(settings, config::env_settings().size());
  for (const config::EnvSetting& s : config::env_settings())
    EXPECT_NE(help.find("  " + std::string(s.name) + (s.default_text.empty() ? "" : " (")), std::string::npos)
        << s.name;
  const std::string_view only[] = {"PORT", "REDIS_URL"};
  const std::string some = config::env_settings_help(only);
  EXPECT_EQ(some.rfind("  PORT (8080)", 0), 0u) << some;
  EXPECT_NE(some.find("\n  REDIS_URL"), std::string::npos) << some;
  EXPECT_EQ(some.find("LOG_LEVEL"), std::string::npos) << some;
}

// The defaults the table shows are the loader's, and each of these settings is read: a value
// other than the default comes through.
TEST(EnvSettings, TheDefaultsShownAreTheLoadersAndEachSettingIsRead) {
  using Get = std::function<std::string(const config::Config&)>;
  const auto ms_as_seconds = [](std::chrono::milliseconds ms) { return std::to_string(ms.count() / 1000); };
  const std::map<std::string, std::pair<std::string, Get>> settings = {
      {"PORT", {"8081", [](const config::Config& c) { return std::to_string(c.port); }}},
      {"LISTEN_ADDRESS", {"127.0.0.1", [](const config::Config& c) { return c.listen_address; }}},
      {"ADMIN_PORT", {"9091", [](const config::Config& c) { return std::to_string(c.admin_port); }}},
      {"THREADS", {"3", [](const config::Config& c) { return std::to_string(c.threads); }}},
      {"HTTP_TIMEOUT_SECONDS",
       {"7", [](const config::Config& c) { return std::to_string(c.http_timeout.count()); }}},
      {"CONNECT_TIMEOUT_SECONDS",
       {"7", [](const config::Config& c) { return std::to_string(c.connect_timeout.count()); }}},
      {"REQUEST_TIMEOUT_SECONDS",
       {"7", [](const config::Config& c) { return std::to_string(c.request_timeout.count()); }}},
      {"CAPACITY_GRACE_MS",
       {"70", [](const config::Config& c) { return std::to_string(c.capacity_grace.count()); }}},
      {"CLIENT_IDLE_TIMEOUT_SECONDS",
       {"7", [](const config::Config& c) { return std::to_string(c.client_idle_timeout.count()); }}},
      {"SHUTDOWN_TIMEOUT_SECONDS",
       {"7", [](const config::Config& c) { return std::to_string(c.shutdown_timeout.count()); }}},
      {"REALTIME_IDLE_TIMEOUT_SECONDS",
       {"7", [](const config::Config& c) { return std::to_string(c.realtime_idle_timeout.count()); }}},
      {"REALTIME_MAX_SESSION_SECONDS",
       {"7", [](const config::Config& c) { return std::to_string(c.realtime_max_session.count()); }}},
      {"DEFAULT_COOLDOWN_SECONDS",
       {"7", [&](const config::Config& c) { return ms_as_seconds(c.default_cooldown); }}},
      {"MAX_COOLDOWN_SECONDS",
       {"700", [&](const config::Config& c) { return ms_as_seconds(c.max_cooldown); }}},
      {"QUOTA_WINDOW_SECONDS", {"7", [&](const config::Config& c) { return ms_as_seconds(c.quota_window); }}},
      {"MAX_REQUEST_BODY_BYTES",
       {"7000", [](const config::Config& c) { return std::to_string(c.max_request_body_bytes); }}},
      {"STREAM_REQUEST_BODY_BYTES",
       {"7000", [](const config::Config& c) { return std::to_string(c.stream_request_body_bytes); }}},
      {"MAX_STREAMED_BODY_BYTES",
       {"7000000", [](const config::Config& c) { return std::to_string(c.max_streamed_body_bytes); }}},
      {"MAX_HEADER_COUNT",
       {"70", [](const config::Config& c) { return std::to_string(c.max_header_count); }}},
      {"MAX_CONNECTIONS", {"70", [](const config::Config& c) { return std::to_string(c.max_connections); }}},
      {"STREAM_HOLDBACK_BYTES",
       {"7000", [](const config::Config& c) { return std::to_string(c.stream_holdback_bytes); }}},
      {"LOG_LEVEL", {"debug", [](const config::Config& c) { return c.log_level; }}},
      {"LOG_FORMAT", {"json", [](const config::Config& c) { return c.log_format; }}},
      {"ACCESS_LOG",
       {"off", [](const config::Config& c) { return std::string(c.access_log ? "on" : "off"); }}},
      {"ROUTE_ON_REMAINING",
       {"off", [](const config::Config& c) { return std::string(c.route_on_remaining ? "on" : "off"); }}},
      {"CONFIG_WATCH_INTERVAL_MS",
       {"70", [](const config::Config& c) { return std::to_string(c.config_watch_interval.count()); }}},
      {"STATUS_SAMPLE_INTERVAL_MS",
       {"700", [](const config::Config& c) { return std::to_string(c.status_sample_interval.count()); }}},
      {"ADMIN_METRICS_OPEN",
       {"true",
        [](const config::Config& c) { return std::string(c.admin.metrics_open ? "true" : "false"); }}},
      {"REDIS_KEY_PREFIX", {"x:", [](const config::Config& c) { return c.redis.key_prefix; }}},
      {"REDIS_TIMEOUT_MS",
       {"70", [](const config::Config& c) { return std::to_string(c.redis.timeout.count()); }}},
  };
  const config::EnvMap base = {{"BACKEND_1_URL", "http://127.0.0.1:9"}};
  const auto defaults = config::load_config_from_env(base);
  ASSERT_TRUE(defaults.config);
  for (const auto& [name, value_and_get] : settings) {
    const auto& [value, get] = value_and_get;
    const config::EnvSetting* s = config::find_env_setting(name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_EQ(std::string(s->default_text), get(*defaults.config)) << name << "'s default";
    config::EnvMap env = base;
    env[name] = value;
    const auto set = config::load_config_from_env(env);
    ASSERT_TRUE(set.config) << name << "=" << value;
    EXPECT_EQ(get(*set.config), value) << name;
  }
}

}  // namespace env_settings_test
}  // namespace smartlb
