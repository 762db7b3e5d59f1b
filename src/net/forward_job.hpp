#pragma once
// The policy of one request (ForwardJob), shared by the files that define its phases:
// forwarder.cpp (the phases themselves: admit, choose, attempt, judge, account),
// forward_request_head.cpp (what goes upstream: fields, credentials, body, the head),
// forward_answers.cpp (smartlb's own answers, held answers, a Realtime session, price, settle).
// Private to src/net.
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

// A request body up to this size is copied behind the head and sent in one buffer.
inline constexpr std::size_t kInlineRequestBodyBytes = 64 * 1024;
// A "not found" answer up to this size is held while the next backend or resource is tried.
inline constexpr std::size_t kHeldAnswerBytes = 64 * 1024;

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

// How one attempt ended: failed over (try the next), nothing left to try, or answered (and
// whether the client connection may carry another request).
enum class Attempted : std::uint8_t { Next, NothingLeft, Keep, Close };

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
  // An answer's head judged (fail over or relay; the backend's retry hint), its rate-limit
  // report kept for the target.
  struct AnswerVerdict {
    Verdict verdict;
    std::optional<std::chrono::milliseconds> hint;
  };
  AnswerVerdict judge_and_observe(const ChosenTarget& t, const ResponseHead& head, MonoNanos sent,
                                  const ReportedBudget::Mark& mark);
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
  CredentialFields client_credentials() const;
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

  std::int64_t cost_ = 0;  // estimated tokens, only when a quota, a low report or a budget needs them
  bool model_in_body_ = false;
  ApiFamily family_ = ApiFamily::OpenAI;
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

}  // namespace smartlb::net
