#include "smartlb/routing/attempt_ticket.hpp"

namespace smartlb::routing {

AttemptTicket::AttemptTicket(RoutingState& routing, const TicketTarget& target, std::string_view model,
                             std::int64_t cost)
    : routing_(routing),
      target_(target),
      model_(model),
      cost_(cost),
      in_flight_(routing.states.begin_attempt(*target.member, model)) {}

base::MonoNanos AttemptTicket::sent() {
  mark_ = routing_.states.charge_reported(*target_.member, model_, cost_);
  sent_ = went_ = routing_.clock.now();
  return sent_;
}

Verdict AttemptTicket::answer(unsigned status, const http::ThrottleHeaders& h, bool names_model) {
  const Judged j =
      judge_answer(status, h, names_model, target_.member->quota_window, routing_.clock.wall_now());
  routing_.states.observe_report(*target_.member, model_, j.report, went_, mark_, status != 429);
  status_ = status;
  head_verdict_ = j.verdict;
  head_hint_ = j.hint;
  return j.verdict;
}

Closed AttemptTicket::close(const AttemptOutcome& o) {
  if (closed_) return {};
  closed_ = true;
  switch (o.end) {
    case AttemptEnd::Relayed:
      observe(status_, o.complete, o.completion_tokens);
      if (stream_ && o.first_content > sent_ && routing_.first_tokens)
        routing_.first_tokens->observe(target_.member->id, target_.member->effective_deployment(model_),
                                       stream_shape_, prompt_tokens_, base::Nanos(o.first_content - sent_),
                                       routing_.clock.now());
      return {};
    case AttemptEnd::ClientLeft:  // the client's doing: nothing against the backend
    case AttemptEnd::Upgraded:
    case AttemptEnd::Declined:
    case AttemptEnd::Retried:
    case AttemptEnd::MovedOn:
      return {};
    case AttemptEnd::Refused:
      return fail(o, head_verdict_, head_hint_);
    case AttemptEnd::TransportFailed:
      return fail(o, judge_transport(o.failure), std::nullopt);
    case AttemptEnd::StreamFailed:
      return fail(o, o.error_event ? judge_stream_error() : judge_transport(o.failure), std::nullopt);
    case AttemptEnd::Stalled:
      return fail(o, judge_stall(), std::nullopt);
    case AttemptEnd::CutAfterHead: {
      // The client's stream is cut short: a failure like any other (cooldown, breaker, log), and
      // an answer that did not complete for the selectors.
      const Closed c = fail(o, judge_transport(o.failure), std::nullopt);
      observe(status_, false, o.completion_tokens);
      return c;
    }
    case AttemptEnd::NoCredential:
      return fail(o, Verdict{true, FailureCause::Credential, CooldownScope::Backend}, o.retry_hint);
  }
  return {};
}

Closed AttemptTicket::fail(const AttemptOutcome& o, const Verdict& v,
                           std::optional<std::chrono::milliseconds> hint) {
  const base::MonoNanos now = routing_.clock.now();
  const Accounted a = account_failure(routing_.states, routing_.breakers, *target_.member, model_,
                                      target_.breaker, v, hint, went_, now);
  if (routing_.log) {
    FailedAttempt f;
    f.backend = target_.backend_name;
    f.key_setting = target_.key_setting;
    f.target_id = target_.breaker.target_id;
    f.deployment = model_;
    f.verdict = v;
    f.hint = hint;
    f.cooldown = a.cooldown;
    f.breaker_tripped = a.breaker_tripped;
    f.allowed_per_minute = target_.breaker.allowed_per_minute.value_or(0);
    f.breaker_cooldown = target_.breaker.cooldown;
    f.end = o.end;
    f.relayed_anyway = o.relayed_anyway;
    f.why = o.why;
    routing_.log->failed(f);
  }
  return Closed{v, a.cooldown, a.breaker_tripped};
}

void AttemptTicket::observe(unsigned status, bool complete, std::int64_t completion_tokens) {
  const base::MonoNanos now = routing_.clock.now();
  target_.selector->observe(Answered{target_.member->id, target_.member->effective_deployment(model_), status,
                                     complete, now, base::Nanos(now - sent_), completion_tokens});
}

void AttemptTicket::session_response(RoutingState& routing, const TicketTarget& target,
                                     std::string_view model, std::int64_t tokens,
                                     std::optional<base::Nanos> took, std::int64_t output_tokens) {
  routing.states.charge_used(*target.member, model, tokens);
  if (took)
    target.selector->observe(Answered{target.member->id, target.member->effective_deployment(model), 200,
                                      true, routing.clock.now(), *took, output_tokens});
}

}  // namespace smartlb::routing
