#include "smartlb/credentials/entra/token_fetcher.hpp"

#include <openssl/ssl.h>

#include <memory>
#include <optional>

#include "smartlb/config/url.hpp"

namespace smartlb::credentials::entra {

using namespace smartlb::io;

namespace {

using Stream = beast::basic_stream<tcp, Executor>;

struct SplitUrl {
  config::BackendUrl base;
  std::string target;  // path and query
};

std::optional<SplitUrl> split(const std::string& url, std::string& error) {
  const auto scheme_end = url.find("://");
  const auto path_start = scheme_end == std::string::npos ? std::string::npos : url.find('/', scheme_end + 3);
  const auto query_start = url.find('?', scheme_end == std::string::npos ? 0 : scheme_end + 3);
  const auto authority_end = std::min(path_start, query_start);
  auto parsed = config::parse_backend_url(url.substr(0, authority_end));
  if (!parsed.url) {
    error = "bad token endpoint URL: " + parsed.error;
    return std::nullopt;
  }
  SplitUrl s{std::move(*parsed.url), authority_end == std::string::npos ? "/" : url.substr(authority_end)};
  if (s.target.front() == '?') s.target.insert(0, "/");
  return s;
}

template <class S>
Task<FetchedAnswer> exchange(S& stream, Stream& tcp_layer,
                             const beast::http::request<beast::http::string_body>& req,
                             std::chrono::nanoseconds timeout, bool status_only) {
  FetchedAnswer a;
  tcp_layer.expires_after(timeout);
  auto [wec, wn] = co_await beast::http::async_write(stream, req, use_tuple);
  if (wec) {
    a.error = "sending the token request: " + wec.message();
    co_return a;
  }
  beast::flat_buffer buffer;
  beast::http::response_parser<beast::http::string_body> parser;
  parser.body_limit(1024 * 1024);
  error_code rec;
  if (status_only)
    rec = std::get<0>(co_await beast::http::async_read_header(stream, buffer, parser, use_tuple));
  else
    rec = std::get<0>(co_await beast::http::async_read(stream, buffer, parser, use_tuple));
  if (rec) {
    a.error = "reading the token answer: " + rec.message();
    co_return a;
  }
  a.status = parser.get().result_int();
  a.body = std::move(parser.get().body());
  co_return a;
}

}  // namespace

Task<FetchedAnswer> fetch_token_answer(const TokenRequest& request, ssl::context& tls,
                                       std::chrono::nanoseconds timeout) {
  FetchedAnswer a;
  auto url = split(request.url, a.error);
  if (!url) co_return a;
  const config::BackendUrl& u = url->base;
  auto ex = co_await asio::this_coro::executor;

  beast::http::request<beast::http::string_body> req;
  req.method_string(request.method);
  req.target(url->target);
  req.version(11);
  req.set(beast::http::field::host, u.host_header);
  req.set(beast::http::field::user_agent, "smartlb");
  req.set(beast::http::field::connection, "close");
  for (const auto& [name, value] : request.headers) req.set(name, value);
  if (request.method == "POST") {
    req.body() = request.form_body;
    req.prepare_payload();
  }

  // The look-up gets the same deadline as every other step: a timer that cancels it (the
  // resolver is shared with the timer's handler, which may run after this frame is gone).
  auto resolver = std::make_shared<asio::ip::basic_resolver<tcp, Executor>>(ex);
  asio::steady_timer lookup_deadline(ex, timeout);
  lookup_deadline.async_wait([weak = std::weak_ptr(resolver)](error_code ec) {
    if (auto r = weak.lock(); r && !ec) r->cancel();
  });
  auto [rec, found] = co_await resolver->async_resolve(u.host, std::to_string(u.port), use_tuple);
  lookup_deadline.cancel();
  if (rec) {
    a.error = "looking up " + u.host + ": " + rec.message();
    co_return a;
  }
  Stream tcp_stream(ex);
  tcp_stream.expires_after(timeout);
  auto [cec, ep] = co_await tcp_stream.async_connect(found, use_task);
  if (cec) {
    a.error = "connecting to " + u.host_header + ": " + cec.message();
    co_return a;
  }
  if (!u.tls) {
    a = co_await exchange(tcp_stream, tcp_stream, req, timeout, request.status_only);
    error_code ignored;
    tcp_stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    co_return a;
  }
  beast::ssl_stream<Stream&> tls_stream(tcp_stream, tls);
  error_code addr_ec;
  asio::ip::make_address(u.host, addr_ec);
  if (addr_ec) SSL_set_tlsext_host_name(tls_stream.native_handle(), u.host.c_str());  // SNI: names only
  tls_stream.set_verify_mode(ssl::verify_peer);
  tls_stream.set_verify_callback(ssl::host_name_verification(u.host));
  tcp_stream.expires_after(timeout);
  auto [hec] = co_await tls_stream.async_handshake(ssl::stream_base::client, use_task);
  if (hec) {
    a.error = "TLS handshake with " + u.host_header + ": " + hec.message();
    co_return a;
  }
  a = co_await exchange(tls_stream, tcp_stream, req, timeout, request.status_only);
  // No TLS shutdown: the connection is discarded, and the peer's close_notify may never come.
  co_return a;
}

}  // namespace smartlb::credentials::entra
