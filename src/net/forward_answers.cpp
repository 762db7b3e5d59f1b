// smartlb's own answers for a request (ForwardJob's refusals), the held "not found" of a stateful
// request, a Realtime session once its 101 is verified, and the end of the request: its price
// and the caller's budgets settled.
#include "forward_job.hpp"

namespace smartlb::net {

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

namespace {

// A session's responses reach the routing as each ends, as an HTTP answer's do: their tokens
// count against the backend's declared quota (its limiter counts them there, and the next
// requests must see it), and their speed (response.created to response.done, per output token)
// feeds latency routing.
class SessionLearning final : public SessionResponses {
 public:
  SessionLearning(BackendStates& states, const Selector& selector, const PoolMember& member,
                  std::string_view model, const Clock& clock)
      : states_(states), selector_(selector), member_(member), model_(model), clock_(clock) {}

  // A handshake that named no model (a Responses socket's `model` parameter is optional): each
  // response under the model its `response.create` asked for, as the same request over HTTP.
  void response_done(const websocket::RealtimeUsage& usage, std::optional<Nanos> took,
                     std::string_view asked_model) override {
    const std::string_view model = model_.empty() ? asked_model : model_;
    states_.charge_used(member_, model, usage.input_tokens + usage.output_tokens);
    if (took)
      selector_.observe(Answered{member_.id, member_.effective_deployment(model), 200, true, clock_.now(),
                                 *took, usage.output_tokens});
  }

 private:
  BackendStates& states_;
  const Selector& selector_;
  const PoolMember& member_;
  std::string_view model_;
  const Clock& clock_;
};

}  // namespace

Task<void> ForwardJob::open_websocket(const ChosenTarget& t, UpstreamPtr conn) {
  rec_.served_by = static_cast<int>(t.member.id.value);
  const InFlight session = states_.begin_websocket_session(t.member.id);
  SessionLearning learning(states_, *rule_->selector, t.member, model_, s_.clock);
  WebSocketSession s;
  s.client_key = req_.fields.get("sec-websocket-key");
  s.backend_name = t.config.name;
  s.request_id = rec_.request_id;
  s.responses = &learning;
  if (websocket::is_responses_path(request_target_.path)) {
    s.responses_tag = &snap_.resources[snap_.resource_of[t.route.backend]].tag;
    s.configured_tag = [this](std::uint64_t bits) { return snap_.resource_tagged(bits) != nullptr; };
    s.reads_model = model_.empty();
  }
  co_await relay_websocket(w_, client_, std::move(conn), s, rec_);
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

}  // namespace smartlb::net
