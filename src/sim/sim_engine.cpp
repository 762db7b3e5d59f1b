#include "smartlb/sim/sim_engine.hpp"

#include "smartlb/sim/error_bodies.hpp"
#include "smartlb/sim/response_bodies.hpp"
#include "smartlb/sim/route.hpp"

#include <cctype>
#include <memory>
#include <random>

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace {

using std::chrono::milliseconds;

SimResponse json_response(int status, std::string body) {
  SimResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

void add_retry_after(SimResponse& response, milliseconds retry_after) {
  response.headers.emplace_back("retry-after", std::to_string(retry_after_seconds(retry_after)));
  response.headers.emplace_back("retry-after-ms", std::to_string(retry_after.count()));
}

bool starts_with_ci(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(text[i])) !=
        std::tolower(static_cast<unsigned char>(prefix[i]))) {
      return false;
    }
  }
  return true;
}

SimResponse method_not_allowed(std::string_view allowed) {
  auto response =
      json_response(405, openai_error_body("405", "Method not allowed, use " + std::string(allowed) + "."));
  response.headers.emplace_back("allow", std::string(allowed));
  return response;
}

std::function<double()> default_random() {
  auto generator = std::make_shared<std::mt19937_64>(std::random_device{}());
  return [generator] { return std::uniform_real_distribution<double>(0.0, 1.0)(*generator); };
}

const char* completion_id_prefix(Operation operation) {
  switch (operation) {
    case Operation::ChatCompletions:
      return "chatcmpl-sim-";
    case Operation::Completions:
      return "cmpl-sim-";
    case Operation::Embeddings:
      return "emb-sim-";
  }
  return "sim-";
}

}  // namespace

SimEngine::SimEngine(SimSettings settings, const Clock& clock, std::function<double()> random01)
    : settings_(std::move(settings)),
      clock_(clock),
      random01_(random01 ? std::move(random01) : default_random()) {
  if (settings_.deployments.empty()) settings_.deployments.push_back(default_deployment());
  const auto now = clock_.now();
  for (const auto& spec : settings_.deployments) {
    deployments_.insert_or_assign(spec.name,
                                  Deployment{DeploymentQuota(spec.limits, settings_.limiter, now)});
  }
  faults_ = settings_.faults;
}

SimResponse SimEngine::handle(const SimRequest& request) {
  const Route route = parse_route(request.target);
  SimResponse response;
  {
    std::lock_guard lock(mutex_);
    switch (route.endpoint) {
      case Endpoint::SimFaults:
        response = handle_faults(request);
        break;
      case Endpoint::SimStats:
        response = handle_stats(request);
        break;
      case Endpoint::SimReset:
        response = handle_reset(request);
        break;
      case Endpoint::Api:
      case Endpoint::NotFound: {
        stats_.record_request(request);
        std::string deployment;
        response = handle_api(route, request, deployment);
        response.latency = milliseconds(faults_.latency_ms);
        stats_.record_status(response.status, deployment);
        break;
      }
    }
  }
  response.headers.emplace_back("x-sim-name", settings_.name);
  return response;
}

void SimEngine::add_quota_headers(SimResponse& response, const QuotaState& state) {
  const QuotaReport report = report_quota(state, settings_.reports, random01_);
  response.headers.emplace_back("x-ratelimit-remaining-requests", std::to_string(report.remaining_requests));
  response.headers.emplace_back("x-ratelimit-remaining-tokens", std::to_string(report.remaining_tokens));
  response.headers.emplace_back("x-ratelimit-limit-requests", std::to_string(report.limit_requests));
  response.headers.emplace_back("x-ratelimit-limit-tokens", std::to_string(report.limit_tokens));
}

bool SimEngine::authorized(const SimRequest& request) const {
  if (settings_.api_key.empty()) return true;
  if (const auto key = find_header(request.headers, "api-key"); key && *key == settings_.api_key) {
    return true;
  }
  constexpr std::string_view kBearer = "Bearer ";
  const auto authorization = find_header(request.headers, "authorization");
  return authorization && starts_with_ci(*authorization, kBearer) &&
         authorization->substr(kBearer.size()) == settings_.api_key;
}

SimResponse SimEngine::handle_api(const Route& route, const SimRequest& request, std::string& deployment) {
  if (route.endpoint == Endpoint::NotFound) {
    return json_response(404, openai_error_body("404", "Resource not found"));
  }
  if (request.method != "POST") return method_not_allowed("POST");
  if (route.style == ApiStyle::Azure && !route.api_version) {
    return json_response(400,
                         openai_error_body("BadRequest", "Missing required query parameter 'api-version'."));
  }
  if (!authorized(request)) return json_response(401, unauthorized_body());

  const auto parsed = parse_api_request(route.operation, request.body, settings_.default_max_tokens);
  if (!parsed.request) return json_response(400, openai_error_body("BadRequest", parsed.error));
  const ApiRequest& api = *parsed.request;

  const std::string& name = route.style == ApiStyle::Azure ? route.deployment : api.model;
  if (name.empty()) {
    return json_response(400, openai_error_body("BadRequest", "You must provide a model parameter."));
  }
  const auto found = deployments_.find(name);
  if (found == deployments_.end()) return json_response(404, deployment_not_found_body());
  deployment = name;
  Deployment& state = found->second;
  const auto now = clock_.now();
  const std::string api_version = route.api_version.value_or("");

  const double draw = fault_needs_draw(faults_) ? random01_() : 1.0;
  const FaultDecision fault = decide_fault(faults_, draw);
  if (fault.status != 0) {
    SimResponse response =
        fault.status == 429
            ? json_response(429, rate_limit_body(route.operation, api_version, RateLimitKind::Requests,
                                                 milliseconds(fault.retry_after_ms)))
            : json_response(fault.status, openai_error_body(std::to_string(fault.status),
                                                            "smartlb-sim injected fault (status " +
                                                                std::to_string(fault.status) + ").",
                                                            "server_error"));
    add_quota_headers(response, state.quota.peek(now));
    if (fault.retry_after_ms > 0) add_retry_after(response, milliseconds(fault.retry_after_ms));
    return response;
  }

  const QuotaDecision quota = state.quota.try_consume(api.cost(), now);
  if (!quota.admitted()) {
    const auto kind =
        quota.verdict == QuotaVerdict::TokensExceeded ? RateLimitKind::Tokens : RateLimitKind::Requests;
    auto response =
        json_response(429, rate_limit_body(route.operation, api_version, kind, quota.retry_after));
    add_quota_headers(response, quota.state);
    add_retry_after(response, quota.retry_after);
    return response;
  }

  SimResponse response = serve_success(route, api, name);
  add_quota_headers(response, quota.state);
  return response;
}

