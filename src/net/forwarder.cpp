// The request path, in phases (ForwardJob::run):
//   prepare   what goes upstream of the client's request, once (fields, body framing, cost)
//   choose    a target from the snapshot's routing table (selector), its quota reserved
//   address   the upstream request head for that target, with its credential
//   attempt   send it, read the response head (a pooled connection, or a new one)
//   judge     fail over at once (and cool the target down), or
//   relay     the response as it arrives
// Accounting (metrics, access log) reads the RequestRecord these phases fill.
#include <algorithm>

#include <spdlog/spdlog.h>

#include <array>
#include <span>

#include "smartlb/credentials/entra/token_wait.hpp"
#include "smartlb/credentials/static_key.hpp"
#include "smartlb/http/header_rules.hpp"
#include "smartlb/http/request_target.hpp"
#include "smartlb/http1/http_io.hpp"
#include "smartlb/http1/wire_format.hpp"
#include "smartlb/net/client_watch.hpp"
#include "smartlb/net/replies.hpp"
#include "smartlb/net/worker.hpp"
#include "smartlb/routing/throttle_headers.hpp"
#include "smartlb/routing/token_estimate.hpp"
#include "smartlb/routing/unavailable_answer.hpp"
#include "smartlb/telemetry/usage_sniffer.hpp"

namespace smartlb::net {
namespace {

// A failover response body up to this size is read and dropped so the connection can be
// reused; a larger one is not worth the wait.
constexpr std::uint64_t kDrainLimitBytes = 64 * 1024;
// A request body up to this size is copied behind the head and sent in one buffer.
constexpr std::size_t kInlineBodyBytes = 64 * 1024;

TransportFailure classify_transport_error(const error_code& ec) {
  if (ec == beast::error::timeout) return TransportFailure::Timeout;
  if (is_parse_error(ec) && ec != http::error::end_of_stream && ec != http::error::partial_message)
    return TransportFailure::Protocol;
  return TransportFailure::Lost;
}

std::optional<std::chrono::milliseconds> retry_hint(const HeaderList& f,
                                                    std::chrono::system_clock::time_point now) {
  ThrottleHeaders h;
  h.retry_after_ms = f.get("retry-after-ms");
  h.x_ms_retry_after_ms = f.get("x-ms-retry-after-ms");
  h.retry_after = f.get(http::field::retry_after);
  h.reset_requests = f.get("x-ratelimit-reset-requests");
  h.reset_tokens = f.get("x-ratelimit-reset-tokens");
  if (h.reset_tokens.empty()) h.reset_tokens = f.get("x-rate-limit-reset-tokens");
  h.remaining_requests = f.get("x-ratelimit-remaining-requests");
  h.remaining_tokens = f.get("x-ratelimit-remaining-tokens");
  return parse_retry_hint(h, now);
}

// The names a message's Connection fields list: hop-by-hop for that message, like the fixed
// ones. Collected once per message (usually one token, "keep-alive" or "close").
class ConnectionNames {
 public:
  explicit ConnectionNames(const HeaderList& f) {
    for (std::size_t i = 0; i < f.size(); ++i) {
      const auto field = f[i];
      if (field.id != http::field::connection) continue;
      for_each_list_token(field.value, [&](std::string_view token) {
        if (count_ < names_.size())
          names_[count_++] = token;
        else
          more_.push_back(token);
      });
    }
  }
  bool contains(std::string_view name) const {
    for (std::size_t i = 0; i < count_; ++i)
      if (iequals(names_[i], name)) return true;
    for (const auto& n : more_)
      if (iequals(n, name)) return true;
    return false;
  }

