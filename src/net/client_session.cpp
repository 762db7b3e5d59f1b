// One client connection: read and validate requests, hand each to the forwarder, keep the
// connection alive between them, and leave promptly when the server drains.
#include <spdlog/spdlog.h>

#include "net/replies.hpp"
#include "net/worker.hpp"
#include "smartlb/header_rules.hpp"
#include "smartlb/request_target.hpp"

namespace smartlb::net {
namespace {

// Keeps the session listed in its worker's registry for as long as it lives.
class SessionRegistration {
 public:
  SessionRegistration(Worker& w, beast::tcp_stream& stream) : w_(w) {
    entry_.stream = &stream;
    it_ = w_.sessions.insert(w_.sessions.end(), &entry_);
    w_.shared.connections.fetch_add(1, std::memory_order_relaxed);
  }
  ~SessionRegistration() {
    w_.sessions.erase(it_);
    if (w_.shared.connections.fetch_sub(1, std::memory_order_acq_rel) == 1 &&
        w_.shared.draining.load() && w_.shared.on_drained)
      w_.shared.on_drained();
  }
  SessionEntry& entry() { return entry_; }

 private:
  Worker& w_;
  SessionEntry entry_;
  std::list<SessionEntry*>::iterator it_;
};

std::string new_request_id(FastRandom& rng) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string id(32, '0');
  std::uint64_t a = rng.next(), b = rng.next();
  for (int i = 0; i < 16; ++i) {
    id[i] = hex[(a >> (i * 4)) & 0xf];
    id[16 + i] = hex[(b >> (i * 4)) & 0xf];
  }
  return id;
}

// A request id the client sent is kept if it is short and printable.
bool acceptable_request_id(std::string_view v) {
  if (v.empty() || v.size() > 128) return false;
  for (char c : v)
    if (c <= 0x20 || c >= 0x7f) return false;
  return true;
}

// "" when the request head is acceptable, else why not (for a 400).
std::string validate_head(const Request& req, const Config& cfg) {
  FramingInput in;
  in.version = req.version();
  std::size_t count = 0;
  for (const auto& f : req) {
    ++count;
    switch (f.name()) {
      case http::field::transfer_encoding: in.transfer_encoding.push_back(f.value()); break;
      case http::field::content_length: in.content_length.push_back(f.value()); break;
      case http::field::host: ++in.host_count; break;
      default: break;
    }
  }
  if (count > cfg.max_header_count) return "too many header fields";
  if (req.version() != 10 && req.version() != 11) return "unsupported HTTP version";
  if (auto why = check_request_framing(in); !why.empty()) return why;
  if (!parse_request_target(req.target())) return "the request target must be a path (origin-form)";
  return {};
}

}  // namespace

