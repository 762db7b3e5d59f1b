// The request path, in phases (ForwardJob::run):
//   prepare   what goes upstream of the client's request, once (fields, body framing, cost)
//   match     the first rule whose conditions the request meets (none: 404)
//   admit     the caller's budgets take the request's estimated tokens (over one: 429)
//   choose    a target from the rule's routing table (its selector), its quota reserved
//   address   the upstream request head for that target, with its credential, and its body
//             (the target's override_params and model rename, when it has them)
//   attempt   send it, read the response head (a pooled connection, or a new one)
//   judge     fail over at once (and cool the target down), or
//   hold      a 2xx event stream's start, until its first event (an error first: fail over)
//   relay     the response as it arrives
//   settle    the caller's budgets are charged the tokens the answer used
// Accounting (metrics, access log) reads the RequestRecord these phases fill.
#include <algorithm>

#include <spdlog/spdlog.h>

#include <array>
#include <cstring>
#include <span>

#include <nlohmann/json.hpp>
#include "smartlb/clients/budget_admission.hpp"
#include "smartlb/credentials/entra/token_wait.hpp"
#include "smartlb/credentials/static_key.hpp"

#include "smartlb/http/header_rules.hpp"
#include "smartlb/http/json_body.hpp"
#include "smartlb/http/request_body.hpp"
#include "smartlb/http/request_target.hpp"
#include "smartlb/http/stream_start.hpp"
#include "smartlb/http1/http_io.hpp"
#include "smartlb/http1/wire_format.hpp"
#include "smartlb/net/client_watch.hpp"
#include "smartlb/net/replies.hpp"
#include "smartlb/net/worker.hpp"
#include "smartlb/routing/target_choice.hpp"
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

// `name` equals `lower` (lower-case letters, digits and '-', same length) in any case, eight
// bytes at a time: OR-ing 0x20 lower-cases a letter and leaves '-' and digits as they are (a
// header name holds no control character that could alias them).
template <std::size_t N>
bool is_name(std::string_view name, const char (&lower)[N]) {
  constexpr std::size_t n = N - 1;
  static_assert(n >= 8);
  if (name.size() != n) return false;
  std::uint64_t a, b;
  for (std::size_t i = 0; i + 8 <= n; i += 8) {
    std::memcpy(&a, name.data() + i, 8);
    std::memcpy(&b, lower + i, 8);
    if ((a | 0x2020202020202020ull) != b) return false;
  }
  std::memcpy(&a, name.data() + n - 8, 8);
  std::memcpy(&b, lower + n - 8, 8);
  return (a | 0x2020202020202020ull) == b;
}

// What the backend says remains of its rate limit, on any answer: one pass over the fields,
// which compares names only where the length matches.
RateLimitReport rate_limit_report(const HeaderList& f) {
  ThrottleHeaders h;
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto field = f[i];
    switch (field.name.size()) {
      case 24:
        if (is_name(field.name, "x-ratelimit-reset-tokens")) h.reset_tokens = field.value;
        break;
      case 25:
        if (h.reset_tokens.empty() && is_name(field.name, "x-rate-limit-reset-tokens"))
          h.reset_tokens = field.value;
        break;
      case 26:
        if (is_name(field.name, "x-ratelimit-reset-requests")) h.reset_requests = field.value;
        break;
      case 28:
        if (is_name(field.name, "x-ratelimit-remaining-tokens")) h.remaining_tokens = field.value;
        break;
      case 30:
        if (is_name(field.name, "x-ratelimit-remaining-requests")) h.remaining_requests = field.value;
        break;
      default:
        break;
    }
  }
  if (h.remaining_tokens.empty() && h.remaining_requests.empty()) return {};
  return parse_rate_limit_report(h);
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

// A 2xx event stream, plainly encoded: its start can be held back and read (http/stream_start).
bool is_plain_event_stream(const HeaderList& f) {
  std::string_view type = f.get(http::field::content_type);
  type = type.substr(0, type.find(';'));
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  const std::string_view coding = f.get(http::field::content_encoding);
  return iequals(type, "text/event-stream") && (coding.empty() || iequals(coding, "identity"));
}

