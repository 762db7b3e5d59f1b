// The request path as policy (pingora's proxy_trait.rs beside proxy_h1.rs; YARP's load balancing
// and passive health beside its HttpForwarder): what happens at each phase of ForwardJob::run,
// while net/upstream_exchange moves the bytes.
//   place     a stateful request's tags come off, and pin it to their resource or try the
//             resources in turn (net/stateful_route; docs/stateful-apis.md)
//   prepare   what goes upstream of the client's request, once (fields, body framing, cost)
//   match     the first rule whose conditions the request meets (none: 404)
//   admit     the caller's budgets take the request's estimated tokens (over one: 429)
//   choose    a target from the rule's routing table (its selector, or a probe), its quota reserved
//   credential  an Entra ID backend's token (waited for, or the target cools down)
//   address   the upstream request head for that target, with its credential, and its body
//             (the target's override_params and model rename, when it has them)
//   attempt   send it, read the response head (UpstreamExchange::send)
//   judge     fail over at once (and account the failure: account_failure), or
//   relay     the response as it arrives, a 2xx event stream's start held back until it shows
//             content (an error first: fail over) (UpstreamExchange::relay); a stateful API's ids
//             tagged with the resource that answered; a Realtime WebSocket's verified 101 opens
//             its session (net/websocket_relay), any other answer to its handshake is judged
//             like an HTTP answer
//   unavailable  nothing left: smartlb's own answer (refuse)
//   price     what the answer cost, by the price table (docs/operations.md#cost)
//   settle    the caller's budgets are charged the tokens (and the cost) the answer used
// Accounting (metrics, access log) reads the RequestRecord these phases fill.
#include <algorithm>

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "smartlb/clients/budget_admission.hpp"
#include "smartlb/cost/request_cost.hpp"
#include "smartlb/credentials/entra/token_wait.hpp"
#include "smartlb/credentials/static_key.hpp"
#include "smartlb/http/body_intake.hpp"
#include "smartlb/http/header_rules.hpp"
#include "smartlb/http/json_body.hpp"
#include "smartlb/http/request_body.hpp"
#include "smartlb/http/request_target.hpp"
#include "smartlb/http/response_fields.hpp"
#include "smartlb/http1/wire_format.hpp"
#include "smartlb/net/forward.hpp"
#include "smartlb/net/replies.hpp"
#include "smartlb/net/request_tracing.hpp"
#include "smartlb/net/stateful_route.hpp"
#include "smartlb/net/streamed_body.hpp"
#include "smartlb/net/upstream_exchange.hpp"
#include "smartlb/net/websocket_relay.hpp"
#include "smartlb/net/worker.hpp"
#include "smartlb/routing/attempt_accounting.hpp"
#include "smartlb/routing/target_choice.hpp"
#include "smartlb/routing/throttle_headers.hpp"
#include "smartlb/routing/token_estimate.hpp"
#include "smartlb/routing/unavailable_answer.hpp"
#include "smartlb/stateful/not_found.hpp"
#include "smartlb/tracing/request_trace.hpp"
#include "smartlb/websocket/handshake.hpp"

namespace smartlb::net {
namespace {

// A request body up to this size is copied behind the head and sent in one buffer.
constexpr std::size_t kInlineRequestBodyBytes = 64 * 1024;
// A "not found" answer up to this size is held while the next backend or resource is tried.
constexpr std::size_t kHeldAnswerBytes = 64 * 1024;

// A target chosen for an attempt of this request (not its request-target, request_target_): a
// position in its rule's table, and what is known there.
struct ChosenTarget {
  std::size_t position;
  const PoolMember& member;     // routing: id, weight, quota
  const RouteTarget& route;     // the model rename and body overrides
  const BackendConfig& config;  // transport: URL, credentials
  bool probe = false;           // sent to test a target its reports held back
};

// One of smartlb's own answers: status, OpenAI's error type and code, the message, and when to
// come back (none: no Retry-After).
struct Refusal {
  http::status status;
  std::string_view type = "invalid_request_error";
  std::string_view code;
  std::string_view message;
  std::optional<std::chrono::milliseconds> retry_after{};
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

// How one attempt ended: failed over (try the next), nothing left to try, or answered (and
// whether the client connection may carry another request).
enum class Attempted : std::uint8_t { Next, NothingLeft, Keep, Close };

}  // namespace

class ForwardJob {
 public:
  ForwardJob(Worker& w, const Snapshot& snapshot, TimedSocket& client, RequestHead& req,
             const RequestTarget& target, const ClientIdentity& caller, RequestRecord& rec,
             ForwardBuffers& buffers, StreamedBody* streamed)
      : w_(w),
        s_(w.shared),
        cfg_(w.shared.cfg),
        snap_(snapshot),
        states_(w.shared.states),
        req_(req),
        request_target_(target),
        caller_(caller),
        rec_(rec),
        buffers_(buffers),
        client_(client),
        exchange_(w, client, req, rec, buffers),
        streamed_(streamed) {}