asio::awaitable<void> run_client_session(Worker& w, tcp::socket socket) {
  const Config& cfg = w.shared.cfg;
  beast::tcp_stream stream(std::move(socket));
  error_code ignored;
  stream.socket().set_option(tcp::no_delay(true), ignored);
  SessionRegistration registration(w, stream);
  beast::flat_buffer buffer;  // reused for every request on this connection
  buffer.reserve(2048);       // most requests in one read (Beast would start at 512 bytes)

  for (;;) {
    if (w.draining) break;
    http::request_parser<http::string_body> parser;
    parser.header_limit(16 * 1024);
    parser.body_limit(cfg.max_request_body_bytes);

    registration.entry().idle = buffer.size() == 0;  // a drain may cut an idle wait short
    stream.expires_after(cfg.client_idle_timeout);
    auto [hec, hn] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
    registration.entry().idle = false;
    if (hec) {
      if (hec == http::error::end_of_stream || hec == beast::error::timeout ||
          hec == asio::error::operation_aborted || hec == asio::error::connection_reset ||
          hec == asio::error::eof || !parser.got_some())
        break;
      ErrorReply r;
      if (hec == http::error::header_limit) {
        r.status = http::status::request_header_fields_too_large;
        r.message = "Request header fields too large.";
      } else if (hec == http::error::body_limit) {
        r.status = http::status::payload_too_large;
        r.message = "Request body too large.";
      } else {
        r.message = "Malformed HTTP request.";
      }
      co_await write_error_reply(stream, r, std::chrono::seconds(5));
      break;
    }

    Request& head = parser.get();
    RequestRecord rec;
    rec.start = w.shared.clock.now();
    if (w.shared.observer) w.shared.observer->on_request_start();
    // Every way out of this iteration (answered, refused, client gone) ends the request once.
    struct FinishOnExit {
      Worker& w;
      RequestRecord& rec;
      ~FinishOnExit() { finish_request(w, rec); }
    } finish_on_exit{w, rec};
    rec.method = std::string(head.method_string());
    {
      const std::string_view target = head.target();
      rec.path = std::string(target.substr(0, target.find('?')));
    }
    if (auto it = head.find("x-request-id"); it != head.end() && acceptable_request_id(it->value()))
      rec.request_id = std::string(it->value());
    else
      rec.request_id = new_request_id(w.rng);

    ErrorReply bad;
    bad.version = head.version();
    bad.request_id = rec.request_id;
    std::string why = validate_head(head, cfg);
    if (!why.empty()) {
      bad.message = why;
      rec.status = 400;
      co_await write_error_reply(stream, bad, std::chrono::seconds(5));
      break;  // framing errors leave the stream in an unknown state: close
    }
    if (w.shared.client_auth.enabled()) {
      auto api_key = head.find("api-key");
      auto authz = head.find(http::field::authorization);
      const std::string_view key_value =
          api_key == head.end() ? std::string_view{} : std::string_view(api_key->value());
      const std::string_view authz_value =
          authz == head.end() ? std::string_view{} : std::string_view(authz->value());
      if (!w.shared.client_auth.allows(key_value, authz_value)) {
        bad.status = http::status::unauthorized;
        bad.message = "Access denied: the api-key (or Bearer token) is not one of CLIENT_API_KEYS.";
        bad.code = "invalid_api_key";
        rec.status = 401;
        // The body is unread, so the connection cannot carry another request.
        co_await write_error_reply(stream, bad, std::chrono::seconds(5));
        break;
      }
    }

    if (!parser.is_done()) {
      if (auto it = head.find(http::field::expect); it != head.end()) {
        if (!iequals(it->value(), "100-continue")) {
          bad.status = http::status::expectation_failed;
          bad.message = "Only Expect: 100-continue is supported.";
          rec.status = 417;
          co_await write_error_reply(stream, bad, std::chrono::seconds(5));
          break;
        }
        http::response<http::empty_body> cont{http::status::continue_, head.version()};
        stream.expires_after(cfg.http_timeout);
        auto [cec, cn] = co_await http::async_write(stream, cont, use_tuple);
        if (cec) {
          rec.client_aborted = true;
          break;
        }
      }
      stream.expires_after(cfg.http_timeout);
      auto [bec, bn] = co_await http::async_read(stream, buffer, parser, use_tuple);
      if (bec) {
        if (bec == http::error::body_limit) {
          bad.status = http::status::payload_too_large;
          bad.message = "Request body too large; the limit is MAX_REQUEST_BODY_BYTES.";
          rec.status = 413;
          co_await write_error_reply(stream, bad, std::chrono::seconds(5));
        } else if (is_parse_error(bec)) {
          bad.message = "Malformed request body framing.";
          rec.status = 400;
          co_await write_error_reply(stream, bad, std::chrono::seconds(5));
        } else {
          rec.client_aborted = true;
        }
        break;
      }
    }

    Request req = parser.release();
    const bool keep = co_await forward_request(w, stream, req, rec);
    if (!keep) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  stream.socket().close(ignored);
}

}  // namespace smartlb::net
