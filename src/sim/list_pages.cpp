#include "smartlb/sim/list_pages.hpp"

#include "smartlb/sim/route.hpp"

#include <charconv>

namespace smartlb::sim {
namespace {

ListQueryParse failure(std::string message, std::string param) {
  ListQueryParse parse;
  parse.error = {std::move(message), std::move(param), "invalid_value"};
  return parse;
}

}  // namespace

ListQueryParse parse_list_query(std::string_view query, std::size_t default_limit, std::size_t max_limit,
                                ListOrder default_order) {
  ListQuery list{default_limit, default_order, {}};
  if (const auto limit = query_parameter(query, "limit")) {
    std::size_t value = 0;
    const auto* end = limit->data() + limit->size();
    const auto [ptr, ec] = std::from_chars(limit->data(), end, value);
    if (limit->empty() || ec != std::errc{} || ptr != end || value < 1 || value > max_limit) {
      return failure("Invalid 'limit': expected an integer between 1 and " + std::to_string(max_limit) + ".",
                     "limit");
    }
    list.limit = value;
  }
  if (const auto order = query_parameter(query, "order")) {
    if (*order == "asc") {
      list.order = ListOrder::OldestFirst;
    } else if (*order == "desc") {
      list.order = ListOrder::NewestFirst;
    } else {
      return failure("Invalid 'order': expected 'asc' or 'desc'.", "order");
    }
  }
  list.after = query_parameter(query, "after").value_or("");
  ListQueryParse parse;
  parse.query = std::move(list);
  return parse;
}

nlohmann::ordered_json list_object(nlohmann::ordered_json data, bool has_more) {
  const auto id_of = [&](const nlohmann::ordered_json& item) {
    const auto id = item.find("id");
    return id == item.end() ? nlohmann::ordered_json(nullptr) : *id;
  };
  nlohmann::ordered_json first = data.empty() ? nlohmann::ordered_json(nullptr) : id_of(data.front());
  nlohmann::ordered_json last = data.empty() ? nlohmann::ordered_json(nullptr) : id_of(data.back());
  return {{"object", "list"},
          {"data", std::move(data)},
          {"first_id", std::move(first)},
          {"last_id", std::move(last)},
          {"has_more", has_more}};
}

}  // namespace smartlb::sim
