#pragma once
// Forwarding one client request: the policy's entry point (src/net/forwarder.cpp), and the
// buffers a client connection lends to each request it forwards.
#include <optional>
#include <string>
#include <vector>

#include "smartlb/clients/budget_admission.hpp"
#include "smartlb/clients/client_auth.hpp"
#include "smartlb/http/request_body.hpp"
#include "smartlb/http/request_target.hpp"
#include "smartlb/http1/http_head.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/snapshot.hpp"
#include "smartlb/routing/rule_match.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::net {
using namespace smartlb::io;     // the Asio/Beast vocabulary (io/beast.hpp)
using namespace smartlb::http1;  // messages as the proxied path parses them

struct Worker;
struct ForwardBuffers;
class ForwardJob;  // the policy of one request (forwarder.cpp)

// A connection's room for the ForwardJob of its current request: made on the first request and
// reused by the next ones; the job lives until the next request or the connection's end.
class ForwardJobSlot {
 public:
  ForwardJobSlot() = default;
  ~ForwardJobSlot();
  ForwardJobSlot(const ForwardJobSlot&) = delete;
  ForwardJobSlot& operator=(const ForwardJobSlot&) = delete;

 private:
  friend Task<bool> forward_request(Worker&, const Snapshot&, TimedSocket&, RequestHead&,
                                    const RequestTarget&, const ClientIdentity&, RequestRecord&,
                                    ForwardBuffers&);
  void* room_ = nullptr;
  ForwardJob* job_ = nullptr;
};

// What a client connection lends to each request it forwards, so that message heads allocate
// nothing in steady state.
struct ForwardBuffers {
  std::string passed_fields;  // the client's fields that go upstream unchanged
  std::string request_head;   // rebuilt for each attempt
  std::string response_head;
  std::string edited_body;                     // the body with a target's overrides, when it has some
  std::vector<MetadataPair> metadata;          // x-smartlb-metadata's members
  std::string budget_fields;                   // x-ratelimit-* of the caller's budgets
  std::optional<BudgetAdmission> budget;       // the request's charges to them
  std::string refusal_message;                 // smartlb's own answer's, when it is made up
  std::optional<RequestBodyFacts> body_facts;  // what the request's body says, once read
  ForwardJobSlot job;                          // last: its job refers to the rest
};

// Forwards one request and writes the response. Returns whether the client connection may
// carry another request. `snapshot` is the configuration the request routes with, from its
// start to its end; `caller` is who sent it (its subjects for the rules, its budgets).
Task<bool> forward_request(Worker& w, const Snapshot& snapshot, TimedSocket& client, RequestHead& req,
                           const RequestTarget& target, const ClientIdentity& caller, RequestRecord& rec,
                           ForwardBuffers& buffers);

}  // namespace smartlb::net
