// load_config_from_env (config/config_env). The input's lines `NAME=value` make the EnvMap
// (NAME of the characters an environment name uses; other lines are skipped). Invariants: it
// never crashes; a configuration comes back exactly when there is no error; every error
// names a variable: one that was set, or a setting it reads.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "smartlb/config/config_env.hpp"

namespace {

// The settings load_config_from_env reads (a problem may concern one that was left at its
// default, e.g. ADMIN_PORT equal to PORT).
// Every setting config_env reads (an error may name one the input did not set, e.g. the
// audience a tenant requires).
constexpr std::string_view kSettings[] = {"ACCESS_LOG",
                                          "ADMIN_METRICS_OPEN",
                                          "ADMIN_PORT",
                                          "ADMIN_TOKENS",
                                          "AZURE_AUTHORITY_HOST",
                                          "AZURE_CLIENT_ID",
                                          "AZURE_CLIENT_SECRET",
                                          "AZURE_FEDERATED_TOKEN_FILE",
                                          "AZURE_POD_IDENTITY_AUTHORITY_HOST",
                                          "AZURE_TENANT_ID",
                                          "CLIENT_API_KEYS",
                                          "CLIENT_ENTRA_AUDIENCE",
                                          "CLIENT_ENTRA_DISCOVERY_URL",
                                          "CLIENT_ENTRA_NAME",
                                          "CLIENT_ENTRA_ROLES",
                                          "CLIENT_ENTRA_TENANT_ID",
                                          "CLIENT_IDLE_TIMEOUT_SECONDS",
                                          "CLIENT_REQUESTS_PER_MINUTE",
                                          "CLIENT_TOKENS_PER_DAY",
                                          "CLIENT_TOKENS_PER_MINUTE",
                                          "CLIENT_TOKENS_PER_MONTH",
                                          "CONFIG_WATCH_INTERVAL_MS",
                                          "CONNECT_TIMEOUT_SECONDS",
                                          "DEFAULT_COOLDOWN_SECONDS",
                                          "HTTP_TIMEOUT_SECONDS",
                                          "IDENTITY_ENDPOINT",
                                          "IDENTITY_HEADER",
                                          "LISTEN_ADDRESS",
                                          "LOG_FORMAT",
                                          "LOG_LEVEL",
                                          "MAX_CONNECTIONS",
                                          "MAX_COOLDOWN_SECONDS",
                                          "MAX_HEADER_COUNT",
                                          "MAX_REQUEST_BODY_BYTES",
                                          "MAX_STREAMED_BODY_BYTES",
                                          "PORT",
                                          "QUOTA_WINDOW_SECONDS",
                                          "REDIS_CA_FILE",
                                          "REDIS_KEY_PREFIX",
                                          "REDIS_TIMEOUT_MS",
                                          "REDIS_URL",
                                          "REPLICA_ID",
                                          "REQUEST_TIMEOUT_SECONDS",
                                          "SHUTDOWN_TIMEOUT_SECONDS",
                                          "STREAM_REQUEST_BODY_BYTES",
                                          "STATUS_SAMPLE_INTERVAL_MS",
                                          "STREAM_HOLDBACK_BYTES",
                                          "THREADS",
                                          "UPSTREAM_CA_FILE"};

bool known_setting(std::string_view var) {
  for (const std::string_view s : kSettings)
    if (s == var) return true;
  return var.rfind("BACKEND_", 0) == 0;
}

bool env_name(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smartlb;
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  config::EnvMap env;
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos || !env_name(line.substr(0, eq))) continue;
    env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }

  const config::ConfigLoadResult r = config::load_config_from_env(env);
  if (r.config.has_value() != r.errors.empty()) __builtin_trap();
  for (const std::string& e : r.errors) {
    const auto colon = e.find(": ");
    if (colon == std::string::npos || colon == 0) __builtin_trap();
    const std::string var = e.substr(0, colon);
    if (!env_name(var)) __builtin_trap();
    if (!env.count(var) && !known_setting(var)) __builtin_trap();
  }
  return 0;
}
