// The config file's `prices`: the currency, and what a million tokens of each model cost
// (docs/operations.md#cost).
#include <algorithm>
#include <map>

#include "file_keys.hpp"
#include "file_sections.hpp"
#include "smartlb/config/values.hpp"

namespace smartlb::config::file {
namespace {

constexpr const char* kPriceWhat =
    "must be a price per million tokens: a decimal number from 0 to 10000 with at most 6 decimals";

// An ISO 4217 code (three capital letters): it is written once, into the metric's help and
// the docs' examples, so it must say what it is.
bool currency_code(std::string_view c) {
  return c.size() == 3 && std::all_of(c.begin(), c.end(), [](char x) { return x >= 'A' && x <= 'Z'; });
}

std::optional<cost::PicoUnits> read_price(Reader& r, const std::string& path, const YAML::Node& n) {
  const auto text = r.string(path, n);
  if (!text) return std::nullopt;
  const auto price = cost::parse_price_per_million(*text);
  if (!price) r.error(path, n, std::string(kPriceWhat) + ", got " + smartlb::config::quoted(*text));
  return price;
}

// One entry of prices.models, or nullopt with its errors reported.
std::optional<cost::ModelPrice> read_model_price(Reader& r, const std::string& path, const YAML::Node& n) {
  if (!r.is_map(path, n)) return std::nullopt;
  r.check_keys(path, n, kModelPriceKeys);
  cost::ModelPrice m;
  bool ok = true;
  if (const auto v = n["model"]; !v) {
    r.error(key_path(path, "model"), n, "is required (the model's name, e.g. gpt-4o)");
    ok = false;
  } else if (auto s = r.string(key_path(path, "model"), v); s && !s->empty()) {
    m.model = std::move(*s);
  } else {
    if (s) r.error(key_path(path, "model"), v, "must not be empty");
    ok = false;
  }
  m.aliases = r.strings(key_path(path, "aliases"), n["aliases"]);
  for (const char* key : {"input", "output"}) {
    const auto v = n[key];
    if (!v) {
      r.error(key_path(path, key), n, "is required (per million tokens; 0 for none)");
      ok = false;
    } else if (auto p = read_price(r, key_path(path, key), v)) {
      (std::string_view(key) == "input" ? m.input : m.output) = *p;
    } else {
      ok = false;
    }
  }
  m.cached_input = m.input;  // a model without a cache discount
  if (const auto v = n["cached_input"]) {
    if (auto p = read_price(r, key_path(path, "cached_input"), v))
      m.cached_input = *p;
    else
      ok = false;
  }
  if (!ok) return std::nullopt;
  return m;
}

}  // namespace

void read_prices(Reader& r, const YAML::Node& n, Config& cfg) {
  if (!n || n.IsNull() || !r.is_map("prices", n)) return;
  r.check_keys("prices", n, kPricesKeys);
  cost::PriceTable& table = cfg.policy.prices;
  if (const auto v = n["currency"]; !v) {
    r.error("prices.currency", n, "is required (the prices' currency, e.g. USD)");
  } else if (auto c = r.string("prices.currency", v)) {
    if (currency_code(*c))
      table.currency = *c;
    else
      r.error("prices.currency", v,
              "must be an ISO 4217 code such as USD or EUR, got " + smartlb::config::quoted(*c));
  }
  const YAML::Node list = n["models"];
  if (!list) r.error("prices.models", n, "is required (a list of models and their prices)");
  if (!r.is_list("prices.models", list) || !list) return;
  std::map<std::string, std::string, std::less<>> named;  // a name -> the entry that has it
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string path = index_path("prices.models", i);
    auto m = read_model_price(r, path, list[i]);
    if (!m) continue;
    bool unique = true;
    std::vector<std::string> names{m->model};
    names.insert(names.end(), m->aliases.begin(), m->aliases.end());
    for (const std::string& name : names)
      if (const auto [it, added] = named.emplace(name, path); !added) {
        r.error(path, list[i], smartlb::config::quoted(name) + " is already priced by " + it->second);
        unique = false;
      }
    if (unique) table.models.push_back(std::move(*m));
  }
}

}  // namespace smartlb::config::file
