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
//   attempt   send it, read the response head (Exchange::send); the attempt's AttemptTicket is
//             how its outcome reaches routing, whatever it is
//   judge     fail over at once (its ticket closed with the failure: routing cools the target
//             down, counts it for its breaker and logs it), or
//   relay     the response as it arrives, a 2xx event stream's start held back until it shows
//             content (an error first: fail over) (Exchange::relay); a stateful API's ids
//             tagged with the resource that answered; a Realtime WebSocket's verified 101 opens
//             its session (net/websocket_relay), any other answer to its handshake is judged
//             like an HTTP answer
//   wait      where admit or unavailable would answer 429, wait as long as the refusal says, when
//             that is within the class's max_queue_seconds, or CAPACITY_GRACE_MS where only a
//             prediction refused (the client's leaving ends it), then admit or choose again
//   unavailable  nothing left: smartlb's own answer (refuse)
//   price     what the answer cost, by the price table (docs/operations.md#cost)
//   settle    the caller's budgets are charged the tokens (and the cost) the answer used
// Accounting (metrics, access log) reads the RequestRecord these phases fill.
#include "smartlb/net/forward_job.hpp"

namespace smartlb::net {

// The caller's budgets admit the request with its estimated cost (prompt + max_tokens, and for a
// cost budget the same priced at the input and output prices of the model the client named), or
// it gets OpenAI's 429 with when to try again, and no backend is called.
// Not a coroutine: an admitted request costs no frame.
std::optional<clients::BudgetRefused> ForwardJob::admit_to_budgets() {
  clients::BudgetPlan::Budgets refs;
  const std::size_t n = snap_.budgets.budgets_for(caller_, refs);
  if (n == 0) return std::nullopt;
  if (buffers_.budget)
    *buffers_.budget = clients::BudgetAdmission(refs, n);
  else
    buffers_.budget = std::make_unique<clients::BudgetAdmission>(refs, n);
  budget_ = buffers_.budget.get();
  if (share_wait_) budget_->waiting_for_share();  // looking again after the last refusal's wait
  // The estimate needs the body read: only when a budget counts tokens.
  if (!cost_known_ && budget_->counts_tokens()) {
    cost_ = routing::estimate_request_tokens(body_facts());
    cost_known_ = true;
  }
  // A model without a price is estimated at nothing: it is admitted while the quota is not spent
  // (and charged what it cost, if its answer's model has a price).
  cost::PicoUnits price = 0;
  if (budget_->counts_cost())
    if (const cost::ModelPrice* p = snap_.prices.find(model_)) {
      const routing::TokenEstimate e = routing::estimate_request_token_parts(body_facts());
      price = cost_estimate(e.prompt, e.completion, *p);
    }
  const clients::BudgetTime t{s_.clock.coarse_now(), s_.clock.wall_now()};
  std::optional<clients::BudgetRefused> refused = budget_->admit(cost_, price, t);
  // A WebSocket session may idle for minutes between responses: it holds a slot of the
  // in-flight cap only while a response is in progress (SessionLearning), not while it idles.
  if (websocket_) budget_->release();
  budget_->append_fields(buffers_.budget_fields);
  return refused;
}

std::optional<ChosenTarget> ForwardJob::choose_target(routing::TriedSet& tried) {
  if (base::Nanos(s_.clock.coarse_now() - rec_.start) >= cfg_.request_timeout) return std::nullopt;
  const auto choice = choose_and_reserve(
      *rule_->selector, rule_->table, states_,
      {model_, tried, cost_, affinity_key_, rule_->slow_start, class_reserve_}, tried, rng_);
  if (!choice) return std::nullopt;
  const RouteTarget& route = rule_->route[choice->position];
  return ChosenTarget{choice->position,
                      rule_->table.member(choice->position),
                      route,
                      snap_.backends[route.backend],
                      *rule_->selector,
                      choice->probe};
}

base::Nanos ForwardJob::time_left() const {
  return std::chrono::duration_cast<base::Nanos>(cfg_.request_timeout) -
         base::Nanos(s_.clock.coarse_now() - rec_.start);
}

std::optional<base::Nanos> ForwardJob::first_token_deadline(const ChosenTarget& t,
                                                            const routing::TriedSet& tried) const {
  if (!streams_ || streamed_ || t.route.first_token.mode == routing::FirstTokenSetting::Mode::Off)
    return std::nullopt;
  const bool last =
      !another_candidate(rule_->table, states_, {model_, tried, cost_, {}, base::Nanos{0}, class_reserve_}) &&
      !stateful_.untagged_try();
  return smartlb::routing::first_token_deadline(
      t.route.first_token, s_.first_tokens, t.member.id, t.member.effective_deployment(model_),
      body_facts_->reasoning_effort.value_or(""), prompt_tokens_, header_timeout(), last, s_.clock.now());
}

// Every failed attempt's one way to routing (its ticket: the cooldown, the breaker, the log line);
// what it did is recorded for the access log and metrics, and a revoked Entra ID token refreshed.
routing::Closed ForwardJob::close_failed(const ChosenTarget& t, routing::AttemptTicket& ticket,
                                         telemetry::AttemptRecord& a, const routing::AttemptOutcome& o) {
  const routing::Closed c = ticket.close(o);
  a.cause = c.verdict.cause;
  a.ended = s_.clock.now();
  a.cooldown_ms = c.cooldown.count();
  a.breaker_tripped = c.breaker_tripped;
  if (c.verdict.cause == routing::FailureCause::AuthRejected && snap_.prepared[t.route.backend].entra)
    snap_.prepared[t.route.backend].entra->request_refresh();  // a revoked token: get a new one
  return c;
}

bool ForwardJob::next_resource(routing::TriedSet& tried, bool unavailable) {
  if (unavailable && !unavailable_rule_) unavailable_rule_ = rule_;
  if (!stateful_.next_resource()) return false;
  rule_ = stateful_.rule(snap_, matched_, !model_.empty());
  tried = routing::TriedSet{};
  return true;
}

// Whether the request may be routed at all: its ids agree, a rule serves it, the caller's budgets
// admit it. The refusal's message, when built, is kept in refusal_text_.
std::optional<Refusal> ForwardJob::admit() {
  if (std::optional<std::string> conflict = stateful_.prepare(snap_, req_, request_target_, s_.placements)) {
    refusal_text_ = std::move(*conflict);
    return Refusal{beast::http::status::bad_request, "invalid_request_error", "resource_conflict",
                   refusal_text_};
  }
  prepare_request();
  rec_.deployment = model_;
  // The model the body named, viewed where it outlives the body: an event stream frees the body
  // once it is committed, and the attempts' records view the model until the request is accounted.
  if (model_in_body_) model_ = rec_.deployment;
  if (websocket_ &&
      (req_.fields.get("sec-websocket-key").size() != 24 || req_.fields.get("sec-websocket-version") != "13"))
    return Refusal{beast::http::status::bad_request,
                   "invalid_request_error",
                   {},
                   "A WebSocket handshake needs a Sec-WebSocket-Key and Sec-WebSocket-Version: 13."};
  if (const auto bad = match_rule())
    return Refusal{beast::http::status::bad_request, "invalid_request_error", {}, *bad};
  if (!rule_) {
    refusal_text_ = model_.empty()
                        ? std::string("No routing rule matches this request (it names no model).")
                        : "No routing rule serves the model '" + std::string(model_.substr(0, 128)) + "'.";
    return Refusal{beast::http::status::not_found, "invalid_request_error", "model_not_found", refusal_text_};
  }
  rec_.rule = rule_->id;
  if (!snap_.budgets.empty()) return budget_refusal();
  return std::nullopt;
}

std::optional<Refusal> ForwardJob::budget_refusal() {
  buffers_.budget_fields.clear();
  const std::optional<clients::BudgetRefused> refused = admit_to_budgets();
  rec_.client_limited = refused.has_value();
  share_wait_ = refused && refused->refusal.awaiting_share;
  if (!refused) return std::nullopt;
  refusal_text_ = refusal_message(*refused, snap_.prices.currency);
  // A slot in flight frees when any of the caller's requests ends, which no clock predicts; a
  // share of a cap held with other replicas comes with Redis's answer, looked for in a moment.
  budget_back_in_ = share_wait_ ? std::optional<base::Nanos>(clients::kSharePollStep)
                    : refused->refusal.limit == clients::BudgetLimit::InFlight
                        ? std::nullopt
                        : std::optional<base::Nanos>(refused->refusal.retry_after);
  return Refusal{beast::http::status::too_many_requests,
                 counts_cost(refused->refusal.limit)     ? "cost"
                 : counts_tokens(refused->refusal.limit) ? "tokens"
                                                         : "requests",
                 "rate_limit_exceeded", refusal_text_,
                 std::chrono::ceil<std::chrono::milliseconds>(refused->refusal.retry_after)};
}

Task<bool> ForwardJob::run() {
  buffers_.budget_fields.clear();
  if (const std::optional<CatalogRequest> c = catalog_asked();
      c && !catalog_names(snap_, caller_.subjects).empty())
    co_return finish(co_await answer_catalog(*c));
  std::optional<Refusal> refusal = admit();
  while (refusal && rec_.client_limited) {  // a budget's 429: waited out, when the class may
    const WaitEnd w = co_await wait_for_capacity(budget_back_in_);
    if (w == WaitEnd::ClientLeft) co_return finish(false);
    if (w == WaitEnd::Answer) break;
    refusal = budget_refusal();
  }
  if (refusal) co_return finish(co_await refuse(*refusal));
  routing::TriedSet tried;
  for (;;) {
    const std::optional<ChosenTarget> t = choose_target(tried);
    if (!t) {
      if (stateful_.untagged_try() && next_resource(tried, true)) continue;
      if (const std::optional<RoomBack> back = room_back_in()) {  // a 429: waited out, when the class may
        const WaitEnd w = co_await wait_for_capacity(back->in, back->predicted);
        if (w == WaitEnd::Again) {
          tried = routing::TriedSet{};
          continue;
        }
        if (w == WaitEnd::ClientLeft) co_return finish(false);
      }
      break;
    }
    if (!credential_ready(*t) && !co_await await_credential(*t)) continue;
    retries_ = 0;
    Attempted a = co_await attempt(*t, tried);
    // The same target again, as its retry_config asks, while its quota takes the request.
    while (a == Attempted::Retry) {
      ++retries_;
      co_await exchange_.pause(t->route.retry->delay);
      a = routing::AttemptTicket::reserve_again(s_.routing, t->ticket(), model_, cost_)
              ? co_await attempt(*t, tried)
              : Attempted::Next;
    }
    if (a == Attempted::NothingLeft) break;
    // Priced and settled by the session's end(), or by end_stream().
    if (a == Attempted::Session || a == Attempted::Stream) co_return false;
    if (a != Attempted::Next) co_return finish(a == Attempted::Keep);
  }
  co_return finish(co_await answer_nothing_left());
}

std::optional<ForwardJob::RoomBack> ForwardJob::room_back_in() const {
  // A stateful request's resources, a held "not found" or a streamed body already sent are
  // answered as they are.
  if ((capacity_wait_.max_wait <= base::Nanos{0} && capacity_wait_.grace <= base::Nanos{0}) ||
      unavailable_rule_ || held_ || (streamed_ && streamed_->started))
    return std::nullopt;
  const routing::Unavailability u = states_.unavailability(rule_->table, model_, cost_, class_reserve_);
  if (u.out_of_service || u.not_found) return std::nullopt;
  if (u.throttled) return RoomBack{base::Nanos(u.retry_after), u.predicted};  // the 429's Retry-After
  // A target this request found rate limited is back already (its cooldown ended as the
  // request looked): routed again at once.
  if (rate_limited() && u.retry_after.count() == 0) return RoomBack{};
  return std::nullopt;
}

bool ForwardJob::rate_limited() const {
  const std::size_t shown = std::min(rec_.attempt_count, telemetry::RequestRecord::kMaxAttempts);
  for (std::size_t i = 0; i < shown; ++i)
    if (routing::is_rate_limit(rec_.attempts[i].cause)) return true;
  return false;
}

Task<ForwardJob::WaitEnd> ForwardJob::wait_for_capacity(std::optional<base::Nanos> retry_after,
                                                        bool predicted) {
  const std::size_t level = class_reserve_.level;
  const clients::CapacityWaitPolicy policy =
      share_wait_ ? clients::share_wait_policy(capacity_wait_) : capacity_wait_;
  const std::optional<base::Nanos> wait =
      clients::capacity_wait(policy, {waited_, retry_after, time_left(), predicted});
  if (!wait) co_return WaitEnd::Answer;
  // A place in the queue for this wait (one atomic add: exact across workers): a newcomer only
  // while max_queue_length wait at most; a request that waited already keeps its turn.
  std::atomic<std::uint32_t>& waiting = s_.waiting_for_capacity[level];
  if (waiting.fetch_add(1, std::memory_order_relaxed) >= policy.max_waiting && waited_ == base::Nanos{0}) {
    waiting.fetch_sub(1, std::memory_order_relaxed);
    co_return WaitEnd::Answer;
  }
  queue_place_ = &waiting;
  rec_.queue_class = class_name_;
  const base::MonoNanos began = s_.clock.now();
  const CapacityWaitEnd end = co_await exchange_.wait_for_capacity(*wait);
  leave_queue();  // routed again: no longer waiting
  // The wait as planned (one cut short: as it was): the class's bound counts planned waits,
  // which end whatever the clock does.
  waited_ += end == CapacityWaitEnd::Waited ? *wait : std::min(*wait, base::Nanos(s_.clock.now() - began));
  rec_.queued_ms = std::chrono::duration_cast<std::chrono::milliseconds>(waited_).count();
  switch (end) {
    case CapacityWaitEnd::Waited:
      co_return WaitEnd::Again;
    case CapacityWaitEnd::Draining:
      co_return WaitEnd::Answer;
    case CapacityWaitEnd::ClientLeft:
      break;
  }
  rec_.client_aborted = true;
  rec_.client_limited = false;  // nothing was answered
  co_return WaitEnd::ClientLeft;
}

void ForwardJob::leave_queue() {
  if (queue_place_) std::exchange(queue_place_, nullptr)->fetch_sub(1, std::memory_order_relaxed);
}

// One try of one target. A coroutine of its own, not part of run(), so that both frames stay
// under Asio's recycling limit (architecture.md, "Why it is fast").
namespace {

// An attempt that failed before its answer could be relayed, as its ticket is told.
routing::AttemptOutcome transport_failure(routing::TransportFailure failure, std::string_view why,
                                          bool relayed_anyway = false) {
  routing::AttemptOutcome o;
  o.end = routing::AttemptEnd::TransportFailed;
  o.failure = failure;
  o.relayed_anyway = relayed_anyway;
  o.why = why;
  return o;
}

routing::AttemptOutcome stalled() {
  routing::AttemptOutcome o =
      transport_failure(routing::TransportFailure::Timeout, "no answer within its first-token deadline");
  o.end = routing::AttemptEnd::Stalled;
  return o;
}

}  // namespace

Task<Attempted> ForwardJob::attempt(const ChosenTarget& t, routing::TriedSet& tried) {
  // In flight on its (backend, deployment) until this attempt's answer ends, stream included.
  routing::AttemptTicket ticket(s_.routing, t.ticket(), model_, cost_);
  prepare_body(t);
  telemetry::AttemptRecord& a = rec_.add_attempt();
  a.backend = t.member.id.value;
  a.deployment = t.member.effective_deployment(model_);
  a.probe = t.probe;
  write_request_head(t, a);
  const std::optional<base::Nanos> first_token = first_token_deadline(t, tried);
  if (streams_) ticket.expect_stream(body_facts_->reasoning_effort.value_or(""), prompt_tokens_);
  const base::MonoNanos sent = a.sent = ticket.sent();
  const bool inline_body = body_.size() <= kInlineRequestBodyBytes;
  // A streamed body's pauses are bound by HTTP_TIMEOUT_SECONDS (an upload takes the time it takes);
  // a first-token deadline bounds the wait for the head too (rounded up: sockets time whole seconds).
  const std::chrono::seconds head_wait = streamed_     ? cfg_.http_timeout
                                         : first_token ? std::chrono::ceil<std::chrono::seconds>(*first_token)
                                                       : header_timeout();
  const Exchanged r =
      co_await exchange_.send({t.member.id, t.config.url, buffers_.request_head,
                               inline_body ? std::string_view() : body_, head_wait, streamed_});
  a.ttfb_us = (s_.clock.now() - sent) / 1000;
  if (r.written != 0) ticket.went(r.written);
  // Once a streamed body's first byte has left, the answer is relayed whatever it is.
  const bool committed = streamed_ && streamed_->started;

  if (!r.answered) {
    if (committed) {  // no failover: the body cannot be sent again
      if (r.body_end == StreamEnd::Sent || r.body_end == StreamEnd::UpstreamFailed) {
        close_failed(t, ticket, a, transport_failure(r.failure, r.detail, true));
      } else {
        ticket.close({routing::AttemptEnd::ClientLeft});  // the client's doing: not the backend's failure
        a.ended = s_.clock.now();
      }
      co_return co_await end_streamed(r.body_end);
    }
    close_failed(t, ticket, a,
                 first_token && r.failure == routing::TransportFailure::Timeout
                     ? stalled()
                     : transport_failure(r.failure, r.detail));
    co_return Attempted::Next;
  }
  const http1::ResponseHead& head = exchange_.answer_head();
  const unsigned status = a.status = head.status;
  const routing::Verdict verdict = ticket.answer(status, http::throttle_fields(head.fields), !model_.empty());
  // An upgrade nobody asked for, or a 101 that is not our WebSocket: never relayed as it is.
  const websocket::UpgradeAnswer upgrade =
      websocket_ ? judge_upgrade(head) : websocket::UpgradeAnswer::NotUpgraded;
  if (upgrade == websocket::UpgradeAnswer::Accepted) {
    ticket.close({routing::AttemptEnd::Upgraded});
    open_websocket(t, ticket.take_in_flight());
    co_return Attempted::Session;  // relayed once this frame and run()'s have ended
  }
  if (upgrade != websocket::UpgradeAnswer::NotUpgraded || (status == 101 && !websocket_)) {
    const std::string_view why = websocket_ ? std::string_view(websocket::to_string(upgrade))
                                            : "HTTP 101 to a request that asked for no upgrade";
    close_failed(t, ticket, a, transport_failure(routing::TransportFailure::Protocol, why));
    exchange_.discard();
    co_return Attempted::Next;
  }
  if (!streamed_ && stateful_.looks_for_object() && (status == 404 || status == 400)) {
    ticket.close({routing::AttemptEnd::Declined});  // not a failure of the backend: the object is elsewhere
    if (!co_await hold_not_found(t)) {
      const bool keep = co_await relay_held();
      co_return keep ? Attempted::Keep : Attempted::Close;
    }
    if (stateful_.untagged_try() && !next_resource(tried, false)) co_return Attempted::NothingLeft;
    co_return Attempted::Next;
  }
  // Once a streamed body went, whatever the backend answers is relayed (its cooldown recorded).
  const AnswerMove move = streamed_ ? AnswerMove::Relay
                                    : move_for({status, verdict, ticket.head_hint()}, t.route.retry, retries_,
                                               t.route.fallback_status, time_left());
  if (move == AnswerMove::Retry || move == AnswerMove::MoveOn) {
    ticket.close({move == AnswerMove::Retry ? routing::AttemptEnd::Retried : routing::AttemptEnd::MovedOn});
    co_await exchange_.drain_or_close();
    co_return move == AnswerMove::Retry ? Attempted::Retry : Attempted::Next;
  }
  if (verdict.fail_over) {
    close_failed(t, ticket, a,
                 {.end = routing::AttemptEnd::Refused,
                  .relayed_anyway = move == AnswerMove::Relay,
                  .why = "HTTP " + std::to_string(status)});
    if (move == AnswerMove::FailOver) {
      co_await exchange_.drain_or_close();
      co_return Attempted::Next;
    }
  }
  rec_.served_by = static_cast<int>(t.member.id.value);
  // What is left of a first-token deadline bounds the hold of a stream's start, and fails it over.
  const base::Nanos hold =
      first_token ? std::max<base::Nanos>(*first_token - base::Nanos(s_.clock.now() - sent), base::Nanos(1))
                  : base::Nanos(header_timeout());
  const Relayed rl = co_await exchange_.relay(relay_options(t, hold, first_token.has_value()));
  const Attempted next = relayed(t, ticket, a, rl);
  if (rl.end == RelayEnd::FailOver && streamed_) co_return co_await end_streamed(StreamEnd::UpstreamFailed);
  co_return next;
}

RelayOptions ForwardJob::relay_options(const ChosenTarget& t, base::Nanos hold, bool fail_over_stall) const {
  const stateful::ResourceTag* tag =
      stateful_.tags_answers() ? &snap_.resources[snap_.resource_of[t.route.backend]].tag : nullptr;
  // A streamed upload's stream is not handed off: the reader of its body lives in the client
  // session's frame.
  return {t.config.name, buffers_.budget_fields, rec_.request_id, hold, fail_over_stall, tag, {}, !streamed_};
}

// Not part of attempt(): a coroutine's locals all live in its frame, which a stream holds for
// as long as it lasts.
Attempted ForwardJob::relayed(const ChosenTarget& t, routing::AttemptTicket& ticket,
                              telemetry::AttemptRecord& a, const Relayed& r) {
  if (r.end == RelayEnd::HandedOff) {  // the attempt goes on without this frame (stream_ready)
    stream_.reset(new CommittedStream{t, std::move(ticket), a});
    return Attempted::Stream;
  }
  if (r.end == RelayEnd::FailOver) {  // its stream's start or its body failed: nothing went to the client
    rec_.served_by = -1;
    const std::string why = "HTTP " + std::to_string(a.status) + " but its answer failed before any of it " +
                            "went to the client (" + std::string(r.why) + ")";
    close_failed(
        t, ticket, a,
        {r.fault == RelayFault::Stalled ? routing::AttemptEnd::Stalled : routing::AttemptEnd::StreamFailed,
         r.failure,
         r.fault == RelayFault::ErrorEvent,
         false,
         streamed_ != nullptr,
         -1,
         {},
         why});
    return Attempted::Next;
  }
  // The answer went to the client: its resource knows the request's objects now.
  stateful_.answered(snap_, t.route.backend, s_.placements);
  if (r.fault != RelayFault::None)  // cut off after the head went out: a failure like any other
    close_failed(t, ticket, a,
                 {routing::AttemptEnd::CutAfterHead,
                  r.failure,
                  false,
                  false,
                  false,
                  rec_.completion_tokens,
                  {},
                  "its stream broke after the answer began"});
  else
    ticket.close({routing::AttemptEnd::Relayed,
                  {},
                  false,
                  !rec_.client_aborted && !rec_.upstream_aborted,
                  false,
                  rec_.completion_tokens,
                  {},
                  {},
                  r.content_at});
  return r.end == RelayEnd::Keep ? Attempted::Keep : Attempted::Close;
}

bool ForwardJob::end_stream(const Relayed& r) {
  const std::unique_ptr<CommittedStream> s = std::move(stream_);
  return finish(relayed(s->target, s->ticket, s->attempt, r) == Attempted::Keep);
}

Task<Attempted> ForwardJob::end_streamed(StreamEnd end) {
  Refusal r{beast::http::status::bad_gateway, "server_error", "upstream_error",
            "The backend failed after the request body began to stream; a streamed body (larger than "
            "STREAM_REQUEST_BODY_BYTES) is not sent again."};
  switch (end) {
    case StreamEnd::ClientLeft:  // nobody to tell; the backend's connection is closed already
      rec_.client_aborted = true;
      co_return Attempted::Close;
    case StreamEnd::TooLarge:
      r = {beast::http::status::payload_too_large,
           "invalid_request_error",
           {},
           http::too_large_message("MAX_STREAMED_BODY_BYTES")};
      break;
    case StreamEnd::Malformed:
      r = {beast::http::status::bad_request, "invalid_request_error", {}, "Malformed request body framing."};
      break;
    case StreamEnd::Sent:  // the whole body went, its answer did not come
    case StreamEnd::UpstreamFailed:
      break;
  }
  const bool keep = co_await refuse(r);  // (not inside a conditional expression: GCC 12)
  co_return keep ? Attempted::Keep : Attempted::Close;
}

}  // namespace smartlb::net
