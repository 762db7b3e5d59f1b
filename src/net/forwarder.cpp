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
#include "forward_job.hpp"

namespace smartlb::net {

// The caller's budgets admit the request with its estimated cost (prompt + max_tokens, and for a
// cost budget the same priced at the input and output prices of the model the client named), or
// it gets OpenAI's 429 with when to try again, and no backend is called.
// Not a coroutine: an admitted request costs no frame.
std::optional<BudgetRefused> ForwardJob::admit_to_budgets() {
  BudgetPlan::Budgets refs;
  const std::size_t n = snap_.budgets.budgets_for(caller_, refs);
  if (n == 0) return std::nullopt;
  if (buffers_.budget)
    *buffers_.budget = BudgetAdmission(refs, n);
  else
    buffers_.budget = std::make_unique<BudgetAdmission>(refs, n);
  budget_ = buffers_.budget.get();
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

bool ForwardJob::next_resource(TriedSet& tried, bool unavailable) {
  if (unavailable && !unavailable_rule_) unavailable_rule_ = rule_;
  if (!stateful_.next_resource()) return false;
  rule_ = stateful_.rule(snap_, matched_, !model_.empty());
  tried = TriedSet{};
  return true;
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
  // The model the body named, viewed where it outlives the body: an event stream frees the body
  // once it is committed, and the attempts' records view the model until the request is accounted.
  if (model_in_body_) model_ = rec_.deployment;
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
  const AnswerVerdict judged = judge_and_observe(t, r.conn->head, sent, mark);
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

// Not part of attempt(): a coroutine's locals all live in its frame, which a stream holds for
// as long as it lasts, and the whole Judged is needed only here.
ForwardJob::AnswerVerdict ForwardJob::judge_and_observe(const ChosenTarget& t, const ResponseHead& head,
                                                        MonoNanos sent, const ReportedBudget::Mark& mark) {
  const Judged judged = judge_answer(head.status, throttle_fields(head.fields), !model_.empty(),
                                     t.member.quota_window, s_.clock.wall_now());
  states_.observe_report(t.member, model_, judged.report, sent, mark, head.status != 429);
  return {judged.verdict, judged.hint};
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

void ForwardBuffers::release_large(std::size_t keep) {
  for (std::string* text :
       {&passed_fields, &request_head, &response_head, &edited_body, &budget_fields, client_body})
    if (text && text->capacity() > keep) std::string().swap(*text);
  if (client_fields && client_fields->capacity() > keep) client_fields->release();
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