// Ends a stream's hold-back when `after` has passed, even while the backend stays silent: it
// cancels the pending read on the upstream connection, which stays usable (the socket's own
// deadline would close it). Shared with the timer's handler, which may run after the hold.
class HoldDeadline {
 public:
  HoldDeadline(UpstreamConnection& conn, std::chrono::nanoseconds after) : s_(std::make_shared<State>(conn)) {
    s_->timer.expires_after(after);
    s_->timer.async_wait([s = s_](error_code ec) {
      if (ec || !s->active) return;
      s->expired = true;
      error_code ignored;
      s->conn.tcp().socket().cancel(ignored);
    });
  }
  ~HoldDeadline() {
    s_->active = false;
    s_->timer.cancel();
  }
  HoldDeadline(const HoldDeadline&) = delete;
  HoldDeadline& operator=(const HoldDeadline&) = delete;
  bool expired() const { return s_->expired; }

 private:
  struct State {
    explicit State(UpstreamConnection& c) : conn(c), timer(c.tcp().get_executor()) {}
    UpstreamConnection& conn;
    asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                               Executor>
        timer;
    bool active = true;
    bool expired = false;
  };
  std::shared_ptr<State> s_;
};

// How a relay ended: the client's connection may carry another request, or not; or the
// response never reached the client and the next backend is to be tried (a stream that began
// with an error, or a backend that failed while its start was held back).
enum class RelayEnd : std::uint8_t { Keep, Close, FailOver };

// A held-back start larger than this is not kept in the worker's spare scratch.
constexpr std::size_t kKeepHeldBytes = 4 * 1024;
struct TrimHeld {
  std::string& held;
  ~TrimHeld() {
    if (held.capacity() > kKeepHeldBytes) std::string().swap(held);
  }
};

// How the hold-back of a stream's start ended.
enum class HoldEnd : std::uint8_t { Release, FailOver, ClientLeft };

struct AttemptResult {
  UpstreamPtr conn;  // set when a response head arrived (in parser_)
  Verdict verdict;   // transport verdict when !conn
  std::string detail;
};

// A target of this request: a position in its rule's table, and what is known there.
struct Target {
  std::size_t position;
  const PoolMember& member;     // routing: id, weight, quota
  const RouteTarget& route;     // the model rename and body overrides
  const BackendConfig& config;  // transport: URL, credentials
  bool probe = false;           // sent to test a target its reports held back
};

// Requests of the OpenAI style name their model in the body, not the path (/v1/..., and
// Azure's v1 API /openai/v1/...).
bool body_names_model(std::string_view path) {
  return path.substr(0, 4) == "/v1/" || path.substr(0, 11) == "/openai/v1/";
}

// x-smartlb-metadata: a JSON object of strings. False when it is not one.
bool parse_metadata(std::string_view text, std::vector<MetadataPair>& out) {
  out.clear();
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.size() > 64) return false;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) return false;
    out.emplace_back(key, value.get<std::string>());
  }
  return true;
}

class ForwardJob {
 public:
  ForwardJob(Worker& w, const Snapshot& snapshot, TimedSocket& client, RequestHead& req,
             const RequestTarget& target, const ClientIdentity& caller, RequestRecord& rec,
             ForwardBuffers& buffers)
      : w_(w),
        s_(w.shared),
        cfg_(w.shared.cfg),
        snap_(snapshot),
        states_(w.shared.states),
        client_(client),
        req_(req),
        target_(target),
        caller_(caller),
        rec_(rec),
        buffers_(buffers) {}

  Task<bool> run();
  // After run(): the caller's budgets are charged what the answer used.
  void settle_budgets();

