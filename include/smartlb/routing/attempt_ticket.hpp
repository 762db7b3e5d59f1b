#pragma once
// One attempt of one request on one target, from the moment the target is chosen to the
// attempt's outcome: the only path from an attempt to routing state. The policy opens a ticket
// for the target it chose, tells it when the request left and what the answer's head said, and
// closes it once with how the attempt ended; behind that close routing judges the outcome and
// applies it (the cooldown, the failure_tolerance breaker, the latency sample, the log line
// through its FailureLog). The policy only decides what to do next with the verdict it gets back
// (YARP's IPassiveHealthCheckPolicy and IDestinationHealthUpdater behind one call).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/http/throttle_fields.hpp"
#include "smartlb/routing/attempt_accounting.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/failure_breakers.hpp"
#include "smartlb/routing/first_token.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/routing/selector.hpp"

namespace smartlb::routing {

// How an attempt ended, as the policy saw it.
enum class AttemptEnd : std::uint8_t {
  Relayed,          // the answer went to the client (to its end, or the client left meanwhile)
  Refused,          // its answer's head said fail over (judged by answer()), or was relayed anyway
  TransportFailed,  // no answer head: connect, TLS, timeout, lost, protocol
  StreamFailed,     // a held event stream failed before anything went to the client
  Stalled,          // nothing came within its first-token deadline, nothing went to the client
  CutAfterHead,     // the backend failed after the answer's head went to the client
  ClientLeft,       // the client left before an answer: not the backend's doing
  NoCredential,     // nothing was sent: no valid credential could be had for the backend
  Upgraded,         // a WebSocket session opened (its responses are learned as each ends)
  Declined,         // a stateful request's "not found": the object is elsewhere, not a failure
  Retried,          // its status is one the target's retry_config retries: the last try decides
  MovedOn,          // the target's fallback_status_codes moved on a status that is no failure (a 400)
};

struct AttemptOutcome {
  AttemptEnd end = AttemptEnd::Relayed;
  // TransportFailed, StreamFailed (not an error event), CutAfterHead: what failed.
  TransportFailure failure = TransportFailure::Lost;
  bool error_event = false;             // StreamFailed: the stream's first event was an error
  bool complete = false;                // Relayed: neither side cut it short
  bool relayed_anyway = false;          // a failure whose answer is relayed all the same (a streamed body)
  std::int64_t completion_tokens = -1;  // Relayed: from its usage (-1: not told)
  std::optional<std::chrono::milliseconds> retry_hint{};  // NoCredential: when one may be had
  std::string_view why{};                                 // for the log: "HTTP 429", an error's message
  base::MonoNanos first_content = 0;  // Relayed: a held stream's first content came then (0: not seen)
};

// What a failed attempt's log line says (routing keeps no log: the daemon writes it).
struct FailedAttempt {
  std::string_view backend;      // its name, never its URL
  std::string_view key_setting;  // where its credential is configured (a rejected credential)
  std::string_view target_id;    // the rule target (a breaker's line)
  std::string_view deployment;   // the model the client asked for
  Verdict verdict;
  std::optional<std::chrono::milliseconds> hint;  // the backend's own retry hint
  std::chrono::milliseconds cooldown{0};
  bool breaker_tripped = false;
  std::uint32_t allowed_per_minute = 0;  // the breaker's, when it tripped
  base::Nanos breaker_cooldown{0};
  AttemptEnd end = AttemptEnd::Refused;
  bool relayed_anyway = false;  // no failover: its request body was streamed
  std::string_view why;
};

class FailureLog {
 public:
  virtual void failed(const FailedAttempt& f) = 0;

