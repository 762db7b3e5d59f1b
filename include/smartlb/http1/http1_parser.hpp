#pragma once
// A strict HTTP/1.1 message parser for the proxy's two directions, without I/O: bytes go in
// through put(), the head goes into a RequestHead or ResponseHead, the body to a sink.
//
// Why not Beast's parser, on the request path: it reports every field through a virtual call after looking
// its name up in a table of all the names it knows, splits Connection and Transfer-Encoding into token lists
// as it goes, and is fed through composed operations built for any body type. This one waits for the whole
// head (it is small and usually arrives in one read), then walks it once.
//
// The rules it keeps (the ones a proxy needs against request smuggling and response splitting):
//   - lines end in CRLF; a bare CR or LF, or a control character in a value, is an error;
//   - a field name is a token and is followed directly by ':' (no space before the colon);
//     obs-fold (a line starting with a space or tab) is an error;
//   - Content-Length is digits only, once; Transfer-Encoding and Content-Length together are
//     an error; a request's Transfer-Encoding must be exactly `chunked` (and not in HTTP/1.0);
//     a response whose last coding is not chunked is read until the connection closes, and
//     one with Transfer-Encoding in HTTP/1.0 is not kept alive (RFC 9112 section 6.1);
//   - a head of bare-LF lines fails at once instead of waiting for a CRLF blank line;
//   - chunk sizes are hex digits (an optional extension after ';' is skipped), every chunk
//     ends in CRLF; whitespace after a chunk size only before a ';' (RFC 9112 section 7.1.1:
//     `5 \r\n` is bad_chunk);
//   - trailer lines are field lines, held to the rules above for the head's field lines, with
//     the same errors (bad_field, bad_value, bad_line_ending), then dropped;
//   - the head is at most header_limit bytes, a body at most body_limit bytes.
// Errors are Beast's beast::http::error codes, so callers classify them the same way as before.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "smartlb/http1/http_head.hpp"
#include "smartlb/http1/io_vocabulary.hpp"

namespace smartlb::http1 {

class Http1Parser {
 public:
  Http1Parser(const Http1Parser&) = delete;
  Http1Parser& operator=(const Http1Parser&) = delete;

  void header_limit(std::size_t bytes) { header_limit_ = bytes; }
  void body_limit(std::optional<std::uint64_t> bytes) { body_limit_ = bytes; }
  // A request body's storage is reserved from its Content-Length up to this; past it, it grows
  // with the bytes that actually arrive.
  static constexpr std::uint64_t kMaxBodyReserve = 256 * 1024;
  // A response to HEAD: the head says how long the body would be, but there is none.
  void skip(bool no_body) { skip_body_ = no_body; }

  // Consumes what it can of `data` and returns how many bytes it used.
  //  - ec == beast::http::error::need_more: it stopped before the end of `data` (or got none) because
  //    it needs more bytes to go on, e.g. to finish a line (what it used is still used);
  //  - ec == beast::http::error::need_buffer: the body sink is full (response: see body_buffer);
  //  - any other ec: the message is malformed; the parser stays failed.
  // A call returns after the head is complete, so a caller can act on it before the body.
  std::size_t put(const char* data, std::size_t size, error_code& ec);
  std::size_t put(asio::const_buffer b, error_code& ec) {
    return put(static_cast<const char*>(b.data()), b.size(), ec);
  }
  // The peer closed: the end of a body read until close, or else a truncated message.
  void put_eof(error_code& ec);

  bool got_some() const { return got_some_; }
  bool is_header_done() const { return state_ > State::head && state_ != State::failed; }
  bool is_done() const { return state_ == State::done; }
  // After the head: whether the connection may carry another message after this one.
  bool keep_alive() const { return keep_alive_; }
  std::optional<std::uint64_t> content_length() const { return content_length_; }
  bool chunked() const { return chunked_; }
  // The body ends when the connection does (a response without length or chunking).
  bool need_eof() const { return state_ == State::until_eof; }

