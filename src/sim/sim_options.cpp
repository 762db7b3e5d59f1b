#include "smartlb/sim/sim_options.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <functional>
#include <map>
#include <string_view>

namespace smartlb::sim {
namespace {

bool parse_int(std::string_view text, long long low, long long high, long long& out) {
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return !text.empty() && ec == std::errc{} && ptr == end && out >= low && out <= high;
}

bool parse_double(const std::string& text, double low, double high, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && out >= low && out <= high;
}

constexpr long long kMaxMs = 24LL * 60 * 60 * 1000;

}  // namespace

std::string sim_usage() {
  return R"(smartlb-sim: simulated Azure OpenAI / OpenAI backend for tests, demos and benchmarks.

Usage: smartlb-sim [options]          (--flag value or --flag=value)

Server:
  --listen ADDR               address to bind (default 127.0.0.1)
  --port N                    port, 0 = ephemeral (default 0)
  --threads N                 I/O threads (default 1)
  --name NAME                 name in the x-sim-name response header and logs (default sim)
  --log-level LEVEL           trace|debug|info|warn|error|off (default info, to stderr)
  --max-body-bytes N          larger request bodies are answered 413 (default 33554432)

Behaviour:
  --deployment NAME:TPM:RPM   a deployment and its per-minute quotas; repeatable. NAME:TPM
                              uses 6 RPM per 1000 TPM. Default: gpt-4o:1000000000:1000000
  --window-seconds S          quota window length, may be fractional (default 60); the
                              per-minute limits are scaled to it
  --limiter MODEL             how quotas are enforced (default fixed):
                                fixed    fixed windows of --window-seconds
                                sliding  what was admitted in the last --window-seconds
                                bucket   token bucket refilling limit/window per second,
                                         holding --burst-seconds of refill
  --burst-seconds S           bucket capacity, in seconds of refill (default 1)
  --limit-header WHAT         what x-ratelimit-limit-* states: capacity (what the limiter
                              holds, default) or window (the limit per window, which for a
                              bucket is not what it holds)
  --rpm-interval-seconds S    limit requests per fixed S-second interval to RPM*S/60 (at
                              least 1), apart from tokens, like Azure. Default: requests
                              are limited like tokens
  --report-jitter F           multiply each reported remaining by a uniform draw in
                              [1-F, 1+F], rounded, at least 0 (default 0)
  --report-unknown-rate P     probability 0..1 that an answer reports -1 for remaining
                              and limit (default 0)
  --api-key KEY               expected key (api-key header or Authorization: Bearer; the
                              Messages API also takes x-api-key); mismatch = 401. Health
                              probes (GET .../models) are not checked. Default: no check
  --stream-chunks N           content chunks per answer, capped by max_tokens; 0 = derive
                              from max_tokens, at most 256 (default 5)
  --chunk-interval-ms N       pause before each streamed content chunk (default 0)
  --default-max-tokens N      max_tokens charged when the request has none (default 16)
  --reasoning-deployment NAME:SECONDS
                              make deployment NAME think like a reasoning model: SECONDS
                              (fractional allowed) before its first content (a stream sends
                              its head and opening events at once); repeatable

Stateful APIs (Responses, Files, Batches; each sim knows only the ids it created):
  --store-max-objects N       objects each store keeps: responses, files, batches
                              (default 10000)
  --store-max-bytes N         bytes each store keeps (stored input and text of responses,
                              file contents) (default 268435456). Full: the oldest responses
                              are dropped (as if expired); an upload or a batch that does not
                              fit is refused (400 store_full; 413 when larger than the store)
  --realtime-echo             realtime WebSocket sessions answer every message at once with
                              the same bytes (for frame-latency benchmarks), instead of the
                              Realtime protocol

Faults (also settable at runtime with POST /_sim/faults):
  --latency-ms N              delay before the headers of every API answer
  --error-rate R              probability 0..1 of answering --error-status instead
  --error-status N            status for --error-rate (default 500)
  --reset-after-chunks N      TCP reset after N SSE events (0 = right after the headers)
  --reset-rate R              probability 0..1 of a TCP reset (streams: mid-stream; else before headers)
  --stall-ms N                stop sending for N ms (after the headers by default)
  --stall-before-headers      stall before the headers instead
  --stall-after-chunks N      streams: stall after N SSE events (default 0)
  --trickle-ms N              streams: content events at least N ms apart (a slow trickle)
  --force-status N            answer every API request with status N (e.g. 429)
  --force-retry-after-ms N    Retry-After of forced answers (429 default: 1000)
  --force-count N             only force the next N requests (default -1 = all)
  --first-token-ms N          wait before the first content of generated answers (streams:
                              before the first content event; others: before the head)
  --first-token-ms-per-1k-prompt-tokens N
                              add N ms (fractional allowed) per 1000 estimated prompt tokens

API: chat/completions, completions, embeddings; responses, files, batches; realtime
(WebSocket). Paths /openai/deployments/{d}/..., /openai/...?api-version=V, /openai/v1/...,
/v1/... Anthropic's Messages API: /v1/messages, /anthropic/v1/messages (and .../count_tokens).
Health probes: GET .../models, answered without a key check (see docs/simulator.md).
Control endpoints: GET|POST /_sim/faults, GET /_sim/stats, POST /_sim/reset.
On start prints "smartlb-sim listening on ADDR:PORT" to stdout. Exits 0 on SIGINT/SIGTERM.
  -h, --help                  this text
)";
}

