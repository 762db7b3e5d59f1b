// The engine's side of Anthropic's Messages API (POST /v1/messages, /anthropic/v1/messages and
// their count_tokens): Anthropic's checks, error shape and rate-limit headers over the same
// deployments, quotas, faults and stats as the OpenAI routes.

#include "smartlb/sim/anthropic_ratelimit.hpp"
#include "smartlb/sim/error_bodies.hpp"
#include "smartlb/sim/messages_bodies.hpp"
#include "smartlb/sim/messages_request.hpp"
#include "smartlb/sim/sim_engine.hpp"

namespace smartlb::sim {
namespace {

using std::chrono::milliseconds;

SimResponse anthropic_error(int status, std::string_view message) {
  return json_response(status, anthropic_error_body(anthropic_error_type(status), message));
}

void add_retry_after_seconds(SimResponse& response, milliseconds retry_after) {
  // Anthropic sends whole seconds only.
  response.headers.emplace_back("retry-after", std::to_string(retry_after_seconds(retry_after)));
}

std::string rate_limit_message(QuotaVerdict verdict) {
  return std::string(verdict == QuotaVerdict::TokensExceeded ? "Number of request tokens"
                                                             : "Number of requests") +
         " has exceeded your per-minute rate limit; see the response headers for current usage. Please "
         "reduce the prompt length or the maximum tokens requested, or try again later.";
}

}  // namespace

void SimEngine::add_anthropic_quota_headers(SimResponse& response, Deployment& deployment,
                                            const QuotaState& state) {
  const QuotaReport report = report_quota(state, settings_.reports, random01_);
  const QuotaResets resets = quota_resets(deployment.quota.until_full(clock_.now()), clock_.unix_seconds());
  add_anthropic_ratelimit_headers(response.headers, report, resets);
}

std::optional<SimResponse> SimEngine::injected_messages_fault(Deployment& state) {
  const double draw = fault_needs_draw(faults_) ? random01_() : 1.0;
  const FaultDecision fault = decide_fault(faults_, draw);
  if (fault.status == 0) return std::nullopt;
  const std::string message =
      fault.status == 529   ? std::string("Overloaded")
      : fault.status == 429 ? rate_limit_message(QuotaVerdict::RequestsExceeded)
                            : "smartlb-sim injected fault (status " + std::to_string(fault.status) + ").";
  SimResponse response = anthropic_error(fault.status, message);
  add_anthropic_quota_headers(response, state, state.quota.peek(clock_.now()));
  if (fault.retry_after_ms > 0) add_retry_after_seconds(response, milliseconds(fault.retry_after_ms));
  return response;
}

SimResponse SimEngine::handle_messages(const Route& route, const SimRequest& request,
                                       std::string& deployment) {
  const bool count_tokens = route.action == "count_tokens";
  if (request.method != "POST") {
    SimResponse response = anthropic_error(405, "Method not allowed, use POST.");
    response.headers.emplace_back("allow", "POST");
    return response;
  }
  // The Anthropic SDK sends x-api-key; Microsoft Foundry also takes api-key or a bearer token.
  const auto x_api_key = find_header(request.headers, "x-api-key");
  if (!authorized(request) && !(x_api_key && *x_api_key == settings_.api_key)) {
    return anthropic_error(401, "invalid x-api-key");
  }
  if (!find_header(request.headers, "anthropic-version")) {
    return anthropic_error(400, "anthropic-version: header is required");
  }
  const auto parsed = parse_messages_request(request.body, count_tokens);
  if (!parsed.request) return anthropic_error(400, parsed.error);
  const MessagesRequest& messages = *parsed.request;
  const auto found = deployments_.find(messages.model);
  if (found == deployments_.end()) return anthropic_error(404, "model: " + messages.model);
  deployment = messages.model;
  Deployment& state = found->second;

  if (auto fault = injected_messages_fault(state)) return *fault;
  if (count_tokens) {
    // Counting is free: it reports the quota and charges nothing.
    SimResponse response = json_response(200, count_tokens_body(messages.input_tokens));
    add_anthropic_quota_headers(response, state, state.quota.peek(clock_.now()));
    return response;
  }
  const QuotaDecision quota = state.quota.try_consume(messages.cost(), clock_.now());
  if (!quota.admitted()) {
    SimResponse response = anthropic_error(429, rate_limit_message(quota.verdict));
    add_anthropic_quota_headers(response, state, quota.state);
    add_retry_after_seconds(response, quota.retry_after);
    return response;
  }

  MessageSpec spec;
  spec.id = ids_.next("msg_", 24);
  spec.model = messages.model;
  spec.input_tokens = messages.input_tokens;
  spec.output_tokens = content_chunk_count(settings_.stream_chunks, messages.max_tokens);
  SimResponse response;
  if (messages.stream) {
    response.stream = true;
    response.content_type = "text/event-stream";
    response.events = message_stream_events(spec);
    response.chunk_interval = settings_.chunk_interval;
  } else {
    response.body = message_body(spec);
  }
  response.first_token = first_token_wait(messages.input_tokens, state);
  stats_.record_tokens(deployment, spec.input_tokens + spec.output_tokens, messages.cost());
  plan_success_faults(response);
  add_anthropic_quota_headers(response, state, quota.state);
  return response;
}

}  // namespace smartlb::sim
