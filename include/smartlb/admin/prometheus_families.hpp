#pragma once
// Every metric family /metrics shows, declared once (name, type, help, label names) beside
// where its samples come from, and the generic rendering of them all. A new metric is one entry
// of the table in prometheus_families.cpp; docs/observability.md lists every family.
#include <cstdint>
#include <span>
#include <string>

#include "smartlb/admin/pool_snapshot.hpp"
#include "smartlb/admin/prometheus_text.hpp"
#include "smartlb/telemetry/metrics.hpp"

namespace smartlb::admin {

// What a family's samples are read from: one metrics snapshot and one pool snapshot.
struct Scrape;

struct PrometheusFamily {
  enum class Shown : std::uint8_t {
    Always,
    WithRedis,    // only with REDIS_URL (MetricsSnapshot::redis.enabled)
    WithTracing,  // only with tracing on (MetricsSnapshot::tracing.enabled)
  };
  MetricFamily family;
  void (*collect)(const Scrape& scrape, PrometheusWriter::Samples& out);
  Shown shown = Shown::Always;
};

// The families in the order /metrics writes them.
std::span<const PrometheusFamily> prometheus_families();

// The Prometheus text exposition format (version 0.0.4) of every family shown.
std::string render_prometheus(const telemetry::MetricsSnapshot& m, const PoolSnapshot& p);

}  // namespace smartlb::admin