 protected:
  ~FailureLog() = default;
};

// What every attempt's ticket reaches: the runtime state all requests share.
struct RoutingState {
  BackendStates& states;
  FailureBreakers& breakers;
  const base::Clock& clock;
  FailureLog* log = nullptr;                // null: failures are not logged
  FirstTokenStats* first_tokens = nullptr;  // null: first tokens are not learned
};

// The target an attempt goes to, as routing knows it (views into the request's snapshot).
struct TicketTarget {
  const PoolMember* member = nullptr;
  const Selector* selector = nullptr;  // learns from answers (latency rules)
  BreakerRule breaker{};               // its failure_tolerance
  std::string_view backend_name{};
  std::string_view key_setting{};
  bool probe = false;  // sent to test a target its reports held back
};

// The verdict a close gives back, and what it applied.
struct Closed {
  Verdict verdict;                        // fail_over: try the next target at once
  std::chrono::milliseconds cooldown{0};  // applied to the target (or its backend)
  bool breaker_tripped = false;
};

class AttemptTicket {
 public:
  // Opened for a target chosen (and its quota reserved) for the client's `model` and estimated
  // `cost`: in flight on its (backend, deployment) until the ticket ends (what a drain waits for).
  AttemptTicket(RoutingState& routing, const TicketTarget& target, std::string_view model, std::int64_t cost);
  AttemptTicket(const AttemptTicket&) = delete;
  AttemptTicket& operator=(const AttemptTicket&) = delete;
  // An attempt whose event stream outlives the coroutine that opened it (net/forward_job.hpp):
  // what the ticket counts goes with it; the moved-from ticket is left with nothing in flight.
  AttemptTicket(AttemptTicket&&) noexcept = default;

  // The request leaves now: the backend's reported budget counts it. Returns the time.
  base::MonoNanos sent();
  // ... and went out on its connection at `at`, once a new one was made: the moment the
  // backend's limiter counts it from, which its reports and a 429's Retry-After are read
  // against (a sliding window gives it back one window later; a handshake of a few
  // milliseconds would put that moment off the window smartlb learns).
  void went(base::MonoNanos at) { went_ = std::max(at, sent_); }
  // The answer is a stream whose first content is waited for: its time teaches the first-token
  // deadline of requests of this shape (a reasoning effort) and prompt size.
  void expect_stream(std::string_view shape, std::int64_t prompt_tokens) {
    stream_shape_ = shape;
    prompt_tokens_ = prompt_tokens;
    stream_ = true;
  }
  // The answer's head: relay it, or fail over (a status that another backend may not give);
  // what the backend reports remaining is kept either way. `names_model`: the request names a
  // deployment or model (a 404 then means "not here").
  Verdict answer(unsigned status, const http::ThrottleHeaders& h, bool names_model);
  // The attempt's end, once: judged and applied. A second close changes nothing.
  Closed close(const AttemptOutcome& o);

  // A WebSocket session's response ended on this target (the session outlives its handshake's
  // attempt): its tokens count against the declared quota, its speed feeds latency routing.
  // `model`: the session's, or what the response asked for when the handshake named none.
  static void session_response(RoutingState& routing, const TicketTarget& target, std::string_view model,
                               std::int64_t tokens, std::optional<base::Nanos> took,
                               std::int64_t output_tokens);

  // The answer's own retry hint, as answer() read it.
  std::optional<std::chrono::milliseconds> head_hint() const { return head_hint_; }
  // The target's quota reserved again, for a retry of the same request on it.
  static bool reserve_again(RoutingState& routing, const TicketTarget& target, std::string_view model,
                            std::int64_t cost) {
    return routing.states.reserve(*target.member, model, cost);
  }
  base::MonoNanos sent_at() const { return sent_; }
  bool closed() const { return closed_; }
  // An upgraded attempt's count in flight, which its WebSocket session carries on until it ends
  // (an admin drain waits for it), after the ticket is gone.
  InFlight take_in_flight() { return std::move(in_flight_); }

 private:
  Closed fail(const AttemptOutcome& o, const Verdict& v, std::optional<std::chrono::milliseconds> hint);
  void observe(unsigned status, bool complete, std::int64_t completion_tokens);

  RoutingState& routing_;
  TicketTarget target_;
  std::string_view model_;
  std::int64_t cost_;
  InFlight in_flight_;
  ReportedBudget::Mark mark_{};
  base::MonoNanos sent_ = 0;
  base::MonoNanos went_ = 0;  // sent_, or later: went()
  // The answer's head, as answer() judged it.
  unsigned status_ = 0;
  Verdict head_verdict_{};
  std::optional<std::chrono::milliseconds> head_hint_;
  std::string stream_shape_;  // a copy: the request's body it came from may be freed before the stream ends
  std::int64_t prompt_tokens_ = 0;
  bool stream_ = false;
  bool closed_ = false;
};

}  // namespace smartlb::routing