  Task<bool> run();  // prices the answer and settles the budgets when it ends

 private:
  // At the end of run(): what the answer cost, by the price table, then the caller's budgets
  // charged what it used (its cost included). Returns `keep`.
  bool finish(bool keep) {
    price_answer();
    settle_budgets();
    return keep;
  }
  void price_answer();
  void settle_budgets();

  void prepare_request();
  std::optional<Refusal> admit();
  Task<Attempted> attempt(const ChosenTarget& t, TriedSet& tried);
  // A streamed body's attempt that can neither fail over (its first byte left) nor relay an
  // answer (none came whole): the client is told how it ended, or is gone.
  Task<Attempted> end_streamed(StreamEnd end);
  void account_stream_failure(const ChosenTarget& t, AttemptRecord& a, unsigned status, MonoNanos sent,
                              const Relayed& relayed);
  void answered(const ChosenTarget& t, unsigned status, MonoNanos sent, const Relayed& relayed);
  std::optional<std::string_view> match_rule();
  std::optional<BudgetRefused> admit_to_budgets();
  std::optional<ChosenTarget> choose_target(TriedSet& tried);
  bool credential_ready(const ChosenTarget& t) const;
  Task<bool> await_credential(const ChosenTarget& t);
  void prepare_body(const ChosenTarget& t);
  void write_request_head(const ChosenTarget& t, AttemptRecord& a);
  // A failover outcome of attempt `a` to `t`: the target cools down (for `hint`, or the
  // default), its failure_tolerance counts it, and the log says why. `sent`: when it left.
  void account_failure(const ChosenTarget& t, AttemptRecord& a, const Verdict& v,
                       std::optional<std::chrono::milliseconds> hint, MonoNanos sent, std::string_view why);
  // smartlb's own answer, in OpenAI's error shape, its status recorded. Whether the client's
  // connection may carry another request.
  Task<bool> refuse(const Refusal& r);
  Task<bool> refuse_unavailable();
  // Stateful requests (docs/stateful-apis.md): an untagged try moves to the next resource
  // (`unavailable`: this one could not answer); a 404 or 400 read whole and held, true when it
  // says "not found"; the held answer relayed; what is answered when nothing is left to try.
  bool next_resource(TriedSet& tried, bool unavailable);
  Task<bool> hold_not_found(const ChosenTarget& t, UpstreamPtr conn);
  // After a verified 101: the client's 101 and the session, counted on its backend. Not a
  // failure of the backend however it ends.
  Task<void> open_websocket(const ChosenTarget& t, UpstreamPtr conn);
  // What the backend's answer to a handshake is, against the key this attempt sent.
  websocket::UpgradeAnswer judge_upgrade(const ResponseHead& h) const;
  Task<bool> relay_held();
  Task<bool> answer_nothing_left();
  std::chrono::seconds header_timeout() const;
  // A Realtime WebSocket handshake (docs/stateful-apis.md, Realtime): the model from the query,
  // and the browser's credential (subprotocol or query) when it sent no header.
  void prepare_websocket();
  void write_websocket_fields(std::string& out);

  Worker& w_;
  Shared& s_;
  const Config& cfg_;  // process settings: timeouts
  const Snapshot& snap_;
  BackendStates& states_;
  RequestHead& req_;
  RequestTarget request_target_;  // the client's, less its tags
  const ClientIdentity& caller_;
  RequestRecord& rec_;
  ForwardBuffers& buffers_;
  TimedSocket& client_;
  UpstreamExchange exchange_;
  StreamedBody* streamed_;  // a large upload's body, streamed to one backend; null: buffered

  const Rule* rule_ = nullptr;  // this try's: the matched rule, or its part on a resource
  const Rule* matched_ = nullptr;
  StatefulRoute stateful_;
  const Rule* unavailable_rule_ = nullptr;  // an untagged try's resource that could not answer
  // The last "not found", while others are tried: made only by a request that meets one, so
  // the usual request's job stays small.
  struct HeldAnswer {
    ResponseHead head;
    std::string body;
    std::string_view backend;
    int by = -1;
  };
  std::unique_ptr<HeldAnswer> held_;
  // The model the client asked for: the deployment path segment, or the body's `model` of an
  // OpenAI-style request. Rules match it, and cooldowns and quotas are kept under it.
  std::string_view model_;
  std::string_view body_;  // what goes upstream on this attempt: the client's, or edited
  std::string_view affinity_key_;

