// smartlb's own answers for a request (ForwardJob's refusals), the held "not found" of a stateful
// request, a Realtime session once its 101 is verified, and the end of the request: its price
// and the caller's budgets settled.
#include "smartlb/net/forward_job.hpp"

namespace smartlb::net {

// The one place smartlb answers by itself: the reply and the record's status together.
Task<bool> ForwardJob::refuse(const Refusal& refusal) {
  ErrorReply r;
  r.version = req_.version;
  // A body still unread on the client's connection leaves it unable to carry another request.
  r.keep_alive = exchange_.client_may_go_on() && !(streamed_ && streamed_->unread());
  r.request_id = rec_.request_id;
  r.extra_fields = buffers_.budget_fields;
  r.status = refusal.status;
  r.type = refusal.type;
  r.code = refusal.code;
  r.message = refusal.message;
  r.retry_after = refusal.retry_after;
  r.body = refusal.body;
  rec_.status = static_cast<unsigned>(refusal.status);
  co_return co_await exchange_.refuse(r);
}

// Not a failure of the backend (nothing cools down): the object is elsewhere, or nowhere.
Task<bool> ForwardJob::hold_not_found(const ChosenTarget& t) {
  if (!held_) held_ = std::make_unique<HeldAnswer>();
  HeldAnswer& held = *held_;
  held.body.clear();
  const BodyRead read = co_await exchange_.read_body(held.body, kHeldAnswerBytes);
  held.head = exchange_.answer_head();
  held.backend = t.config.name;
  held.by = static_cast<int>(t.member.id.value);
  if (read != BodyRead::Done) {
    exchange_.discard();
    held.by = -1;  // not whole: never relayed
    co_return true;
  }
  co_await exchange_.drain_or_close();
  co_return stateful::says_not_found(held.head.status, held.body);
}

websocket::UpgradeAnswer ForwardJob::judge_upgrade(const http1::ResponseHead& h) const {
  return websocket::judge_upgrade(
      {h.status, h.fields.get("upgrade"), h.fields.get("connection"), h.fields.get("sec-websocket-accept"),
       h.fields.get("sec-websocket-extensions")},
      websocket_key_);
}

namespace {

// A session's responses reach the routing as each ends, as an HTTP answer's do: their tokens
// count against the backend's declared quota (its limiter counts them there, and the next
// requests must see it), and their speed (response.created to response.done, per output token)
// feeds latency routing. While one is in progress it holds a slot of the caller's max_in_flight.
class SessionLearning final : public SessionResponses {
 public:
  SessionLearning(routing::RoutingState& routing, const routing::TicketTarget& target, std::string_view model,
                  clients::BudgetAdmission* budget)
      : routing_(routing), target_(target), model_(model), budget_(budget) {}

  void response_started() override {
    if (budget_) budget_->hold_in_flight();
  }

  // A handshake that named no model (a Responses socket's `model` parameter is optional): each
  // response under the model its `response.create` asked for, as the same request over HTTP.
  void response_done(const websocket::RealtimeUsage& usage, std::optional<base::Nanos> took,
                     std::string_view asked_model) override {
    routing::AttemptTicket::session_response(routing_, target_, model_.empty() ? asked_model : model_,
                                             usage.input_tokens + usage.output_tokens, took,
                                             usage.output_tokens);
  }
  void response_ended() override {
    if (budget_) budget_->release();
  }

 private:
  routing::RoutingState& routing_;
  routing::TicketTarget target_;
  std::string_view model_;
  clients::BudgetAdmission* budget_;  // the caller's, when it has budgets
};

// What the answer cost, by the price table. The model priced is the deployment the serving
// backend was asked for (after a target's rename: a rule may send a model's requests to a cheaper
// one), else the model the client named.
void price_answer(const Snapshot& snap, telemetry::RequestRecord& rec) {
  if (snap.prices.empty() || (rec.prompt_tokens < 0 && rec.completion_tokens < 0)) return;
  const cost::ModelPrice* price = nullptr;
  if (rec.served_by >= 0 && rec.attempt_count > 0)
    price = snap.prices.find(
        rec.attempts[std::min(rec.attempt_count, telemetry::RequestRecord::kMaxAttempts) - 1].deployment);
  if (!price) price = snap.prices.find(rec.deployment);
  if (!price) return;
  if (const auto cost = cost_of({rec.prompt_tokens, rec.cached_tokens, rec.completion_tokens}, *price)) {
    rec.cost = *cost;
    rec.cost_model = price->model;
  }
}

// The budgets are charged what the answer says it used (tokens, and their price); an answer that
// used nothing (an error, smartlb's own) gives the tokens and cost back; a success that does not
// say (a stream without include_usage) keeps the estimate.
void settle_budgets(clients::BudgetAdmission* budget, const base::Clock& clock,
                    const telemetry::RequestRecord& rec) {
  if (!budget) return;
  budget->release();  // no longer in flight (max_in_flight)
  const clients::BudgetTime t{clock.coarse_now(), clock.wall_now()};
  // (An answer whose model has no price keeps its estimated cost.)
  if (rec.prompt_tokens >= 0 || rec.completion_tokens >= 0)
    budget->settle(
        std::max<std::int64_t>(rec.prompt_tokens, 0) + std::max<std::int64_t>(rec.completion_tokens, 0),
        rec.cost, t);
  else if (rec.served_by < 0 || rec.status / 100 != 2)
    budget->settle(0, 0, t);
}

}  // namespace

// What a session holds while it is relayed, out of its job: its counts on its backend, what its
// responses teach routing and the budgets, its relay (made before the job goes: it refers to
// nothing of the job), and what its end needs. Everything it views lives as long as the
// connection's request: the configuration (its lease), the record, the caller's budgets.
class ForwardJob::OpenSession final : public OpenedSession {
 public:
  OpenSession(routing::InFlight attempt, routing::InFlight session, SessionLearning learn,
              const Snapshot& snap, const base::Clock& clock, telemetry::RequestRecord& rec)
      : in_flight_(std::move(attempt)),
        sessions_(std::move(session)),
        learning_(learn),
        snap_(snap),
        clock_(clock),
        rec_(rec) {}
  WebSocketSession& settings() { return settings_; }
  SessionLearning& learning() { return learning_; }
  void set_relay(Task<void> relay, clients::BudgetAdmission* budget) {
    relay_.emplace(std::move(relay));
    budget_ = budget;
  }

