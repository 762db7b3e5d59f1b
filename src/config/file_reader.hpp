#pragma once
// The config file's reader, shared by the readers of its sections (file_sections.hpp): a walk
// over the parsed YAML document that collects every problem with its path in the file and its
// line ("rules[2].load_balance_targets[0].weight: must be a positive integer, got \"0\"
// (smartlb.yaml:14)"), reads values of each kind, and replaces ${NAME} with the environment's
// value. Private to the config module.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "smartlb/config/config_env.hpp"

namespace smartlb::config::file {

// "backends[2]", and "backends[2].url" ("url" at the top).
std::string index_path(const std::string& path, std::size_t i);
std::string key_path(const std::string& path, std::string_view key);

class Reader {
 public:
  Reader(const EnvMap& env, std::string file) : env_(env), file_(std::move(file)) {}

  std::vector<std::string> errors, warnings;

  const std::string& file() const { return file_; }
  const EnvMap& env() const { return env_; }

  // "path: what (file:line)"; the line is left out where `at` has none.
  void error(const std::string& path, const YAML::Node& at, const std::string& what);
  void warn(const std::string& path, const YAML::Node& at, const std::string& what);

  // Unknown keys are errors, with a hint: the environment variable a key is spelled like, else
  // the closest known key.
  void check_keys(const std::string& path, const YAML::Node& map, std::span<const std::string_view> known);

  bool is_map(const std::string& path, const YAML::Node& n);
  // A list (a missing or null one is empty).
  bool is_list(const std::string& path, const YAML::Node& n);

  // A scalar as a string, with ${NAME} replaced by the environment's value ($${ for a literal ${).
  std::optional<std::string> string(const std::string& path, const YAML::Node& n);
  std::optional<std::string> expand(const std::string& path, const YAML::Node& at, const std::string& raw);
  // A name (backend, client, quota group): 1-64 characters of A-Z a-z 0-9 . _ -.
  std::optional<std::string> name(const std::string& path, const YAML::Node& n);
  // An integer or a number in [lo, hi]; `what` says which ("a positive integer").
  std::optional<long long> integer(const std::string& path, const YAML::Node& n, long long lo, long long hi,
                                   const std::string& what);
  std::optional<double> number(const std::string& path, const YAML::Node& n, double lo, double hi,
                               const std::string& what);
  std::optional<bool> boolean(const std::string& path, const YAML::Node& n);
  // A list of non-empty strings (missing: empty).
  std::vector<std::string> strings(const std::string& path, const YAML::Node& n);
  // A YAML value as JSON: quoted scalars are strings, plain ones are typed as YAML 1.2 would.
  std::optional<nlohmann::json> json(const std::string& path, const YAML::Node& n);

 private:
  std::string where(const YAML::Node& n) const;

  const EnvMap& env_;
  std::string file_;
};

// A key given twice in one mapping, anywhere in the document: an error naming every line.
void check_duplicate_keys(Reader& r, const YAML::Node& root);

}  // namespace smartlb::config::file