  std::string_view client_api_key_, client_authorization_;
  std::int64_t cost_ = 0;  // estimated tokens, only when a quota, a low report or a budget needs them
  bool model_in_body_ = false;
  bool azure_path_ = false;
  bool websocket_ = false;     // a Realtime handshake: a verified 101 opens a relayed session
  std::string websocket_key_;  // the Sec-WebSocket-Key of this attempt, smartlb's own
  std::string websocket_query_;
  bool send_length_ = false;  // Content-Length goes upstream (the body is always buffered)
  bool cost_known_ = false;
  // What the body says (model, affinity keys, estimate), read once when first needed.
  std::optional<RequestBodyFacts> body_facts_;
  const RequestBodyFacts& body_facts() {
    if (!body_facts_) body_facts_ = read_request_body(request_target_.path, req_.body);
    return *body_facts_;
  }
  std::string refusal_text_;           // smartlb's own answer's message, when it is made up
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
  azure_path_ = request_target_.path.substr(0, 8) == "/openai/";
  websocket_ = websocket::is_realtime_path(request_target_.path) &&
               websocket::asks_for_websocket(req_.method_text, req_.fields.get("upgrade"),
                                             req_.fields.get("connection"));

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
    if (named.is_hop(field.name) || is_proxy_header(field.name)) continue;
    switch (field.id) {
      case http::field::host:
      case http::field::expect:
      case http::field::content_length:
        continue;
      default:
        if (is_client_credential(field.name) || iequals(field.name, "x-request-id") ||
            iequals(field.name, "x-smartlb-metadata") || iequals(field.name, "x-smartlb-affinity") ||
            (rec_.trace.on && tracing::is_trace_context_field(field.name)))  // each attempt writes its own
          continue;
        // A compressed answer could not have its ids tagged: a stateful API's comes plain.
        if (stateful_.tags_answers() && iequals(field.name, "accept-encoding")) continue;
        // A handshake's own fields are smartlb's to write (write_websocket_fields).
        if (websocket_ && field.name.size() > 14 && iequals(field.name.substr(0, 14), "sec-websocket-"))
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
  if (request_target_.has_deployment()) {
    model_ = request_target_.deployment;
  } else if (body_names_model(request_target_.path) && !req_.body.empty()) {
    model_in_body_ = true;
    if (const auto m = body_facts().model) model_ = *m;
  }
  if (websocket_) prepare_websocket();
  body_ = req_.body;
  // The estimate needs the body read: only when a declared quota or a backend's low report
  // can turn on it.
  if (snap_.any_quota || states_.reported_budget_low()) {
    cost_ = estimate_request_tokens(body_facts());
    cost_known_ = true;
  }
}

void ForwardJob::prepare_websocket() {
  model_ = websocket::query_value(request_target_.query, websocket::model_parameter(request_target_.path));
  if (client_api_key_.empty() && client_authorization_.empty())
    client_api_key_ =
        websocket::browser_key(req_.fields.get("sec-websocket-protocol"), request_target_.query);
}

// The handshake as the backend gets it: smartlb's own key (the client's 101 answers the
// client's), no extension offered (frames stay readable), the subprotocols less the key entry.
void ForwardJob::write_websocket_fields(std::string& out) {
  websocket_key_ = websocket::new_key(w_.rng);
  append_field(out, "Upgrade", "websocket");
  append_field(out, "Connection", "Upgrade");
  append_field(out, "Sec-WebSocket-Version", "13");
  append_field(out, "Sec-WebSocket-Key", websocket_key_);
  const std::string protocols = websocket::without_key_subprotocol(req_.fields.get("sec-websocket-protocol"));
  if (!protocols.empty()) append_field(out, "Sec-WebSocket-Protocol", protocols);
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
  matched_ = snap_.match(RequestFacts{caller_.subjects, model_, metadata});
  stateful_.keep_resources_of(matched_);
  rule_ = stateful_.rule(snap_, matched_, !model_.empty());
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

// The caller's budgets admit the request with its estimated cost (prompt + max_tokens, and for a
// cost budget the same priced at the input and output prices of the model the client named), or
// it gets OpenAI's 429 with when to try again, and no backend is called.
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
  // A model without a price is estimated at nothing: it is admitted while the quota is not spent
  // (and charged what it cost, if its answer's model has a price).
  PicoUnits price = 0;
  if (budget_->counts_cost())
    if (const ModelPrice* p = snap_.prices.find(model_)) {
      const TokenEstimate e = estimate_request_token_parts(body_facts());
      price = cost_estimate(e.prompt, e.completion, *p);
    }
  const BudgetTime t{s_.clock.coarse_now(), s_.clock.wall_now()};
  std::optional<BudgetRefused> refused = budget_->admit(cost_, price, t);
  budget_->append_fields(buffers_.budget_fields);
  return refused;
}

std::optional<ChosenTarget> ForwardJob::choose_target(TriedSet& tried) {
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
    return ChosenTarget{choice->position, m, route, snap_.backends[route.backend], choice->probe};
  }
}

// An Entra ID backend needs a valid token before anything is sent (one atomic load when it has
// one; the coarse clock is enough: a token stops being used 10 s before it expires).
bool ForwardJob::credential_ready(const ChosenTarget& t) const {
  const entra::TokenCell* cell = snap_.prepared[t.route.backend].entra.get();
  return t.config.auth != AuthStyle::Entra ||
         (cell && cell->look(s_.clock.coarse_now()).availability == entra::TokenCell::Availability::Ready);
}

// No valid token yet: wait (asynchronously) for the fetch under way, or cool the backend down
// with cause `credential` until the credential service tries again, and fail over.
Task<bool> ForwardJob::await_credential(const ChosenTarget& t) {
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
  account_failure(t, a, {true, FailureCause::Credential, CooldownScope::Backend}, hint, 0,
                  "no valid Entra ID token (see the credential's log lines)");
  co_return false;
}

// The body for target `t`: the client's, or (when the target overrides parameters, or renames
// an OpenAI-style request's model) a copy with those top-level members replaced. Every attempt
// starts again from the client's body. A body that is not a JSON object goes as it is.
void ForwardJob::prepare_body(const ChosenTarget& t) {
  body_ = req_.body;
  if (streamed_) return;  // not in memory: it goes as the client sends it
  const bool rename = model_in_body_ && !t.route.upstream_name.empty() && model_ != t.route.upstream_name;
  if (t.route.overrides.empty() && !rename) return;
  if (auto edited = edit_json_body(req_.body, rename ? t.route.renamed : t.route.overrides)) {
    buffers_.edited_body = std::move(*edited);
    body_ = buffers_.edited_body;
  }
}

void ForwardJob::write_request_head(const ChosenTarget& t, AttemptRecord& a) {
  const BackendConfig& b = t.config;
  std::string& out = buffers_.request_head;
  out.clear();
  out.append(req_.method_text).push_back(' ');
  if (websocket_) {  // the model in the query, and no api-key there
    websocket_query_ = websocket::upstream_query(
        request_target_.query, websocket::model_parameter(request_target_.path), t.route.upstream_name);
    RequestTarget rt = request_target_;
    rt.query = websocket_query_;
    append_upstream_target(out, b.url.base_path, rt, {});
  } else {
    append_upstream_target(out, b.url.base_path, request_target_, t.route.upstream_name);
  }
  out.append(" HTTP/1.1\r\n");
  append_field(out, "Host", b.url.host_header);
  if (websocket_) write_websocket_fields(out);
  if (const entra::TokenCell* cell = snap_.prepared[t.route.backend].entra.get())
    cell->append_authorization(out);  // "Authorization: Bearer <Entra ID token>"
  else
    for (const CredentialField& f : static_key_fields(b, snap_.prepared[t.route.backend].bearer, azure_path_,
                                                      {client_api_key_, client_authorization_}))
      append_field(out, f.name, f.value);
  out.append(buffers_.passed_fields);
  append_field(out, "x-request-id", rec_.request_id);  // one id from client to backend and back
  if (rec_.trace.on) begin_attempt_trace(w_, rec_, a, b, azure_path_, out);  // traceparent: its CLIENT span
  if (streamed_) {
    streamed_->append_framing(out);
  } else if (send_length_) {
    out.append("Content-Length: ");
    append_decimal(out, body_.size());
    out.append("\r\n", 2);
  }
  out.append("\r\n", 2);
  // A small body rides in the same buffer: one send() instead of a sendmsg() of two.
  if (body_.size() <= kInlineRequestBodyBytes) out.append(body_);
}

// The one place a failed attempt is accounted (routing's account_failure: its cooldown, its
// breaker), its log line written, and a revoked Entra ID token refreshed.
void ForwardJob::account_failure(const ChosenTarget& t, AttemptRecord& a, const Verdict& v,
                                 std::optional<std::chrono::milliseconds> hint, MonoNanos sent,
                                 std::string_view why) {
  // Once a streamed body's first byte has left, the answer is relayed whatever it is.
  const std::string_view then =
      streamed_ && streamed_->started ? "no failover (its request body was streamed)" : "failing over";
  a.cause = v.cause;
  a.ended = s_.clock.now();
  const Accounted done = smartlb::account_failure(
      states_, s_.breakers, t.member, model_,
      {t.route.allowed_failures_per_minute, t.route.breaker_cooldown, t.route.target_id}, v, hint, sent,
      s_.clock.now());
  a.cooldown_ms = done.cooldown.count();
  a.breaker_tripped = done.breaker_tripped;
  if (done.breaker_tripped)
    spdlog::warn("target {} failed more than {} time(s) in a minute: out for {} s (failure_tolerance)",
                 t.route.target_id, *t.route.allowed_failures_per_minute,
                 std::chrono::duration_cast<std::chrono::seconds>(t.route.breaker_cooldown).count());
  switch (v.cause) {
    case FailureCause::AuthRejected:
      if (snap_.prepared[t.route.backend].entra)
        snap_.prepared[t.route.backend].entra->request_refresh();  // a revoked token: get a new one
      spdlog::error("backend {} rejected its credentials ({}): check {}; cooling down {} ms", t.config.name,
                    why, t.config.key_setting.empty() ? std::string_view("its key") : t.config.key_setting,
                    a.cooldown_ms);
      break;
    case FailureCause::QuotaExhausted:
      spdlog::warn(
          "backend {} says its quota for {} is exhausted for {} s ({}, not a rate limit); cooling down "
          "{} ms, {}",
          t.config.name, model_, std::chrono::ceil<std::chrono::seconds>(hint.value_or(Millis(0))).count(),
          why, a.cooldown_ms, then);
      break;
    case FailureCause::Throttled:
    case FailureCause::ServerError:
    case FailureCause::NotFound:
      spdlog::debug("backend {} answered {}; cooling down {} ms, {}", t.config.name, why, a.cooldown_ms,
                    then);
      break;
    default:
      spdlog::warn("backend {} failed ({}: {}); cooling down {} ms, {}", t.config.name, to_string(v.cause),
                   why, a.cooldown_ms, then);
      break;
  }
}

// The one place smartlb answers by itself: the reply and the record's status together.
Task<bool> ForwardJob::refuse(const Refusal& refusal) {
  ErrorReply r;
  r.version = req_.version;
  // A body still unread on the client's connection leaves it unable to carry another request.
  r.keep_alive = req_.keep_alive && !w_.draining && !(streamed_ && streamed_->unread());
  r.request_id = rec_.request_id;
  r.extra_fields = buffers_.budget_fields;
  r.status = refusal.status;
  r.type = refusal.type;
  r.code = refusal.code;
  r.message = refusal.message;
  r.retry_after = refusal.retry_after;
  rec_.status = static_cast<unsigned>(refusal.status);
  const auto ec = co_await write_error_reply(client_, r, cfg_.http_timeout);
  co_return !ec && r.keep_alive;
}

bool ForwardJob::next_resource(TriedSet& tried, bool unavailable) {
  if (unavailable && !unavailable_rule_) unavailable_rule_ = rule_;
  if (!stateful_.next_resource()) return false;
  rule_ = stateful_.rule(snap_, matched_, !model_.empty());
  tried = TriedSet{};
  return true;
}

// Not a failure of the backend (nothing cools down): the object is elsewhere, or nowhere.
Task<bool> ForwardJob::hold_not_found(const ChosenTarget& t, UpstreamPtr conn) {
  if (!held_) held_ = std::make_unique<HeldAnswer>();
  HeldAnswer& held = *held_;
  held.body.clear();
  const BodyRead read = co_await exchange_.read_body(*conn, held.body, kHeldAnswerBytes);
  held.head = conn->head;
  held.backend = t.config.name;
  held.by = static_cast<int>(t.member.id.value);
  if (read != BodyRead::Done) {
    conn->close();
    held.by = -1;  // not whole: never relayed
    co_return true;
  }
  co_await exchange_.drain_or_close(std::move(conn));
  co_return stateful::says_not_found(held.head.status, held.body);
}

websocket::UpgradeAnswer ForwardJob::judge_upgrade(const ResponseHead& h) const {
  return websocket::judge_upgrade(
      {h.status, h.fields.get("upgrade"), h.fields.get("connection"), h.fields.get("sec-websocket-accept"),
       h.fields.get("sec-websocket-extensions")},
      websocket_key_);
}

Task<void> ForwardJob::open_websocket(const ChosenTarget& t, UpstreamPtr conn) {
  rec_.served_by = static_cast<int>(t.member.id.value);
  const InFlight session = states_.begin_websocket_session(t.member.id);
  co_await relay_websocket(w_, client_, std::move(conn),
                           {req_.fields.get("sec-websocket-key"), t.config.name, rec_.request_id}, rec_);
}

Task<bool> ForwardJob::relay_held() {
  rec_.served_by = held_->by;
  const Relayed r = co_await exchange_.write_answer(
      held_->head, held_->body, {held_->backend, buffers_.budget_fields, rec_.request_id, header_timeout()});
  co_return r.end == RelayEnd::Keep;
}

// A resource that could not answer says when to come back (its 429 or 503) rather than another
// resource's "not found"; else the last "not found" is the answer.
Task<bool> ForwardJob::answer_nothing_left() {
  if (unavailable_rule_)
    rule_ = unavailable_rule_;
  else if (held_ && held_->by >= 0)
    co_return co_await relay_held();
  co_return co_await refuse_unavailable();
}

Task<bool> ForwardJob::refuse_unavailable() {
  const UnavailableAnswer a =
      answer_unavailable(states_.unavailability(rule_->table, model_, cost_), rec_.attempt_count, model_);
  co_return co_await refuse({static_cast<http::status>(a.status), a.type, a.code, a.message, a.retry_after});
}

// The model priced is the deployment the serving backend was asked for (after a target's
// rename: a rule may send a model's requests to a cheaper one), else the model the client named.
void ForwardJob::price_answer() {
  if (snap_.prices.empty() || (rec_.prompt_tokens < 0 && rec_.completion_tokens < 0)) return;
  const ModelPrice* price = nullptr;
  if (rec_.served_by >= 0 && rec_.attempt_count > 0)
    price = snap_.prices.find(
        rec_.attempts[std::min(rec_.attempt_count, RequestRecord::kMaxAttempts) - 1].deployment);
  if (!price) price = snap_.prices.find(rec_.deployment);
  if (!price) return;
  if (const auto cost = cost_of({rec_.prompt_tokens, rec_.cached_tokens, rec_.completion_tokens}, *price)) {
    rec_.cost = *cost;
    rec_.cost_model = price->model;
  }
}

// The budgets are charged what the answer says it used (tokens, and their price); an answer that
// used nothing (an error, smartlb's own) gives the tokens and cost back; a success that does not
// say (a stream without include_usage) keeps the estimate.
void ForwardJob::settle_budgets() {
  if (!budget_) return;
  const BudgetTime t{s_.clock.coarse_now(), s_.clock.wall_now()};
  // (An answer whose model has no price keeps its estimated cost.)
  if (rec_.prompt_tokens >= 0 || rec_.completion_tokens >= 0)
    budget_->settle(
        std::max<std::int64_t>(rec_.prompt_tokens, 0) + std::max<std::int64_t>(rec_.completion_tokens, 0),
        rec_.cost, t);
  else if (rec_.served_by < 0 || rec_.status / 100 != 2)
    budget_->settle(0, 0, t);
}

// Whether the request may be routed at all: its ids agree, a rule serves it, the caller's budgets
// admit it. The refusal's message, when built, is kept in refusal_text_.
std::optional<Refusal> ForwardJob::admit() {
  if (std::optional<std::string> conflict = stateful_.prepare(snap_, req_, request_target_, s_.placements)) {
    refusal_text_ = std::move(*conflict);
    return Refusal{http::status::bad_request, "invalid_request_error", "resource_conflict", refusal_text_};
  }
  prepare_request();
  rec_.deployment = model_;
  if (websocket_ &&
      (req_.fields.get("sec-websocket-key").size() != 24 || req_.fields.get("sec-websocket-version") != "13"))
    return Refusal{http::status::bad_request,
                   "invalid_request_error",
                   {},
                   "A WebSocket handshake needs a Sec-WebSocket-Key and Sec-WebSocket-Version: 13."};
  if (const auto bad = match_rule())
    return Refusal{http::status::bad_request, "invalid_request_error", {}, *bad};
  if (!rule_) {
    refusal_text_ = model_.empty()
                        ? std::string("No routing rule matches this request (it names no model).")
                        : "No routing rule serves the model '" + std::string(model_.substr(0, 128)) + "'.";
    return Refusal{http::status::not_found, "invalid_request_error", "model_not_found", refusal_text_};
  }
  rec_.rule = rule_->id;
  if (!snap_.budgets.empty())
    if (const std::optional<BudgetRefused> refused = admit_to_budgets()) {
      rec_.client_limited = true;
      refusal_text_ = refusal_message(*refused, snap_.prices.currency);
      return Refusal{http::status::too_many_requests,
                     counts_cost(refused->refusal.limit)     ? "cost"
                     : counts_tokens(refused->refusal.limit) ? "tokens"
                                                             : "requests",
                     "rate_limit_exceeded", refusal_text_,
                     std::chrono::ceil<std::chrono::milliseconds>(refused->refusal.retry_after)};
    }
  return std::nullopt;
}

Task<bool> ForwardJob::run() {
  buffers_.budget_fields.clear();
  if (const std::optional<Refusal> refusal = admit()) co_return finish(co_await refuse(*refusal));
  TriedSet tried;
  for (;;) {
    const std::optional<ChosenTarget> t = choose_target(tried);
    if (!t) {
      if (stateful_.untagged_try() && next_resource(tried, true)) continue;
      break;
    }
    if (!credential_ready(*t) && !co_await await_credential(*t)) continue;
    const Attempted a = co_await attempt(*t, tried);
    if (a == Attempted::NothingLeft) break;
    if (a != Attempted::Next) co_return finish(a == Attempted::Keep);
  }
  co_return finish(co_await answer_nothing_left());
}

// One try of one target. A coroutine of its own, not part of run(): GCC gives every awaited
// expression its own slot in the frame, and both frames stay under Asio's 1020-byte recycling
// limit only when apart (a larger frame costs an aligned_alloc and a free per request).
Task<Attempted> ForwardJob::attempt(const ChosenTarget& t, TriedSet& tried) {
  // In flight on its (backend, deployment) until this attempt's answer ends, stream included:
  // what a drain waits for (docs/operations.md).
  const InFlight in_flight = states_.begin_attempt(t.member, model_);
  prepare_body(t);
  AttemptRecord& a = rec_.add_attempt();
  a.backend = t.member.id.value;
  a.deployment = t.member.effective_deployment(model_);
  a.probe = t.probe;
  write_request_head(t, a);
  const ReportedBudget::Mark mark = states_.charge_reported(t.member, model_, cost_);
  const MonoNanos sent = a.sent = s_.clock.now();
  const bool inline_body = body_.size() <= kInlineRequestBodyBytes;
  // A streamed body's pauses are bound by HTTP_TIMEOUT_SECONDS, not by what is left of
  // REQUEST_TIMEOUT_SECONDS: an upload takes the time it takes.
  Exchanged r = co_await exchange_.send({t.member.id, t.config.url, buffers_.request_head,
                                         inline_body ? std::string_view() : body_,
                                         streamed_ ? cfg_.http_timeout : header_timeout(), streamed_});
  a.ttfb_us = (s_.clock.now() - sent) / 1000;

  if (!r.conn) {
    if (streamed_ && streamed_->started) {  // no failover: the body cannot be sent again
      if (r.body_end == StreamEnd::Sent || r.body_end == StreamEnd::UpstreamFailed)
        account_failure(t, a, judge_transport(r.failure), std::nullopt, sent, r.detail);
      else
        a.ended = s_.clock.now();  // the client's doing: not the backend's failure
      co_return co_await end_streamed(r.body_end);
    }
    account_failure(t, a, judge_transport(r.failure), std::nullopt, sent, r.detail);
    co_return Attempted::Next;
  }
  const unsigned status = r.conn->head.status;
  a.status = status;
  const Judged judged = judge_answer(status, throttle_fields(r.conn->head.fields), !model_.empty(),
                                     t.member.quota_window, s_.clock.wall_now());
  states_.observe_report(t.member, model_, judged.report, sent, mark, status != 429);
  if (websocket_) {
    const websocket::UpgradeAnswer upgrade = judge_upgrade(r.conn->head);
    if (upgrade == websocket::UpgradeAnswer::Accepted) {
      co_await open_websocket(t, std::move(r.conn));
      co_return Attempted::Close;  // the connection was the session's
    }
    if (upgrade != websocket::UpgradeAnswer::NotUpgraded) {  // a 101 that is not our WebSocket
      account_failure(t, a, Verdict{true, FailureCause::ProtocolError, CooldownScope::Backend}, std::nullopt,
                      sent, websocket::to_string(upgrade));
      r.conn->close();
      co_return Attempted::Next;
    }
  }
  // After a streamed body, whatever the backend answers is relayed (its cooldown recorded).
  const bool committed = streamed_ != nullptr;
  if (!committed && stateful_.looks_for_object() && (status == 404 || status == 400)) {
    if (!co_await hold_not_found(t, std::move(r.conn))) {
      const bool keep = co_await relay_held();
      co_return keep ? Attempted::Keep : Attempted::Close;
    }
    if (stateful_.untagged_try() && !next_resource(tried, false)) co_return Attempted::NothingLeft;
    co_return Attempted::Next;
  }
  if (judged.verdict.fail_over) {
    account_failure(t, a, judged.verdict, judged.hint, sent, "HTTP " + std::to_string(status));
    if (!committed) {
      co_await exchange_.drain_or_close(std::move(r.conn));
      co_return Attempted::Next;
    }
  }
  rec_.served_by = static_cast<int>(t.member.id.value);
  const stateful::ResourceTag* tag =
      stateful_.tags_answers() ? &snap_.resources[snap_.resource_of[t.route.backend]].tag : nullptr;
  const Relayed relayed = co_await exchange_.relay(
      std::move(r.conn), {t.config.name, buffers_.budget_fields, rec_.request_id, header_timeout(), tag});
  if (relayed.end == RelayEnd::FailOver) {  // its stream's start failed: nothing went to the client
    rec_.served_by = -1;
    account_stream_failure(t, a, status, sent, relayed);
    if (committed) co_return co_await end_streamed(StreamEnd::UpstreamFailed);
    co_return Attempted::Next;
  }
  answered(t, status, sent, relayed);
  co_return relayed.end == RelayEnd::Keep ? Attempted::Keep : Attempted::Close;
}

Task<Attempted> ForwardJob::end_streamed(StreamEnd end) {
  Refusal r{http::status::bad_gateway, "server_error", "upstream_error",
            "The backend failed after the request body began to stream; a streamed body (larger than "
            "STREAM_REQUEST_BODY_BYTES) is not sent again."};
  switch (end) {
    case StreamEnd::ClientLeft:  // nobody to tell; the backend's connection is closed already
      rec_.client_aborted = true;
      co_return Attempted::Close;
    case StreamEnd::TooLarge:
      r = {http::status::payload_too_large,
           "invalid_request_error",
           {},
           too_large_message("MAX_STREAMED_BODY_BYTES")};
      break;
    case StreamEnd::Malformed:
      r = {http::status::bad_request, "invalid_request_error", {}, "Malformed request body framing."};
      break;
    case StreamEnd::Sent:  // the whole body went, its answer did not come
    case StreamEnd::UpstreamFailed:
      break;
  }
  const bool keep = co_await refuse(r);  // (not inside a conditional expression: GCC 12)
  co_return keep ? Attempted::Keep : Attempted::Close;
}

void ForwardJob::account_stream_failure(const ChosenTarget& t, AttemptRecord& a, unsigned status,
                                        MonoNanos sent, const Relayed& relayed) {
  const Verdict v = relayed.cause == FailureCause::StreamError
                        ? judge_stream_error()
                        : Verdict{true, relayed.cause, CooldownScope::Backend};
  account_failure(t, a, v, std::nullopt, sent,
                  std::string("HTTP ") + std::to_string(status) +
                      " but its stream failed before any content (" + std::string(relayed.why) + ")");
}

// The answer went to the client: its resource knows the request's objects now, and the policy
// learns how the target did.
void ForwardJob::answered(const ChosenTarget& t, unsigned status, MonoNanos sent, const Relayed& relayed) {
  stateful_.answered(snap_, t.route.backend, s_.placements);
  if (relayed.cause != FailureCause::None)  // cut off after the head went out
    states_.record_failure(t.member, model_, Verdict{true, relayed.cause, CooldownScope::Backend},
                           std::nullopt);
  const MonoNanos now = s_.clock.now();
  rule_->selector->observe(Answered{t.member.id, t.member.effective_deployment(model_), status,
                                    !rec_.client_aborted && !rec_.upstream_aborted, now, Nanos(now - sent),
                                    rec_.completion_tokens});
}

void ForwardJobSlot::end() {
  if (!job_) return;
  std::exchange(job_, nullptr)->~ForwardJob();
  if (spares_->size() < kMaxSpare) {
    try {
      spares_->push_back(std::move(room_));
    } catch (...) {  // no room to keep it: it is freed instead
    }
  }
  room_.reset();
}

// Not a coroutine: the request's job lives in memory its connection borrows rather than in a
// frame of its own, which would cost an aligned_alloc and a free per request most of the time
// (Asio's recycling cache holds only 8 frames per thread, and a burst of requests frees more).
Task<bool> forward_request(Worker& w, const Snapshot& snapshot, TimedSocket& client, RequestHead& req,
                           const RequestTarget& target, const ClientIdentity& caller, RequestRecord& rec,
                           ForwardBuffers& buffers, StreamedBody* streamed) {
  ForwardJobSlot& slot = buffers.job;
  slot.end();
  slot.spares_ = &w.spare_job_rooms;
  if (w.spare_job_rooms.empty()) {
    slot.room_ = std::make_unique_for_overwrite<std::byte[]>(sizeof(ForwardJob));
  } else {
    slot.room_ = std::move(w.spare_job_rooms.back());
    w.spare_job_rooms.pop_back();
  }
  static_assert(alignof(ForwardJob) <= alignof(std::max_align_t));
  slot.job_ =
      new (slot.room_.get()) ForwardJob(w, snapshot, client, req, target, caller, rec, buffers, streamed);
  return slot.job_->run();
}

}  // namespace smartlb::net
