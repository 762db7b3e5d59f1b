// smartlb's own answers to a request it refuses before forwarding it
// (include/smartlb/net/request_refusals.hpp).
#include "smartlb/net/request_refusals.hpp"

#include "smartlb/base/text.hpp"
#include "smartlb/clients/jwt/key_wait.hpp"
#include "smartlb/http/body_intake.hpp"
#include "smartlb/http/methods.hpp"

namespace smartlb::net {
namespace {

// "" when the request head is acceptable, else why not (for a 400). `in` is the connection's
// scratch space, reused so that a request with a body allocates nothing here.
std::string validate_head(const http1::RequestHead& req, const config::Config& cfg, http::FramingInput& in) {
  in.transfer_encoding.clear();
  in.content_length.clear();
  in.host_count = 0;
  in.version = req.version;
  const std::size_t count = req.fields.size();
  for (std::size_t i = 0; i < count; ++i) {
    const auto f = req.fields[i];
    switch (f.id) {
      case beast::http::field::transfer_encoding:
        in.transfer_encoding.push_back(f.value);
        break;
      case beast::http::field::content_length:
        in.content_length.push_back(f.value);
        break;
      case beast::http::field::host:
        ++in.host_count;
        break;
      default:
        break;
    }
  }
  if (count > cfg.max_header_count) return "too many header fields";
  if (req.version != 10 && req.version != 11) return "unsupported HTTP version";
  if (auto why = check_request_framing(in); !why.empty()) return why;
  return {};
}

}  // namespace

Refused& refuse(RefusedPtr& refused, unsigned version, const telemetry::RequestRecord& rec) {
  refused = std::make_unique<Refused>();
  refused->reply.version = version;
  refused->reply.request_id = rec.request_id;
  return *refused;
}

// What a client is told when its head could not be read (too large, malformed).
void refuse_head_read(const error_code& hec, ErrorReply& r, std::string& message) {
  if (hec == beast::http::error::header_limit) {
    r.status = beast::http::status::request_header_fields_too_large;
    r.message = "Request header fields too large.";
  } else if (hec == beast::http::error::body_limit) {
    r.status = beast::http::status::payload_too_large;
    r.message = "Request body too large.";
  } else {
    message = "Malformed HTTP request (" + hec.message() + ").";
    r.message = message;
  }
}

// A head that fails the framing checks, a target that is not a path, or a method the API does
// not have (only the API's methods are forwarded): `refused` made, true.
bool refuse_head(const http1::RequestHead& head, const config::Config& cfg, http::FramingInput& framing,
                 bool target_ok, RefusedPtr& refused, telemetry::RequestRecord& rec) {
  std::string why = validate_head(head, cfg, framing);
  if (why.empty() && !target_ok) why = "the request target must be a path (origin-form)";
  if (!why.empty()) {
    Refused& r = refuse(refused, head.version, rec);
    r.why = std::move(why);
    r.reply.message = r.why;
    rec.status = 400;
    return true;
  }
  if (http::is_api_method(head.method_text)) return false;
  Refused& r = refuse(refused, head.version, rec);
  r.why = "Method '" + head.method_text.substr(0, 32) + "' is not allowed; the API's methods are " +
          std::string(http::kApiMethodsAllow) + " (case-sensitive).";
  r.reply.status = beast::http::status::method_not_allowed;
  r.reply.message = r.why;
  r.reply.code = "method_not_allowed";
  r.reply.allow = http::kApiMethodsAllow;
  rec.status = 405;
  return true;
}

// A caller its key or token does not admit: 401, and why in the record (never the key).
void refuse_caller(const clients::Authentication& auth, ErrorReply& bad, telemetry::RequestRecord& rec) {
  bad.status = beast::http::status::unauthorized;
  if (auth.token) {
    bad.message = clients::jwt::message(auth.refusal);
    bad.code = "invalid_token";
    bad.www_authenticate = "Bearer error=\"invalid_token\"";
    rec.auth_failure = clients::jwt::label(auth.refusal);
  } else {
    bad.message =
        "Access denied: the api-key (or x-api-key, or Bearer token) is not one of the configured client keys "
        "(CLIENT_API_KEYS, or the config file's clients).";
    bad.code = "invalid_api_key";
    rec.auth_failure = "invalid_api_key";
  }
  rec.status = 401;
}

// A body that did not come whole: `refused` made when the client is still there to be told (a
// timeout, too large for the setting `limit`, bad framing); none when it left.
void refuse_body_read(const error_code& bec, std::string_view limit, RefusedPtr& refused, unsigned version,
                      telemetry::RequestRecord& rec) {
  if (bec != beast::error::timeout && bec != beast::http::error::body_limit &&
      bec != asio::error::no_buffer_space && !is_parse_error(bec)) {
    rec.client_aborted = true;
    return;
  }
  Refused& r = refuse(refused, version, rec);
  ErrorReply& bad = r.reply;
  if (bec == asio::error::no_buffer_space) {
    bad.status = beast::http::status::service_unavailable;
    bad.type = "server_error";
    bad.code = "server_busy";
    bad.message =
        "smartlb is buffering as many request bodies as it may at once (MAX_BUFFERED_BODIES_BYTES); try "
        "again.";
    bad.retry_after = std::chrono::seconds(1);
    rec.status = 503;
  } else if (bec == beast::error::timeout) {
    bad.status = beast::http::status::request_timeout;
    bad.message = "The request body did not arrive within HTTP_TIMEOUT_SECONDS.";
    bad.code = "request_timeout";
    rec.status = 408;
  } else if (bec == beast::http::error::body_limit) {
    bad.status = beast::http::status::payload_too_large;
    bad.message = http::too_large_message(limit);
    rec.status = 413;
  } else {
    r.why = "Malformed request body framing (" + bec.message() + ").";
    bad.message = r.why;
    rec.status = 400;
  }
}

// An Expect other than 100-continue: 417.
bool refuse_expectation(const http1::RequestHead& head, RefusedPtr& refused, telemetry::RequestRecord& rec) {
  if (base::iequals(head.fields.get(beast::http::field::expect), "100-continue")) return false;
  ErrorReply& bad = refuse(refused, head.version, rec).reply;
  bad.status = beast::http::status::expectation_failed;
  bad.message = "Only Expect: 100-continue is supported.";
  rec.status = 417;
  return true;
}

}  // namespace smartlb::net