 private:
  std::optional<BudgetRefused> admit_to_budgets();
  Task<bool> reply_budget_refused(const BudgetRefused& refused);
  void prepare_request();
  std::optional<std::string_view> match_rule();
  std::optional<Target> choose_target(TriedSet& tried);
  bool credential_ready(const Target& t) const;
  Task<bool> await_credential(const Target& t);
  void write_request_head(const Target& t);
  void prepare_body(const Target& t);
  void count_failure(const Target& t, AttemptRecord& a);
  Task<bool> reply_error(http::status status, std::string_view code, std::string_view message);
  Task<AttemptResult> attempt(const Target& t);
  Task<void> drain_or_close(UpstreamPtr conn, ResponseReader& p);
  Task<RelayEnd> relay(UpstreamPtr conn, ResponseReader& p, const Target& t, AttemptRecord& a);
  Task<HoldEnd> hold_stream_start(UpstreamConnection& conn, ResponseReader& p, std::string& held,
                                  std::string_view& released, ClientWatch& watch, Verdict& failed);
  void fail_over_stream(UpstreamConnection& conn, const Target& t, AttemptRecord& a, const Verdict& v,
                        std::string_view why);
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
  const ClientIdentity& caller_;
  RequestRecord& rec_;
  ForwardBuffers& buffers_;

  const Rule* rule_ = nullptr;
  // The model the client asked for: the deployment path segment, or the body's `model` of an
  // OpenAI-style request. Rules match it, and cooldowns and quotas are kept under it.
  std::string_view model_;
  bool model_in_body_ = false;
  std::string_view body_;  // what goes upstream on this attempt: the client's, or edited
  std::string_view affinity_key_;

  std::optional<ResponseReader> parser_;  // the current attempt's response
  std::string_view client_api_key_, client_authorization_;
  bool head_ = false;
  bool azure_path_ = false;
  bool send_length_ = false;  // Content-Length goes upstream (the body is always buffered)
  std::int64_t cost_ = 0;     // estimated tokens, only when a quota, a low report or a budget needs them
  bool cost_known_ = false;
  // What the body says (model, affinity keys, estimate), read once when first needed.
  std::optional<RequestBodyFacts> body_facts_;
  const RequestBodyFacts& body_facts() {
    if (!body_facts_) body_facts_ = read_request_body(target_.path, req_.body);
    return *body_facts_;
  }
  BudgetAdmission* budget_ = nullptr;  // the caller's budgets, when it has some (in buffers_)
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
        if (is_client_credential(field.name) || iequals(field.name, "x-request-id") ||
            iequals(field.name, "x-smartlb-metadata") || iequals(field.name, "x-smartlb-affinity"))
          continue;
        break;
    }
    append_field(passed, field.name, field.value);
  }
  if (!named.contains("api-key")) client_api_key_ = f.get("api-key");
  if (!named.contains("authorization")) client_authorization_ = f.get(http::field::authorization);
  const auto m = req_.method;
  send_length_ = !req_.body.empty() || m == http::verb::post || m == http::verb::put ||
                 m == http::verb::patch || m == http::verb::options;
  if (target_.has_deployment()) {
    model_ = target_.deployment;
  } else if (body_names_model(target_.path) && !req_.body.empty()) {
    model_in_body_ = true;
    if (const auto m = body_facts().model) model_ = *m;
  }
  body_ = req_.body;
  // The estimate needs the body read: only when a declared quota or a backend's low report
  // can turn on it.
  if (snap_.any_quota || states_.reported_budget_low()) {
    cost_ = estimate_request_tokens(body_facts());
    cost_known_ = true;
  }
}

// The rule this request follows, or the message of the client error that prevents matching.
std::optional<std::string_view> ForwardJob::match_rule() {
  // A metadata header is read (and refused when invalid) whether or not a rule asks for
  // metadata: a client's mistake shows the same under every configuration.
  std::vector<MetadataPair>& metadata = buffers_.metadata;
  metadata.clear();
  if (const std::string_view header = req_.fields.get("x-smartlb-metadata");
      !header.empty() && !parse_metadata(header, metadata))
    return "The x-smartlb-metadata header must be a JSON object whose values are strings.";
  // The candidate rules by model, each checked in order.
  const auto found = snap_.rule_index.find(model_, [&](std::uint32_t i) {
    return snap_.rules[i].when.matches(RequestFacts{caller_.subjects, model_, metadata});
  });
  rule_ = found < 0 ? nullptr : &snap_.rules[static_cast<std::size_t>(found)];
  if (rule_ && rule_->affinity) {
    // The client's own key, or the body's prompt cache key, or its end user.
    affinity_key_ = req_.fields.get("x-smartlb-affinity");
    if (affinity_key_.empty() && model_in_body_) {
      const RequestBodyFacts& body = body_facts();
      affinity_key_ = body.prompt_cache_key ? *body.prompt_cache_key : body.user.value_or("");
    }
  }
  return std::nullopt;
}

