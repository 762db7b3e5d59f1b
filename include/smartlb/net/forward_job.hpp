#pragma once
// The policy of one request (ForwardJob): which rule and target, what to do with each attempt's
// outcome, what the client is told. It moves no bytes: it asks an Exchange (net/exchange.hpp)
// for each attempt and is told what happened, and each attempt's outcome reaches routing
// through its AttemptTicket. Its phases are defined in forward_job.cpp (admit, choose, attempt),
// forward_job_request_head.cpp (what goes upstream: fields, credentials, body, the head) and
// forward_job_answers.cpp (smartlb's own answers, held answers, a Realtime session, price,
// settle); net/forward_request.cpp runs it for a client connection.
#include <algorithm>

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "smartlb/clients/budget_admission.hpp"
#include "smartlb/clients/capacity_wait.hpp"
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
#include "smartlb/net/exchange.hpp"
#include "smartlb/net/forward.hpp"
#include "smartlb/net/model_catalog.hpp"
#include "smartlb/net/replies.hpp"
#include "smartlb/net/request_tracing.hpp"
#include "smartlb/net/shared.hpp"
#include "smartlb/net/stateful_route.hpp"
#include "smartlb/net/streamed_body.hpp"
#include "smartlb/net/target_options.hpp"
#include "smartlb/routing/attempt_ticket.hpp"
#include "smartlb/routing/target_choice.hpp"
#include "smartlb/routing/throttle_headers.hpp"
#include "smartlb/routing/token_estimate.hpp"
#include "smartlb/routing/unavailable_answer.hpp"
#include "smartlb/stateful/not_found.hpp"
#include "smartlb/websocket/handshake.hpp"

namespace smartlb::net {

// A request body up to this size is copied behind the head and sent in one buffer.
inline constexpr std::size_t kInlineRequestBodyBytes = 64 * 1024;
// A "not found" answer up to this size is held while the next backend or resource is tried.
inline constexpr std::size_t kHeldAnswerBytes = 64 * 1024;

// A target chosen for an attempt of this request (not its request-target, request_target_): a
// position in its rule's table, and what is known there.
struct ChosenTarget {
  std::size_t position;
  const routing::PoolMember& member;    // routing: id, weight, quota
  const RouteTarget& route;             // the model rename and body overrides
  const config::BackendConfig& config;  // transport: URL, credentials
  const routing::Selector& selector;    // its rule's: learns from answers
  bool probe = false;                   // sent to test a target its reports held back
  // As routing's ticket knows it.
  routing::TicketTarget ticket() const {
    return {&member,
            &selector,
            {route.allowed_failures_per_minute, route.breaker_cooldown, route.target_id},
            config.name,
            config.key_setting,
            probe};
  }
};

// One of smartlb's own answers: status, OpenAI's error type and code, the message, and when to
// come back (none: no Retry-After).
struct Refusal {
  beast::http::status status;
  std::string_view type = "invalid_request_error";
  std::string_view code;
  std::string_view message;
  std::optional<std::chrono::milliseconds> retry_after{};
  std::string_view body{};  // an answer of smartlb's own that is no error (status 200)
};

// How one attempt ended: failed over (try the next), nothing left to try, answered (and
// whether the client connection may carry another request), to be tried again (the target's
// retry_config), a verified 101 whose WebSocket session waits to be relayed (Session:
// ForwardJob::take_session), or an event stream committed to the client whose rest waits to be
// relayed (Stream: ForwardJob::relay_stream, end_stream).
enum class Attempted : std::uint8_t { Next, NothingLeft, Keep, Close, Retry, Session, Stream };

class ForwardJob {
 public:
  // `shared`: the process's settings and the state all requests share; `rng`: the worker's.
  ForwardJob(Shared& shared, base::FastRandom& rng, Exchange& exchange, const Snapshot& snapshot,
             http1::RequestHead& req, const http::RequestTarget& target,
             const clients::ClientIdentity& caller, telemetry::RequestRecord& rec, ForwardBuffers& buffers,
             StreamedBody* streamed)
      : s_(shared),
        cfg_(shared.cfg),
        snap_(snapshot),
        states_(shared.states),
        rng_(rng),
        req_(req),
        request_target_(target),
        caller_(caller),
        rec_(rec),
        buffers_(buffers),
        exchange_(exchange),
        streamed_(streamed) {}

  ForwardJob(const ForwardJob&) = delete;
  ForwardJob& operator=(const ForwardJob&) = delete;
  ~ForwardJob();  // leaves its queue: a job destroyed mid-wait (the worker stopping)

  Task<bool> run();  // prices the answer and settles the budgets when it ends

  // A Realtime or Responses WebSocket whose 101 the backend sent ends run() (false) with its
  // session ready, not relayed: its connection takes it (take_session, which leaves nothing of
  // the session in the job) and hands itself to a coroutine of its own for it
  // (net/client_session.cpp), so that the job and the request's frames (run(), its attempt, the
  // client session's) end rather than wait for an hour. The session's end() then prices it and
  // settles the budgets, as run() does at its end.
  bool session_ready() const { return session_ != nullptr; }
  std::unique_ptr<OpenedSession> take_session();

