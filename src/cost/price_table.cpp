#include "smartlb/cost/price_table.hpp"

#include <algorithm>

namespace smartlb::cost {
namespace {

bool digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

const ModelPrice* find_exact(const std::vector<ModelPrice>& models, std::string_view name) {
  for (const ModelPrice& m : models)
    if (m.model == name || std::find(m.aliases.begin(), m.aliases.end(), name) != m.aliases.end()) return &m;
  return nullptr;
}

}  // namespace

std::string_view without_version_date(std::string_view name) {
  // "-YYYY-MM-DD"
  if (name.size() > 11) {
    const std::string_view d = name.substr(name.size() - 11);
    if (d[0] == '-' && digits(d.substr(1, 4)) && d[5] == '-' && digits(d.substr(6, 2)) && d[8] == '-' &&
        digits(d.substr(9, 2)))
      return name.substr(0, name.size() - 11);
  }
  // "-MMDD"
  if (name.size() > 5) {
    const std::string_view d = name.substr(name.size() - 5);
    if (d[0] == '-' && digits(d.substr(1))) return name.substr(0, name.size() - 5);
  }
  return name;
}

const ModelPrice* PriceTable::find(std::string_view name) const {
  if (name.empty()) return nullptr;
  if (const ModelPrice* m = find_exact(models, name)) return m;
  if (const std::string_view undated = without_version_date(name); undated.size() != name.size())
    return find_exact(models, undated);
  return nullptr;
}

}  // namespace smartlb::cost
