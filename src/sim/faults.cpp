#include "smartlb/sim/faults.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include <nlohmann/json.hpp>

namespace smartlb::sim {
namespace {

constexpr int kMaxDelayMs = 24 * 60 * 60 * 1000;

bool is_status(int value) { return value >= 100 && value <= 599; }

// Reads an integer field into `out` if it lies in [low, high]; returns an error otherwise.
std::string read_int(const nlohmann::json& value, const std::string& name, int low, int high, int& out) {
  if (!value.is_number_integer()) return "'" + name + "' must be an integer";
  const auto number = value.get<long long>();
  if (number < low || number > high) {
    return "'" + name + "' must be between " + std::to_string(low) + " and " + std::to_string(high);
  }
  out = static_cast<int>(number);
  return {};
}

std::string read_rate(const nlohmann::json& value, const std::string& name, double& out) {
  if (!value.is_number() || value.get<double>() < 0.0 || value.get<double>() > 1.0) {
    return "'" + name + "' must be a number between 0 and 1";
  }
  out = value.get<double>();
  return {};
}

std::string read_milliseconds(const nlohmann::json& value, const std::string& name, double& out) {
  if (!value.is_number() || value.get<double>() < 0.0 || value.get<double>() > kMaxDelayMs) {
    return "'" + name + "' must be a number of milliseconds between 0 and " + std::to_string(kMaxDelayMs);
  }
  out = value.get<double>();
  return {};
}

std::string read_status(const nlohmann::json& value, const std::string& name, bool allow_zero, int& out) {
  int status = 0;
  if (auto error = read_int(value, name, 0, 599, status); !error.empty()) return error;
  if (!(is_status(status) || (allow_zero && status == 0))) {
    return "'" + name + "' must be an HTTP status (100-599)" + (allow_zero ? " or 0" : "");
  }
  out = status;
  return {};
}

}  // namespace

nlohmann::json faults_to_json(const FaultConfig& faults) {
  return {
      {"latency_ms", faults.latency_ms},
      {"error_rate", faults.error_rate},
      {"error_status", faults.error_status},
      {"reset_after_chunks", faults.reset_after_chunks},
      {"stall_ms", faults.stall_ms},
      {"stall_before_headers", faults.stall_before_headers},
      {"stall_after_chunks", faults.stall_after_chunks},
      {"force_status", faults.force_status},
      {"force_retry_after_ms", faults.force_retry_after_ms},
      {"force_count", faults.force_count},
      {"reset_rate", faults.reset_rate},
      {"first_token_ms", faults.first_token_ms},
      {"first_token_ms_per_1k_prompt_tokens", faults.first_token_ms_per_1k_prompt_tokens},
      {"trickle_ms", faults.trickle_ms},
  };
}

std::string merge_faults(FaultConfig& faults, const nlohmann::json& patch) {
  if (!patch.is_object()) return "the faults body must be a JSON object";
  FaultConfig updated = faults;
  for (const auto& [name, value] : patch.items()) {
    std::string error;
    if (name == "latency_ms") {
      error = read_int(value, name, 0, kMaxDelayMs, updated.latency_ms);
    } else if (name == "error_rate") {
      error = read_rate(value, name, updated.error_rate);
    } else if (name == "error_status") {
      error = read_status(value, name, false, updated.error_status);
    } else if (name == "reset_after_chunks") {
      error = read_int(value, name, -1, std::numeric_limits<int>::max(), updated.reset_after_chunks);
    } else if (name == "stall_ms") {
      error = read_int(value, name, 0, kMaxDelayMs, updated.stall_ms);
    } else if (name == "stall_before_headers") {
      if (!value.is_boolean()) {
        error = "'stall_before_headers' must be a boolean";
      } else {
        updated.stall_before_headers = value.get<bool>();
      }
    } else if (name == "trickle_ms") {
      error = read_int(value, name, 0, kMaxDelayMs, updated.trickle_ms);
    } else if (name == "stall_after_chunks") {
      error = read_int(value, name, 0, std::numeric_limits<int>::max(), updated.stall_after_chunks);
    } else if (name == "force_status") {
      error = read_status(value, name, true, updated.force_status);
    } else if (name == "force_retry_after_ms") {
      error = read_int(value, name, 0, kMaxDelayMs, updated.force_retry_after_ms);
    } else if (name == "force_count") {
      error = read_int(value, name, -1, std::numeric_limits<int>::max(), updated.force_count);
    } else if (name == "reset_rate") {
      error = read_rate(value, name, updated.reset_rate);
    } else if (name == "first_token_ms") {
      error = read_int(value, name, 0, kMaxDelayMs, updated.first_token_ms);
    } else if (name == "first_token_ms_per_1k_prompt_tokens") {
      error = read_milliseconds(value, name, updated.first_token_ms_per_1k_prompt_tokens);
    } else {
      error = "unknown fault '" + name + "'";
    }
    if (!error.empty()) return error;
  }
  faults = updated;
  return {};
}

std::chrono::milliseconds first_token_delay(const FaultConfig& faults, std::int64_t prompt_tokens) {
  const double ms = faults.first_token_ms +
                    faults.first_token_ms_per_1k_prompt_tokens * static_cast<double>(prompt_tokens) / 1000.0;
  return std::chrono::milliseconds(std::llround(std::min(ms, static_cast<double>(kMaxDelayMs))));
}

FaultDecision decide_fault(FaultConfig& faults, double uniform_draw) {
  FaultDecision decision;
  if (faults.force_status != 0 && faults.force_count != 0) {
    if (faults.force_count > 0) --faults.force_count;
    decision.status = faults.force_status;
    decision.forced = true;
    decision.retry_after_ms = faults.force_retry_after_ms;
    if (decision.status == 429 && decision.retry_after_ms == 0) decision.retry_after_ms = 1000;
    return decision;
  }
  if (faults.error_rate > 0.0 && uniform_draw < faults.error_rate) {
    decision.status = faults.error_status;
  }
  return decision;
}

}  // namespace smartlb::sim
