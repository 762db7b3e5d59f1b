#include "smartlb/http1/http_head.hpp"

#include <cassert>
#include <cstring>

namespace smartlb::http1 {
using namespace smartlb::io;  // the Asio/Beast vocabulary (io/beast.hpp)

void HeaderList::add(beast::http::field id, std::string_view name, std::string_view value) {
  Entry e;
  e.id = id;
  e.name_at = static_cast<std::uint32_t>(text_.size());
  e.name_len = static_cast<std::uint32_t>(name.size());
  e.value_at = e.name_at + e.name_len;
  e.value_len = static_cast<std::uint32_t>(value.size());
  text_.append(name).append(value);
  entries_.push_back(e);
}

std::string_view HeaderList::take_text(std::string_view head) {
  text_.assign(head.data(), head.size());
  return text_;
}

void HeaderList::add_in_text(beast::http::field id, std::string_view name, std::string_view value) {
  assert(name.data() >= text_.data() && value.data() + value.size() <= text_.data() + text_.size());
  entries_.push_back(Entry{
      id, static_cast<std::uint32_t>(name.data() - text_.data()), static_cast<std::uint32_t>(name.size()),
      static_cast<std::uint32_t>(value.data() - text_.data()), static_cast<std::uint32_t>(value.size())});
}

std::string_view HeaderList::get(beast::http::field id) const {
  assert(has_field_id(id));  // any other name is stored as unknown: look it up by name
  for (const Entry& e : entries_)
    if (e.id == id) return {text_.data() + e.value_at, e.value_len};
  return {};
}

bool HeaderList::contains(beast::http::field id) const {
  assert(has_field_id(id));
  for (const Entry& e : entries_)
    if (e.id == id) return true;
  return false;
}

std::string_view HeaderList::get(std::string_view name) const {
  for (const Entry& e : entries_)
    if (e.name_len == name.size() && beast::iequals({text_.data() + e.name_at, e.name_len}, name))
      return {text_.data() + e.value_at, e.value_len};
  return {};
}

namespace {

bool same_lowercase(std::string_view name, std::string_view lower) {
  for (std::size_t i = 0; i < lower.size(); ++i)
    if ((static_cast<unsigned char>(name[i]) | 0x20) != static_cast<unsigned char>(lower[i])) return false;
  return true;
}

}  // namespace

beast::http::field field_id(std::string_view name) {
  // By length first: at most one comparison per name. `| 0x20` lowercases letters and keeps
  // '-'; no other token character folds onto a letter or '-'.
  const auto is = [&](std::string_view lower) { return same_lowercase(name, lower); };
  switch (name.size()) {
    case 4:
      return is("host") ? beast::http::field::host : beast::http::field::unknown;
    case 6:
      return is("expect") ? beast::http::field::expect : beast::http::field::unknown;
    case 10:
      return is("connection") ? beast::http::field::connection : beast::http::field::unknown;
    case 11:
      return is("retry-after") ? beast::http::field::retry_after : beast::http::field::unknown;
    case 12:
      return is("content-type") ? beast::http::field::content_type : beast::http::field::unknown;
    case 13:
      return is("authorization") ? beast::http::field::authorization : beast::http::field::unknown;
    case 14:
      return is("content-length") ? beast::http::field::content_length : beast::http::field::unknown;
    case 16:
      return is("content-encoding") ? beast::http::field::content_encoding : beast::http::field::unknown;
    case 17:
      return is("transfer-encoding") ? beast::http::field::transfer_encoding : beast::http::field::unknown;
    default:
      return beast::http::field::unknown;
  }
}

bool has_field_id(beast::http::field id) {
  switch (id) {
    case beast::http::field::host:
    case beast::http::field::expect:
    case beast::http::field::connection:
    case beast::http::field::retry_after:
    case beast::http::field::content_type:
    case beast::http::field::authorization:
    case beast::http::field::content_length:
    case beast::http::field::content_encoding:
    case beast::http::field::transfer_encoding:
      return true;
    default:
      return false;
  }
}

}  // namespace smartlb::http1
