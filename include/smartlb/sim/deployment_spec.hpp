#pragma once
// A simulated deployment and its quota, from the --deployment NAME:TPM[:RPM] flag, and how
// long it thinks before its first content (--reasoning-deployment NAME:SECONDS).

#include "smartlb/sim/deployment_quota.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::sim {

struct DeploymentSpec {
  std::string name;
  QuotaLimits limits;
  /// Like a reasoning model: the wait before the first content of each answer (a stream's head
  /// and opening events are sent at once), on top of the first-token faults.
  std::chrono::milliseconds reasoning_wait{0};
};

struct ReasoningSpec {
  std::string deployment;
  std::chrono::milliseconds wait{0};
};

/// "NAME:TPM:RPM", or "NAME:TPM" with Azure's default ratio of 6 RPM per 1000 TPM (at least 1).
/// Returns nullopt (and sets `error`) when malformed.
std::optional<DeploymentSpec> parse_deployment_spec(std::string_view text, std::string& error);

/// "NAME:SECONDS" (fractional allowed, 0 to 86400). Returns nullopt (and sets `error`) when
/// malformed.
std::optional<ReasoningSpec> parse_reasoning_spec(std::string_view text, std::string& error);

/// The deployment used when none is given: gpt-4o with 1e9 TPM and 1e6 RPM.
DeploymentSpec default_deployment();

}  // namespace smartlb::sim