std::optional<Target> ForwardJob::choose_target(TriedSet& tried) {
  for (;;) {
    const bool out_of_time = Nanos(s_.clock.coarse_now() - rec_.start) >= cfg_.request_timeout;
    if (out_of_time) return std::nullopt;
    const auto choice =
        smartlb::choose_target(*rule_->selector, rule_->table, states_,
                               {model_, tried, cost_, affinity_key_, rule_->slow_start}, w_.rng);
    if (!choice) return std::nullopt;
    tried.add(choice->position);
    const PoolMember& m = rule_->table.member(choice->position);
    if (!states_.reserve(m, model_, cost_)) continue;  // its quota filled meanwhile
    const RouteTarget& route = rule_->route[choice->position];
    return Target{choice->position, m, route, snap_.backends[route.backend], choice->probe};
  }
}

// An Entra ID backend needs a valid token before anything is sent (one atomic load when it has
// one; the coarse clock is enough: a token stops being used 10 s before it expires).
bool ForwardJob::credential_ready(const Target& t) const {
  const entra::TokenCell* cell = snap_.prepared[t.route.backend].entra.get();
  return t.config.auth != AuthStyle::Entra ||
         (cell && cell->look(s_.clock.coarse_now()).availability == entra::TokenCell::Availability::Ready);
}

// No valid token yet: wait (asynchronously) for the fetch under way, or cool the backend down
// with cause `credential` until the credential service tries again, and fail over.
Task<bool> ForwardJob::await_credential(const Target& t) {
  using entra::TokenCell;
  TokenCell* cell = snap_.prepared[t.route.backend].entra.get();
  TokenCell::Lookup l{TokenCell::Availability::Unavailable};
  if (cell) l = co_await entra::wait_for_token(*cell, s_.clock, header_timeout());
  if (l.availability == TokenCell::Availability::Ready) co_return true;
  const MonoNanos now = s_.clock.now();
  std::optional<std::chrono::milliseconds> hint;
  if (l.availability == TokenCell::Availability::Unavailable && l.retry_at > now)
    hint = std::chrono::ceil<std::chrono::milliseconds>(Nanos(l.retry_at - now));
  AttemptRecord& a = rec_.add_attempt();
  a.backend = t.member.id.value;
  a.deployment = t.member.effective_deployment(model_);
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
  append_upstream_target(out, b.url.base_path, target_, t.route.upstream_name);
  out.append(" HTTP/1.1\r\n");
  append_field(out, "Host", b.url.host_header);
  if (const entra::TokenCell* cell = snap_.prepared[t.route.backend].entra.get())
    cell->append_authorization(out);  // "Authorization: Bearer <Entra ID token>"
  else
    for (const CredentialField& f : static_key_fields(b, snap_.prepared[t.route.backend].bearer, azure_path_,
                                                      {client_api_key_, client_authorization_}))
      append_field(out, f.name, f.value);
  out.append(buffers_.passed_fields);
  append_field(out, "x-request-id", rec_.request_id);  // one id from client to backend and back
  if (send_length_) {
    out.append("Content-Length: ");
    append_decimal(out, body_.size());
    out.append("\r\n", 2);
  }
  out.append("\r\n", 2);
  // A small body rides in the same buffer: one send() instead of a sendmsg() of two.
  if (body_.size() <= kInlineBodyBytes) out.append(body_);
}

