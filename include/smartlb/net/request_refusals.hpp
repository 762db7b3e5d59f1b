#pragma once
// smartlb's own answers to a request it refuses before forwarding it (a bad head, a method the
// API does not have, a caller not admitted, a body that did not come whole, an expectation it
// does not meet): the reply and the record's status together. The client session's
// (net/client_session.cpp), which writes them.
#include <memory>
#include <string>
#include <string_view>

#include "smartlb/clients/client_auth.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/http/header_rules.hpp"
#include "smartlb/http1/http_head.hpp"
#include "smartlb/net/io_vocabulary.hpp"
#include "smartlb/net/replies.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::net {

// smartlb's own answer to a request it refuses before forwarding it, and the text its message
// views. Made only when a request is refused: the session's frame, which an open stream holds
// as long as it lasts, keeps just the pointer.
struct Refused {
  ErrorReply reply;
  std::string why;
};
using RefusedPtr = std::unique_ptr<Refused>;

// A new refusal of a request of HTTP version `version`, its reply's request id the record's.
Refused& refuse(RefusedPtr& refused, unsigned version, const telemetry::RequestRecord& rec);

// What a client is told when its head could not be read (too large, malformed); `message`
// holds the text the reply views.
void refuse_head_read(const error_code& hec, ErrorReply& r, std::string& message);

// A head that fails the framing checks, a target that is not a path (`target_ok` false), or a
// method the API does not have: `refused` made, true. `framing`: scratch the connection reuses.
bool refuse_head(const http1::RequestHead& head, const config::Config& cfg, http::FramingInput& framing,
                 bool target_ok, RefusedPtr& refused, telemetry::RequestRecord& rec);

// A caller its key or token does not admit: 401, and why in the record (never the key).
void refuse_caller(const clients::Authentication& auth, ErrorReply& bad, telemetry::RequestRecord& rec);

// A body that did not come whole: `refused` made when the client is still there to be told (a
// timeout, too large for the setting `limit`, bad framing); none when it left.
void refuse_body_read(const error_code& bec, std::string_view limit, RefusedPtr& refused, unsigned version,
                      telemetry::RequestRecord& rec);

// An Expect other than 100-continue: 417, true.
bool refuse_expectation(const http1::RequestHead& head, RefusedPtr& refused, telemetry::RequestRecord& rec);

}  // namespace smartlb::net
