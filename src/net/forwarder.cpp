// The request path: pick a backend, send, judge the response head, fail over at once or
// relay the response as it arrives.
#include <algorithm>

#include <spdlog/spdlog.h>

#include <array>
#include <span>

#include "net/replies.hpp"
#include "net/wire_format.hpp"
#include "net/worker.hpp"
#include "smartlb/header_rules.hpp"
#include "smartlb/request_target.hpp"
#include "smartlb/throttle_headers.hpp"
#include "smartlb/token_estimate.hpp"
#include "smartlb/usage_sniffer.hpp"

namespace smartlb::net {
namespace {

using ResponseParser = http::response_parser<http::buffer_body>;

// Bytes relayed per read. Large enough for throughput, small enough that an SSE event is
// written as soon as it is parsed (reads return whatever arrived).
constexpr std::size_t kRelayBufferBytes = 16 * 1024;
// A failover response body up to this size is read and dropped so the connection can be
// reused; a larger one is not worth the wait.
constexpr std::uint64_t kDrainLimitBytes = 64 * 1024;

TransportFailure classify_transport_error(const error_code& ec) {
  if (ec == beast::error::timeout) return TransportFailure::Timeout;
  if (is_parse_error(ec) && ec != http::error::end_of_stream && ec != http::error::partial_message)
    return TransportFailure::Protocol;
  return TransportFailure::Lost;
}

std::string_view header_value(const http::fields& f, std::string_view name) {
  auto it = f.find(name);
  return it == f.end() ? std::string_view{} : std::string_view(it->value());
}

std::optional<std::chrono::milliseconds> retry_hint(const http::fields& f,
                                                    std::chrono::system_clock::time_point now) {
  ThrottleHeaders h;
  h.retry_after_ms = header_value(f, "retry-after-ms");
  h.x_ms_retry_after_ms = header_value(f, "x-ms-retry-after-ms");
  h.retry_after = header_value(f, "retry-after");
  h.reset_requests = header_value(f, "x-ratelimit-reset-requests");
  h.reset_tokens = header_value(f, "x-ratelimit-reset-tokens");
  if (h.reset_tokens.empty()) h.reset_tokens = header_value(f, "x-rate-limit-reset-tokens");
  h.remaining_requests = header_value(f, "x-ratelimit-remaining-requests");
  h.remaining_tokens = header_value(f, "x-ratelimit-remaining-tokens");
  return parse_retry_hint(h, now);
}

// Removes hop-by-hop fields and every field the Connection header names.
template <class Fields>
void strip_hop_by_hop(Fields& f) {
  std::vector<std::string> named;
  for (auto range = f.equal_range(http::field::connection); range.first != range.second; ++range.first)
    for (auto token : connection_tokens(range.first->value())) named.emplace_back(token);
  for (const auto& n : named) f.erase(n);
  for (auto it = f.begin(); it != f.end();) {
    if (is_hop_by_hop(it->name_string())) it = f.erase(it);
    else ++it;
  }
}

struct AttemptResult {
  UpstreamPtr conn;                     // set when a response head arrived (in parser_)
  Verdict verdict;                      // transport verdict when !conn
  std::string detail;
};

class ForwardJob {
 public:
  ForwardJob(Worker& w, beast::tcp_stream& client, Request& req, RequestRecord& rec)
      : w_(w), s_(w.shared), cfg_(w.shared.cfg), client_(client), req_(req), rec_(rec) {}

  asio::awaitable<bool> run();

 private:
  void prepare_request();
  void aim_at(std::size_t backend);
  void write_request_head();
  asio::awaitable<AttemptResult> attempt(std::size_t backend);
  asio::awaitable<void> drain_or_close(UpstreamPtr conn, ResponseParser& p);
  asio::awaitable<bool> relay(UpstreamPtr conn, ResponseParser& p, std::size_t backend);
  asio::awaitable<bool> reply_unavailable();
  std::chrono::seconds header_timeout() const;

  Worker& w_;
  Shared& s_;
  const Config& cfg_;
  beast::tcp_stream& client_;
  Request& req_;
  RequestRecord& rec_;

