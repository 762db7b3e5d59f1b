// The admin port's tokens: ADMIN_TOKENS, ADMIN_METRICS_OPEN and the config file's `admin`
// section. Every refusal names where the token is set and never shows it.
#include "smartlb/config/admin_tokens.hpp"

#include <gtest/gtest.h>

#include "smartlb/config/config_env.hpp"
#include "smartlb/config/config_file.hpp"

namespace smartlb {
namespace admin_tokens_config_test {  // named, not anonymous: tests/CMakeLists.txt

const std::string kRead = "r3ad-t0ken-0123456789";
const std::string kWrite = "wr1te-t0ken-0123456789";

std::string errors_of(const config::ConfigLoadResult& r) {
  std::string all;
  for (const auto& e : r.errors) all += e + "\n";
  return all;
}
bool has_error(const config::ConfigLoadResult& r, std::string_view needle) {
  return errors_of(r).find(needle) != std::string::npos;
}

config::EnvMap with_backend(config::EnvMap env) {
  env.emplace("BACKEND_1_URL", "http://127.0.0.1:9");
  return env;
}

TEST(AdminTokensConfig, NoTokensByDefault) {
  const auto r = config::load_config_from_env(with_backend({}));
  ASSERT_TRUE(r.config);
  EXPECT_TRUE(r.config->admin.tokens.empty());
  EXPECT_FALSE(r.config->admin.metrics_open);
}

TEST(AdminTokensConfig, EntriesAreNamedByRoleAndPlace) {
  const auto r = config::load_config_from_env(
      with_backend({{"ADMIN_TOKENS", "read:" + kRead + ", write:" + kWrite + ",write:another-0123456789abc"},
                    {"ADMIN_METRICS_OPEN", "true"}}));
  ASSERT_TRUE(r.config) << errors_of(r);
  const auto& t = r.config->admin.tokens;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "read-1");
  EXPECT_EQ(t[0].role, config::AdminRole::Read);
  EXPECT_EQ(t[0].token, kRead);
  EXPECT_EQ(t[1].name, "write-1");
  EXPECT_EQ(t[1].role, config::AdminRole::Write);
  EXPECT_EQ(t[1].token, kWrite) << "spaces around an entry are not part of it";
  EXPECT_EQ(t[2].name, "write-2");
  EXPECT_TRUE(r.config->admin.metrics_open);
}

TEST(AdminTokensConfig, BadEntriesRefuseToStartNamingTheVariableNeverTheToken) {
  const std::string short_token = "short-secret";
  const auto r = config::load_config_from_env(
      with_backend({{"ADMIN_TOKENS", "read:" + short_token + ",admin:" + kWrite + "," + kRead +
                                         ",write:has space in it!!"}}));
  EXPECT_FALSE(r.config);
  EXPECT_TRUE(has_error(r, "ADMIN_TOKENS: entry 1 (read): the token must be 16 to 512 characters long"))
      << errors_of(r);
  EXPECT_TRUE(has_error(r, "ADMIN_TOKENS: entry 2 has an unknown role; a role is read or write"));
  EXPECT_TRUE(has_error(r, "ADMIN_TOKENS: entry 3 must be role:token"));
  EXPECT_TRUE(has_error(r, "ADMIN_TOKENS: entry 4 (write): the token may hold only"));
  for (const std::string& secret : {short_token, kWrite, kRead, std::string("has space")})
    EXPECT_EQ(errors_of(r).find(secret), std::string::npos) << secret;
}

TEST(AdminTokensConfig, ATokenGivenTwiceIsRefused) {
  const auto r =
      config::load_config_from_env(with_backend({{"ADMIN_TOKENS", "read:" + kRead + ",write:" + kRead}}));
  EXPECT_FALSE(r.config);
  EXPECT_TRUE(has_error(r, "ADMIN_TOKENS: write-1 holds the same token as another entry")) << errors_of(r);
  EXPECT_EQ(errors_of(r).find(kRead), std::string::npos);
}

TEST(AdminTokensConfig, EmptyAndBadSettingsAreRefused) {
  EXPECT_TRUE(has_error(config::load_config_from_env(with_backend({{"ADMIN_TOKENS", ""}})),
                        "ADMIN_TOKENS: is set but holds no token"));
  EXPECT_TRUE(has_error(config::load_config_from_env(with_backend({{"ADMIN_METRICS_OPEN", "maybe"}})),
                        "ADMIN_METRICS_OPEN: must be true or false"));
}

TEST(AdminTokensConfig, TokenRules) {
  EXPECT_EQ(config::admin_token_problem("0123456789abcdef"), std::nullopt) << "16 characters";
  EXPECT_NE(config::admin_token_problem("0123456789abcde"), std::nullopt) << "15";
  EXPECT_EQ(config::admin_token_problem("bG9uZy1lbm91Z2gtYmFzZTY0+/=="), std::nullopt) << "base64 fits";
  EXPECT_NE(config::admin_token_problem("==0123456789abcdef"), std::nullopt) << "'=' only at the end";
  EXPECT_NE(config::admin_token_problem("0123456789abcdef\r\nx"), std::nullopt);
  EXPECT_NE(config::admin_token_problem(std::string(513, 'a')), std::nullopt);
  EXPECT_NE(config::admin_token_problem(std::string(16, '=')), std::nullopt);
}

TEST(AdminTokensConfig, TheFilesSectionAddsNamedTokensWithEnvironmentReferences) {
  const std::string text =
      "backends: [{name: a, url: \"http://127.0.0.1:9\"}]\n"
      "admin:\n"
      "  metrics_open: true\n"
      "  tokens:\n"
      "    - {name: alice, role: write, token: \"${ALICE_TOKEN}\"}\n"
      "    - {name: grafana, role: read, token: " +
      kRead + "}\n";
  const auto r = config::load_config_text(
      {{"ADMIN_TOKENS", "write:" + kWrite}, {"ALICE_TOKEN", "alice-0123456789abcdef"}}, text, "f.yaml");
  ASSERT_TRUE(r.config) << errors_of(r);
  const auto& t = r.config->admin.tokens;
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "write-1") << "the environment's first";
  EXPECT_EQ(t[1].name, "alice");
  EXPECT_EQ(t[1].role, config::AdminRole::Write);
  EXPECT_EQ(t[1].token, "alice-0123456789abcdef");
  EXPECT_EQ(t[2].name, "grafana");
  EXPECT_EQ(t[2].role, config::AdminRole::Read);
  EXPECT_TRUE(r.config->admin.metrics_open);
}