// The body for target `t`: the client's, or (when the target overrides parameters, or renames
// an OpenAI-style request's model) a copy with those top-level members replaced. Every attempt
// starts again from the client's body. A body that is not a JSON object goes as it is.
void ForwardJob::prepare_body(const Target& t) {
  body_ = req_.body;
  const bool rename = model_in_body_ && !t.route.upstream_name.empty() && model_ != t.route.upstream_name;
  if (t.route.overrides.empty() && !rename) return;
  if (auto edited = edit_json_body(req_.body, rename ? t.route.renamed : t.route.overrides)) {
    buffers_.edited_body = std::move(*edited);
    body_ = buffers_.edited_body;
  }
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
    const bool inline_body = body_.size() <= kInlineBodyBytes;
    const std::array<asio::const_buffer, 2> request{
        asio::buffer(head), asio::buffer(body_.data(), inline_body ? 0 : body_.size())};
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
  head.append(buffers_.budget_fields);  // the caller's budget, in the place of the backend's
  if (!rec_.request_id.empty()) append_field(head, "x-request-id", rec_.request_id);
  if (chunked) head.append("Transfer-Encoding: chunked\r\n");
  if (req_.version >= 11 && !keep) head.append("Connection: close\r\n");
  if (req_.version == 10 && keep) head.append("Connection: keep-alive\r\n");
  head.append("\r\n", 2);
}

// A 2xx event stream's start, held back until it shows content, so a stream that begins with an
// error can still fail over: nothing has gone to the client yet. Bounded by
// STREAM_HOLDBACK_BYTES and by the header timeout; either way what is held is then released.
// A backend that fails (or a parse error) while its start is held fails over too.
// On Release, `released` is what was held: the first run of body bytes itself when it decided
// (the usual case: a view into the connection's buffer, valid until its next read, so nothing is
// copied), else `held`, where a start spread over several reads is gathered.
Task<HoldEnd> ForwardJob::hold_stream_start(UpstreamConnection& conn, ResponseReader& p, std::string& held,
                                            std::string_view& released, ClientWatch& watch, Verdict& failed) {
  held.clear();
  StreamStart start(cfg_.stream_holdback_bytes);
  // Started when the hold first waits on the backend: a first event that came with the head
  // (the usual case) costs no timer.
  std::optional<HoldDeadline> deadline;
  for (;;) {
    bool progressed = false;
    error_code ec;
    if (!p.is_done() && !feed_buffered(conn.buffer, p, ReadGoal::some, progressed, ec)) {
      if (!deadline) deadline.emplace(conn, header_timeout());
      watch.arm(client_.socket(), conn);  // a client that leaves meanwhile closes `conn`
      // The hold's deadline (at most HTTP_TIMEOUT_SECONDS after its first wait) ends a read first;
      // the socket's own, which would close the connection, is only a safety net behind it.
      conn.tcp().expires_after(cfg_.http_timeout + std::chrono::seconds(1));
      ec = conn.tcp().done(
          co_await conn.visit([&](auto& s) { return read_http(s, conn.buffer, p, ReadGoal::some); }));
    }
    if (ec && watch.client_left()) co_return HoldEnd::ClientLeft;
    const bool expired = deadline && deadline->expired();
    released = held;
    if (ec == asio::error::operation_aborted && expired) co_return HoldEnd::Release;
    if (ec) {
      failed = judge_transport(classify_transport_error(ec));
      co_return HoldEnd::FailOver;
    }
    if (const std::string_view run = p.take_body_view(); !run.empty()) {
      const bool first = held.empty();
      if (!first) held.append(run);
      released = first ? run : std::string_view(held);
      switch (start.advance(released)) {
        case StartVerdict::Hold:
          if (first) held.assign(run);  // the next read may move what the view points at
          released = held;
          break;
        case StartVerdict::Release:
          co_return HoldEnd::Release;
        case StartVerdict::FailOver:
          failed = judge_stream_error();
          co_return HoldEnd::FailOver;
      }
    }
    if (p.is_done() || expired) co_return HoldEnd::Release;
  }
}

// The attempt whose stream start failed: cooled down like a 5xx (or a transport failure), its
// connection closed (its stream was not read to the end), and the next backend tried.
void ForwardJob::fail_over_stream(UpstreamConnection& conn, const Target& t, AttemptRecord& a,
                                  const Verdict& v, std::string_view why) {
  conn.close();
  a.cause = v.cause;
  a.cooldown_ms = states_.record_failure(t.member, model_, v, std::nullopt).count();
  count_failure(t, a);
  spdlog::warn(
      "backend {} answered {} but its stream failed before any content ({}); cooling down {} ms, failing "
      "over",
      t.config.name, conn.head.status, why, a.cooldown_ms);
}