 private:
  std::array<std::string_view, 8> names_;
  std::size_t count_ = 0;
  std::vector<std::string_view> more_;  // past the first 8 (rare)
};

// Fields that never cross the proxy as they are.
bool is_hop_field(const ConnectionNames& named, std::string_view name) {
  return is_hop_by_hop(name) || named.contains(name);
}

struct AttemptResult {
  UpstreamPtr conn;  // set when a response head arrived (in parser_)
  Verdict verdict;   // transport verdict when !conn
  std::string detail;
};

// A target of this request: a position in the snapshot's table, and what is known there.
struct Target {
  std::size_t position;
  const PoolMember& member;     // routing: id, weight, quota
  const BackendConfig& config;  // transport: URL, credentials, deployment rename
};

class ForwardJob {
 public:
  ForwardJob(Worker& w, const Snapshot& snapshot, TimedSocket& client, RequestHead& req,
             const RequestTarget& target, RequestRecord& rec, ForwardBuffers& buffers)
      : w_(w),
        s_(w.shared),
        cfg_(w.shared.cfg),
        snap_(snapshot),
        states_(w.shared.states),
        client_(client),
        req_(req),
        target_(target),
        rec_(rec),
        buffers_(buffers) {}

  Task<bool> run();

 private:
  void prepare_request();
  std::optional<Target> choose_target(TriedSet& tried);
  bool credential_ready(const Target& t) const;
  Task<bool> await_credential(const Target& t);
  void write_request_head(const Target& t);
  Task<AttemptResult> attempt(const Target& t);
  Task<void> drain_or_close(UpstreamPtr conn, ResponseReader& p);
  Task<bool> relay(UpstreamPtr conn, ResponseReader& p, const Target& t);
  void write_response_head(const ResponseHead& res, const Target& t, bool chunked, bool keep);
  Task<bool> reply_unavailable();
  std::chrono::seconds header_timeout() const;

  Worker& w_;
  Shared& s_;
  const Config& cfg_;  // process settings: timeouts
  const Snapshot& snap_;
  BackendStates& states_;
  TimedSocket& client_;
  RequestHead& req_;
  const RequestTarget& target_;
  RequestRecord& rec_;
  ForwardBuffers& buffers_;

