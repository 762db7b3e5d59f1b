#include "smartlb/tracing/sampler.hpp"

#include <array>

namespace smartlb::tracing {
namespace {

struct Named {
  SamplerKind kind;
  std::string_view name;
};
constexpr std::array<Named, 6> kNames = {{
    {SamplerKind::AlwaysOn, "always_on"},
    {SamplerKind::AlwaysOff, "always_off"},
    {SamplerKind::TraceIdRatio, "traceidratio"},
    {SamplerKind::ParentBasedAlwaysOn, "parentbased_always_on"},
    {SamplerKind::ParentBasedAlwaysOff, "parentbased_always_off"},
    {SamplerKind::ParentBasedTraceIdRatio, "parentbased_traceidratio"},
}};

}  // namespace

std::string_view to_string(SamplerKind k) {
  for (const Named& n : kNames)
    if (n.kind == k) return n.name;
  return "?";
}

std::optional<SamplerKind> parse_sampler_kind(std::string_view name) {
  for (const Named& n : kNames)
    if (n.name == name) return n.kind;
  return std::nullopt;
}

bool takes_ratio(SamplerKind k) {
  return k == SamplerKind::TraceIdRatio || k == SamplerKind::ParentBasedTraceIdRatio;
}

Sampler::Sampler(SamplerConfig config) : config_(config) {
  // 2^63 * ratio, as an integer; a ratio of 1 keeps every id (the bound is then past them all).
  if (config.ratio >= 1.0)
    ratio_bound_ = std::uint64_t{1} << 63;
  else if (config.ratio > 0.0)
    ratio_bound_ = static_cast<std::uint64_t>(config.ratio * 9223372036854775808.0);
}

bool Sampler::root_decision(const telemetry::TraceId& id) const {
  switch (config_.kind) {
    case SamplerKind::AlwaysOn:
    case SamplerKind::ParentBasedAlwaysOn:
      return true;
    case SamplerKind::AlwaysOff:
    case SamplerKind::ParentBasedAlwaysOff:
      return false;
    case SamplerKind::TraceIdRatio:
    case SamplerKind::ParentBasedTraceIdRatio:
      break;
  }
  std::uint64_t low = 0;
  for (std::size_t i = 8; i < 16; ++i) low = (low << 8) | id[i];
  return (low >> 1) < ratio_bound_;
}

bool Sampler::sample(const telemetry::TraceId& trace_id, std::optional<bool> parent_sampled) const {
  const bool parent_based = config_.kind == SamplerKind::ParentBasedAlwaysOn ||
                            config_.kind == SamplerKind::ParentBasedAlwaysOff ||
                            config_.kind == SamplerKind::ParentBasedTraceIdRatio;
  if (parent_based && parent_sampled) return *parent_sampled;
  return root_decision(trace_id);
}

}  // namespace smartlb::tracing