namespace {

// Flags taking a value: a handler returns an error message, or "" when it took the value.
using Handler = std::function<std::string(const std::string&)>;
using FlagTable = std::map<std::string, Handler, std::less<>>;

template <class Assign>
Handler int_flag(long long low, long long high, Assign assign) {
  return [=](const std::string& value) -> std::string {
    long long number = 0;
    if (!parse_int(value, low, high, number)) {
      return "expects an integer between " + std::to_string(low) + " and " + std::to_string(high);
    }
    assign(number);
    return {};
  };
}

Handler status_flag(int& slot, bool allow_zero) {
  return [&slot, allow_zero](const std::string& value) -> std::string {
    long long number = 0;
    if (!parse_int(value, 0, 599, number) || (number < 100 && !(allow_zero && number == 0))) {
      return "expects an HTTP status (100-599)";
    }
    slot = static_cast<int>(number);
    return {};
  };
}

// Seconds, fractional allowed, stored as whole milliseconds.
Handler seconds_flag(std::chrono::milliseconds& slot) {
  return [&slot](const std::string& value) -> std::string {
    double seconds = 0;
    if (!parse_double(value, 0.001, 86400.0, seconds)) return "expects seconds between 0.001 and 86400";
    slot = std::chrono::milliseconds(static_cast<long long>(seconds * 1000.0 + 0.5));
    return {};
  };
}

Handler milliseconds_flag(double& slot) {
  return [&slot](const std::string& value) -> std::string {
    if (!parse_double(value, 0.0, static_cast<double>(kMaxMs), slot)) {
      return "expects milliseconds between 0 and " + std::to_string(kMaxMs);
    }
    return {};
  };
}

Handler fraction_flag(double& slot) {
  return [&slot](const std::string& value) -> std::string {
    if (!parse_double(value, 0.0, 1.0, slot)) return "expects a number between 0 and 1";
    return {};
  };
}

// capacity|window: what the limit headers state (LimiterSettings::limit_header_per_window).
Handler limit_header_flag(bool& per_window) {
  return [&per_window](const std::string& v) -> std::string {
    if (v != "capacity" && v != "window") return "expects capacity|window";
    per_window = v == "window";
    return {};
  };
}

// Every flag that takes a value, writing into `options` (and `reasoning`: applied to the
// deployments once all are known).
FlagTable value_flags(SimOptions& options, std::vector<ReasoningSpec>& reasoning) {
  SimSettings& settings = options.settings;
  FaultConfig& faults = settings.faults;
  LimiterSettings& limiter = settings.limiter;

  return {
      {"--listen",
       [&](const std::string& v) {
         options.listen = v;
         return std::string();
       }},
      {"--port", int_flag(0, 65535, [&](long long n) { options.port = static_cast<std::uint16_t>(n); })},
      {"--threads", int_flag(1, 256, [&](long long n) { options.threads = static_cast<int>(n); })},
      {"--max-body-bytes",
       int_flag(1, 1LL << 40, [&](long long n) { options.max_body_bytes = static_cast<std::size_t>(n); })},
      {"--store-max-objects",
       int_flag(0, 100'000'000,
                [&](long long n) { settings.store_limits.max_objects = static_cast<std::size_t>(n); })},
      {"--store-max-bytes",
       int_flag(0, 1LL << 40,
                [&](long long n) { settings.store_limits.max_bytes = static_cast<std::size_t>(n); })},
      {"--name",
       [&](const std::string& v) {
         settings.name = v;
         return std::string();
       }},
      {"--log-level",
       [&](const std::string& v) -> std::string {
         static const char* const kLevels[] = {"trace", "debug", "info", "warn", "error", "critical", "off"};
         for (const char* level : kLevels) {
           if (v == level) {
             options.log_level = v;
             return {};
           }
         }
         return "expects trace|debug|info|warn|error|critical|off";
       }},
      {"--deployment",
       [&](const std::string& v) -> std::string {
         std::string error;
         auto spec = parse_deployment_spec(v, error);
         if (!spec) return error;
         settings.deployments.push_back(std::move(*spec));
         return {};
       }},
      {"--reasoning-deployment",
       [&](const std::string& v) -> std::string {
         std::string error;
         auto spec = parse_reasoning_spec(v, error);
         if (!spec) return error;
         reasoning.push_back(std::move(*spec));
         return {};
       }},
      {"--window-seconds", seconds_flag(limiter.window)},
      {"--limiter",
       [&](const std::string& v) -> std::string {
         for (const auto kind : {LimiterKind::Fixed, LimiterKind::Sliding, LimiterKind::Bucket}) {
           if (v == limiter_kind_name(kind)) {
             limiter.kind = kind;
             return {};
           }
         }
         return "expects fixed|sliding|bucket";
       }},
      {"--burst-seconds", seconds_flag(limiter.burst)},
      {"--limit-header", limit_header_flag(limiter.limit_header_per_window)},
      {"--rpm-interval-seconds",
       [&](const std::string& v) -> std::string {
         std::chrono::milliseconds interval{0};
         if (auto error = seconds_flag(interval)(v); !error.empty()) return error;
         limiter.rpm_interval = interval;
         return {};
       }},
      {"--report-jitter", fraction_flag(settings.reports.jitter)},
      {"--report-unknown-rate", fraction_flag(settings.reports.unknown_rate)},
      {"--api-key",
       [&](const std::string& v) {
         settings.api_key = v;
         return std::string();
       }},
      {"--stream-chunks",
       int_flag(0, 100000, [&](long long n) { settings.stream_chunks = static_cast<int>(n); })},
      {"--chunk-interval-ms",
       int_flag(0, kMaxMs, [&](long long n) { settings.chunk_interval = std::chrono::milliseconds(n); })},
      {"--default-max-tokens",
       int_flag(1, 1'000'000'000, [&](long long n) { settings.default_max_tokens = n; })},
      {"--latency-ms", int_flag(0, kMaxMs, [&](long long n) { faults.latency_ms = static_cast<int>(n); })},
      {"--error-rate", fraction_flag(faults.error_rate)},
      {"--error-status", status_flag(faults.error_status, false)},
      {"--reset-after-chunks",
       int_flag(-1, 1'000'000'000, [&](long long n) { faults.reset_after_chunks = static_cast<int>(n); })},
      {"--reset-rate", fraction_flag(faults.reset_rate)},
      {"--stall-ms", int_flag(0, kMaxMs, [&](long long n) { faults.stall_ms = static_cast<int>(n); })},
      {"--trickle-ms", int_flag(0, kMaxMs, [&](long long n) { faults.trickle_ms = static_cast<int>(n); })},
      {"--stall-after-chunks",
       int_flag(0, 1'000'000'000, [&](long long n) { faults.stall_after_chunks = static_cast<int>(n); })},
      {"--force-status", status_flag(faults.force_status, true)},
      {"--force-retry-after-ms",
       int_flag(0, kMaxMs, [&](long long n) { faults.force_retry_after_ms = static_cast<int>(n); })},
      {"--force-count",
       int_flag(-1, 1'000'000'000, [&](long long n) { faults.force_count = static_cast<int>(n); })},
      {"--first-token-ms",
       int_flag(0, kMaxMs, [&](long long n) { faults.first_token_ms = static_cast<int>(n); })},
      {"--first-token-ms-per-1k-prompt-tokens",
       milliseconds_flag(faults.first_token_ms_per_1k_prompt_tokens)},
  };
}

}  // namespace

SimOptionsParse parse_sim_options(const std::vector<std::string>& args) {
  SimOptionsParse result;
  SimOptions& options = result.options;
  SimSettings& settings = options.settings;
  FaultConfig& faults = settings.faults;
  std::vector<ReasoningSpec> reasoning;
  const FlagTable with_value = value_flags(options, reasoning);

  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::optional<std::string> inline_value;
    if (const auto eq = flag.find('='); flag.starts_with("--") && eq != std::string::npos) {
      inline_value = flag.substr(eq + 1);
      flag.resize(eq);
    }
    if (flag == "-h" || flag == "--help") {
      result.show_help = true;
      continue;
    }
    if (flag == "--stall-before-headers" || flag == "--realtime-echo") {
      if (inline_value) {
        result.error = flag + " takes no value";
        return result;
      }
      (flag == "--realtime-echo" ? settings.realtime_echo : faults.stall_before_headers) = true;
      continue;
    }
    const auto handler = with_value.find(flag);
    if (handler == with_value.end()) {
      result.error = "unknown option '" + flag + "'";
      return result;
    }
    std::string value;
    if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      result.error = flag + " needs a value";
      return result;
    }
    if (auto error = handler->second(value); !error.empty()) {
      result.error = flag + ": " + error + " (got '" + value + "')";
      return result;
    }
  }
  if (settings.deployments.empty()) settings.deployments.push_back(default_deployment());
  for (const ReasoningSpec& spec : reasoning) {
    const auto named = std::find_if(settings.deployments.begin(), settings.deployments.end(),
                                    [&](const DeploymentSpec& d) { return d.name == spec.deployment; });
    if (named == settings.deployments.end()) {
      result.error = "--reasoning-deployment: no deployment '" + spec.deployment + "' (see --deployment)";
      return result;
    }
    named->reasoning_wait = spec.wait;
  }
  return result;
}

}  // namespace smartlb::sim
