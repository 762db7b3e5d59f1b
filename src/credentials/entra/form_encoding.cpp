#include "smartlb/credentials/entra/token_request.hpp"

#include "smartlb/base/text.hpp"

namespace smartlb::credentials::entra {

std::string form_encode(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (unsigned char c : value) {
    const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                            c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += base::hex_digit(c >> 4, true);
      out += base::hex_digit(c & 15, true);
    }
  }
  return out;
}

std::string resource_of_scope(std::string_view scope) {
  constexpr std::string_view kDefault = "/.default";
  if (scope.size() > kDefault.size() && scope.ends_with(kDefault)) scope.remove_suffix(kDefault.size());
  return std::string(scope);
}

}  // namespace smartlb::credentials::entra
