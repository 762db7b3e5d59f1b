#pragma once
// Message heads without Beast's header map (Http1Parser fills them).
//
// Why: basic_fields allocates one node per field and keeps a case-insensitive tree of them,
// and the proxy then erased and re-set fields on it before writing a head out. A proxy looks
// up a handful of names and copies the rest through, so a flat list is enough; owned by the
// connection and reused for every message on it, it allocates nothing in steady state
// (docs/architecture.md, "Beast traps handled").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/http1/io_vocabulary.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb::http1 {

// The fields of one head in arrival order, their text in one reused buffer.
class HeaderList {
 public:
  struct Field {
    beast::http::field id;  // see field_id: only the names the proxy looks up by id have one
    std::string_view name;
    std::string_view value;
  };

  void clear() {
    text_.clear();
    entries_.clear();
  }
  void add(beast::http::field id, std::string_view name, std::string_view value);
  // For a parser: copies a whole head into the list at once and returns the copy, so that
  // fields found in it are added by position (add_in_text) instead of copied one by one.
  std::string_view take_text(std::string_view head);
  void add_in_text(beast::http::field id, std::string_view name,
                   std::string_view value);  // views into take_text's copy
  std::size_t size() const { return entries_.size(); }
  Field operator[](std::size_t i) const {
    const Entry& e = entries_[i];
    return {e.id, {text_.data() + e.name_at, e.name_len}, {text_.data() + e.value_at, e.value_len}};
  }
  // The first value of a field, "" when absent. By id (cheaper) for the names field_id knows.
  std::string_view get(beast::http::field id) const;
  std::string_view get(std::string_view name) const;  // case-insensitive
  bool contains(beast::http::field id) const;
  // The heap room its text and entries hold (a short text lives inside the string), and that
  // room given back (the list then empty).
  std::size_t capacity() const {
    const std::size_t text = text_.capacity() > std::string().capacity() ? text_.capacity() : 0;
    return text + entries_.capacity() * sizeof(Entry);
  }
  void release() {
    std::string().swap(text_);
    std::vector<Entry>().swap(entries_);
  }

 private:
  struct Entry {
    beast::http::field id;
    std::uint32_t name_at, name_len, value_at, value_len;
  };
  std::string text_;
  std::vector<Entry> entries_;
};

// The id of the fields the proxy looks up by id (Host, Content-Length, Transfer-Encoding,
// Connection, Expect, Authorization, Retry-After, Content-Type, Content-Encoding), else
// beast::http::field::unknown. A short list instead of Beast's table of every name: a lookup per
// field of every message is on the request path.
beast::http::field field_id(std::string_view name);
bool has_field_id(beast::http::field id);

// A client's request, owned by its connection and refilled for each request on it.
struct RequestHead {
  beast::http::verb method = beast::http::verb::unknown;
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

}  // namespace smartlb::http1
