#pragma once
// Every environment variable smartlb reads, in one table: its name, its default as `--help`
// shows it, and what it does in a line. `--help` is printed from it; the config file's reader
// takes from it the variable a key is spelled like ("port: unknown key (PORT is an environment
// variable ...)"); tests hold docs/configuration.md to it; and the environment's readers
// (config_env, entra_env) read no variable that it lacks (an assert in debug builds).
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace smartlb::config {

struct EnvSetting {
  // "PORT"; a backend's settings are one family, BACKEND_X_<FIELD> with X = 1, 2, ...
  std::string_view name;
  std::string_view default_text;  // as --help shows it; empty: none (unset, or required)
  std::string_view meaning;       // one line
  std::string_view in_the_file;   // the config file's equivalent, if it has one ("redis.url")
};

// In --help's order: the backends' family first.
std::span<const EnvSetting> env_settings();

// The setting `name` is: "PORT", or "BACKEND_2_URL" (and "BACKEND_X_URL") for the family's
// BACKEND_X_URL. Null when smartlb has no such setting.
const EnvSetting* find_env_setting(std::string_view name);

// The fields of a backend's settings, BACKEND_X_<FIELD>: "URL", "PRIORITY", ... in the table's order.
std::vector<std::string_view> backend_fields();

// --help's list of the settings, a line each ("  PORT (8080)                the API port ..."):
// the settings in columns, wrapped at 80 characters (a long name's meaning on the line below):
// every one, or those named in `only`, in the table's order.
std::string env_settings_help(std::span<const std::string_view> only = {});

}  // namespace smartlb::config
