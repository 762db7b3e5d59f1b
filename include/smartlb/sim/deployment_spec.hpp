#pragma once
// A simulated deployment and its quota, from the --deployment NAME:TPM[:RPM] flag.

#include "smartlb/sim/deployment_quota.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace smartlb::sim {

struct DeploymentSpec {
  std::string name;
  QuotaLimits limits;
};

/// "NAME:TPM:RPM", or "NAME:TPM" with Azure's default ratio of 6 RPM per 1000 TPM (at least 1).
/// Returns nullopt (and sets `error`) when malformed.
std::optional<DeploymentSpec> parse_deployment_spec(std::string_view text, std::string& error);

/// The deployment used when none is given: gpt-4o with 1e9 TPM and 1e6 RPM.
DeploymentSpec default_deployment();

}  // namespace smartlb::sim
