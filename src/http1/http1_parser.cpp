#include "smartlb/http1/http1_parser.hpp"

#include <array>
#include <bit>
#include <cstring>

#include "smartlb/base/text.hpp"
#include "smartlb/http/header_rules.hpp"

namespace smartlb::http1 {
using namespace smartlb::io;  // the Asio/Beast vocabulary (io/beast.hpp)
namespace {

// A chunk-size line longer than this is an attack or garbage, not an extension we need.
constexpr std::size_t kMaxChunkLine = 4096;

constexpr std::array<bool, 256> make_token_table() {
  std::array<bool, 256> t{};
  for (int c = '0'; c <= '9'; ++c) t[c] = true;
  for (int c = 'a'; c <= 'z'; ++c) t[c] = true;
  for (int c = 'A'; c <= 'Z'; ++c) t[c] = true;
  for (char c : std::string_view("!#$%&'*+-.^_`|~")) t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kToken = make_token_table();

bool is_token_char(char c) { return kToken[static_cast<unsigned char>(c)]; }
// Field values and reason phrases: visible characters, obs-text, space and tab.
bool is_text_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 ? u != 0x7f : u == '\t';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The first byte in [p, end) below `below` or DEL (0x7f), or `end`. Eight bytes at a time:
// heads are a few hundred bytes and every one of them is checked, so this is on the request
// path. `below` is 0x20 (values: control characters) or 0x21 (targets: space too).
const char* find_control(const char* p, const char* end, unsigned char below) {
  if constexpr (std::endian::native == std::endian::little) {
    constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
    const std::uint64_t limit = ones * below, del = ones * 0x7f;
    for (; end - p >= 8; p += 8) {
      std::uint64_t x;
      std::memcpy(&x, p, 8);
      // Bit-twiddling "has less than" and "has zero byte" (of x ^ DEL): the lowest flagged
      // byte is exact, which is the one wanted (bytes >= 0x80 are never flagged).
      const std::uint64_t y = x ^ del;
      const std::uint64_t hit = (((x - limit) & ~x) | ((y - ones) & ~y)) & highs;
      if (hit != 0) return p + (std::countr_zero(hit) >> 3);
    }
  }
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < below || c == 0x7f) return p;
  }
  return end;
}

// Where a field value or reason phrase ends: the first control character but tab (a CR
// if the line is well formed).
[[gnu::always_inline]] inline const char* find_text_end(const char* p, const char* end) {
  const char* c = find_control(p, end, 0x20);
  while (c < end && *c == '\t') c = find_control(c + 1, end, 0x20);
  return c;
}

// A field line at p: name ":" OWS value OWS CRLF, where [p, end) holds its CRLF. The name is a
// token followed directly by ':' (so no space before the colon, and a line starting with a space
// or tab, obs-fold, is an error); the value has no control character but tab. The head's field
// lines and the trailer lines are both held to it, with the same errors. Sets `f` (the value is
// [f.value, f.cr), not yet trimmed on the right), or `e`. Inlined: the head's loop is on the
// request path, and is what it was before the trailers shared it.
struct FieldLine {
  const char* colon;
  const char* value;
  const char* cr;
};
[[gnu::always_inline]] inline bool scan_field_line(const char* p, const char* end, FieldLine& f,
                                                   beast::http::error& e) {
  const char* colon = p;
  while (is_token_char(*colon)) ++colon;
  if (colon == p || *colon != ':') {
    e = beast::http::error::bad_field;
    return false;
  }
  const char* v = colon + 1;
  while (*v == ' ' || *v == '\t') ++v;
  const char* cr = find_text_end(v, end);
  if (*cr != '\r' || cr[1] != '\n') {
    e = *cr == '\r' || *cr == '\n' ? beast::http::error::bad_line_ending : beast::http::error::bad_value;
    return false;
  }
  f = {colon, v, cr};
  return true;
}

// "HTTP/d.d" as 10*major + minor, or -1.
int parse_version(const char* p) {
  if (std::memcmp(p, "HTTP/", 5) != 0 || !is_digit(p[5]) || p[6] != '.' || !is_digit(p[7])) return -1;
  return (p[5] - '0') * 10 + (p[7] - '0');
}

}  // namespace