  // Likewise an event stream whose head went out and whose next event is awaited ends run()
  // (false) with the stream ready (net/client_session.cpp): its connection relays the rest, so
  // that the frames of the request (run(), its attempt, the client session's) do not wait for as
  // long as the stream lasts. relay_stream() relays what has come: HandedOff while the stream
  // waits for more (await_stream: `wake` is called when it comes, and relay_stream() again, or
  // first relay_stream_now(), which needs no coroutine while the client takes each write whole);
  // else end_stream() ends the attempt and the request as run() would have, and says whether the
  // client's connection may carry another request.
  bool stream_ready() const { return stream_ != nullptr; }
  Task<Relayed> relay_stream() { return exchange_.relay_committed(); }
  std::optional<Relayed> relay_stream_now() { return exchange_.relay_committed_now(); }
  void await_stream(StreamWaker wake) { exchange_.await_committed(std::move(wake)); }
  bool end_stream(const Relayed& r);

 private:
  // At the end of run(): what the answer cost, by the price table, then the caller's budgets
  // charged what it used (its cost included). Returns `keep`.
  bool finish(bool keep) {
    leave_queue();
    price_answer();
    settle_budgets();
    return keep;
  }
  void price_answer();
  void settle_budgets();

  // A bounded wait for capacity instead of smartlb's own 429 (the class's max_queue_seconds;
  // clients/capacity_wait.hpp): route again, answer the refusal now, or nobody is left to answer.
  enum class WaitEnd : std::uint8_t { Again, Answer, ClientLeft };
  // `retry_after`: when the refusal says room comes back (none: no clock predicts it);
  // `predicted`: only smartlb's prediction refused it (clients::CapacityWaitAsk).
  Task<WaitEnd> wait_for_capacity(std::optional<base::Nanos> retry_after, bool predicted = false);
  // When routing found no target: when its 429 says room comes back, and whether only a
  // prediction refused, if this request may wait for it at all (nullopt: answer now).
  struct RoomBack {
    base::Nanos in{0};
    bool predicted = false;
  };
  std::optional<RoomBack> room_back_in() const;
  bool rate_limited() const;  // one of its attempts was answered 429 (or found a quota spent)
  void leave_queue();         // gives back its place in its class's queue, if it holds one

  void prepare_request();
  std::optional<Refusal> admit();
  Task<Attempted> attempt(const ChosenTarget& t, routing::TriedSet& tried);
  // A streamed body's attempt that can neither fail over (its first byte left) nor relay an
  // answer (none came whole): the client is told how it ended, or is gone.
  Task<Attempted> end_streamed(StreamEnd end);
  // What the relay of attempt `t`'s answer is told: `hold`, how long a stream's start may be held
  // back (with `fail_over_stall`, a first-token deadline: past it, it fails over).
  RelayOptions relay_options(const ChosenTarget& t, base::Nanos hold, bool fail_over_stall) const;
  // What the relay of an answer (or its held start) ended with, to the attempt's ticket.
  Attempted relayed(const ChosenTarget& t, routing::AttemptTicket& ticket, telemetry::AttemptRecord& a,
                    const Relayed& r);
  std::optional<std::string_view> match_rule();
  std::optional<clients::BudgetRefused> admit_to_budgets();
  // The caller's budgets' refusal, as smartlb's own 429 (nullopt: admitted).
  std::optional<Refusal> budget_refusal();
  std::optional<ChosenTarget> choose_target(routing::TriedSet& tried);
  // How long attempt `t` of a streamed request may wait for its first content before it fails
  // over as stalled: none for other requests, when off, or for the last candidate.
  std::optional<base::Nanos> first_token_deadline(const ChosenTarget& t,
                                                  const routing::TriedSet& tried) const;
  bool credential_ready(const ChosenTarget& t) const;
  Task<bool> await_credential(const ChosenTarget& t);
  void prepare_body(const ChosenTarget& t);
  void write_request_head(const ChosenTarget& t, telemetry::AttemptRecord& a);
  // Closes attempt `a`'s ticket with a failure (routing cools the target down, counts it for its
  // breaker and logs it), and records what it did; a rejected Entra ID token is refreshed.
  routing::Closed close_failed(const ChosenTarget& t, routing::AttemptTicket& ticket,
                               telemetry::AttemptRecord& a, const routing::AttemptOutcome& o);
  // smartlb's own answer, in OpenAI's error shape, its status recorded. Whether the client's
  // connection may carry another request.
  Task<bool> refuse(const Refusal& r);
  Task<bool> refuse_unavailable();
  // GET .../models: smartlb's own model catalog (net/model_catalog.hpp), when it has one.
  std::optional<CatalogRequest> catalog_asked() const;
  Task<bool> answer_catalog(const CatalogRequest& c);
  // Stateful requests (docs/stateful-apis.md): an untagged try moves to the next resource
  // (`unavailable`: this one could not answer); a 404 or 400 read whole and held, true when it
  // says "not found"; the held answer relayed; what is answered when nothing is left to try.
  bool next_resource(routing::TriedSet& tried, bool unavailable);
  Task<bool> hold_not_found(const ChosenTarget& t);
  // After a verified 101: the session made ready, counted on its backend (and still in flight
  // there, as its attempt was), for take_session(). Not a failure of the backend however it ends.
  void open_websocket(const ChosenTarget& t, routing::InFlight attempt_in_flight);
  // What the backend's answer to a handshake is, against the key this attempt sent.
  websocket::UpgradeAnswer judge_upgrade(const http1::ResponseHead& h) const;
  Task<bool> relay_held();
  Task<bool> answer_nothing_left();
  std::chrono::seconds header_timeout() const;
  base::Nanos time_left() const;  // of REQUEST_TIMEOUT_SECONDS
  std::string_view client_key() const;
  // A Realtime WebSocket handshake (docs/stateful-apis.md, Realtime): the model from the query,
  // and the browser's credential (subprotocol or query) when it sent no header.
  void prepare_websocket();
  credentials::CredentialFields client_credentials() const;
  void write_websocket_fields(std::string& out);

