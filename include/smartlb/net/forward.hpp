#pragma once
// Forwarding one client request: the policy's entry point (src/net/forwarder.cpp), and the
// buffers a client connection lends to each request it forwards.
#include <optional>
#include <string>
#include <vector>

#include "smartlb/clients/budget_admission.hpp"
#include "smartlb/clients/client_auth.hpp"
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

// What a client connection lends to each request it forwards, so that message heads allocate
// nothing in steady state.
struct ForwardBuffers {
  std::string passed_fields;  // the client's fields that go upstream unchanged
  std::string request_head;   // rebuilt for each attempt
  std::string response_head;
  std::string edited_body;                // the body with a target's overrides, when it has some
  std::vector<MetadataPair> metadata;     // x-smartlb-metadata's members
  std::string budget_fields;              // x-ratelimit-* of the caller's budgets
  std::optional<BudgetAdmission> budget;  // the request's charges to them
};

struct StreamedBody;

// Forwards one request and writes the response. Returns whether the client connection may
// carry another request. `snapshot` is the configuration the request routes with, from its
// start to its end; `caller` is who sent it (its subjects for the rules, its budgets).
// `streamed`: the body is not in `req` but still to be read from the client and streamed to
// the one backend chosen (a large upload: net/streamed_body.hpp); null when it is buffered.
Task<bool> forward_request(Worker& w, const Snapshot& snapshot, TimedSocket& client, RequestHead& req,
                           const RequestTarget& target, const ClientIdentity& caller, RequestRecord& rec,
                           ForwardBuffers& buffers, StreamedBody* streamed = nullptr);

}  // namespace smartlb::net
