#include "smartlb/http/methods.hpp"

namespace smartlb::http {

bool is_api_method(std::string_view method) {
  // Called for every request: dispatch on the length before comparing.
  switch (method.size()) {
    case 3:
      return method == "GET" || method == "PUT";
    case 4:
      return method == "POST" || method == "HEAD";
    case 5:
      return method == "PATCH";
    case 6:
      return method == "DELETE";
    case 7:
      return method == "OPTIONS";
    default:
      return false;
  }
}

}  // namespace smartlb::http