SimResponse SimEngine::serve_success(const Route& route, const ApiRequest& api,
                                     const std::string& deployment) {
  CompletionSpec spec;
  spec.id = completion_id_prefix(route.operation) + std::to_string(next_id_++);
  spec.created = clock_.unix_seconds();
  spec.model = deployment;
  spec.prompt_tokens = api.prompt_tokens;
  spec.completion_tokens = content_chunk_count(settings_.stream_chunks, api.max_tokens);

  SimResponse response;
  std::int64_t served = api.prompt_tokens;
  if (route.operation == Operation::Embeddings) {
    response.body = embeddings_body(deployment, api.input_count, api.prompt_tokens, api.base64_embeddings);
  } else {
    served += spec.completion_tokens;
    if (api.stream) {
      response.stream = true;
      response.content_type = "text/event-stream";
      response.events = completion_stream_events(route.operation, spec, api.include_usage);
      response.chunk_interval = settings_.chunk_interval;
    } else {
      response.body = route.operation == Operation::ChatCompletions ? chat_completion_body(spec)
                                                                    : text_completion_body(spec);
    }
  }
  response.headers.emplace_back("x-request-id", spec.id);
  stats_.record_tokens(deployment, served, api.cost());

  response.stall = milliseconds(faults_.stall_ms);
  response.stall_before_headers = faults_.stall_before_headers;
  response.stall_after_events = faults_.stall_after_chunks;
  if (faults_.reset_after_chunks >= 0) response.reset_after_events = faults_.reset_after_chunks;
  if (faults_.reset_rate > 0.0 && decide_reset(faults_, random01_())) {
    if (response.stream) {
      const int mid = reset_point_mid_stream(static_cast<int>(response.events.size()));
      if (!response.reset_after_events || *response.reset_after_events > mid)
        response.reset_after_events = mid;
    } else {
      response.reset_before_headers = true;
    }
  }
  return response;
}

SimResponse SimEngine::handle_faults(const SimRequest& request) {
  if (request.method == "GET") return json_response(200, faults_to_json(faults_).dump());
  if (request.method != "POST") return method_not_allowed("GET, POST");
  const auto patch = request.body.empty()
                         ? nlohmann::json::object()
                         : nlohmann::json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (patch.is_discarded()) {
    return json_response(400, openai_error_body("BadRequest", "invalid JSON body"));
  }
  if (auto error = merge_faults(faults_, patch); !error.empty()) {
    return json_response(400, openai_error_body("BadRequest", error));
  }
  return json_response(200, faults_to_json(faults_).dump());
}

SimResponse SimEngine::handle_stats(const SimRequest& request) {
  if (request.method != "GET") return method_not_allowed("GET");
  return json_response(200, stats_json_locked().dump());
}

nlohmann::json SimEngine::stats_json_locked() const {
  auto json = stats_.to_json();
  json["name"] = settings_.name;
  const LimiterSettings& limiter = settings_.limiter;
  const auto seconds = [](std::chrono::milliseconds ms) { return static_cast<double>(ms.count()) / 1000.0; };
  json["limiter"] = {
      {"kind", limiter_kind_name(limiter.kind)},
      {"window_seconds", seconds(limiter.window)},
      {"burst_seconds", seconds(limiter.burst)},
      {"rpm_interval_seconds",
       limiter.rpm_interval ? nlohmann::json(seconds(*limiter.rpm_interval)) : nlohmann::json(nullptr)},
      {"report_jitter", settings_.reports.jitter},
      {"report_unknown_rate", settings_.reports.unknown_rate}};
  nlohmann::json capacity = nlohmann::json::object();
  for (const auto& [name, deployment] : deployments_) {
    const RateLimiter& tokens = deployment.quota.tokens();
    capacity[name] = {{"limit_tokens", tokens.capacity()},
                      {"limit_requests", deployment.quota.requests().capacity()},
                      {"tokens_per_second", tokens.per_second()},
                      {"burst_tokens", limiter.kind == LimiterKind::Bucket ? tokens.capacity() : 0}};
  }
  json["capacity"] = std::move(capacity);
  return json;
}

SimResponse SimEngine::handle_reset(const SimRequest& request) {
  if (request.method != "POST") return method_not_allowed("POST");
  stats_.clear();
  faults_ = settings_.faults;
  const auto now = clock_.now();
  for (auto& [name, deployment] : deployments_) deployment.quota.reset(now);
  return json_response(200, R"({"reset":true})");
}

nlohmann::json SimEngine::stats_json() const {
  std::lock_guard lock(mutex_);
  return stats_json_locked();
}

FaultConfig SimEngine::faults() const {
  std::lock_guard lock(mutex_);
  return faults_;
}

}  // namespace smartlb::sim
