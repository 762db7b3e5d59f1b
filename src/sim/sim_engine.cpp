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

std::uint64_t id_seed(std::uint64_t configured) {
  if (configured != 0) return configured;
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

// The comma-separated entries of a header value, trimmed.
std::vector<std::string_view> list_entries(std::string_view value) {
  std::vector<std::string_view> entries;
  while (!value.empty()) {
    const auto comma = value.find(',');
    std::string_view entry = value.substr(0, comma);
    while (!entry.empty() && (entry.front() == ' ' || entry.front() == '\t')) entry.remove_prefix(1);
    while (!entry.empty() && (entry.back() == ' ' || entry.back() == '\t')) entry.remove_suffix(1);
    if (!entry.empty()) entries.push_back(entry);
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return entries;
}

bool has_token_ci(std::string_view value, std::string_view token) {
  for (const auto entry : list_entries(value)) {
    if (entry.size() == token.size() && starts_with_ci(entry, token)) return true;
  }
  return false;
}

// Browsers cannot set headers on a WebSocket: OpenAI's browser clients offer the key as a
// subprotocol entry.
constexpr std::string_view kKeySubprotocol = "openai-insecure-api-key.";

// The subprotocol to accept among those offered: "realtime" when offered, else the first
// that carries no key; empty when none.
std::string chosen_subprotocol(const HeaderList& headers) {
  const auto offered = find_header(headers, "sec-websocket-protocol");
  if (!offered) return {};
  std::string first;
  for (const auto entry : list_entries(*offered)) {
    if (entry == "realtime") return "realtime";
    if (first.empty() && !entry.starts_with(kKeySubprotocol)) first = std::string(entry);
  }
  return first;
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
      random01_(random01 ? std::move(random01) : default_random()),
      ids_(id_seed(settings_.id_seed)),
      stateful_(StatefulSettings{settings_.store_limits,
                                 GenerationSettings{settings_.stream_chunks, settings_.default_max_tokens,
                                                    settings_.chunk_interval}},
                ids_, clock_) {
  if (settings_.deployments.empty()) settings_.deployments.push_back(default_deployment());
  const auto now = clock_.now();
  for (const auto& spec : settings_.deployments) {
    deployments_.insert_or_assign(
        spec.name, Deployment{DeploymentQuota(spec.limits, settings_.limiter, now), spec.reasoning_wait});
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
      case Endpoint::Realtime: {
        // Only a WebSocket upgrade opens a session (the server calls admit_realtime for
        // those); here the handshake's checks answer, and an admitted one is told to upgrade.
        auto admission = admit_realtime_locked(route, request);
        response = admission.refusal
                       ? std::move(*admission.refusal)
                       : json_response(426, openai_error_body("426", "Upgrade to a WebSocket."));
        break;
      }
      case Endpoint::Models:
        response = handle_probe(route, request);
        break;
      case Endpoint::Api:
      case Endpoint::Stateful:
      case Endpoint::Messages:
      case Endpoint::NotFound: {
        stats_.record_request(request);
        std::string deployment;
        switch (route.endpoint) {
          case Endpoint::Stateful:
            response = handle_stateful(route, request, deployment);
            break;
          case Endpoint::Messages:
            response = handle_messages(route, request, deployment);
            // Anthropic names every answer, errors included.
            response.headers.emplace_back("request-id", ids_.next("req_", 24));
            break;
          default:
            response = handle_api(route, request, deployment);
        }
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
  const std::string api_version = route.api_version.value_or("");

  if (auto fault = injected_fault(operation_name(route.operation), api_version, &state)) return *fault;
  QuotaState admitted;
  if (auto refusal =
          quota_refusal(state, api.cost(), operation_name(route.operation), api_version, admitted)) {
    return *refusal;
  }

  SimResponse response = serve_success(route, api, name, state);
  add_quota_headers(response, admitted);
  return response;
}

std::optional<SimResponse> SimEngine::injected_fault(std::string_view operation,
                                                     const std::string& api_version, Deployment* state) {
  const double draw = fault_needs_draw(faults_) ? random01_() : 1.0;
  const FaultDecision fault = decide_fault(faults_, draw);
  if (fault.status == 0) return std::nullopt;
  SimResponse response =
      fault.status == 429
          ? json_response(429, rate_limit_body(operation, api_version, RateLimitKind::Requests,
                                               milliseconds(fault.retry_after_ms)))
          : json_response(fault.status, openai_error_body(std::to_string(fault.status),
                                                          "smartlb-sim injected fault (status " +
                                                              std::to_string(fault.status) + ").",
                                                          "server_error"));
  if (state) add_quota_headers(response, state->quota.peek(clock_.now()));
  if (fault.retry_after_ms > 0) add_retry_after(response, milliseconds(fault.retry_after_ms));
  return response;
}

std::optional<SimResponse> SimEngine::quota_refusal(Deployment& state, std::int64_t cost,
                                                    std::string_view operation,
                                                    const std::string& api_version, QuotaState& admitted) {
  const QuotaDecision quota = state.quota.try_consume(cost, clock_.now());
  admitted = quota.state;
  if (quota.admitted()) return std::nullopt;
  const auto kind =
      quota.verdict == QuotaVerdict::TokensExceeded ? RateLimitKind::Tokens : RateLimitKind::Requests;
  auto response = json_response(429, rate_limit_body(operation, api_version, kind, quota.retry_after));
  add_quota_headers(response, quota.state);
  add_retry_after(response, quota.retry_after);
  return response;
}

SimResponse SimEngine::handle_stateful(const Route& route, const SimRequest& request,
                                       std::string& deployment) {
  const std::string_view allowed = StatefulApi::allowed_methods(route);
  bool method_allowed = false;
  for (const auto method : list_entries(allowed)) method_allowed = method_allowed || method == request.method;
  if (!method_allowed) return method_not_allowed(allowed);
  if (route.style == ApiStyle::Azure && !route.api_version) {
    return json_response(400,
                         openai_error_body("BadRequest", "Missing required query parameter 'api-version'."));
  }
  if (!authorized(request)) return json_response(401, unauthorized_body());

  const StatefulPlan plan = stateful_.plan(route, request);
  if (plan.answer) return *plan.answer;
  Deployment* state = nullptr;
  if (!plan.deployment.empty()) {
    const auto found = deployments_.find(plan.deployment);
    if (found == deployments_.end()) return json_response(404, deployment_not_found_body());
    deployment = plan.deployment;
    state = &found->second;
  }
  const std::string api_version = route.api_version.value_or("");
  if (auto fault = injected_fault(plan.operation, api_version, state)) return *fault;
  QuotaState admitted;
  if (state) {
    if (auto refusal = quota_refusal(*state, plan.cost, plan.operation, api_version, admitted))
      return *refusal;
  }

  StoreAnswer answer = stateful_.execute(route, request, plan);
  if (plan.create && !plan.create->background && answer.response.status == 200 && state) {
    answer.response.first_token = first_token_wait(plan.create->prompt_tokens, *state);
  }
  if (state) {
    add_quota_headers(answer.response, admitted);
    if (answer.response.status == 200) stats_.record_tokens(deployment, answer.tokens_served, plan.cost);
  }
  return std::move(answer.response);
}

RealtimeAdmission SimEngine::admit_realtime(const SimRequest& request) {
  const Route route = parse_route(request.target);
  RealtimeAdmission admission;
  {
    std::lock_guard lock(mutex_);
    admission = admit_realtime_locked(route, request);
  }
  if (admission.refusal) admission.refusal->headers.emplace_back("x-sim-name", settings_.name);
  return admission;
}

RealtimeAdmission SimEngine::admit_realtime_locked(const Route& route, const SimRequest& request) {
  stats_.record_request(request);
  RealtimeAdmission admission;
  admission.echo = settings_.realtime_echo;
  const auto refuse = [&](SimResponse response) {
    response.latency = milliseconds(faults_.latency_ms);
    stats_.record_status(response.status, admission.deployment);
    admission.refusal = std::move(response);
    return admission;
  };
  if (route.endpoint != Endpoint::Realtime)
    return refuse(json_response(404, openai_error_body("404", "Resource not found")));
  if (request.method != "GET") return refuse(method_not_allowed("GET"));
  const auto upgrade = find_header(request.headers, "upgrade");
  if (!upgrade || !has_token_ci(*upgrade, "websocket")) {
    auto response = json_response(
        426,
        openai_error_body("426", "The Realtime API is a WebSocket: send an Upgrade: websocket handshake."));
    response.headers.emplace_back("upgrade", "websocket");
    return refuse(std::move(response));
  }
  if (route.style == ApiStyle::Azure && !route.api_version) {
    return refuse(json_response(
        400, openai_error_body("BadRequest", "Missing required query parameter 'api-version'.")));
  }
  if (!websocket_authorized(route, request)) return refuse(json_response(401, unauthorized_body()));
  if (route.deployment.empty()) {
    return refuse(json_response(
        400, openai_error_body("BadRequest", route.style == ApiStyle::Azure
                                                 ? "Missing required query parameter 'deployment'."
                                                 : "Missing required query parameter 'model'.")));
  }
  const auto found = deployments_.find(route.deployment);
  if (found == deployments_.end()) return refuse(json_response(404, deployment_not_found_body()));
  admission.deployment = route.deployment;
  const std::string api_version = route.api_version.value_or("");
  if (auto fault = injected_fault("Realtime_Connect", api_version, &found->second))
    return refuse(std::move(*fault));
  QuotaState admitted;
  if (auto refusal = quota_refusal(found->second, 0, "Realtime_Connect", api_version, admitted)) {
    return refuse(std::move(*refusal));
  }
  admission.subprotocol = chosen_subprotocol(request.headers);
  stats_.record_status(101, admission.deployment);
  return admission;
}

bool SimEngine::websocket_authorized(const Route& route, const SimRequest& request) const {
  bool key_ok = authorized(request);
  if (!key_ok && !settings_.api_key.empty()) {
    key_ok = query_parameter(route.query, "api-key") == settings_.api_key;
    if (const auto offered = find_header(request.headers, "sec-websocket-protocol"); offered && !key_ok) {
      for (const auto entry : list_entries(*offered)) {
        key_ok = key_ok || (entry.starts_with(kKeySubprotocol) &&
                            entry.substr(kKeySubprotocol.size()) == settings_.api_key);
      }
    }
  }
  return key_ok;
}

std::optional<SimResponse> SimEngine::admit_responses_socket(const SimRequest& request) {
  const Route route = parse_route(request.target);
  std::lock_guard lock(mutex_);
  stats_.record_request(request);
  const auto refuse = [&](SimResponse response) {
    response.latency = milliseconds(faults_.latency_ms);
    response.headers.emplace_back("x-sim-name", settings_.name);
    stats_.record_status(response.status, "");
    return std::optional<SimResponse>(std::move(response));
  };
  if (!is_responses_socket_route(route) || request.method != "GET")
    return refuse(json_response(404, openai_error_body("404", "Resource not found")));
  if (!websocket_authorized(route, request)) return refuse(json_response(401, unauthorized_body()));
  if (auto fault = injected_fault("Responses_Connect", route.api_version.value_or(""), nullptr))
    return refuse(std::move(*fault));
  stats_.record_status(101, "");
  return std::nullopt;
}

RealtimeSession SimEngine::open_realtime(const RealtimeAdmission& admission) {
  std::lock_guard lock(mutex_);
  realtime_.sessions += 1;
  realtime_.open += 1;
  return RealtimeSession(
      admission.deployment,
      GenerationSettings{settings_.stream_chunks, settings_.default_max_tokens, settings_.chunk_interval},
      ids_.fork_seed(), clock_.unix_seconds());
}

void SimEngine::record_realtime(const std::string& deployment, std::int64_t from_client,
                                std::int64_t to_client, std::int64_t tokens_served) {
  std::lock_guard lock(mutex_);
  realtime_.client_messages += from_client;
  realtime_.server_messages += to_client;
  if (tokens_served > 0) stats_.record_tokens(deployment, tokens_served, 0);
}

void SimEngine::realtime_closed() {
  std::lock_guard lock(mutex_);
  realtime_.open -= 1;
}

SimResponse SimEngine::serve_success(const Route& route, const ApiRequest& api, const std::string& deployment,
                                     const Deployment& state) {
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
    response.first_token = first_token_wait(api.prompt_tokens, state);
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
  plan_success_faults(response);
  return response;
}

milliseconds SimEngine::first_token_wait(std::int64_t prompt_tokens, const Deployment& state) const {
  return first_token_delay(faults_, prompt_tokens) + state.reasoning_wait;
}

void SimEngine::plan_success_faults(SimResponse& response) {
  if (response.stream)
    response.chunk_interval = std::max(response.chunk_interval, milliseconds(faults_.trickle_ms));
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
}

SimResponse SimEngine::handle_probe(const Route& route, const SimRequest& request) {
  SimResponse response;
  if (request.method != "GET") {
    response = method_not_allowed("GET");
  } else if (route.style == ApiStyle::Azure && !route.api_version) {
    response = json_response(
        400, openai_error_body("BadRequest", "Missing required query parameter 'api-version'."));
  } else if (faults_.force_status >= 500 && faults_.force_count != 0) {
    // A dead backend looks dead to a probe too; peeked, not counted down: force_count counts
    // the API requests a test scripted.
    response = json_response(
        faults_.force_status,
        openai_error_body(std::to_string(faults_.force_status),
                          "smartlb-sim injected fault (status " + std::to_string(faults_.force_status) + ").",
                          "server_error"));
    if (faults_.force_retry_after_ms > 0)
      add_retry_after(response, milliseconds(faults_.force_retry_after_ms));
  } else {
    std::vector<std::string> names;
    for (const auto& [name, deployment] : deployments_) names.push_back(name);
    response = json_response(200, models_list_body(names, clock_.unix_seconds()));
    if (faults_.stall_before_headers) response.stall = milliseconds(faults_.stall_ms);
    response.stall_before_headers = faults_.stall_before_headers;
  }
  stats_.record_probe(response.status);
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
  json["answers_in_flight"] = answers_in_flight_;
  json["answers_in_flight_peak"] = answers_in_flight_peak_;
  json["stores"] = stateful_.stats_json();
  json["realtime"] = {{"sessions", realtime_.sessions},
                      {"open", realtime_.open},
                      {"client_messages", realtime_.client_messages},
                      {"server_messages", realtime_.server_messages}};
  return json;
}

SimResponse SimEngine::handle_reset(const SimRequest& request) {
  if (request.method != "POST") return method_not_allowed("POST");
  stats_.clear();
  answers_in_flight_peak_ = answers_in_flight_;
  faults_ = settings_.faults;
  const auto now = clock_.now();
  for (auto& [name, deployment] : deployments_) deployment.quota.reset(now);
  return json_response(200, R"({"reset":true})");
}

void SimEngine::answer_began() {
  std::lock_guard lock(mutex_);
  answers_in_flight_peak_ = std::max(answers_in_flight_peak_, ++answers_in_flight_);
}

void SimEngine::answer_ended() {
  std::lock_guard lock(mutex_);
  --answers_in_flight_;
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
