#include "smartlb/http/response_fields.hpp"

namespace smartlb::http {

bool ConnectionNames::listed(std::string_view name) const {
  for (std::size_t i = 0; i < count_; ++i)
    if (base::iequals(names_[i], name)) return true;
  for (const auto& n : more_)
    if (base::iequals(n, name)) return true;
  return false;
}

bool is_plain_event_stream(std::string_view type, std::string_view coding) {
  type = type.substr(0, type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  return base::iequals(type, "text/event-stream") && (coding.empty() || base::iequals(coding, "identity"));
}

}  // namespace smartlb::http
