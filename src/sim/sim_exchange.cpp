#include "smartlb/sim/sim_exchange.hpp"

#include "smartlb/sim/error_bodies.hpp"

#include <algorithm>
#include <cctype>

namespace smartlb::sim {

std::optional<std::string_view> find_header(const HeaderList& headers, std::string_view name) {
  const auto equal_ci = [](std::string_view a, std::string_view b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(),
                      [](unsigned char x, unsigned char y) { return std::tolower(x) == std::tolower(y); });
  };
  for (const auto& [key, value] : headers) {
    if (equal_ci(key, name)) return std::string_view(value);
  }
  return std::nullopt;
}

SimResponse json_response(int status, std::string body) {
  SimResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

SimResponse bad_request_response(std::string_view message, std::optional<std::string_view> code,
                                 std::optional<std::string_view> param) {
  return json_response(400, api_error_body(message, code, param));
}

}  // namespace smartlb::sim