Http1Parser::Http1Parser(RequestHead& head)
    : body_string_(&head.body), request_(&head), fields_(&head.fields) {
  head.fields.clear();
  head.body.clear();
}

Http1Parser::Http1Parser(ResponseHead& head) : response_(&head), fields_(&head.fields) {
  head.fields.clear();
}

std::size_t Http1Parser::put(const char* data, std::size_t size, error_code& ec) {
  ec = {};
  switch (state_) {
    case State::head:
      return put_head(data, size, ec);
    case State::length: {
      if (size == 0) {
        ec = beast::http::error::need_more;
        return 0;
      }
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left_, size));
      const std::size_t took = deliver(data, n, ec);
      left_ -= took;
      if (left_ == 0) state_ = State::done;
      return took;
    }
    case State::until_eof:
      if (size == 0) {
        ec = beast::http::error::need_more;
        return 0;
      }
      return deliver(data, size, ec);
    case State::chunk_size:
    case State::chunk_data:
    case State::chunk_crlf:
    case State::trailers:
      return put_chunked(data, size, ec);
    case State::done:
      return 0;
    case State::failed:
      ec = error_;  // a failed parser takes nothing more
      return 0;
  }
  return 0;
}

void Http1Parser::put_eof(error_code& ec) {
  ec = {};
  switch (state_) {
    case State::until_eof:
      state_ = State::done;
      return;
    case State::done:
      return;
    case State::head:
      fail(ec, got_some_ ? beast::http::error::partial_message : beast::http::error::end_of_stream);
      return;
    default:
      fail(ec, beast::http::error::partial_message);
      return;
  }
}

std::size_t Http1Parser::put_head(const char* data, std::size_t size, error_code& ec) {
  if (request_ && !got_some_) {
    // Empty lines before a request line are ignored (RFC 9112 section 2.2).
    std::size_t skip = 0;
    while (skip + 1 < size && data[skip] == '\r' && data[skip + 1] == '\n') skip += 2;
    if (skip > 0) return skip;
    if (size == 1 && data[0] == '\r') {
      ec = beast::http::error::need_more;
      return 0;
    }
  }
  if (size == 0) {
    ec = beast::http::error::need_more;
    return 0;
  }
  got_some_ = true;
  // The head ends at the first empty line. Resume the search where the last put left off.
  const std::string_view text(data, size);
  const std::size_t from = scanned_ >= 3 ? scanned_ - 3 : 0;
  const std::size_t blank = text.find("\r\n\r\n", from);
  if (blank == std::string_view::npos) {
    // Not waiting for a blank line that will never come: a head of bare-LF lines is an error.
    for (std::size_t lf = text.find('\n', from); lf != std::string_view::npos; lf = text.find('\n', lf + 1))
      if (lf == 0 || text[lf - 1] != '\r') {
        fail(ec, beast::http::error::bad_line_ending);
        return 0;
      }
    scanned_ = size;
    if (size > header_limit_)
      fail(ec, beast::http::error::header_limit);
    else
      ec = beast::http::error::need_more;
    return 0;
  }
  const std::size_t head_size = blank + 4;
  if (head_size > header_limit_) {
    fail(ec, beast::http::error::header_limit);
    return 0;
  }
  // Parsed from the field list's own copy: every field is then a position in it.
  const std::string_view copy = fields_->take_text({data, blank + 2});
  if (!parse_head(copy.data(), copy.data() + copy.size(), ec) || !start_body(ec)) return 0;
  scanned_ = 0;  // from here on: trailer bytes
  return head_size;
}

