#include "file_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "smartlb/config/env_settings.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {
namespace {

// "PORT is an environment variable: ..." for a key spelled like one of smartlb's environment
// variables (port, Port, log-level), which the file does not take; where the file has the same
// setting, it says where. "" for any other key.
std::string environment_hint(std::string_view key) {
  std::string name(key);
  for (char& c : name) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const EnvSetting* s = find_env_setting(name);
  // A backend's BACKEND_X_* are the keys of `backends`, which say so themselves.
  if (!s || name.rfind("BACKEND_", 0) == 0) return {};
  std::string hint = name + " is an environment variable";
  if (s->in_the_file.empty()) return hint + ": process settings come from the environment, not the file";
  return hint + "; the file's equivalent is " + std::string(s->in_the_file);
}

}  // namespace

std::string index_path(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string key_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

void Reader::error(const std::string& path, const YAML::Node& at, const std::string& what) {
  errors.push_back(path + ": " + what + where(at));
}
void Reader::warn(const std::string& path, const YAML::Node& at, const std::string& what) {
  warnings.push_back(path + ": " + what + where(at));
}

void Reader::check_keys(const std::string& path, const YAML::Node& map,
                        std::span<const std::string_view> known) {
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    std::string msg = "unknown key";
    if (const std::string env = environment_hint(key); !env.empty())
      msg += " (" + env + ")";
    else if (const std::string hint = closest(key, known); !hint.empty())
      msg += " (did you mean \"" + hint + "\"?)";
    error(key_path(path, key), kv.first, msg);
  }
}

bool Reader::is_map(const std::string& path, const YAML::Node& n) {
  if (n.IsMap()) return true;
  error(path, n, "must be a mapping (key: value)");
  return false;
}
bool Reader::is_list(const std::string& path, const YAML::Node& n) {
  if (!n || n.IsNull() || n.IsSequence()) return true;
  error(path, n, "must be a list");
  return false;
}

std::optional<std::string> Reader::string(const std::string& path, const YAML::Node& n) {
  if (!n.IsScalar()) {
    error(path, n, "must be a string");
    return std::nullopt;
  }
  return expand(path, n, n.Scalar());
}
std::optional<std::string> Reader::expand(const std::string& path, const YAML::Node& at,
                                          const std::string& raw) {
  std::string out;
  for (std::size_t i = 0; i < raw.size();) {
    if (raw.compare(i, 3, "$${") == 0) {
      out += "${";
      i += 3;
      continue;
    }
    if (raw.compare(i, 2, "${") != 0) {
      out += raw[i++];
      continue;
    }
    const std::size_t close = raw.find('}', i + 2);
    if (close == std::string::npos) {
      error(path, at, "has \"${\" without a closing \"}\" (write $${ for a literal ${)");
      return std::nullopt;
    }
    const std::string name = raw.substr(i + 2, close - i - 2);
    auto it = env_.find(name);
    if (it == env_.end()) {
      error(path, at, "refers to the environment variable " + name + ", which is not set");
      return std::nullopt;
    }
    out += it->second;
    i = close + 1;
  }
  return out;
}

std::optional<std::string> Reader::name(const std::string& path, const YAML::Node& n) {
  auto s = string(path, n);
  if (s && !is_valid_name(*s)) {
    error(path, n, "must be 1-64 characters of A-Z a-z 0-9 . _ -, got " + smartlb::config::quoted(*s));
    return std::nullopt;
  }
  return s;
}
std::optional<long long> Reader::integer(const std::string& path, const YAML::Node& n, long long lo,
                                         long long hi, const std::string& what) {
  long long v = 0;
  const std::string s = n.IsScalar() ? n.Scalar() : std::string();
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!n.IsScalar() || s.empty() || ec != std::errc{} || p != s.data() + s.size() || v < lo || v > hi) {
    error(path, n,
          "must be " + what + ", got " +
              (n.IsScalar() ? smartlb::config::quoted(s) : std::string("a non-scalar")));
    return std::nullopt;
  }
  return v;
}
std::optional<double> Reader::number(const std::string& path, const YAML::Node& n, double lo, double hi,
                                     const std::string& what) {
  double v = 0;
  const std::string s = n.IsScalar() ? n.Scalar() : std::string();
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (!n.IsScalar() || s.empty() || ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v) ||
      v < lo || v > hi) {
    error(path, n,
          "must be " + what + ", got " +
              (n.IsScalar() ? smartlb::config::quoted(s) : std::string("a non-scalar")));
    return std::nullopt;
  }
  return v;
}
std::optional<bool> Reader::boolean(const std::string& path, const YAML::Node& n) {
  const std::string s = n.IsScalar() ? n.Scalar() : std::string();
  if (s == "true") return true;
  if (s == "false") return false;
  error(path, n, "must be true or false");
  return std::nullopt;
}
std::vector<std::string> Reader::strings(const std::string& path, const YAML::Node& n) {
  std::vector<std::string> out;
  if (!is_list(path, n) || !n) return out;
  for (std::size_t i = 0; i < n.size(); ++i)
    if (auto s = string(index_path(path, i), n[i])) {
      if (s->empty())
        error(index_path(path, i), n[i], "must not be empty");
      else
        out.push_back(std::move(*s));
    }
  return out;
}

std::optional<nlohmann::json> Reader::json(const std::string& path, const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nlohmann::json(nullptr);
    case YAML::NodeType::Sequence: {
      nlohmann::json a = nlohmann::json::array();
      for (std::size_t i = 0; i < n.size(); ++i) {
        auto v = json(index_path(path, i), n[i]);
        if (!v) return std::nullopt;
        a.push_back(std::move(*v));
      }
      return a;
    }
    case YAML::NodeType::Map: {
      nlohmann::json o = nlohmann::json::object();
      for (const auto& kv : n) {
        auto v = json(key_path(path, kv.first.Scalar()), kv.second);
        if (!v) return std::nullopt;
        o[kv.first.Scalar()] = std::move(*v);
      }
      return o;
    }
    case YAML::NodeType::Scalar:
      break;
  }
  const std::string& s = n.Scalar();
  if (n.Tag() != "!") {  // plain (unquoted)
    if (s == "null" || s == "~" || s.empty()) return nlohmann::json(nullptr);
    if (s == "true") return nlohmann::json(true);
    if (s == "false") return nlohmann::json(false);
    long long i = 0;
    if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
        ec == std::errc{} && p == s.data() + s.size())
      return nlohmann::json(i);
    double d = 0;
    if (auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
        ec == std::errc{} && p == s.data() + s.size() && std::isfinite(d))
      return nlohmann::json(d);
  }
  auto expanded = expand(path, n, s);
  if (!expanded) return std::nullopt;
  return nlohmann::json(*expanded);
}

std::string Reader::where(const YAML::Node& n) const {
  if (!n.IsDefined()) return {};
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return {};
  return " (" + file_ + ":" + std::to_string(m.line + 1) + ")";
}

}  // namespace smartlb::config::file
