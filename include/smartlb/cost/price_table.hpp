#pragma once
// The config file's `prices`: what a million tokens of each model cost, in one currency, and
// the lookup of a request's model in it. Plain data, filled by the config reader.
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/cost/money.hpp"

namespace smartlb::cost {

struct ModelPrice {
  std::string model;                 // the entry's name: the metric's `model` label
  std::vector<std::string> aliases;  // more names it answers to (Azure deployment names)
  // Per token (= micro-units per million tokens; see money.hpp).
  PicoUnits input = 0;
  PicoUnits cached_input = 0;  // the input price when the file gives none
  PicoUnits output = 0;
  bool operator==(const ModelPrice&) const = default;
};

struct PriceTable {
  std::string currency;  // "USD", as the file names it (empty: no prices)
  std::vector<ModelPrice> models;

  bool empty() const { return models.empty(); }
  // The entry whose model or alias is `name`; failing that, the one of `name` without a version
  // date ("gpt-4o-2024-08-06" -> "gpt-4o", "gpt-35-turbo-0125" -> "gpt-35-turbo"): a dated
  // version is priced as its model unless the table names it. Null when none.
  const ModelPrice* find(std::string_view name) const;
  bool operator==(const PriceTable&) const = default;
};

// `name` without a trailing version date: "-YYYY-MM-DD" (OpenAI's and Azure's model versions)
// or "-MMDD" (the older "gpt-35-turbo-0613"). `name` itself when it has none.
std::string_view without_version_date(std::string_view name);

}  // namespace smartlb::cost
