// What goes upstream for one attempt of a request (ForwardJob's prepare and address phases):
// the client's fields that pass, the rule match's inputs, the target's credential and body, the
// request head.
#include "smartlb/net/forward_job.hpp"
#include "smartlb/tracing/request_trace.hpp"

namespace smartlb::net {
namespace {

// Requests of the OpenAI style name their model in the body, not the path (/v1/..., and
// Azure's v1 API /openai/v1/...), and so do Claude's Messages API's (/anthropic/v1/messages).
bool body_names_model(std::string_view path) {
  return path.substr(0, 4) == "/v1/" || path.substr(0, 11) == "/openai/v1/" ||
         path.substr(0, 11) == "/anthropic/";
}

// x-smartlb-metadata: a JSON object of strings. False when it is not one.
bool parse_metadata(std::string_view text, std::vector<routing::MetadataPair>& out) {
  out.clear();
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || j.size() > 64) return false;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_string()) return false;
    out.emplace_back(key, value.get<std::string>());
  }
  return true;
}

}  // namespace

std::chrono::seconds ForwardJob::header_timeout() const {
  // The per-attempt wait, cut short by what is left of the whole request's budget.
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(base::Nanos(s_.clock.coarse_now() - rec_.start));
  const auto left = cfg_.request_timeout - elapsed;
  return std::max(std::min(cfg_.http_timeout, left), std::chrono::seconds(1));
}

void ForwardJob::prepare_request() {
  family_ = http::api_family(request_target_.path);
  websocket_ = websocket::is_websocket_path(request_target_.path) &&
               websocket::asks_for_websocket(req_.method_text, req_.fields.get("upgrade"),
                                             req_.fields.get("connection"));

  // The client's fields that go upstream as they are, written once for every attempt: not
  // hop-by-hop ones, not `Proxy` / `Proxy-*` (httpoxy), and not those each attempt writes
  // itself (Host, credentials, the request id, the body's framing: chunked came in, a length
  // goes out).
  const http1::HeaderList& f = req_.fields;
  const http::ConnectionNames named(f);
  std::string& passed = buffers_.passed_fields;
  passed.clear();
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto field = f[i];
    if (named.is_hop(field.name) || http::is_proxy_header(field.name)) continue;
    switch (field.id) {
      case beast::http::field::host:
      case beast::http::field::expect:
      case beast::http::field::content_length:
        continue;
      default:
        if (http::is_client_credential(field.name) || base::iequals(field.name, "x-request-id") ||
            base::iequals(field.name, "x-smartlb-metadata") ||
            base::iequals(field.name, "x-smartlb-affinity") ||
            base::iequals(field.name, "x-smartlb-priority") ||
            (rec_.trace.on && tracing::is_trace_context_field(field.name)))  // each attempt writes its own
          continue;
        // A compressed answer could not have its ids tagged: a stateful API's comes plain.
        if (stateful_.tags_answers() && base::iequals(field.name, "accept-encoding")) continue;
        // A handshake's own fields are smartlb's to write (write_websocket_fields).
        if (websocket_ && field.name.size() > 14 && base::iequals(field.name.substr(0, 14), "sec-websocket-"))
          continue;
        break;
    }
    http1::append_field(passed, field.name, field.value);
  }
  const auto m = req_.method;
  send_length_ = !req_.body.empty() || m == beast::http::verb::post || m == beast::http::verb::put ||
                 m == beast::http::verb::patch || m == beast::http::verb::options;
  if (request_target_.has_deployment()) {
    model_ = request_target_.deployment;
  } else if (body_names_model(request_target_.path) && !req_.body.empty()) {
    model_in_body_ = true;
    if (const auto m = body_facts().model) model_ = *m;
  }
  if (websocket_) prepare_websocket();
  // A streamed answer's first content is waited for (FIRST_TOKEN_TIMEOUT_SECONDS): the body is
  // read for it only when it may say so.
  if (!websocket_ && m == beast::http::verb::post &&
      (model_in_body_ || req_.body.find("\"stream\"") != std::string::npos) && body_facts().stream) {
    streams_ = true;
    prompt_tokens_ = routing::estimate_request_token_parts(body_facts()).prompt;
  }
  body_ = req_.body;
  // The estimate needs the body read: only when a declared quota or a backend's low report
  // can turn on it.
  if (snap_.any_quota || states_.reported_budget_low()) {
    cost_ = routing::estimate_request_tokens(body_facts());
    cost_known_ = true;
  }
}

