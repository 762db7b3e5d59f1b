#pragma once
// What happened to one client request, filled by the forwarder and handed to the access log
// and metrics when it ends. Plain data.
#include <cstdint>
#include <string>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/cost/money.hpp"
#include "smartlb/telemetry/attempt_log.hpp"
#include "smartlb/telemetry/response_facts.hpp"
#include "smartlb/telemetry/trace_ids.hpp"

namespace smartlb::telemetry {

struct RequestRecord {
  // Attempts beyond this many are counted, and the last one recorded in the last place.
  static constexpr std::size_t kMaxAttempts = AttemptLog::kMaxRecords;

  std::string method;
  std::string path;        // without the query string (it may carry secrets)
  std::string deployment;  // as the client asked for it
  std::string request_id;
  std::string client;  // the caller's name (a client entry, or "anonymous"); never a key
  base::MonoNanos start = 0;
  base::MonoNanos end = 0;
  unsigned status = 0;  // what the client got
  int served_by = -1;   // BackendId::value that produced the response, -1 for our own answer
  std::size_t attempt_count = 0;
  AttemptLog attempts;  // attempts[0 .. min(attempt_count, kMaxAttempts))
  std::uint64_t response_bytes = 0;
  bool client_aborted = false;      // the client went away mid-response
  bool upstream_aborted = false;    // the backend failed after headers were relayed
  bool client_limited = false;      // refused (429) by one of the client's budgets
  std::string_view auth_failure;    // refused (401): why, a static label ("expired", "invalid_api_key")
  std::int64_t prompt_tokens = -1;  // from `usage`, when seen
  std::int64_t completion_tokens = -1;
  std::int64_t cached_tokens = -1;  // of the prompt tokens, read from the prompt cache, when said
  // What the answer cost by the price table (docs/operations.md#cost), -1 when unknown (no usage,
  // or no price for its model); `cost_model` the price entry's name (a view into the
  // configuration, like `rule`).
  cost::PicoUnits cost = -1;
  std::string_view cost_model;
  std::string_view rule;  // the id of the rule that routed it (a view into its configuration)
  // Its priority class when it is not the first (highest) one (a view into the configuration).
  std::string_view priority_class;
  // It waited for capacity (its class's max_queue_seconds): how long in all, and its class's name
  // (any class, the first too). -1: it did not wait.
  std::int64_t queued_ms = -1;
  std::string_view queue_class;

  // Tracing only (trace.on): the trace context, and what only spans show.
  RequestTrace trace;
  base::MonoNanos first_byte = 0;  // the first body bytes went to the client
  bool event_stream = false;       // the response was a text/event-stream
  ResponseFacts response;          // the answer's `id`, `model` and `finish_reason`s, when read

  // Back to a new request's state, keeping the strings' memory (one record serves every
  // request of a connection).
  void reset() {
    method.clear();
    path.clear();
    deployment.clear();
    request_id.clear();
    client.clear();
    start = end = 0;
    status = 0;
    served_by = -1;
    attempt_count = 0;
    attempts.release_overflow();
    response_bytes = 0;
    client_aborted = upstream_aborted = client_limited = false;
    auth_failure = {};
    prompt_tokens = completion_tokens = cached_tokens = -1;
    cost = -1;
    cost_model = {};
    rule = {};
    priority_class = {};
    queued_ms = -1;
    queue_class = {};
    if (trace.on) {  // (what follows is only ever written when tracing is on)
      trace.reset();
      first_byte = 0;
      event_stream = false;
      response.clear();
    }
  }

  AttemptRecord& add_attempt() {
    const std::size_t i = attempt_count < kMaxAttempts ? attempt_count : kMaxAttempts - 1;
    ++attempt_count;
    return attempts.start(i);
  }
};

// Receives finished requests (metrics). Called on worker threads: implementations must be
// thread-safe and cheap.
class RequestObserver {
 public:
  virtual ~RequestObserver() = default;
  // A request head was read and is about to be handled (in-flight gauges).
  virtual void on_request_start() {}
  // The request is over: answered, or abandoned by one side.
  virtual void on_request(const RequestRecord& rec) = 0;
  // A backend's host name was looked up for a new connection (no cached addresses, or every
  // cached one failed); `ok` when it gave addresses. IP literals are never looked up.
  virtual void on_dns_lookup(std::size_t /*backend: BackendId::value*/, bool /*ok*/) {}
  // A backend's Entra ID credential fetched a token (`ok`) or failed to.
  virtual void on_credential_refresh(const std::string& /*backend name*/, bool /*ok*/) {}
};

}  // namespace smartlb::telemetry