  std::optional<ResponseReader> parser_;  // the current attempt's response
  std::string_view client_api_key_, client_authorization_;
  bool head_ = false;
  bool azure_path_ = false;
  bool send_length_ = false;  // Content-Length goes upstream (the body is always buffered)
  std::int64_t cost_ = 0;     // estimated tokens, only when some backend declares a quota
};

std::chrono::seconds ForwardJob::header_timeout() const {
  // The per-attempt wait, cut short by what is left of the whole request's budget.
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(Nanos(s_.clock.coarse_now() - rec_.start));
  const auto left = cfg_.request_timeout - elapsed;
  return std::max(std::min(cfg_.http_timeout, left), std::chrono::seconds(1));
}

void ForwardJob::prepare_request() {
  head_ = req_.method == http::verb::head;
  azure_path_ = target_.path.substr(0, 8) == "/openai/";

  // The client's fields that go upstream as they are, written once for every attempt: not
  // hop-by-hop ones, not `Proxy` / `Proxy-*` (httpoxy), and not those each attempt writes
  // itself (Host, credentials, the request id, the body's framing: chunked came in, a length
  // goes out).
  const HeaderList& f = req_.fields;
  const ConnectionNames named(f);
  std::string& passed = buffers_.passed_fields;
  passed.clear();
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto field = f[i];
    if (is_hop_field(named, field.name) || is_proxy_header(field.name)) continue;
    switch (field.id) {
      case http::field::host:
      case http::field::expect:
      case http::field::content_length:
        continue;
      default:
        if (is_client_credential(field.name) || iequals(field.name, "x-request-id")) continue;
        break;
    }
    append_field(passed, field.name, field.value);
  }
  if (!named.contains("api-key")) client_api_key_ = f.get("api-key");
  if (!named.contains("authorization")) client_authorization_ = f.get(http::field::authorization);
  const auto m = req_.method;
  send_length_ = !req_.body.empty() || m == http::verb::post || m == http::verb::put ||
                 m == http::verb::patch || m == http::verb::options;
  if (snap_.table.any_quota()) cost_ = estimate_request_tokens(target_.path, req_.body);
}

std::optional<Target> ForwardJob::choose_target(TriedSet& tried) {
  for (;;) {
    const bool out_of_time = Nanos(s_.clock.coarse_now() - rec_.start) >= cfg_.request_timeout;
    if (out_of_time) return std::nullopt;
    const auto position =
        snap_.routing().pick(snap_.table, states_, {target_.deployment, tried, cost_}, w_.rng);
    if (!position) return std::nullopt;
    tried.add(*position);
    const PoolMember& m = snap_.table.member(*position);
    if (!states_.reserve(m, target_.deployment, cost_)) continue;  // its quota filled meanwhile
    return Target{*position, m, snap_.backends[*position]};
  }
}

// An Entra ID backend needs a valid token before anything is sent (one atomic load when it has
// one; the coarse clock is enough: a token stops being used 10 s before it expires).
bool ForwardJob::credential_ready(const Target& t) const {
  const entra::TokenCell* cell = snap_.prepared[t.position].entra.get();
  return t.config.auth != AuthStyle::Entra ||
         (cell && cell->look(s_.clock.coarse_now()).availability == entra::TokenCell::Availability::Ready);
}

// No valid token yet: wait (asynchronously) for the fetch under way, or cool the backend down
// with cause `credential` until the credential service tries again, and fail over.
Task<bool> ForwardJob::await_credential(const Target& t) {
  using entra::TokenCell;
  TokenCell* cell = snap_.prepared[t.position].entra.get();
  TokenCell::Lookup l{TokenCell::Availability::Unavailable};
  if (cell) l = co_await entra::wait_for_token(*cell, s_.clock, header_timeout());
  if (l.availability == TokenCell::Availability::Ready) co_return true;
  const MonoNanos now = s_.clock.now();
  std::optional<std::chrono::milliseconds> hint;
  if (l.availability == TokenCell::Availability::Unavailable && l.retry_at > now)
    hint = std::chrono::ceil<std::chrono::milliseconds>(Nanos(l.retry_at - now));
  AttemptRecord& a = rec_.add_attempt();
  a.backend = t.member.id.value;
  a.cause = FailureCause::Credential;
  a.cooldown_ms = states_
                      .record_failure(t.member, target_.deployment,
                                      {true, FailureCause::Credential, CooldownScope::Backend}, hint)
                      .count();
  spdlog::warn(
      "backend {} has no valid Entra ID token (see the credential's log lines); cooling down {} ms, failing "
      "over",
      t.config.name, a.cooldown_ms);
  co_return false;
}

void ForwardJob::write_request_head(const Target& t) {
  const BackendConfig& b = t.config;
  std::string& out = buffers_.request_head;
  out.clear();
  out.append(req_.method_text).push_back(' ');
  append_upstream_target(out, b.url.base_path, target_, b.deployment_name);
  out.append(" HTTP/1.1\r\n");
  append_field(out, "Host", b.url.host_header);
  if (const entra::TokenCell* cell = snap_.prepared[t.position].entra.get())
    cell->append_authorization(out);  // "Authorization: Bearer <Entra ID token>"
  else
    for (const CredentialField& f : static_key_fields(b, snap_.prepared[t.position].bearer, azure_path_,
                                                      {client_api_key_, client_authorization_}))
      append_field(out, f.name, f.value);
  out.append(buffers_.passed_fields);
  append_field(out, "x-request-id", rec_.request_id);  // one id from client to backend and back
  if (send_length_) {
    out.append("Content-Length: ");
    append_decimal(out, req_.body.size());
    out.append("\r\n", 2);
  }
  out.append("\r\n", 2);
  // A small body rides in the same buffer: one send() instead of a sendmsg() of two.
  if (req_.body.size() <= kInlineBodyBytes) out.append(req_.body);
}

Task<AttemptResult> ForwardJob::attempt(const Target& t) {
  const BackendId backend = t.member.id;
  AttemptResult r;
  const auto timeout = header_timeout();
  for (int round = 0; round < 2; ++round) {
    // The pool first (on the retry, a new connection: the pooled one just failed).
    ConnectResult cr;
    if (round == 0) cr.conn = w_.upstreams.take_pooled(backend);
    if (!cr.conn) cr = co_await w_.upstreams.connect(backend, t.config.url);
    if (!cr.conn) {
      r.verdict = judge_transport(cr.failure);
      r.detail = std::move(cr.detail);
      co_return r;
    }
    UpstreamConnection& c = *cr.conn;
    c.tcp().expires_after(timeout);
    const std::string& head = buffers_.request_head;
    const bool inline_body = req_.body.size() <= kInlineBodyBytes;
    const std::array<asio::const_buffer, 2> request{
        asio::buffer(head), asio::buffer(req_.body.data(), inline_body ? 0 : req_.body.size())};
    auto [wec, wn] = co_await c.visit([&](auto& s) {
      return inline_body ? asio::async_write(s, asio::buffer(head), use_tuple)
                         : asio::async_write(s, request, use_tuple);
    });
    error_code ec = c.tcp().done(wec);
    bool got_bytes = false;
    // Interim answers (100 Continue, 103 Early Hints) are not the response: read past them.
    while (!ec) {
      parser_.emplace(c.head);
      parser_->body_views(true);  // the body is relayed from the connection's buffer
      if (head_) parser_->skip(true);
      c.tcp().expires_after(timeout);
      ec = c.tcp().done(
          co_await c.visit([&](auto& s) { return read_http(s, c.buffer, *parser_, ReadGoal::header); }));
      got_bytes = got_bytes || parser_->got_some() || c.buffer.size() > 0;
      if (ec || c.head.status / 100 != 1 || c.head.status == 101) break;
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

Task<void> ForwardJob::drain_or_close(UpstreamPtr conn, ResponseReader& p) {
  const auto length = p.content_length();
  if (!p.keep_alive() || (!p.is_done() && (!length || *length > kDrainLimitBytes))) {
    conn->close();
    co_return;
  }
  while (!p.is_done()) {
    conn->tcp().expires_after(std::chrono::seconds(5));
    const error_code ec = conn->tcp().done(
        co_await conn->visit([&](auto& s) { return read_http(s, conn->buffer, p, ReadGoal::some); }));
    p.take_body_view();  // dropped
    if (ec) {
      conn->close();
      co_return;
    }
  }
  if (conn->buffer.size() == 0)
    w_.upstreams.release(std::move(conn));
  else
    conn->close();
}

// The head the client gets, into buffers_.response_head: the backend's fields but hop-by-hop
// ones and its per-backend quota headers, then ours. Not part of the relay coroutine, so that
// its locals stay out of the coroutine's frame.
void ForwardJob::write_response_head(const ResponseHead& res, const Target& t, bool chunked, bool keep) {
  std::string& head = buffers_.response_head;
  head.clear();
  append_status_line(head, req_.version, res.status, res.reason);
  const ConnectionNames named(res.fields);
  for (std::size_t i = 0; i < res.fields.size(); ++i) {
    const auto field = res.fields[i];
    if (is_hop_field(named, field.name) || is_backend_quota_header(field.name) ||
        iequals(field.name, "x-smartlb-backend") || iequals(field.name, "x-request-id"))
      continue;
    append_field(head, field.name, field.value);
  }
  append_field(head, "x-smartlb-backend", t.config.name);
  if (!rec_.request_id.empty()) append_field(head, "x-request-id", rec_.request_id);
  if (chunked) head.append("Transfer-Encoding: chunked\r\n");
  if (req_.version >= 11 && !keep) head.append("Connection: close\r\n");
  if (req_.version == 10 && keep) head.append("Connection: keep-alive\r\n");
  head.append("\r\n", 2);
}

Task<bool> ForwardJob::relay(UpstreamPtr conn, ResponseReader& p, const Target& t) {
  const ResponseHead& res = conn->head;
  const unsigned status = res.status;
  const bool has_body = !head_ && status >= 200 && status != 204 && status != 304;
  const bool upstream_length = res.fields.contains(http::field::content_length);
  // Token usage for metrics: fed each chunk after it was written, so it never delays one.
  UsageSniffer usage(has_body ? UsageSniffer::mode_for(res.fields.get(http::field::content_type),
                                                       res.fields.get(http::field::content_encoding))
                              : UsageSniffer::Mode::Off);
  bool keep = req_.keep_alive && !w_.draining;
  bool chunked = false;  // the body goes to the client in chunks we frame ourselves
  if (has_body && !upstream_length) {
    if (req_.version >= 11)
      chunked = true;
    else
      keep = false;  // HTTP/1.0 client: the end of the body is the end of the connection
  }

  write_response_head(res, t, chunked, keep);
  std::string& head = buffers_.response_head;
  rec_.status = status;

  // Send the head at once only when the body must be waited for (a stream): otherwise the
  // first write below carries head and body together, one syscall instead of two.
  bool head_sent = false;
  if (!p.is_done() && conn->buffer.size() == 0) {
    client_.expires_after(cfg_.http_timeout);
    auto [hec, hn] = co_await asio::async_write(client_, asio::buffer(head), use_tuple);
    hec = client_.done(hec);
    if (hec) {
      rec_.client_aborted = true;
      conn->close();
      co_return false;
    }
    head_sent = true;
  }

  char size_line[20];
  static constexpr std::string_view kCrlf = "\r\n", kLastChunk = "0\r\n\r\n";
  // Body bytes this round: views into the connection's buffer, valid until its next read (so:
  // written, and fed to the usage scan, before the loop reads again). Every run of body bytes
  // one read brought (several chunks of a stream, often) goes out in one write.
  RelayScratchLease scratch(w_.spare_scratch);
  auto& runs = scratch->runs;
  ClientWatch watch;  // armed once the client waits on the backend
  for (;;) {
    std::size_t run_count = 0, chunk = 0;
    bool chunk_in_head = false;
    bool progressed = false;
    error_code ec;
    if (!p.is_done() &&
        !feed_buffered(conn->buffer, p, ReadGoal::some, progressed, ec)) {  // else no read needed
      if (head_sent) watch.arm(client_.socket(), *conn);
      conn->tcp().expires_after(cfg_.http_timeout);  // idle timeout, renewed on every read
      ec = conn->tcp().done(
          co_await conn->visit([&](auto& s) { return read_http(s, conn->buffer, p, ReadGoal::some); }));
    }
    for (;;) {  // the runs of this read, then of what else is buffered already
      if (ec && watch.client_left()) {
        // The client left while the backend was silent: blame no one.
        rec_.client_aborted = true;
        conn->close();
        co_return false;
      }
      if (ec) {
        // Too late to fail over: cut the client off without a clean end so it sees a
        // truncated response, not a complete one.
        rec_.upstream_aborted = true;
        const Verdict v = judge_transport(classify_transport_error(ec));
        states_.record_failure(t.member, target_.deployment, v, std::nullopt);
        conn->close();
        co_return false;
      }
      if (const std::string_view run = p.take_body_view(); !run.empty()) {
        runs[run_count++] = run;
        chunk += run.size();
      }
      progressed = false;
      if (p.is_done() || run_count == runs.size() || conn->buffer.size() == 0 ||
          !feed_buffered(conn->buffer, p, ReadGoal::some, progressed, ec))
        break;
    }
    rec_.response_bytes += chunk;
    const bool last = p.is_done();
    // One gather write: [head] [size line, runs..., CRLF | runs...] [last chunk]. A read that
    // parsed only framing (a chunk header) adds no data, and nothing is written for it.
    auto& out = scratch->out;
    std::size_t k = 0;
    if (!head_sent && !chunked && chunk > 0 && chunk <= kInlineBodyBytes) {
      for (std::size_t i = 0; i < run_count; ++i) head.append(runs[i]);  // one send(), not sendmsg()
      out[k++] = asio::buffer(head);
      chunk_in_head = true;
    } else if (!head_sent) {
      out[k++] = asio::buffer(head);
    }
    if (chunk > 0 && !chunk_in_head) {
      if (chunked) out[k++] = asio::buffer(size_line, chunk_size_line(chunk, size_line));
      for (std::size_t i = 0; i < run_count; ++i) out[k++] = asio::buffer(runs[i].data(), runs[i].size());
      if (chunked) out[k++] = asio::buffer(kCrlf.data(), kCrlf.size());
    }
    if (last && chunked) out[k++] = asio::buffer(kLastChunk.data(), kLastChunk.size());
    if (k > 0) {
      client_.expires_after(cfg_.http_timeout);
      // One buffer goes as send(); Asio uses sendmsg() for any sequence type.
      auto [wec, wn] = k == 1 ? co_await asio::async_write(client_, out[0], use_tuple)
                              : co_await asio::async_write(client_, std::span(out.data(), k), use_tuple);
      wec = client_.done(wec);
      if (wec) {
        // The client left: stop reading, discard the upstream connection, blame no one.
        rec_.client_aborted = true;
        conn->close();
        co_return false;
      }
      head_sent = true;
    }
    for (std::size_t i = 0; i + 1 < run_count; ++i) usage.feed(runs[i].data(), runs[i].size());
    const std::string_view final_run = run_count > 0 ? runs[run_count - 1] : std::string_view{};
    if (last) {
      if (const TokenUsage u = usage.finish_with(final_run.data(), final_run.size()); u.known()) {
        rec_.prompt_tokens = u.prompt_tokens;
        rec_.completion_tokens = u.completion_tokens;
      }
      break;
    }
    usage.feed(final_run.data(), final_run.size());
  }
  if (p.keep_alive() && conn->buffer.size() == 0)
    w_.upstreams.release(std::move(conn));
  else
    conn->close();  // bytes after the body, or the server said close: never reuse
  watch.disarm(client_.socket());
  co_return keep;
}

Task<bool> ForwardJob::reply_unavailable() {
  const UnavailableAnswer a = answer_unavailable(
      states_.unavailability(snap_.table, target_.deployment, cost_), rec_.attempt_count, target_.deployment);
  ErrorReply r;
  r.version = req_.version;
  r.keep_alive = req_.keep_alive && !w_.draining;
  r.request_id = rec_.request_id;
  r.retry_after = a.retry_after;
  r.status = static_cast<http::status>(a.status);
  r.type = a.type;
  r.code = a.code;
  r.message = a.message;
  rec_.status = a.status;
  const auto ec = co_await write_error_reply(client_, r, cfg_.http_timeout);
  co_return !ec && r.keep_alive;
}

Task<bool> ForwardJob::run() {
  prepare_request();
  rec_.deployment = target_.deployment;
  TriedSet tried;
  for (;;) {
    const std::optional<Target> t = choose_target(tried);
    if (!t) co_return co_await reply_unavailable();
    if (!credential_ready(*t) && !co_await await_credential(*t)) continue;
    write_request_head(*t);

    AttemptRecord& a = rec_.add_attempt();
    a.backend = t->member.id.value;
    const MonoNanos sent = s_.clock.now();
    AttemptResult r = co_await attempt(*t);
    a.ttfb_us = (s_.clock.now() - sent) / 1000;

    if (!r.conn) {
      a.cause = r.verdict.cause;
      a.cooldown_ms = states_.record_failure(t->member, target_.deployment, r.verdict, std::nullopt).count();
      spdlog::warn("backend {} failed ({}: {}); cooling down {} ms, failing over", t->config.name,
                   to_string(r.verdict.cause), r.detail, a.cooldown_ms);
      continue;
    }
    const unsigned status = r.conn->head.status;
    a.status = status;
    const Verdict v = judge_status(status, target_.has_deployment());
    if (v.fail_over) {
      a.cause = v.cause;
      const auto hint = retry_hint(r.conn->head.fields, s_.clock.wall_now());
      a.cooldown_ms = states_.record_failure(t->member, target_.deployment, v, hint).count();
      if (v.cause == FailureCause::AuthRejected && snap_.prepared[t->position].entra)
        snap_.prepared[t->position].entra->request_refresh();  // a revoked token: get a new one
      if (v.cause == FailureCause::AuthRejected)
        spdlog::error("backend {} rejected its credentials (HTTP {}): check {}; cooling down {} ms",
                      t->config.name, status,
                      t->config.key_setting.empty() ? std::string_view("its key") : t->config.key_setting,
                      a.cooldown_ms);
      else
        spdlog::debug("backend {} answered {}; cooling down {} ms, failing over", t->config.name, status,
                      a.cooldown_ms);
      co_await drain_or_close(std::move(r.conn), *parser_);
      continue;
    }
    rec_.served_by = static_cast<int>(t->member.id.value);
    co_return co_await relay(std::move(r.conn), *parser_, *t);
  }
}

}  // namespace

Task<bool> forward_request(Worker& w, const Snapshot& snapshot, TimedSocket& client, RequestHead& req,
                           const RequestTarget& target, RequestRecord& rec, ForwardBuffers& buffers) {
  ForwardJob job(w, snapshot, client, req, target, rec, buffers);
  co_return co_await job.run();
}

}  // namespace smartlb::net
