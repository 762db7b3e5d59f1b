#pragma once
// The request path's part in tracing (tracing/request_trace does the work): a request's trace
// begins from the client's fields, each attempt writes its traceparent, and a finished request
// goes to the Tracer. Called only when the server has a Tracer (tracing on).
#include <string>

#include "smartlb/base/random.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/http/api_family.hpp"
#include "smartlb/http1/http_head.hpp"
#include "smartlb/telemetry/request_record.hpp"

namespace smartlb::net {

struct Worker;

// The request's trace: the client's traceparent and tracestate read, ids made, the sampler asked.
void begin_request_trace(Worker& w, const http1::RequestHead& head, telemetry::RequestRecord& rec);
// Attempt `a` to backend `b`: its CLIENT span's id and where it goes, and the upstream request's
// traceparent (and tracestate) appended to `head`.
void begin_attempt_trace(base::RandomSource& rng, const telemetry::RequestRecord& rec,
                         telemetry::AttemptRecord& a, const config::BackendConfig& b, http::ApiFamily family,
                         std::string& head);

}  // namespace smartlb::net