  Shared& s_;
  const config::Config& cfg_;  // process settings: timeouts
  const Snapshot& snap_;
  // Read, but for a refused request's demand: what else changes goes through an attempt's ticket.
  routing::BackendStates& states_;
  base::FastRandom& rng_;
  http1::RequestHead& req_;
  http::RequestTarget request_target_;  // the client's, less its tags
  const clients::ClientIdentity& caller_;
  telemetry::RequestRecord& rec_;
  ForwardBuffers& buffers_;
  Exchange& exchange_;
  StreamedBody* streamed_;  // a large upload's body, streamed to one backend; null: buffered

  const Rule* rule_ = nullptr;  // this try's: the matched rule, or its part on a resource
  const Rule* matched_ = nullptr;
  StatefulRoute stateful_;
  const Rule* unavailable_rule_ = nullptr;  // an untagged try's resource that could not answer
  // The last "not found", while others are tried: made only by a request that meets one, so
  // the usual request's job stays small.
  struct HeldAnswer {
    http1::ResponseHead head;
    std::string body;
    std::string_view backend;
    int by = -1;
  };
  std::unique_ptr<HeldAnswer> held_;
  // A WebSocket session's in-flight counts, learning and settings (forward_job_answers.cpp).
  class OpenSession;
  struct OpenSessionDelete {
    void operator()(OpenSession* s) const;
  };
  std::unique_ptr<OpenSession, OpenSessionDelete> session_;
  // An event stream's attempt, handed off (stream_ready): what relayed() needs at its end.
  struct CommittedStream {
    ChosenTarget target;
    routing::AttemptTicket ticket;
    telemetry::AttemptRecord& attempt;
  };
  std::unique_ptr<CommittedStream> stream_;
  // The model the client asked for: the deployment path segment, or the body's `model` of an
  // OpenAI-style request. Rules match it, and cooldowns and quotas are kept under it.
  std::string_view model_;
  std::string_view body_;  // what goes upstream on this attempt: the client's, or edited
  std::string_view affinity_key_;

  // What the request's priority class leaves of each target's quota to the classes above, and
  // how long it may wait for capacity.
  routing::ClassReserve class_reserve_;
  clients::CapacityWaitPolicy capacity_wait_{};
  std::string_view class_name_;
  base::Nanos waited_{0};                      // for capacity, in all
  std::optional<base::Nanos> budget_back_in_;  // when the budget that refused it has room again
  bool share_wait_ = false;  // the refusal awaits this replica's share of a shared max_in_flight
  std::atomic<std::uint32_t>* queue_place_ = nullptr;  // its class's queue, while it waits there
  std::int64_t cost_ = 0;  // estimated tokens, only when a quota, a low report or a budget needs them
  bool model_in_body_ = false;
  http::ApiFamily family_ = http::ApiFamily::OpenAI;
  bool websocket_ = false;     // a Realtime handshake: a verified 101 opens a relayed session
  std::string websocket_key_;  // the Sec-WebSocket-Key of this attempt, smartlb's own
  std::string websocket_query_;
  bool send_length_ = false;  // Content-Length goes upstream (the body is always buffered)
  // `"stream": true`: its first content is waited for, within a first-token deadline; its
  // prompt's estimated tokens scale a learned one.
  bool streams_ = false;
  std::int64_t prompt_tokens_ = 0;
  std::uint32_t retries_ = 0;  // of the current target (its retry_config)
  bool cost_known_ = false;
  // What the body says (model, affinity keys, estimate), read once when first needed.
  std::optional<http::RequestBodyFacts> body_facts_;
  const http::RequestBodyFacts& body_facts() {
    if (!body_facts_) body_facts_ = http::read_request_body(request_target_.path, req_.body);
    return *body_facts_;
  }
  std::string refusal_text_;                    // smartlb's own answer's message, when it is made up
  clients::BudgetAdmission* budget_ = nullptr;  // the caller's budgets, when it has some (in buffers_)
};

}  // namespace smartlb::net
