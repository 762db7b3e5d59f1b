#pragma once
// OpenAI's list calls: the query (limit, order, after) and the page object
// {"object":"list","data":[...],"first_id","last_id","has_more"}. Pure.

#include "smartlb/sim/object_store.hpp"
#include "smartlb/sim/responses_request.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace smartlb::sim {

struct ListQuery {
  std::size_t limit = 20;
  ListOrder order = ListOrder::NewestFirst;
  std::string after;  // an object id; empty = from the start
};

struct ListQueryParse {
  std::optional<ListQuery> query;
  RequestError error;  // when query is empty
};

/// `limit` must be 1..max_limit, `order` asc or desc.
ListQueryParse parse_list_query(std::string_view query, std::size_t default_limit, std::size_t max_limit,
                                ListOrder default_order = ListOrder::NewestFirst);

/// The page object; first_id / last_id are the "id" of the first and last item (null when empty).
nlohmann::ordered_json list_object(nlohmann::ordered_json data, bool has_more);

}  // namespace smartlb::sim