 protected:
  explicit Http1Parser(RequestHead& head);
  explicit Http1Parser(ResponseHead& head);

  // Where body bytes go: a request's into its head, a response's into the caller's buffer or,
  // in view mode, nowhere: the body bytes of one put are left where they are, as view_.
  std::string* body_string_ = nullptr;
  char* out_ = nullptr;
  std::size_t out_left_ = 0;
  bool view_mode_ = false;
  std::string_view view_;

 private:
  enum class State : std::uint8_t {
    head,        // waiting for the whole head
    length,      // Content-Length body
    until_eof,   // response body read until the connection closes
    chunk_size,  // a chunk-size line
    chunk_data,  // a chunk's data
    chunk_crlf,  // the CRLF after a chunk's data
    trailers,    // trailer lines after the last chunk, up to an empty line
    done,
    failed,
  };

  std::size_t put_head(const char* data, std::size_t size, error_code& ec);
  bool parse_head(const char* p, const char* end, error_code& ec);
  // Both return the start line's CR, or nullptr (failed).
  const char* parse_request_line(const char* p, const char* end, error_code& ec);
  const char* parse_status_line(const char* p, const char* end, error_code& ec);
  bool on_field(std::string_view name, std::string_view value, error_code& ec);
  bool start_body(error_code& ec);
  std::size_t put_chunked(const char* data, std::size_t size, error_code& ec);
  // Hands body bytes to the sink; returns how many it took (fewer: need_buffer).
  std::size_t deliver(const char* data, std::size_t size, error_code& ec);
  void fail(error_code& ec, beast::http::error e) {
    ec = e;
    error_ = e;
    state_ = State::failed;
  }

  RequestHead* request_ = nullptr;
  ResponseHead* response_ = nullptr;
  HeaderList* fields_ = nullptr;
  State state_ = State::head;
  beast::http::error error_ = beast::http::error::bad_value;  // once failed
  bool got_some_ = false;
  bool skip_body_ = false;
  bool keep_alive_ = true;
  bool chunked_ = false;       // the last transfer coding so far is chunked
  bool chunked_seen_ = false;  // chunked was one of the codings
  bool te_present_ = false;
  bool conn_close_ = false, conn_keep_alive_ = false;
  unsigned version_ = 11;
  std::size_t scanned_ = 0;  // head bytes already searched for the blank line; then trailer bytes
  std::size_t header_limit_ = 8 * 1024;
  std::optional<std::uint64_t> body_limit_;
  std::optional<std::uint64_t> content_length_;
  std::uint64_t left_ = 0;        // of the Content-Length body or of the current chunk
  std::uint64_t body_total_ = 0;  // body bytes so far (chunked; for body_limit)
};

// Parses one request into a RequestHead, body included.
class RequestReader final : public Http1Parser {
 public:
  explicit RequestReader(RequestHead& head) : Http1Parser(head) {}

  // View mode, for a body streamed instead of buffered (a large upload): as ResponseReader's,
  // the body bytes are no longer appended to the head's body.
  void body_views(bool on) { view_mode_ = on; }
  std::string_view take_body_view() { return std::exchange(view_, {}); }
};

// Parses one response into a ResponseHead; the body goes into the caller's buffer, set with
// `body_buffer` before each read (like beast::http::buffer_body: a full buffer stops the read with
// beast::http::error::need_buffer).
class ResponseReader final : public Http1Parser {
 public:
  explicit ResponseReader(ResponseHead& head) : Http1Parser(head) {}

  void body_buffer(char* data, std::size_t size) {
    out_ = data;
    out_left_ = size;
  }
  std::size_t body_buffer_left() const { return out_left_; }

  // View mode, for relaying without a copy: each put hands over at most one run of body bytes
  // as a view into the bytes it was given (counted as used), and stops there. The view is
  // valid as long as those bytes are: for a flat_buffer, until its next prepare().
  void body_views(bool on) { view_mode_ = on; }
  std::string_view take_body_view() { return std::exchange(view_, {}); }
};

}  // namespace smartlb::http1