// The client's credential fields that pass through to a backend without a credential of its own:
// one of each name, not one the client's Connection field names, and never the one that
// identified the client to smartlb. A browser's WebSocket key (subprotocol or query) passes as
// `api-key` when it sent no credential field. Read again for each such attempt (they are rare)
// rather than kept in every request's job.
credentials::CredentialFields ForwardJob::client_credentials() const {
  credentials::CredentialFields out;
  const http1::HeaderList& f = req_.fields;
  const http::ConnectionNames named(f);
  for (std::size_t i = 0; i < f.size(); ++i) {
    const auto field = f[i];
    if (!http::is_client_credential(field.name) || named.is_hop(field.name) ||
        base::iequals(field.name, caller_.credential_field))
      continue;
    if (std::none_of(out.begin(), out.end(), [&](const credentials::CredentialField& c) {
          return base::iequals(c.name, field.name);
        }))
      out.add(field.name, field.value);
  }
  if (websocket_ && out.empty() && caller_.credential_field != "api-key")
    out.add("api-key",
            websocket::browser_key(req_.fields.get("sec-websocket-protocol"), request_target_.query));
  return out;
}

void ForwardJob::prepare_websocket() {
  model_ = websocket::query_value(request_target_.query, websocket::model_parameter(request_target_.path));
}

// The handshake as the backend gets it: smartlb's own key (the client's 101 answers the
// client's), no extension offered (frames stay readable), the subprotocols less the key entry.
void ForwardJob::write_websocket_fields(std::string& out) {
  websocket_key_ = websocket::new_key(rng_);
  http1::append_field(out, "Upgrade", "websocket");
  http1::append_field(out, "Connection", "Upgrade");
  http1::append_field(out, "Sec-WebSocket-Version", "13");
  http1::append_field(out, "Sec-WebSocket-Key", websocket_key_);
  const std::string protocols = websocket::without_key_subprotocol(req_.fields.get("sec-websocket-protocol"));
  if (!protocols.empty()) http1::append_field(out, "Sec-WebSocket-Protocol", protocols);
}

// The rule this request follows, or the message of the client error that prevents matching.
std::optional<std::string_view> ForwardJob::match_rule() {
  // A metadata header is read (and refused when invalid) whether or not a rule asks for
  // metadata: a client's mistake shows the same under every configuration.
  std::vector<routing::MetadataPair>& metadata = buffers_.metadata;
  metadata.clear();
  if (const std::string_view header = req_.fields.get("x-smartlb-metadata");
      !header.empty() && !parse_metadata(header, metadata))
    return "The x-smartlb-metadata header must be a JSON object whose values are strings.";
  // The priority class: the caller's, or a lower one the request asks for.
  const std::string_view asked = req_.fields.get("x-smartlb-priority");
  const std::optional<clients::PriorityClasses::Class> cls =
      snap_.priority_classes.resolve(caller_.name, caller_.subjects, asked);
  if (!cls) {
    refusal_text_ = "The x-smartlb-priority header names no priority class: '" +
                    std::string(asked.substr(0, 64)) + "' (the classes are " +
                    snap_.priority_classes.names() + ").";
    return refusal_text_;
  }
  class_reserve_ = routing::ClassReserve{static_cast<std::uint8_t>(cls->level), cls->reserve_permille};
  if (cls->level > 0) rec_.priority_class = cls->name;
  capacity_wait_ = {cls->max_queue, cls->max_queue_length, cfg_.capacity_grace};
  class_name_ = cls->name;
  matched_ = snap_.match(routing::RequestFacts{caller_.subjects, model_, metadata});
  stateful_.keep_resources_of(matched_);
  rule_ = stateful_.rule(snap_, matched_, !model_.empty());
  if (rule_ && rule_->affinity) {
    // The client's own key, or the body's prompt cache key, or its end user.
    // A virtual model's sticky routing names its header; else smartlb's own.
    if (!rule_->affinity_header.empty()) affinity_key_ = req_.fields.get(rule_->affinity_header);
    if (affinity_key_.empty()) affinity_key_ = req_.fields.get("x-smartlb-affinity");
    if (affinity_key_.empty() && model_in_body_) {
      const http::RequestBodyFacts& body = body_facts();
      affinity_key_ = body.prompt_cache_key ? *body.prompt_cache_key : body.user.value_or("");
    }
  }
  // A list's first page or an upload (no object, no model) goes to the same backend for the same
  // client while it is available: its lists do not jump between resources, and a file it just
  // uploaded is in the next list (docs/stateful-apis.md, List calls).
  if (affinity_key_.empty() && model_.empty() && stateful_.names_no_object()) affinity_key_ = client_key();
  return std::nullopt;
}