  Task<void> relay() override { return std::move(*relay_); }
  void end() override {
    in_flight_ = {};  // its counts on the backend end with it
    sessions_ = {};
    net::price_answer(snap_, rec_);
    net::settle_budgets(budget_, clock_, rec_);
  }

 private:
  routing::InFlight in_flight_;  // its attempt's, on its deployment
  routing::InFlight sessions_;   // on its backend's open sessions
  SessionLearning learning_;
  WebSocketSession settings_;
  std::optional<Task<void>> relay_;
  const Snapshot& snap_;
  const base::Clock& clock_;
  telemetry::RequestRecord& rec_;
  clients::BudgetAdmission* budget_ = nullptr;
};

void ForwardJob::OpenSessionDelete::operator()(OpenSession* s) const { delete s; }

ForwardJob::~ForwardJob() { leave_queue(); }

void ForwardJob::open_websocket(const ChosenTarget& t, routing::InFlight attempt_in_flight) {
  rec_.served_by = static_cast<int>(t.member.id.value);
  // The model as the record holds it (the same text): model_ may view the job's own copy of the
  // path (a stateful one's, untagged), which goes before the session ends. The attempts'
  // records view it likewise.
  const std::string_view model = rec_.deployment;
  for (std::size_t i = 0; i < std::min(rec_.attempt_count, telemetry::RequestRecord::kMaxAttempts); ++i)
    if (rec_.attempts[i].deployment.data() == model_.data()) rec_.attempts[i].deployment = model;
  session_.reset(new OpenSession(std::move(attempt_in_flight), states_.begin_websocket_session(t.member.id),
                                 SessionLearning(s_.routing, t.ticket(), model, budget_), snap_, s_.clock,
                                 rec_));
  WebSocketSession& s = session_->settings();
  s.client_key = req_.fields.get("sec-websocket-key");
  s.backend_name = t.config.name;
  s.request_id = rec_.request_id;
  s.responses = &session_->learning();
  if (websocket::is_responses_path(request_target_.path)) {
    s.responses_tag = &snap_.resources[snap_.resource_of[t.route.backend]].tag;
    s.configured_tag = [&snap = snap_](std::uint64_t bits) { return snap.resource_tagged(bits) != nullptr; };
    s.reads_model = model_.empty();
  }
}

std::unique_ptr<OpenedSession> ForwardJob::take_session() {
  leave_queue();
  session_->set_relay(exchange_.open_session(session_->settings()), budget_);
  return std::unique_ptr<OpenedSession>(session_.release());
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

std::optional<CatalogRequest> ForwardJob::catalog_asked() const {
  if (!cfg_.model_catalog || req_.method != beast::http::verb::get) return std::nullopt;
  return catalog_request(req_.method_text, request_target_.path,
                         !req_.fields.get("anthropic-version").empty());
}

// The list of the names this caller may ask for, or one of them; a name not in it is a 404 the
// SDKs understand. A configuration that names no model has no catalog: the list goes to a backend.
Task<bool> ForwardJob::answer_catalog(const CatalogRequest& c) {
  const std::vector<std::string_view> names = catalog_names(snap_, caller_.subjects);
  const auto created =
      std::chrono::duration_cast<std::chrono::seconds>(s_.clock.wall_now().time_since_epoch()).count();
  if (!c.model.empty() && !std::binary_search(names.begin(), names.end(), c.model)) {
    refusal_text_ = "The model '" + std::string(c.model.substr(0, 128)) + "' does not exist here.";
    co_return co_await refuse(
        {beast::http::status::not_found, "invalid_request_error", "model_not_found", refusal_text_});
  }
  refusal_text_ = c.model.empty() ? catalog_json(names, c.anthropic, created)
                                  : catalog_entry_json(c.model, c.anthropic, created);
  co_return co_await refuse({beast::http::status::ok, {}, {}, {}, {}, refusal_text_});
}

Task<bool> ForwardJob::refuse_unavailable() {
  const routing::Unavailability u = states_.unavailability(rule_->table, model_, cost_, class_reserve_);
  // Refused for want of room before any attempt: what the classes below must leave room for.
  // (One that was sent somewhere was counted there.)
  if (u.throttled && rec_.attempt_count == 0)
    states_.count_refused(rule_->table, model_, cost_, class_reserve_.level);
  const routing::UnavailableAnswer a =
      answer_unavailable(u, rec_.attempt_count, model_, stateful_.pinned_resource(snap_), rate_limited());
  co_return co_await refuse(
      {static_cast<beast::http::status>(a.status), a.type, a.code, a.message, a.retry_after});
}

// run()'s end, as a session's end() does them (above).
void ForwardJob::price_answer() { net::price_answer(snap_, rec_); }
void ForwardJob::settle_budgets() { net::settle_budgets(budget_, s_.clock, rec_); }

}  // namespace smartlb::net