TEST(AdminTokensConfig, TheFilesProblemsNameTheirPathAndLine) {
  const std::string text =
      "backends: [{name: a, url: \"http://127.0.0.1:9\"}]\n"
      "admin:\n"
      "  tokens:\n"
      "    - {name: bob, role: write, token: too-short}\n"
      "    - {name: eve, role: root, token: " +
      kRead +
      "}\n"
      "    - {name: carol, role: read, token: " +
      kWrite +
      "}\n"
      "    - {role: read}\n"
      "  metric_open: true\n";
  const auto r = config::load_config_text({{"ADMIN_TOKENS", "write:" + kWrite}}, text, "f.yaml");
  EXPECT_FALSE(r.config);
  EXPECT_TRUE(
      has_error(r, "admin.tokens[0].token: must be 16 to 512 characters long (value not shown) (f.yaml:4)"))
      << errors_of(r);
  EXPECT_TRUE(has_error(r, "admin.tokens[1].role: must be read or write (f.yaml:5)"));
  EXPECT_TRUE(has_error(r, "admin.tokens: carol holds the same token as another entry"))
      << "the environment's";
  EXPECT_TRUE(has_error(r, "admin.tokens[3]: needs a name"));
  EXPECT_TRUE(has_error(r, "admin.tokens[3]: needs a token"));
  EXPECT_TRUE(has_error(r, "admin.metric_open: unknown key (did you mean \"metrics_open\"?)"));
  for (const std::string& secret : {std::string("too-short"), kRead, kWrite})
    EXPECT_EQ(errors_of(r).find(secret), std::string::npos) << secret;
}

TEST(AdminTokensConfig, AnEnvironmentSpellingInTheFileGetsAHint) {
  const auto r = config::load_config_text(
      {}, "backends: [{name: a, url: \"http://127.0.0.1:9\"}]\nADMIN_TOKENS: x\n", "f.yaml");
  EXPECT_TRUE(has_error(r, "admin.tokens")) << errors_of(r);
}

}  // namespace admin_tokens_config_test
}  // namespace smartlb
