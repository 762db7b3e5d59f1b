// OTEL_* variables: off without an endpoint, the endpoint rules, headers and resource lists,
// the sampler, the protocol and every bad value refused naming its variable (never a header's
// value).
#include "smartlb/tracing/trace_config.hpp"

#include <gtest/gtest.h>

#include "smartlb/config/env_settings.hpp"

namespace smartlb::tracing {
namespace trace_config_test {  // named, not anonymous: tests/CMakeLists.txt

bool mentions(const std::vector<std::string>& errors, std::string_view text) {
  for (const auto& e : errors)
    if (e.find(text) != std::string::npos) return true;
  return false;
}

TEST(TraceConfig, OffWithoutAnEndpointWhateverElseIsSet) {
  const auto r =
      load_trace_config({{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"}, {"OTEL_TRACES_SAMPLER", "bogus"}});
  ASSERT_TRUE(r.config) << (r.errors.empty() ? "" : r.errors[0]);
  EXPECT_FALSE(r.config->enabled());
  EXPECT_TRUE(r.errors.empty());
}

TEST(TraceConfig, DisabledOrExporterNoneTurnsItOff) {
  EXPECT_FALSE(
      load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_SDK_DISABLED", "TRUE"}})
          .config->enabled());
  EXPECT_FALSE(
      load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_TRACES_EXPORTER", "none"}})
          .config->enabled());
  const auto bad = load_trace_config({{"OTEL_TRACES_EXPORTER", "zipkin"}, {"OTEL_SDK_DISABLED", "yes"}});
  EXPECT_FALSE(bad.config);
  EXPECT_TRUE(mentions(bad.errors, "OTEL_TRACES_EXPORTER"));
  EXPECT_TRUE(mentions(bad.errors, "OTEL_SDK_DISABLED"));
}

TEST(TraceConfig, TheGeneralEndpointGetsV1TracesTheTracesOneIsUsedAsItIs) {
  EXPECT_EQ(load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"}}).config->endpoint,
            "http://collector:4318/v1/traces");
  EXPECT_EQ(load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://c.example/otlp/"}}).config->endpoint,
            "https://c.example/otlp/v1/traces");
  EXPECT_EQ(load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318"},
                               {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:9999/custom"}})
                .config->endpoint,
            "http://b:9999/custom");
}

TEST(TraceConfig, ABadEndpointIsRefusedNamingItsVariable) {
  for (const std::string bad : {"collector:4318", "ftp://c", "http://user:pw@c:4318", "http://c:99999"}) {
    const auto r = load_trace_config({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", bad}});
    EXPECT_FALSE(r.config) << bad;
    EXPECT_TRUE(mentions(r.errors, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: ")) << bad;
    EXPECT_FALSE(mentions(r.errors, "pw@")) << bad;
  }
}

TEST(TraceConfig, HeadersAreDecodedAndTheirValuesNeverShown) {
  const auto r = load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                                    {"OTEL_EXPORTER_OTLP_HEADERS", "api-key=s%20ecret , x-tenant=a%2Cb"}});
  ASSERT_TRUE(r.config);
  ASSERT_EQ(r.config->headers.size(), 2u);
  EXPECT_EQ(r.config->headers[0], (std::pair<std::string, std::string>{"api-key", "s ecret"}));
  EXPECT_EQ(r.config->headers[1], (std::pair<std::string, std::string>{"x-tenant", "a,b"}));
  // The traces variable replaces the general one.
  const auto traces = load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                                         {"OTEL_EXPORTER_OTLP_HEADERS", "a=1"},
                                         {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "b=2"}});
  ASSERT_EQ(traces.config->headers.size(), 1u);
  EXPECT_EQ(traces.config->headers[0].first, "b");
  for (const std::string bad : {"api-key=SECRET%zz", "nokeySECRET", "bad name=SECRET", "k=SECRET%0a"}) {
    const auto r2 = load_trace_config(
        {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_EXPORTER_OTLP_HEADERS", bad}});
    EXPECT_FALSE(r2.config) << bad;
    EXPECT_TRUE(mentions(r2.errors, "OTEL_EXPORTER_OTLP_HEADERS: entry 1")) << bad;
    EXPECT_FALSE(mentions(r2.errors, "SECRET")) << bad;
  }
}

TEST(TraceConfig, ProtocolsOtherThanHttpJsonAreRefused) {
  for (const std::string p : {"grpc", "http/protobuf", "json"}) {
    const auto r = load_trace_config(
        {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_EXPORTER_OTLP_PROTOCOL", p}});
    EXPECT_FALSE(r.config) << p;
    EXPECT_TRUE(
        mentions(r.errors, "OTEL_EXPORTER_OTLP_PROTOCOL: smartlb exports OTLP over HTTP as JSON only"))
        << p;
  }
  EXPECT_TRUE(load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                                 {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"}})
                  .config);
  const auto gz = load_trace_config(
      {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"}});
  EXPECT_TRUE(mentions(gz.errors, "OTEL_EXPORTER_OTLP_COMPRESSION"));
  const auto mtls = load_trace_config(
      {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_EXPORTER_OTLP_CLIENT_KEY", "/k.pem"}});
  EXPECT_TRUE(mentions(mtls.errors, "OTEL_EXPORTER_OTLP_CLIENT_KEY"));
  const auto ca = load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://c:4318"},
                                     {"OTEL_EXPORTER_OTLP_CERTIFICATE", "/no/such/ca.pem"}});
  EXPECT_TRUE(mentions(ca.errors, "OTEL_EXPORTER_OTLP_CERTIFICATE: cannot read"));
}

TEST(TraceConfig, TimeoutsAndBatchLimits) {
  const auto r = load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                                    {"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
                                    {"OTEL_BSP_SCHEDULE_DELAY", "100"},
                                    {"OTEL_BSP_MAX_QUEUE_SIZE", "64"},
                                    {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "16"}});
  ASSERT_TRUE(r.config);
  EXPECT_EQ(r.config->timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(r.config->schedule_delay, std::chrono::milliseconds(100));
  EXPECT_EQ(r.config->max_queue_spans, 64u);
  EXPECT_EQ(r.config->max_batch_spans, 16u);
  const TraceConfig defaults = *load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}}).config;
  EXPECT_EQ(defaults.timeout, std::chrono::milliseconds(10'000));
  EXPECT_EQ(defaults.schedule_delay, std::chrono::milliseconds(5'000));
  EXPECT_EQ(defaults.max_queue_spans, 2048u);
  EXPECT_EQ(defaults.max_batch_spans, 512u);
  const auto bad = load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                                      {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "10s"},
                                      {"OTEL_BSP_MAX_QUEUE_SIZE", "8"},
                                      {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "16"},
                                      {"OTEL_BSP_SCHEDULE_DELAY", "0"}});
  EXPECT_FALSE(bad.config);
  EXPECT_TRUE(mentions(bad.errors, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"));
  EXPECT_TRUE(mentions(bad.errors, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must not exceed"));
  EXPECT_TRUE(mentions(bad.errors, "OTEL_BSP_SCHEDULE_DELAY"));
}

TEST(TraceConfig, TheSamplerAndItsArgument) {
  const auto base = config::EnvMap{{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}};
  EXPECT_EQ(load_trace_config(base).config->sampler.kind, SamplerKind::ParentBasedAlwaysOn);
  auto env = base;
  env["OTEL_TRACES_SAMPLER"] = "parentbased_traceidratio";
  env["OTEL_TRACES_SAMPLER_ARG"] = "0.01";
  const auto r = load_trace_config(env);
  EXPECT_EQ(r.config->sampler.kind, SamplerKind::ParentBasedTraceIdRatio);
  EXPECT_DOUBLE_EQ(r.config->sampler.ratio, 0.01);
  env["OTEL_TRACES_SAMPLER"] = "traceidratio";
  env.erase("OTEL_TRACES_SAMPLER_ARG");
  EXPECT_DOUBLE_EQ(load_trace_config(env).config->sampler.ratio, 1.0);  // the spec's default
  for (const std::string bad : {"1.5", "-0.1", "half", "0.5x"}) {
    env["OTEL_TRACES_SAMPLER_ARG"] = bad;
    EXPECT_TRUE(mentions(load_trace_config(env).errors, "OTEL_TRACES_SAMPLER_ARG: must be a ratio")) << bad;
  }
  env["OTEL_TRACES_SAMPLER"] = "always_on";
  env["OTEL_TRACES_SAMPLER_ARG"] = "0.5";
  const auto ignored = load_trace_config(env);
  EXPECT_TRUE(ignored.config);
  EXPECT_TRUE(mentions(ignored.warnings, "OTEL_TRACES_SAMPLER_ARG is ignored"));
  env["OTEL_TRACES_SAMPLER"] = "jaeger_remote";
  EXPECT_TRUE(mentions(load_trace_config(env).errors, "OTEL_TRACES_SAMPLER: unknown sampler"));
}

TEST(TraceConfig, TheResourceServiceNameWinsOverTheListAndValuesAreDecoded) {
  const auto r = load_trace_config(
      {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
       {"OTEL_RESOURCE_ATTRIBUTES", "service.name=listed,deployment.environment=prod%20eu,service.version=9"},
       {"OTEL_SERVICE_NAME", "gateway"}});
  ASSERT_TRUE(r.config);
  const auto& res = r.config->resource;
  ASSERT_GE(res.size(), 3u);
  EXPECT_EQ(res[0], (std::pair<std::string, std::string>{"service.name", "gateway"}));
  EXPECT_EQ(res[1], (std::pair<std::string, std::string>{"deployment.environment", "prod eu"}));
  EXPECT_EQ(res[2], (std::pair<std::string, std::string>{"service.version", "9"}));
  const auto listed = load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"},
                                         {"OTEL_RESOURCE_ATTRIBUTES", "service.name=listed"}});
  EXPECT_EQ(listed.config->resource[0].second, "listed");
  const auto plain = load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}});
  EXPECT_EQ(plain.config->resource[0].second, "smartlb");
  EXPECT_EQ(plain.config->resource[1].first, "service.version");
  const auto bad = load_trace_config(
      {{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}, {"OTEL_RESOURCE_ATTRIBUTES", "a=1,b=%4"}});
  EXPECT_FALSE(bad.config);
  EXPECT_TRUE(mentions(bad.errors, "OTEL_RESOURCE_ATTRIBUTES: entry 2 (b) has a bad percent-encoding"));
}

// --help's table (config/env_settings) shows the defaults this loader applies.
TEST(TraceConfig, TheDefaultsHelpShowsAreTheLoaders) {
  const TraceConfig d = *load_trace_config({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}}).config;
  const auto shown = [](std::string_view name) {
    const config::EnvSetting* s = config::find_env_setting(name);
    return s ? std::string(s->default_text) : "<not in the table>";
  };
  EXPECT_EQ(shown("OTEL_EXPORTER_OTLP_TIMEOUT"), std::to_string(d.timeout.count()));
  EXPECT_EQ(shown("OTEL_BSP_SCHEDULE_DELAY"), std::to_string(d.schedule_delay.count()));
  EXPECT_EQ(shown("OTEL_BSP_MAX_QUEUE_SIZE"), std::to_string(d.max_queue_spans));
  EXPECT_EQ(shown("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"), std::to_string(d.max_batch_spans));
  EXPECT_EQ(shown("OTEL_TRACES_SAMPLER"), to_string(d.sampler.kind));
  EXPECT_EQ(shown("OTEL_TRACES_SAMPLER_ARG"), "1.0");
  EXPECT_DOUBLE_EQ(d.sampler.ratio, 1.0);
  EXPECT_EQ(shown("OTEL_SERVICE_NAME"), d.resource[0].second);
}

TEST(KeyValueList, EmptyEntriesAreSkippedAndKeysTrimmed) {
  std::vector<std::pair<std::string, std::string>> out;
  EXPECT_FALSE(parse_key_value_list(" a = 1 ,, b=2=3,", out));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::pair<std::string, std::string>{"a", "1"}));
  EXPECT_EQ(out[1], (std::pair<std::string, std::string>{"b", "2=3"}));
  EXPECT_EQ(parse_key_value_list("=1", out), "entry 1 has an empty key");
}

}  // namespace trace_config_test
}  // namespace smartlb::tracing