bool Http1Parser::parse_head(const char* p, const char* end, error_code& ec) {
  // [p, end) is the start line and the field lines, each ending in CRLF (so is the last).
  const char* eol = request_ ? parse_request_line(p, end, ec) : parse_status_line(p, end, ec);
  if (eol == nullptr) return false;
  for (p = eol + 2; p < end;) {
    FieldLine f;
    beast::http::error e;
    if (!scan_field_line(p, end, f, e)) {
      fail(ec, e);
      return false;
    }
    const char* v_end = f.cr;
    while (v_end > f.value && (v_end[-1] == ' ' || v_end[-1] == '\t')) --v_end;
    if (!on_field({p, static_cast<std::size_t>(f.colon - p)},
                  {f.value, static_cast<std::size_t>(v_end - f.value)}, ec))
      return false;
    p = f.cr + 2;
  }
  return true;
}

const char* Http1Parser::parse_request_line(const char* p, const char* end, error_code& ec) {
  // method SP target SP HTTP/d.d CRLF
  const char* m_end = p;
  while (is_token_char(*m_end)) ++m_end;
  if (m_end == p || *m_end != ' ') {
    fail(ec, beast::http::error::bad_method);
    return nullptr;
  }
  const char* t = m_end + 1;
  const char* t_end = find_control(t, end, 0x21);  // the target ends at the first space
  if (t_end == t || *t_end != ' ') {
    fail(ec, beast::http::error::bad_target);
    return nullptr;
  }
  const char* v = t_end + 1;
  const int version = end - v >= 10 ? parse_version(v) : -1;
  if (version < 0 || v[8] != '\r' || v[9] != '\n') {
    fail(ec, beast::http::error::bad_version);
    return nullptr;
  }
  const std::string_view method(p, static_cast<std::size_t>(m_end - p));
  request_->method = beast::http::string_to_verb(method);
  request_->method_text.assign(method);
  request_->target.assign(t, static_cast<std::size_t>(t_end - t));
  request_->version = version_ = static_cast<unsigned>(version);
  return v + 8;
}

const char* Http1Parser::parse_status_line(const char* p, const char* end, error_code& ec) {
  // HTTP/1.d SP 3DIGIT [SP reason] CRLF
  const int version = end - p >= 14 ? parse_version(p) : -1;
  if (version < 10 || version > 19 || p[8] != ' ') {
    fail(ec, beast::http::error::bad_version);
    return nullptr;
  }
  const char* s = p + 9;
  if (!is_digit(s[0]) || !is_digit(s[1]) || !is_digit(s[2]) || (s[3] != ' ' && s[3] != '\r')) {
    fail(ec, beast::http::error::bad_status);
    return nullptr;
  }
  const char* reason = s[3] == ' ' ? s + 4 : s + 3;
  const char* eol = find_text_end(reason, end);
  if (*eol != '\r' || eol[1] != '\n') {
    fail(ec, beast::http::error::bad_reason);
    return nullptr;
  }
  response_->status = static_cast<unsigned>((s[0] - '0') * 100 + (s[1] - '0') * 10 + (s[2] - '0'));
  response_->reason.assign(reason, static_cast<std::size_t>(eol - reason));
  response_->version = version_ = static_cast<unsigned>(version);
  return eol;
}

