#include "net/http_head.hpp"

#include <cstring>

namespace smartlb::net {

void HeaderList::add(http::field id, std::string_view name, std::string_view value) {
  Entry e;
  e.id = id;
  e.name_at = static_cast<std::uint32_t>(text_.size());
  e.name_len = static_cast<std::uint32_t>(name.size());
  e.value_at = e.name_at + e.name_len;
  e.value_len = static_cast<std::uint32_t>(value.size());
  text_.append(name).append(value);
  entries_.push_back(e);
}

std::string_view HeaderList::get(http::field id) const {
  for (const Entry& e : entries_)
    if (e.id == id) return {text_.data() + e.value_at, e.value_len};
  return {};
}

bool HeaderList::contains(http::field id) const {
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

RequestReader::RequestReader(RequestHead& head) : head_(head) {
  head_.fields.clear();
  head_.body.clear();
}

void RequestReader::on_request_impl(http::verb method, beast::string_view method_str,
                                    beast::string_view target, int version, error_code& ec) {
  head_.method = method;
  head_.method_text.assign(method_str.data(), method_str.size());
  head_.target.assign(target.data(), target.size());
  head_.version = static_cast<unsigned>(version);
  ec = {};
}

void RequestReader::on_field_impl(http::field id, beast::string_view name, beast::string_view value,
                                  error_code& ec) {
  head_.fields.add(id, name, value);
  ec = {};
}

void RequestReader::on_header_impl(error_code& ec) {
  head_.keep_alive = keep_alive();
  ec = {};
}

void RequestReader::on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code& ec) {
  // The parser has already checked the length against body_limit.
  if (length) head_.body.reserve(static_cast<std::size_t>(*length));
  ec = {};
}

std::size_t RequestReader::on_body_impl(beast::string_view data, error_code& ec) {
  head_.body.append(data.data(), data.size());
  ec = {};
  return data.size();
}

std::size_t RequestReader::on_chunk_body_impl(std::uint64_t, beast::string_view data, error_code& ec) {
  return on_body_impl(data, ec);
}

ResponseReader::ResponseReader(ResponseHead& head) : head_(head) { head_.fields.clear(); }

void ResponseReader::on_response_impl(int status, beast::string_view reason, int version,
                                      error_code& ec) {
  head_.status = static_cast<unsigned>(status);
  head_.reason.assign(reason.data(), reason.size());
  head_.version = static_cast<unsigned>(version);
  ec = {};
}

void ResponseReader::on_field_impl(http::field id, beast::string_view name, beast::string_view value,
                                   error_code& ec) {
  head_.fields.add(id, name, value);
  ec = {};
}

std::size_t ResponseReader::on_body_impl(beast::string_view data, error_code& ec) {
  const std::size_t n = std::min(out_left_, data.size());
  if (n > 0) std::memcpy(out_, data.data(), n);
  out_ += n;
  out_left_ -= n;
  // Like http::buffer_body: what did not fit waits for the next buffer.
  ec = n == data.size() ? error_code{} : error_code(http::error::need_buffer);
  return n;
}

}  // namespace smartlb::net