Task<RelayEnd> ForwardJob::relay(UpstreamPtr conn, ResponseReader& p, const Target& t, AttemptRecord& a) {
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

  RelayScratchLease scratch(w_.spare_scratch);
  const TrimHeld trim{scratch->held};
  ClientWatch watch;         // armed once the client waits on the backend
  std::string_view pending;  // a stream's held-back start: the first bytes written
  if (has_body && status / 100 == 2 && cfg_.stream_holdback_bytes > 0 && is_plain_event_stream(res.fields)) {
    Verdict failed;
    switch (co_await hold_stream_start(*conn, p, scratch->held, pending, watch, failed)) {
      case HoldEnd::Release:
        break;
      case HoldEnd::ClientLeft:
        rec_.client_aborted = true;
        conn->close();
        co_return RelayEnd::Close;
      case HoldEnd::FailOver:
        watch.disarm(client_.socket());  // the client's connection gets the next attempt's answer
        fail_over_stream(
            *conn, t, a, failed,
            failed.cause == FailureCause::StreamError ? "an error event" : to_string(failed.cause));
        co_return RelayEnd::FailOver;
    }
  }

  write_response_head(res, t, chunked, keep);
  std::string& head = buffers_.response_head;
  rec_.status = status;

  // Send the head at once only when the body must be waited for (a stream): otherwise the
  // first write below carries head and body together, one syscall instead of two.
  bool head_sent = false;
  if (pending.empty() && !p.is_done() && conn->buffer.size() == 0) {
    client_.expires_after(cfg_.http_timeout);
    auto [hec, hn] = co_await asio::async_write(client_, asio::buffer(head), use_tuple);
    hec = client_.done(hec);
    if (hec) {
      rec_.client_aborted = true;
      conn->close();
      co_return RelayEnd::Close;
    }
    head_sent = true;
  }

  char size_line[20];
  static constexpr std::string_view kCrlf = "\r\n", kLastChunk = "0\r\n\r\n";
  // Body bytes this round: views into the connection's buffer, valid until its next read (so:
  // written, and fed to the usage scan, before the loop reads again). Every run of body bytes
  // one read brought (several chunks of a stream, often) goes out in one write.
  auto& runs = scratch->runs;
  for (;;) {
    std::size_t run_count = 0, chunk = 0;
    bool chunk_in_head = false;
    bool progressed = false;
    error_code ec;
    if (!pending.empty()) {  // the held start goes first, with what else is buffered, before a read
      runs[run_count++] = std::exchange(pending, {});
      chunk = runs[0].size();
    } else if (!p.is_done() &&
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
        co_return RelayEnd::Close;
      }
      if (ec) {
        // Too late to fail over: cut the client off without a clean end so it sees a
        // truncated response, not a complete one.
        rec_.upstream_aborted = true;
        const Verdict v = judge_transport(classify_transport_error(ec));
        states_.record_failure(t.member, model_, v, std::nullopt);
        conn->close();
        co_return RelayEnd::Close;
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
        co_return RelayEnd::Close;
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
  co_return keep ? RelayEnd::Keep : RelayEnd::Close;
}

Task<bool> ForwardJob::reply_unavailable() {
  const UnavailableAnswer a =
      answer_unavailable(states_.unavailability(rule_->table, model_, cost_), rec_.attempt_count, model_);
  ErrorReply r;
  r.version = req_.version;
  r.keep_alive = req_.keep_alive && !w_.draining;
  r.request_id = rec_.request_id;
  r.extra_fields = buffers_.budget_fields;
  r.retry_after = a.retry_after;
  r.status = static_cast<http::status>(a.status);
  r.type = a.type;
  r.code = a.code;
  r.message = a.message;
  rec_.status = a.status;
  const auto ec = co_await write_error_reply(client_, r, cfg_.http_timeout);
  co_return !ec && r.keep_alive;
}

// A failover outcome counts against the target's failure_tolerance, when it has one.
void ForwardJob::count_failure(const Target& t, AttemptRecord& a) {
  if (!t.route.allowed_failures_per_minute) return;
  const std::string_view deployment = t.member.effective_deployment(model_);
  if (!s_.breakers.record(t.member.id, deployment, *t.route.allowed_failures_per_minute, s_.clock.now())) {
    // Other replicas may have failed there too: the shared count may trip it (later, off this path).
    if (FailureSharer* sharer = s_.breakers.sharer())
      sharer->count({std::string(t.member.name), std::string(deployment), t.route.target_id,
                     *t.route.allowed_failures_per_minute, t.route.breaker_cooldown});
    return;
  }
  states_.hold(t.member, model_, FailureCause::FailureTolerance, t.route.breaker_cooldown);
  a.breaker_tripped = true;
  spdlog::warn("target {} failed more than {} time(s) in a minute: out for {} s (failure_tolerance)",
               t.route.target_id, *t.route.allowed_failures_per_minute,
               std::chrono::duration_cast<std::chrono::seconds>(t.route.breaker_cooldown).count());
}

Task<bool> ForwardJob::reply_error(http::status status, std::string_view code, std::string_view message) {
  ErrorReply r;
  r.version = req_.version;
  r.keep_alive = req_.keep_alive && !w_.draining;
  r.request_id = rec_.request_id;
  r.extra_fields = buffers_.budget_fields;
  r.status = status;
  r.code = code;
  r.message = message;
  rec_.status = static_cast<unsigned>(status);
  const auto ec = co_await write_error_reply(client_, r, cfg_.http_timeout);
  co_return !ec && r.keep_alive;
}

// The caller's budgets admit the request with its estimated cost (prompt + max_tokens), or it
// gets OpenAI's 429 with when to try again, and no backend is called.
// Not a coroutine: an admitted request costs no frame.
std::optional<BudgetRefused> ForwardJob::admit_to_budgets() {
  BudgetPlan::Budgets refs;
  const std::size_t n = snap_.budgets.budgets_for(caller_, refs);
  if (n == 0) return std::nullopt;
  budget_ = &buffers_.budget.emplace(refs, n);
  // The estimate needs the body read: only when a budget counts tokens.
  if (!cost_known_ && budget_->counts_tokens()) {
    cost_ = estimate_request_tokens(body_facts());
    cost_known_ = true;
  }
  const BudgetTime t{s_.clock.coarse_now(), s_.clock.wall_now()};
  std::optional<BudgetRefused> refused = budget_->admit(cost_, t);
  budget_->append_fields(buffers_.budget_fields);
  return refused;
}

Task<bool> ForwardJob::reply_budget_refused(const BudgetRefused& refused) {
  rec_.client_limited = true;
  const std::string message = refusal_message(refused);
  ErrorReply r;
  r.version = req_.version;
  r.keep_alive = req_.keep_alive && !w_.draining;
  r.request_id = rec_.request_id;
  r.extra_fields = buffers_.budget_fields;
  r.status = http::status::too_many_requests;
  r.type = counts_tokens(refused.refusal.limit) ? "tokens" : "requests";
  r.code = "rate_limit_exceeded";
  r.message = message;
  r.retry_after = std::chrono::ceil<std::chrono::milliseconds>(refused.refusal.retry_after);
  rec_.status = 429;
  const auto ec = co_await write_error_reply(client_, r, cfg_.http_timeout);
  co_return !ec && r.keep_alive;
}

// The budgets are charged what the answer says it used; an answer that used nothing (an error,
// smartlb's own) gives the tokens back; a success that does not say (a stream without
// include_usage) keeps the estimate.
void ForwardJob::settle_budgets() {
  if (!budget_) return;
  const BudgetTime t{s_.clock.coarse_now(), s_.clock.wall_now()};
  if (rec_.prompt_tokens >= 0 || rec_.completion_tokens >= 0)
    budget_->settle(
        std::max<std::int64_t>(rec_.prompt_tokens, 0) + std::max<std::int64_t>(rec_.completion_tokens, 0), t);
  else if (rec_.served_by < 0 || rec_.status / 100 != 2)
    budget_->settle(0, t);
}

Task<bool> ForwardJob::run() {
  buffers_.budget_fields.clear();
  prepare_request();
  rec_.deployment = model_;
  if (const auto bad = match_rule()) co_return co_await reply_error(http::status::bad_request, "", *bad);
  if (!rule_) {
    const std::string message =
        model_.empty() ? std::string("No routing rule matches this request (it names no model).")
                       : "No routing rule serves the model '" + std::string(model_.substr(0, 128)) + "'.";
    co_return co_await reply_error(http::status::not_found, "model_not_found", message);
  }
  if (!snap_.budgets.empty())
    if (const std::optional<BudgetRefused> refused = admit_to_budgets())
      co_return co_await reply_budget_refused(*refused);
  TriedSet tried;
  for (;;) {
    const std::optional<Target> t = choose_target(tried);
    if (!t) co_return co_await reply_unavailable();
    if (!credential_ready(*t) && !co_await await_credential(*t)) continue;
    prepare_body(*t);
    write_request_head(*t);
    const ReportedBudget::Mark mark = states_.charge_reported(t->member, model_, cost_);

    AttemptRecord& a = rec_.add_attempt();
    a.backend = t->member.id.value;
    a.deployment = t->member.effective_deployment(model_);
    a.probe = t->probe;
    const MonoNanos sent = s_.clock.now();
    AttemptResult r = co_await attempt(*t);
    a.ttfb_us = (s_.clock.now() - sent) / 1000;

    if (!r.conn) {
      a.cause = r.verdict.cause;
      a.cooldown_ms = states_.record_failure(t->member, model_, r.verdict, std::nullopt).count();
      count_failure(*t, a);
      spdlog::warn("backend {} failed ({}: {}); cooling down {} ms, failing over", t->config.name,
                   to_string(r.verdict.cause), r.detail, a.cooldown_ms);
      continue;
    }
    const unsigned status = r.conn->head.status;
    a.status = status;
    states_.observe_report(t->member, model_, rate_limit_report(r.conn->head.fields), sent, mark,
                           status != 429);
    const Verdict judged = judge_status(status, !model_.empty());
    if (judged.fail_over) {
      const auto hint = retry_hint(r.conn->head.fields, s_.clock.wall_now());
      const Verdict v = judge_throttle_hint(judged, hint, t->member.quota_window);
      a.cause = v.cause;
      a.cooldown_ms = states_.record_failure(t->member, model_, v, hint, sent).count();
      count_failure(*t, a);
      if (v.cause == FailureCause::AuthRejected && snap_.prepared[t->route.backend].entra)
        snap_.prepared[t->route.backend].entra->request_refresh();  // a revoked token: get a new one
      if (v.cause == FailureCause::QuotaExhausted)
        spdlog::warn(
            "backend {} says its quota for {} is exhausted for {} s (HTTP 429, not a rate limit); "
            "cooling down {} ms, failing over",
            t->config.name, model_, std::chrono::ceil<std::chrono::seconds>(*hint).count(), a.cooldown_ms);
      else if (v.cause == FailureCause::AuthRejected)
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
    const RelayEnd end = co_await relay(std::move(r.conn), *parser_, *t, a);
    if (end == RelayEnd::FailOver) {  // its stream began with an error: nothing went to the client
      rec_.served_by = -1;
      continue;
    }
    const bool keep = end == RelayEnd::Keep;
    // Latency rules learn from complete answers whose usage says how many tokens they took.
    if (rule_->type == RuleType::Latency && status / 100 == 2 && !rec_.client_aborted &&
        !rec_.upstream_aborted && rec_.completion_tokens > 0) {
      const MonoNanos now = s_.clock.now();
      s_.latency.record(t->member.id, t->member.effective_deployment(model_), now, Nanos(now - sent),
                        rec_.completion_tokens);
    }
    co_return keep;
  }
}

}  // namespace

Task<bool> forward_request(Worker& w, const Snapshot& snapshot, TimedSocket& client, RequestHead& req,
                           const RequestTarget& target, const ClientIdentity& caller, RequestRecord& rec,
                           ForwardBuffers& buffers) {
  ForwardJob job(w, snapshot, client, req, target, caller, rec, buffers);
  const bool keep = co_await job.run();
  job.settle_budgets();
  co_return keep;
}

}  // namespace smartlb::net