bool Http1Parser::on_field(std::string_view name, std::string_view value, error_code& ec) {
  const beast::http::field id = field_id(name);
  fields_->add_in_text(id, name, value);
  switch (id) {
    case beast::http::field::content_length: {
      if (content_length_) {
        fail(ec, beast::http::error::multiple_content_length);
        return false;
      }
      if (te_present_ || value.empty()) {
        fail(ec, beast::http::error::bad_content_length);
        return false;
      }
      std::uint64_t n = 0;
      for (char c : value) {
        if (!is_digit(c) || n > (UINT64_MAX - 9) / 10) {
          fail(ec, beast::http::error::bad_content_length);
          return false;
        }
        n = n * 10 + static_cast<unsigned>(c - '0');
      }
      content_length_ = n;
      return true;
    }
    case beast::http::field::transfer_encoding: {
      if (content_length_) {
        fail(ec, beast::http::error::bad_transfer_encoding);
        return false;
      }
      te_present_ = true;
      bool ok = true;
      http::for_each_list_token(value, [&](std::string_view coding) {
        // Chunked at most once. A request may have no other coding (we could not decode its
        // length); a response's last coding decides: chunked, or read until close.
        const bool is_chunked = base::iequals(coding, "chunked");
        if ((is_chunked && chunked_seen_) || (request_ && (!is_chunked || chunked_))) ok = false;
        chunked_seen_ = chunked_seen_ || is_chunked;
        chunked_ = is_chunked;
      });
      if (!ok) {
        fail(ec, beast::http::error::bad_transfer_encoding);
        return false;
      }
      return true;
    }
    case beast::http::field::connection:
      http::for_each_list_token(value, [&](std::string_view option) {
        if (base::iequals(option, "close"))
          conn_close_ = true;
        else if (base::iequals(option, "keep-alive"))
          conn_keep_alive_ = true;
      });
      return true;
    default:
      return true;
  }
}

bool Http1Parser::start_body(error_code& ec) {
  keep_alive_ = version_ >= 11 ? !conn_close_ : conn_keep_alive_ && !conn_close_;
  if (request_) {
    request_->keep_alive = keep_alive_;
    if (te_present_ && (!chunked_ || version_ < 11)) {
      fail(ec, beast::http::error::bad_transfer_encoding);  // a length we cannot know
      return false;
    }
  } else {
    const unsigned status = response_->status;
    if (skip_body_ || status / 100 == 1 || status == 204 || status == 304) {
      state_ = State::done;
      return true;
    }
    // RFC 9112 section 6.1: Transfer-Encoding in HTTP/1.0 means faulty framing: close after.
    if (te_present_ && version_ < 11) keep_alive_ = false;
    if (te_present_ && !chunked_) {
      state_ = State::until_eof;  // RFC 9112 section 6.3: the last coding is not chunked
      keep_alive_ = false;
      return true;
    }
  }
  if (chunked_) {
    state_ = State::chunk_size;
  } else if (content_length_) {
    if (body_limit_ && *content_length_ > *body_limit_) {
      fail(ec, beast::http::error::body_limit);
      return false;
    }
    left_ = *content_length_;
    // Room for the body as it is announced, up to a bound: a head alone must not make the
    // proxy allocate what Content-Length claims (MAX_REQUEST_BODY_BYTES on every connection);
    // a larger body grows the string as it arrives.
    if (body_string_) body_string_->reserve(static_cast<std::size_t>(std::min(left_, kMaxBodyReserve)));
    state_ = left_ > 0 ? State::length : State::done;
  } else if (request_) {
    state_ = State::done;  // a request without framing has no body
  } else {
    state_ = State::until_eof;
    keep_alive_ = false;
  }
  return true;
}

// A chunk-size line without its CRLF, [p, cr): hex digits (at most 2^56), then maybe an
// extension: ';' and anything printable, ignored. Whitespace (BWS) may come before the ';' but
// not instead of it (RFC 9112 section 7.1.1): `5 \r\n` is an error. False: a bad chunk.
static bool read_chunk_size(const char* p, const char* cr, std::uint64_t& n) {
  n = 0;
  const char* c = p;
  for (; c < cr; ++c) {
    const int h = base::hex_digit_value(*c);
    if (h < 0) break;
    if (n > (std::uint64_t{1} << 56)) return false;
    n = n * 16 + static_cast<unsigned>(h);
  }
  if (c == p) return false;
  if (c == cr) return true;
  while (*c == ' ' || *c == '\t') ++c;  // stops at *cr at the latest
  if (*c != ';') return false;
  for (; c < cr; ++c)
    if (!is_text_char(*c)) return false;
  return true;
}

