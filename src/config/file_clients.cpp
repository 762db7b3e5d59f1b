// The config file's `clients` (keys and their budgets) and `subject_limits` (budgets of the
// subjects that token callers and keyed clients carry).
#include <algorithm>
#include <cctype>
#include <set>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {
namespace {

// A budget (`limits` of a client or a subject): at least one limit, each a positive integer.
ClientLimits read_limits(Reader& r, const std::string& path, const YAML::Node& n) {
  ClientLimits l;
  if (!r.is_map(path, n)) return l;
  r.check_keys(path, n, kClientLimitKeys);
  const auto read = [&](std::string_view key, long long hi, std::int64_t& out) {
    if (const auto v = n[std::string(key)])
      if (auto x = r.integer(key_path(path, key), v, 1, hi, "a positive integer")) out = *x;
  };
  read("tokens_per_minute", 1'000'000'000'000ll, l.tokens_per_minute);
  read("requests_per_minute", 1'000'000'000ll, l.requests_per_minute);
  read("tokens_per_day", 1'000'000'000'000'000ll, l.tokens_per_day);
  read("tokens_per_month", 1'000'000'000'000'000ll, l.tokens_per_month);
  read("max_in_flight", 1'000'000ll, l.max_in_flight);
  // Amounts of the prices' currency (docs/operations.md#cost).
  for (auto [key, out] :
       {std::pair{"cost_per_day", &l.cost_per_day}, std::pair{"cost_per_month", &l.cost_per_month}})
    if (const auto v = n[key])
      if (const auto text = r.string(key_path(path, key), v)) {
        if (const auto amount = cost::parse_money(*text); amount && *amount > 0)
          *out = *amount;
        else
          r.error(
              key_path(path, key), v,
              "must be an amount of the prices' currency: a decimal number above 0, at most 1000000 with at "
              "most 12 decimals, got " +
                  smartlb::config::quoted(*text));
      }
  if (!l.any() && n.size() == 0)
    r.error(path, n,
            "needs at least one of tokens_per_minute, requests_per_minute, tokens_per_day, tokens_per_month, "
            "cost_per_day, cost_per_month, max_in_flight");
  return l;
}

}  // namespace

void read_subject_limits(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("subject_limits", list) || !list) return;
  std::set<std::pair<std::string, bool>> seen;
  for (const auto& s : cfg.policy.subject_limits) seen.emplace(s.subject, s.shared);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("subject_limits", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kSubjectLimitKeys);
    SubjectLimit s;
    bool ok = true;
    if (const auto v = n["subject"]; !v) {
      r.error(key_path(path, "subject"), n,
              "is required (a subject such as team:search, or * for every caller)");
      ok = false;
    } else if (auto x = r.string(key_path(path, "subject"), v); x && !x->empty()) {
      s.subject = *x;
    } else {
      if (x) r.error(key_path(path, "subject"), v, "must not be empty");
      ok = false;
    }
    if (const auto v = n["shared"]) {
      if (auto b = r.boolean(key_path(path, "shared"), v))
        s.shared = *b;
      else
        ok = false;
    }
    if (const auto v = n["limits"]; !v) {
      r.error(key_path(path, "limits"), n, "is required");
      ok = false;
    } else {
      const std::size_t before = r.errors.size();
      s.limits = read_limits(r, key_path(path, "limits"), v);
      ok = ok && r.errors.size() == before;
    }
    if (ok && s.subject == "*" && s.shared) {
      r.error(key_path(path, "shared"), n["shared"],
              "cannot be true for subject \"*\" (one budget for every caller is a quota on the backends: "
              "declare it with usage_limits or BACKEND_X_TPM)");
      ok = false;
    }
    if (ok && !seen.emplace(s.subject, s.shared).second) {
      r.error(key_path(path, "subject"), n["subject"],
              "a budget for " + smartlb::config::quoted(s.subject) + (s.shared ? " (shared)" : "") +
                  " is already declared" +
                  (s.subject == "*" ? " (CLIENT_TOKENS_PER_MINUTE & co. declare \"*\")" : ""));
      ok = false;
    }
    if (ok) cfg.policy.subject_limits.push_back(std::move(s));
  }
}

void read_clients(Reader& r, const YAML::Node& list, Config& cfg) {
  if (!r.is_list("clients", list) || !list) return;
  std::set<std::string> names;
  for (std::size_t i = 0; i < cfg.client_api_keys.size(); ++i)
    names.insert("client-" + std::to_string(i + 1));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("clients", i);
    const YAML::Node n = list[i];
    if (!r.is_map(path, n)) continue;
    r.check_keys(path, n, kClientKeys);
    ClientConfig c;
    bool ok = true;
    if (const auto name = n["name"]; !name) {
      r.error(key_path(path, "name"), n, "is required");
      ok = false;
    } else if (auto s = r.name(key_path(path, "name"), name)) {
      if (!names.insert(*s).second) {
        r.error(key_path(path, "name"), name,
                "duplicates another client's name " + smartlb::config::quoted(*s) +
                    (s->rfind("client-", 0) == 0 ? " (CLIENT_API_KEYS names its keys client-1, client-2, ...)"
                                                 : ""));
        ok = false;
      } else {
        c.name = *s;
      }
    } else {
      ok = false;
    }
    const auto key = n["key"], hash = n["key_sha256"];
    if (!key && !hash) {
      r.error(path, n, "needs key (e.g. ${CLIENT_KEY}) or key_sha256");
      ok = false;
    } else if (key && hash) {
      r.error(path, n, "takes key or key_sha256, not both");
      ok = false;
    } else if (key) {
      if (auto s = r.string(key_path(path, "key"), key)) {
        if (s->size() < 8) {
          r.error(key_path(path, "key"), key, "must be at least 8 characters (value not shown)");
          ok = false;
        } else {
          c.key = *s;
        }
      } else {
        ok = false;
      }
    } else if (auto s = r.string(key_path(path, "key_sha256"), hash)) {
      std::string h = *s;
      if (h.rfind("sha256:", 0) == 0) h = h.substr(7);
      std::transform(h.begin(), h.end(), h.begin(), [](unsigned char ch) { return std::tolower(ch); });
      if (h.size() != 64 || !std::all_of(h.begin(), h.end(), [](char ch) { return std::isxdigit(ch); })) {
        r.error(key_path(path, "key_sha256"), hash, "must be 64 hex digits (the SHA-256 of the key)");
        ok = false;
      } else {
        c.key_sha256 = h;
      }
    } else {
      ok = false;
    }
    c.subjects = r.strings(key_path(path, "subjects"), n["subjects"]);
    if (const auto l = n["limits"]; l && !l.IsNull()) {
      const std::size_t before = r.errors.size();
      c.limits = read_limits(r, key_path(path, "limits"), l);
      ok = ok && r.errors.size() == before;
    }
    if (ok) cfg.policy.clients.push_back(std::move(c));
  }
}

}  // namespace smartlb::config::file
