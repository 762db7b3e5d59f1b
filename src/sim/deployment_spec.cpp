#include "smartlb/sim/deployment_spec.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

namespace smartlb::sim {
namespace {

constexpr std::int64_t kMaxLimit = 1'000'000'000'000;  // keeps window scaling far from overflow

bool parse_limit(std::string_view text, std::int64_t& out) {
  if (text.empty()) return false;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc{} && ptr == end && out >= 0 && out <= kMaxLimit;
}

}  // namespace

std::optional<DeploymentSpec> parse_deployment_spec(std::string_view text, std::string& error) {
  std::vector<std::string_view> parts;
  while (true) {
    const auto colon = text.find(':');
    parts.push_back(text.substr(0, colon));
    if (colon == std::string_view::npos) break;
    text.remove_prefix(colon + 1);
  }
  if (parts.size() < 2 || parts.size() > 3) {
    error = "expected NAME:TPM:RPM or NAME:TPM";
    return std::nullopt;
  }
  if (parts[0].empty() || parts[0].find('/') != std::string_view::npos ||
      parts[0].find('?') != std::string_view::npos) {
    error = "deployment name must be non-empty and contain no '/' or '?'";
    return std::nullopt;
  }
  DeploymentSpec spec;
  spec.name = std::string(parts[0]);
  if (!parse_limit(parts[1], spec.limits.tokens_per_minute)) {
    error = "TPM must be an integer between 0 and 1e12";
    return std::nullopt;
  }
  if (parts.size() == 3) {
    if (!parse_limit(parts[2], spec.limits.requests_per_minute)) {
      error = "RPM must be an integer between 0 and 1e12";
      return std::nullopt;
    }
  } else {
    const auto derived = spec.limits.tokens_per_minute * 6 / 1000;
    spec.limits.requests_per_minute = spec.limits.tokens_per_minute > 0 && derived < 1 ? 1 : derived;
  }
  return spec;
}

std::optional<ReasoningSpec> parse_reasoning_spec(std::string_view text, std::string& error) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    error = "expected NAME:SECONDS";
    return std::nullopt;
  }
  const std::string seconds_text(text.substr(colon + 1));
  char* end = nullptr;
  const double seconds = seconds_text.empty() ? -1.0 : std::strtod(seconds_text.c_str(), &end);
  if (seconds_text.empty() || end != seconds_text.c_str() + seconds_text.size() || !(seconds >= 0.0) ||
      seconds > 86400.0) {
    error = "SECONDS must be a number between 0 and 86400";
    return std::nullopt;
  }
  return ReasoningSpec{std::string(text.substr(0, colon)),
                       std::chrono::milliseconds(std::llround(seconds * 1000.0))};
}

DeploymentSpec default_deployment() {
  return DeploymentSpec{"gpt-4o", QuotaLimits{1'000'000'000, 1'000'000}, {}};
}

}  // namespace smartlb::sim