std::size_t Http1Parser::put_chunked(const char* data, std::size_t size, error_code& ec) {
  std::size_t used = 0;
  while (state_ != State::done) {
    const char* p = data + used;
    const std::size_t avail = size - used;
    switch (state_) {
      case State::chunk_size:
      case State::trailers: {
        const auto* lf = static_cast<const char*>(std::memchr(p, '\n', avail));
        if (lf == nullptr) {
          const std::size_t limit = state_ == State::chunk_size ? kMaxChunkLine : header_limit_;
          if (avail > limit)
            fail(ec, state_ == State::chunk_size ? beast::http::error::bad_chunk
                                                 : beast::http::error::header_limit);
          else
            ec = beast::http::error::need_more;
          return used;
        }
        const char* cr = lf - 1;
        if (state_ == State::chunk_size && static_cast<std::size_t>(lf - p) > kMaxChunkLine) {
          fail(ec, beast::http::error::bad_chunk);
          return used;
        }
        if (lf == p || *cr != '\r') {
          fail(ec, beast::http::error::bad_line_ending);
          return used;
        }
        if (state_ == State::trailers) {
          // Trailer fields are field lines, checked as the head's are (RFC 9112 section 7.1.2),
          // then dropped (nothing downstream needs them); they count against the head's limit.
          scanned_ += static_cast<std::size_t>(lf + 1 - p);
          if (scanned_ > header_limit_) {
            fail(ec, beast::http::error::header_limit);
            return used;
          }
          if (cr == p) {
            state_ = State::done;
          } else {
            FieldLine f;
            beast::http::error e;
            if (!scan_field_line(p, lf + 1, f, e)) {  // the head's errors, a bare CR's too
              fail(ec, e);
              return used;
            }
          }
          used = static_cast<std::size_t>(lf + 1 - data);
          break;
        }
        std::uint64_t n = 0;
        if (!read_chunk_size(p, cr, n)) {
          fail(ec, beast::http::error::bad_chunk);
          return used;
        }
        used = static_cast<std::size_t>(lf + 1 - data);
        if (n == 0) {
          state_ = State::trailers;
        } else {
          if (body_limit_ && body_total_ + n > *body_limit_) {
            fail(ec, beast::http::error::body_limit);
            return used;
          }
          left_ = n;
          state_ = State::chunk_data;
        }
        break;
      }
      case State::chunk_data: {
        if (avail == 0) return used;
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left_, avail));
        const std::size_t took = deliver(p, n, ec);
        used += took;
        left_ -= took;
        body_total_ += took;
        if (left_ == 0) state_ = State::chunk_crlf;
        if (ec || view_mode_) return used;  // one view per put: the caller takes it first
        break;
      }
      case State::chunk_crlf: {
        if (avail < 2) {
          if (avail == 1 && *p != '\r')
            fail(ec, beast::http::error::bad_chunk);
          else
            ec = beast::http::error::need_more;
          return used;
        }
        if (p[0] != '\r' || p[1] != '\n') {
          fail(ec, beast::http::error::bad_chunk);
          return used;
        }
        used += 2;
        state_ = State::chunk_size;
        break;
      }
      default:
        return used;
    }
  }
  return used;
}

std::size_t Http1Parser::deliver(const char* data, std::size_t size, error_code& ec) {
  if (view_mode_) {
    view_ = {data, size};
    return size;
  }
  if (body_string_) {
    body_string_->append(data, size);
    return size;
  }
  const std::size_t n = std::min(out_left_, size);
  if (n > 0) std::memcpy(out_, data, n);
  out_ += n;
  out_left_ -= n;
  // Like beast::http::buffer_body: what did not fit waits for the next buffer.
  if (n < size) ec = beast::http::error::need_buffer;
  return n;
}

}  // namespace smartlb::http1