// Who the client is, for keeping its stateful calls together: an anonymous client's own
// credential (it passes through; here it is only hashed), else the principal smartlb knows.
std::string_view ForwardJob::client_key() const {
  if (caller_.credential_field.empty()) {  // anonymous: its own credential passes through
    for (const std::string_view field : {"api-key", "authorization", "x-api-key"})
      if (const std::string_view v = req_.fields.get(field); !v.empty()) return v;
  }
  if (!caller_.principal.empty()) return caller_.principal;
  return caller_.name;
}

// An Entra ID backend needs a valid token before anything is sent (one atomic load when it has
// one; the coarse clock is enough: a token stops being used 10 s before it expires).
bool ForwardJob::credential_ready(const ChosenTarget& t) const {
  const credentials::entra::TokenCell* cell = snap_.prepared[t.route.backend].entra.get();
  return t.config.auth != config::AuthStyle::Entra ||
         (cell && cell->look(s_.clock.coarse_now()).availability ==
                      credentials::entra::TokenCell::Availability::Ready);
}

// No valid token yet: wait (asynchronously) for the fetch under way, or cool the backend down
// with cause `credential` until the credential service tries again, and fail over.
Task<bool> ForwardJob::await_credential(const ChosenTarget& t) {
  using credentials::entra::TokenCell;
  TokenCell* cell = snap_.prepared[t.route.backend].entra.get();
  TokenCell::Lookup l{TokenCell::Availability::Unavailable};
  if (cell) l = co_await credentials::entra::wait_for_token(*cell, s_.clock, header_timeout());
  if (l.availability == TokenCell::Availability::Ready) co_return true;
  const base::MonoNanos now = s_.clock.now();
  std::optional<std::chrono::milliseconds> hint;
  if (l.availability == TokenCell::Availability::Unavailable && l.retry_at > now)
    hint = std::chrono::ceil<std::chrono::milliseconds>(base::Nanos(l.retry_at - now));
  routing::AttemptTicket ticket(s_.routing, t.ticket(), model_, cost_);
  telemetry::AttemptRecord& a = rec_.add_attempt();
  a.backend = t.member.id.value;
  a.deployment = t.member.effective_deployment(model_);
  routing::AttemptOutcome o{routing::AttemptEnd::NoCredential};
  o.retry_hint = hint;
  o.why = "no valid Entra ID token (see the credential's log lines)";
  close_failed(t, ticket, a, o);
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

void ForwardJob::write_request_head(const ChosenTarget& t, telemetry::AttemptRecord& a) {
  const config::BackendConfig& b = t.config;
  std::string& out = buffers_.request_head;
  out.clear();
  out.append(req_.method_text).push_back(' ');
  if (websocket_) {  // the model in the query, and no api-key there
    websocket_query_ = websocket::upstream_query(
        request_target_.query, websocket::model_parameter(request_target_.path), t.route.upstream_name);
    http::RequestTarget rt = request_target_;
    rt.query = websocket_query_;
    append_upstream_target(out, b.url.base_path, rt, {});
  } else {
    append_upstream_target(out, b.url.base_path, request_target_, t.route.upstream_name);
  }
  out.append(" HTTP/1.1\r\n");
  http1::append_field(out, "Host", b.url.host_header);
  if (websocket_) write_websocket_fields(out);
  if (const credentials::entra::TokenCell* cell = snap_.prepared[t.route.backend].entra.get())
    cell->append_authorization(out);  // "Authorization: Bearer <Entra ID token>"
  else
    for (const credentials::CredentialField& f :
         static_key_fields(b, snap_.prepared[t.route.backend].bearer, family_,
                           b.api_key.empty() ? client_credentials() : credentials::CredentialFields{}))
      http1::append_field(out, f.name, f.value);
  out.append(buffers_.passed_fields);
  http1::append_field(out, "x-request-id", rec_.request_id);  // one id from client to backend and back
  if (rec_.trace.on) begin_attempt_trace(rng_, rec_, a, b, family_, out);  // traceparent: its CLIENT span
  if (streamed_) {
    streamed_->append_framing(out);
  } else if (send_length_) {
    out.append("Content-Length: ");
    http1::append_decimal(out, body_.size());
    out.append("\r\n", 2);
  }
  out.append("\r\n", 2);
  // A small body rides in the same buffer: one send() instead of a sendmsg() of two.
  if (body_.size() <= kInlineRequestBodyBytes) out.append(body_);
}

}  // namespace smartlb::net
