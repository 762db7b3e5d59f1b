#pragma once
// Message heads without Beast's header map. Beast's parser (http::basic_parser) still does all
// the parsing and its checks; these classes only decide where the results go.
//
// Why: basic_fields allocates one node per field and keeps a case-insensitive tree of them,
// and the proxy then erased and re-set fields on it before writing a head out. A proxy looks
// up a handful of names and copies the rest through, so a flat list is enough; owned by the
// connection and reused for every message on it, it allocates nothing in steady state.
// Together that was a third of the instructions per proxied request.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "net/beast.hpp"

namespace smartlb::net {

// The fields of one head in arrival order, their text in one reused buffer.
class HeaderList {
 public:
  struct Field {
    http::field id;  // field::unknown for names Beast does not know
    std::string_view name;
    std::string_view value;
  };

  void clear() {
    text_.clear();
    entries_.clear();
  }
  void add(http::field id, std::string_view name, std::string_view value);
  std::size_t size() const { return entries_.size(); }
  Field operator[](std::size_t i) const {
    const Entry& e = entries_[i];
    return {e.id, {text_.data() + e.name_at, e.name_len}, {text_.data() + e.value_at, e.value_len}};
  }
  // The first value of a field, "" when absent. By id for names Beast knows (cheaper).
  std::string_view get(http::field id) const;
  std::string_view get(std::string_view name) const;  // case-insensitive
  bool contains(http::field id) const;

 private:
  struct Entry {
    http::field id;
    std::uint32_t name_at, name_len, value_at, value_len;
  };
  std::string text_;
  std::vector<Entry> entries_;
};

// A client's request, owned by its connection and refilled for each request on it.
struct RequestHead {
  http::verb method = http::verb::unknown;
  std::string method_text;
  std::string target;
  unsigned version = 11;
  bool keep_alive = true;
  HeaderList fields;
  std::string body;  // the whole body (requests are buffered: they may be sent more than once)
};

// A backend's response head, owned by the upstream connection and refilled per response.
struct ResponseHead {
  unsigned status = 0;
  std::string reason;
  unsigned version = 11;
  HeaderList fields;
};

// Parses one request into a RequestHead (body included).
class RequestReader final : public http::basic_parser<true> {
 public:
  explicit RequestReader(RequestHead& head);

 private:
  void on_request_impl(http::verb method, beast::string_view method_str, beast::string_view target,
                       int version, error_code& ec) override;
  void on_response_impl(int, beast::string_view, int, error_code&) override {}
  void on_field_impl(http::field id, beast::string_view name, beast::string_view value,
                     error_code& ec) override;
  void on_header_impl(error_code& ec) override;
  void on_body_init_impl(const boost::optional<std::uint64_t>& length, error_code& ec) override;
  std::size_t on_body_impl(beast::string_view data, error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t, beast::string_view, error_code& ec) override { ec = {}; }
  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view data, error_code& ec) override;
  void on_finish_impl(error_code& ec) override { ec = {}; }

  RequestHead& head_;
};

// Parses one response head into a ResponseHead; the body goes into the caller's buffer, set
// with `body_buffer` before each read (like http::buffer_body: a full buffer stops the read
// with error::need_buffer).
class ResponseReader final : public http::basic_parser<false> {
 public:
  explicit ResponseReader(ResponseHead& head);

  void body_buffer(char* data, std::size_t size) {
    out_ = data;
    out_left_ = size;
  }
  std::size_t body_buffer_left() const { return out_left_; }

 private:
  void on_request_impl(http::verb, beast::string_view, beast::string_view, int, error_code&) override {}
  void on_response_impl(int status, beast::string_view reason, int version, error_code& ec) override;
  void on_field_impl(http::field id, beast::string_view name, beast::string_view value,
                     error_code& ec) override;
  void on_header_impl(error_code& ec) override { ec = {}; }
  void on_body_init_impl(const boost::optional<std::uint64_t>&, error_code& ec) override { ec = {}; }
  std::size_t on_body_impl(beast::string_view data, error_code& ec) override;
  void on_chunk_header_impl(std::uint64_t, beast::string_view, error_code& ec) override { ec = {}; }
  std::size_t on_chunk_body_impl(std::uint64_t, beast::string_view data, error_code& ec) override {
    return on_body_impl(data, ec);
  }
  void on_finish_impl(error_code& ec) override { ec = {}; }

  ResponseHead& head_;
  char* out_ = nullptr;
  std::size_t out_left_ = 0;
};

}  // namespace smartlb::net