  std::optional<ResponseParser> parser_;  // the current attempt's response
  std::string request_head_;              // the upstream request head, rebuilt per attempt
  std::string target_text_;  // the client's target; `target_` points into it
  RequestTarget target_;
  std::string client_api_key_, client_authorization_;
  unsigned client_version_ = 11;
  bool client_keep_alive_ = true;
  bool head_ = false;
  bool azure_path_ = false;
  std::int64_t cost_ = 0;  // estimated tokens, only when some backend declares a quota
};

std::chrono::seconds ForwardJob::header_timeout() const {
  // The per-attempt wait, cut short by what is left of the whole request's budget.
  const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(
      Nanos(s_.clock.now() - rec_.start));
  const auto left = cfg_.request_timeout - elapsed;
  return std::max(std::min(cfg_.http_timeout, left), std::chrono::seconds(1));
}

void ForwardJob::prepare_request() {
  client_version_ = req_.version();
  client_keep_alive_ = req_.keep_alive();
  head_ = req_.method() == http::verb::head;
  target_text_ = std::string(req_.target());
  target_ = *parse_request_target(target_text_);  // the session validated it
  azure_path_ = target_.path.substr(0, 8) == "/openai/";

  strip_hop_by_hop(req_);
  req_.erase(http::field::expect);
  if (auto it = req_.find("api-key"); it != req_.end()) client_api_key_ = std::string(it->value());
  if (auto it = req_.find(http::field::authorization); it != req_.end())
    client_authorization_ = std::string(it->value());
  req_.set("x-request-id", rec_.request_id);  // one id from client to backend and back
  req_.version(11);
  req_.prepare_payload();  // Content-Length from the buffered body (chunked came in, length goes out)
  if (s_.pool.any_quota()) cost_ = estimate_request_tokens(target_.path, req_.body());
}

void ForwardJob::aim_at(std::size_t backend) {
  const BackendConfig& b = cfg_.backends[backend];
  req_.target(build_upstream_target(b.url.base_path, target_, b.deployment_name));
  req_.set(http::field::host, b.url.host_header);
  req_.erase("api-key");
  req_.erase(http::field::authorization);
  if (b.api_key.empty()) {
    // No key configured: pass the client's own credentials through (e.g. Entra ID tokens).
    if (!client_api_key_.empty()) req_.set("api-key", client_api_key_);
    if (!client_authorization_.empty()) req_.set(http::field::authorization, client_authorization_);
    return;
  }
  const bool api_key_style = b.auth == AuthStyle::ApiKey ||
                             (b.auth == AuthStyle::Auto && (b.azure_host || azure_path_));
  if (api_key_style) req_.set("api-key", b.api_key);
  else req_.set(http::field::authorization, s_.backends[backend].bearer);
}

void ForwardJob::write_request_head() {
  request_head_.clear();
  append_request_head(request_head_, req_);
}

asio::awaitable<AttemptResult> ForwardJob::attempt(std::size_t backend) {
  AttemptResult r;
  const auto timeout = header_timeout();
  for (int round = 0; round < 2; ++round) {
    auto cr = co_await w_.upstreams.acquire(backend, round > 0);
    if (!cr.conn) {
      r.verdict = judge_transport(cr.failure);
      r.detail = std::move(cr.detail);
      co_return r;
    }
    UpstreamConnection& c = *cr.conn;
    c.tcp().expires_after(timeout);
    const std::array<asio::const_buffer, 2> request{asio::buffer(request_head_), asio::buffer(req_.body())};
    auto [wec, wn] = co_await c.visit([&](auto& s) { return asio::async_write(s, request, use_tuple); });
    error_code ec = wec;
    bool got_bytes = false;
    if (!ec) {
      parser_.emplace();
      parser_->body_limit(boost::none);
      if (head_) parser_->skip(true);
      c.tcp().expires_after(timeout);
      auto [rec, rn] = co_await c.visit(
          [&](auto& s) { return http::async_read_header(s, c.buffer, *parser_, use_tuple); });
      ec = rec;
      got_bytes = parser_->got_some() || c.buffer.size() > 0;
      // Interim answers (100 Continue, 103 Early Hints) are not the response: skip them.
      while (!ec && parser_->get().result_int() / 100 == 1 && parser_->get().result_int() != 101) {
        parser_.emplace();
        parser_->body_limit(boost::none);
        if (head_) parser_->skip(true);
        auto [iec, in] = co_await c.visit(
            [&](auto& s) { return http::async_read_header(s, c.buffer, *parser_, use_tuple); });
        ec = iec;
      }
    }
    if (!ec) {
      r.conn = std::move(cr.conn);
      co_return r;
    }
    c.close();
    // A kept-alive connection the server closed while it idled fails before any byte: that
    // is not the backend's fault, so try once more on a new connection.
    if (c.reused && !got_bytes && round == 0 && ec != beast::error::timeout) {
      parser_.reset();
      continue;
    }
    parser_.reset();
    r.verdict = judge_transport(classify_transport_error(ec));
    r.detail = ec.message();
    co_return r;
  }
  co_return r;
}

asio::awaitable<void> ForwardJob::drain_or_close(UpstreamPtr conn, ResponseParser& p) {
  const auto length = p.content_length();
  if (!p.keep_alive() || (!p.is_done() && (!length || *length > kDrainLimitBytes))) {
    conn->close();
    co_return;
  }
  char scratch[4096];
  while (!p.is_done()) {
    p.get().body().data = scratch;
    p.get().body().size = sizeof scratch;
    conn->tcp().expires_after(std::chrono::seconds(5));
    auto [ec, n] = co_await conn->visit(
        [&](auto& s) { return http::async_read_some(s, conn->buffer, p, use_tuple); });
    if (ec == http::error::need_buffer) continue;
    if (ec) {
      conn->close();
      co_return;
    }
  }
  if (conn->buffer.size() == 0) w_.upstreams.release(std::move(conn));
  else conn->close();
}

asio::awaitable<bool> ForwardJob::relay(UpstreamPtr conn, ResponseParser& p, std::size_t backend) {
  auto& res = p.get();
  const bool upstream_length = res.has_content_length();
  strip_hop_by_hop(res);
  for (auto it = res.begin(); it != res.end();) {
    if (is_backend_quota_header(it->name_string())) it = res.erase(it);
    else ++it;
  }
  res.set("x-smartlb-backend", cfg_.backends[backend].name);
  if (!rec_.request_id.empty()) res.set("x-request-id", rec_.request_id);

  const unsigned status = res.result_int();
  const bool has_body = !head_ && status >= 200 && status != 204 && status != 304;
  // Token usage for metrics: fed each chunk after it was written, so it never delays one.
  UsageSniffer usage(has_body ? UsageSniffer::mode_for(header_value(res, "content-type"),
                                                       header_value(res, "content-encoding"))
                              : UsageSniffer::Mode::Off);
  bool keep = client_keep_alive_ && !w_.draining;
  bool chunked = false;  // the body goes to the client in chunks we frame ourselves
  res.version(client_version_);
  res.erase(http::field::transfer_encoding);
  if (has_body && !upstream_length) {
    if (client_version_ >= 11) chunked = true;
    else keep = false;  // HTTP/1.0 client: the end of the body is the end of the connection
  }
  if (chunked) res.set(http::field::transfer_encoding, "chunked");
  res.keep_alive(keep);
  std::string head;
  head.reserve(512);
  append_response_head(head, res);
  rec_.status = status;

  // Send the head at once only when the body must be waited for (a stream): otherwise the
  // first write below carries head and body together, one syscall instead of two.
  bool head_sent = false;
  if (!p.is_done() && conn->buffer.size() == 0) {
    client_.expires_after(cfg_.http_timeout);
    auto [hec, hn] = co_await asio::async_write(client_, asio::buffer(head), use_tuple);
    if (hec) {
      rec_.client_aborted = true;
      conn->close();
      co_return false;
    }
    head_sent = true;
  }

  char buf[kRelayBufferBytes];
  char size_line[20];
  static constexpr std::string_view kCrlf = "\r\n", kLastChunk = "0\r\n\r\n";
  for (;;) {
    std::size_t chunk = 0;  // body bytes read into buf this round
    if (!p.is_done()) {
      res.body().data = buf;
      res.body().size = sizeof buf;
      conn->tcp().expires_after(cfg_.http_timeout);  // idle timeout, renewed on every read
      auto [ec, n] = co_await conn->visit(
          [&](auto& s) { return http::async_read_some(s, conn->buffer, p, use_tuple); });
      if (ec == http::error::need_buffer) ec = {};
      if (ec) {
        // Too late to fail over: cut the client off without a clean end so it sees a
        // truncated response, not a complete one.
        rec_.upstream_aborted = true;
        const Verdict v = judge_transport(classify_transport_error(ec));
        s_.pool.record_failure(backend, target_.deployment, v, std::nullopt);
        conn->close();
        co_return false;
      }
      chunk = sizeof buf - res.body().size;
      rec_.response_bytes += chunk;
    }
    const bool last = p.is_done();
    // One gather write: [head] [size line, data, CRLF | data] [last chunk]. A read that
    // parsed only framing (a chunk header) adds no data, and nothing is written for it.
    std::array<asio::const_buffer, 5> out;
    std::size_t k = 0;
    if (!head_sent) out[k++] = asio::buffer(head);
    if (chunk > 0) {
      if (chunked) out[k++] = asio::buffer(size_line, chunk_size_line(chunk, size_line));
      out[k++] = asio::buffer(buf, chunk);
      if (chunked) out[k++] = asio::buffer(kCrlf.data(), kCrlf.size());
    }
    if (last && chunked) out[k++] = asio::buffer(kLastChunk.data(), kLastChunk.size());
    if (k > 0) {
      client_.expires_after(cfg_.http_timeout);
      auto [wec, wn] = co_await asio::async_write(client_, std::span(out.data(), k), use_tuple);
      if (wec) {
        // The client left: stop reading, discard the upstream connection, blame no one.
        rec_.client_aborted = true;
        conn->close();
        co_return false;
      }
      head_sent = true;
    }
    usage.feed(buf, chunk);
    if (last) break;
  }
  if (const TokenUsage u = usage.finish(); u.known()) {
    rec_.prompt_tokens = u.prompt_tokens;
    rec_.completion_tokens = u.completion_tokens;
  }
  if (p.keep_alive() && conn->buffer.size() == 0) w_.upstreams.release(std::move(conn));
  else conn->close();  // bytes after the body, or the server said close: never reuse
  co_return keep;
}

asio::awaitable<bool> ForwardJob::reply_unavailable() {
  const Unavailability u = s_.pool.unavailability(target_.deployment, cost_);
  ErrorReply r;
  r.version = client_version_;
  r.keep_alive = client_keep_alive_ && !w_.draining;
  r.request_id = rec_.request_id;
  r.retry_after = u.retry_after.count() > 0 ? u.retry_after : std::chrono::milliseconds(1000);
  std::string message;
  if (u.throttled) {
    r.status = http::status::too_many_requests;
    r.type = "requests";
    r.code = "rate_limit_exceeded";
    message = "Every backend is rate limited";
  } else if (rec_.attempt_count > 0) {
    r.status = http::status::bad_gateway;
    r.type = "server_error";
    r.code = "upstream_error";
    message = "Every backend failed";
  } else {
    r.status = http::status::service_unavailable;
    r.type = "server_error";
    r.code = "no_backend_available";
    message = "No backend is available";
  }
  if (!target_.deployment.empty()) message += " for deployment '" + std::string(target_.deployment) + "'";
  message += "; retry after " + std::to_string(r.retry_after->count()) + " ms.";
  r.message = message;
  rec_.status = static_cast<unsigned>(r.status);
  const auto ec = co_await write_error_reply(client_, r, cfg_.http_timeout);
  co_return !ec && r.keep_alive;
}

asio::awaitable<bool> ForwardJob::run() {
  prepare_request();
  rec_.deployment = std::string(target_.deployment);
  TriedSet tried;
  for (;;) {
    const bool out_of_time = Nanos(s_.clock.now() - rec_.start) >= cfg_.request_timeout;
    const auto pick = out_of_time ? std::nullopt : s_.pool.pick(target_.deployment, tried, w_.rng, cost_);
    if (!pick) co_return co_await reply_unavailable();
    const std::size_t backend = *pick;
    tried.add(backend);
    if (!s_.pool.reserve(backend, target_.deployment, cost_)) continue;  // its quota filled meanwhile
    aim_at(backend);
    write_request_head();

    AttemptRecord& a = rec_.add_attempt();
    a.backend = backend;
    const MonoNanos sent = s_.clock.now();
    AttemptResult r = co_await attempt(backend);
    a.ttfb_us = (s_.clock.now() - sent) / 1000;

    if (!r.conn) {
      a.cause = r.verdict.cause;
      a.cooldown_ms = s_.pool.record_failure(backend, target_.deployment, r.verdict, std::nullopt).count();
      spdlog::warn("backend {} failed ({}: {}); cooling down {} ms, failing over",
                   cfg_.backends[backend].name, to_string(r.verdict.cause), r.detail, a.cooldown_ms);
      continue;
    }
    const unsigned status = parser_->get().result_int();
    a.status = status;
    const Verdict v = judge_status(status, target_.has_deployment());
    if (v.fail_over) {
      a.cause = v.cause;
      const auto hint = retry_hint(parser_->get(), s_.clock.wall_now());
      a.cooldown_ms = s_.pool.record_failure(backend, target_.deployment, v, hint).count();
      if (v.cause == FailureCause::AuthRejected)
        spdlog::error("backend {} rejected its credentials (HTTP {}): check BACKEND_{}_APIKEY; "
                      "cooling down {} ms", cfg_.backends[backend].name, status,
                      cfg_.backends[backend].id, a.cooldown_ms);
      else
        spdlog::debug("backend {} answered {}; cooling down {} ms, failing over",
                      cfg_.backends[backend].name, status, a.cooldown_ms);
      co_await drain_or_close(std::move(r.conn), *parser_);
      continue;
    }
    rec_.served_by = static_cast<int>(backend);
    co_return co_await relay(std::move(r.conn), *parser_, backend);
  }
}

}  // namespace

asio::awaitable<bool> forward_request(Worker& w, beast::tcp_stream& client, Request& req,
                                      RequestRecord& rec) {
  ForwardJob job(w, client, req, rec);
  co_return co_await job.run();
}

}  // namespace smartlb::net
