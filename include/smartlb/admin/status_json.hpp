#pragma once
// The /status document: the pool snapshot and the metrics snapshot as one JSON object
// (docs/observability.md describes its fields). A pure function of its inputs.
#include <nlohmann/json.hpp>

#include "smartlb/admin/pool_snapshot.hpp"
#include "smartlb/redis/redis_service.hpp"
#include "smartlb/telemetry/metrics.hpp"

namespace smartlb::admin {

// The /status document (without "history", which the admin listener adds).
nlohmann::json build_status(const telemetry::MetricsSnapshot& m, const PoolSnapshot& p);
// /status's "redis" object (the URL without its password).
nlohmann::json redis_json(const redis::RedisStatus& r);

}  // namespace smartlb::admin
