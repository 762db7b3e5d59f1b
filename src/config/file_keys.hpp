#pragma once
// The keys each section of the config file takes: what its reader accepts (any other key is an
// error), what config_file_keys() lists, and what tests/config holds config/smartlb.schema.json
// to. Private to the config module.
#include <string_view>

namespace smartlb::config::file {

inline constexpr std::string_view kTopKeys[] = {
    "name",           "type",           "backends",      "targets",         "clients", "rules",
    "model_configs",  "subject_limits", "redis",         "token_issuers",   "admin",   "prices",
    "virtual_models", "integrations",   "collaborators", "priority_classes"};
inline constexpr std::string_view kPriorityClassKeys[] = {"name", "reserve_percent", "subjects",
                                                          "max_queue_seconds", "max_queue_length"};
inline constexpr std::string_view kPricesKeys[] = {"currency", "models"};
inline constexpr std::string_view kModelPriceKeys[] = {"model", "aliases", "input", "cached_input", "output"};
inline constexpr std::string_view kRedisKeys[] = {"url", "key_prefix", "ca_file", "timeout_ms", "replica_id"};
inline constexpr std::string_view kAdminKeys[] = {"tokens", "metrics_open"};
inline constexpr std::string_view kAdminTokenKeys[] = {"name", "role", "token"};
inline constexpr std::string_view kBackendKeys[] = {"name",
                                                    "url",
                                                    "api_key",
                                                    "auth",
                                                    "priority",
                                                    "weight",
                                                    "tpm",
                                                    "rpm",
                                                    "deployment_name",
                                                    "entra",
                                                    "quota_group",
                                                    "resource",
                                                    "health_probe_seconds",
                                                    "health_probe_path"};
inline constexpr std::string_view kEntraKeys[] = {"source", "scope", "client_id"};
inline constexpr std::string_view kTargetKeys[] = {"id",    "backend", "deployment",
                                                   "model", "aliases", "quota_group"};
inline constexpr std::string_view kClientKeys[] = {"name",     "key",    "key_sha256",
                                                   "subjects", "limits", "priority_class"};
inline constexpr std::string_view kClientLimitKeys[] = {
    "tokens_per_minute", "requests_per_minute", "tokens_per_day", "tokens_per_month",
    "cost_per_day",      "cost_per_month",      "max_in_flight"};
inline constexpr std::string_view kSubjectLimitKeys[] = {"subject", "shared", "limits"};
inline constexpr std::string_view kTokenIssuerKeys[] = {
    "name",           "tenant_id",     "audiences",         "required_roles",
    "authority_host", "discovery_url", "clock_skew_seconds"};
inline constexpr std::string_view kRuleKeys[] = {
    "id", "type", "when", "load_balance_targets", "config", "affinity", "slow_start_seconds"};
inline constexpr std::string_view kWhenKeys[] = {"subjects", "models", "metadata"};
inline constexpr std::string_view kRuleTargetKeys[] = {"target",
                                                       "weight",
                                                       "priority",
                                                       "override_params",
                                                       "retry_config",
                                                       "fallback_status_codes",
                                                       "fallback_candidate",
                                                       "sla_cutoff",
                                                       "headers_override",
                                                       "timeout_ms"};
inline constexpr std::string_view kRetryConfigKeys[] = {"attempts", "delay", "on_status_codes"};
// TrueFoundry's virtual models: a provider account of type provider-account/virtual-model, its
// integrations each a virtual model with its routing_config.
inline constexpr std::string_view kVirtualAccountKeys[] = {"name", "type", "integrations", "collaborators"};
inline constexpr std::string_view kVirtualModelKeys[] = {"name", "type", "model_types", "routing_config",
                                                         "slug"};
inline constexpr std::string_view kRoutingConfigKeys[] = {"type", "load_balance_targets", "sticky_routing"};
inline constexpr std::string_view kStickyKeys[] = {"ttl_seconds", "session_identifiers"};
inline constexpr std::string_view kSessionIdentifierKeys[] = {"key", "source"};
inline constexpr std::string_view kLatencyConfigKeys[] = {"lookback_window_minutes",
                                                          "allowed_latency_overhead_percentage"};
inline constexpr std::string_view kModelConfigKeys[] = {"model", "usage_limits", "failure_tolerance",
                                                        "first_token_timeout_seconds"};
inline constexpr std::string_view kUsageLimitKeys[] = {"tokens_per_minute", "requests_per_minute"};
inline constexpr std::string_view kToleranceKeys[] = {"allowed_failures_per_minute",
                                                      "cooldown_period_minutes"};

}  // namespace smartlb::config::file
