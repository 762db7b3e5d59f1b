#include "smartlb/tracing/trace_config.hpp"

#include <algorithm>
#include <charconv>
#include <fstream>

#include "smartlb/base/text.hpp"
#include "smartlb/base/version.hpp"
#include "smartlb/config/url.hpp"

namespace smartlb::tracing {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; });
  return out;
}

bool percent_decode(std::string_view in, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out.push_back(in[i]);
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = base::hex_digit_value(in[i + 1]), lo = base::hex_digit_value(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return true;
}

bool is_token_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// The value of the signal's own variable when it is set, else the general one's, with the name
// of the one it came from.
struct Setting {
  std::string name;
  std::string value;
  bool set = false;
};
Setting either(const config::EnvMap& env, const std::string& traces_name, const std::string& general_name) {
  for (const std::string& name : {traces_name, general_name})
    if (const auto it = env.find(name); it != env.end() && !it->second.empty())
      return {name, it->second, true};
  return {general_name, {}, false};
}

std::string get(const config::EnvMap& env, const std::string& name) {
  const auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

// A whole number of milliseconds in [1, max], or an error.
void read_millis(const Setting& s, std::int64_t max, std::chrono::milliseconds& out,
                 std::vector<std::string>& errors) {
  if (!s.set) return;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.value.data(), s.value.data() + s.value.size(), v);
  if (ec != std::errc() || end != s.value.data() + s.value.size() || v < 1 || v > max) {
    errors.push_back(s.name + ": must be a whole number of milliseconds from 1 to " + std::to_string(max) +
                     " (got \"" + s.value.substr(0, 40) + "\")");
    return;
  }
  out = std::chrono::milliseconds(v);
}

void read_count(const config::EnvMap& env, const std::string& name, std::size_t& out,
                std::vector<std::string>& errors) {
  const std::string text = get(env, name);
  if (text.empty()) return;
  std::size_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > 1'000'000) {
    errors.push_back(name + ": must be a whole number from 1 to 1000000 (got \"" + text.substr(0, 40) +
                     "\")");
    return;
  }
  out = v;
}

// The endpoint: the traces variable as it is, or the general one with /v1/traces.
void load_endpoint(const config::EnvMap& env, TraceConfig& c, std::vector<std::string>& errors) {
  Setting s = either(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT");
  std::string url = s.value;
  if (s.name == "OTEL_EXPORTER_OTLP_ENDPOINT") {
    while (!url.empty() && url.back() == '/') url.pop_back();
    url += "/v1/traces";
  }
  const std::size_t scheme = url.find("://");
  const std::size_t authority_end = url.find('/', scheme == std::string::npos ? 0 : scheme + 3);
  if (url.substr(0, authority_end).find('@') != std::string::npos) {
    errors.push_back(s.name +
                     ": must not contain credentials (user@host); put them in OTEL_EXPORTER_OTLP_HEADERS");
    return;
  }
  if (const auto parsed = config::parse_backend_url(url); !parsed.url) {
    errors.push_back(s.name + ": " + parsed.error + " (got \"" + s.value.substr(0, 80) + "\")");
    return;
  }
  c.endpoint = url;
}

void load_headers(const config::EnvMap& env, TraceConfig& c, std::vector<std::string>& errors) {
  const Setting s = either(env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS");
  if (!s.set) return;
  if (const auto problem = parse_key_value_list(s.value, c.headers)) {
    errors.push_back(s.name + ": " + *problem);
    c.headers.clear();
    return;
  }
  for (std::size_t i = 0; i < c.headers.size(); ++i) {
    const auto& [name, value] = c.headers[i];
    const std::string entry = "entry " + std::to_string(i + 1) + " (" + name.substr(0, 40) + ")";
    if (!std::all_of(name.begin(), name.end(), is_token_char))
      errors.push_back(s.name + ": " + entry + " is not a valid header name");
    else if (std::any_of(value.begin(), value.end(), [](char ch) {
               return (static_cast<unsigned char>(ch) < 0x20 && ch != '\t') || ch == 0x7f;
             }))
      errors.push_back(s.name + ": " + entry + " has a control character in its value (value not shown)");
  }
}

void load_transport(const config::EnvMap& env, TraceConfig& c, std::vector<std::string>& errors) {
  const Setting protocol = either(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL");
  if (protocol.set && protocol.value != "http/json") {
    const bool known = protocol.value == "grpc" || protocol.value == "http/protobuf";
    errors.push_back(
        protocol.name + ": smartlb exports OTLP over HTTP as JSON only; set it to http/json (or unset it)" +
        (known ? std::string(" -- a collector's OTLP/HTTP receiver takes JSON on the same port as protobuf")
               : " (got \"" + protocol.value.substr(0, 40) + "\")"));
  }
  read_millis(either(env, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"), 600'000,
              c.timeout, errors);
  const Setting compression =
      either(env, "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION");
  if (compression.set && compression.value != "none")
    errors.push_back(compression.name + ": smartlb sends spans uncompressed; set it to none (or unset it)");
  for (const auto& [traces, general] :
       {std::pair<std::string, std::string>{"OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
                                            "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
        {"OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"}})
    if (const Setting s = either(env, traces, general); s.set)
      errors.push_back(s.name +
                       ": client certificates (mTLS) to the collector are not supported; use "
                       "OTEL_EXPORTER_OTLP_HEADERS for a token");
  const Setting ca = either(env, "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE");
  if (ca.set) {
    if (!std::ifstream(ca.value).good())
      errors.push_back(ca.name + ": cannot read the file \"" + ca.value.substr(0, 200) + "\"");
    c.certificate_file = ca.value;
  }
}

void load_sampler(const config::EnvMap& env, TraceConfig& c, std::vector<std::string>& errors,
                  std::vector<std::string>& warnings) {
  const std::string name = get(env, "OTEL_TRACES_SAMPLER"), arg = get(env, "OTEL_TRACES_SAMPLER_ARG");
  if (!name.empty()) {
    const auto kind = parse_sampler_kind(base::trim_ows(name));
    if (!kind) {
      errors.push_back("OTEL_TRACES_SAMPLER: unknown sampler \"" + name.substr(0, 40) +
                       "\"; one of always_on, always_off, traceidratio, parentbased_always_on (the default), "
                       "parentbased_always_off, parentbased_traceidratio");
      return;
    }
    c.sampler.kind = *kind;
  }
  if (arg.empty()) return;
  if (!takes_ratio(c.sampler.kind)) {
    warnings.push_back("OTEL_TRACES_SAMPLER_ARG is ignored: " + std::string(to_string(c.sampler.kind)) +
                       " takes no argument");
    return;
  }
  double ratio = -1;
  const std::string_view t = base::trim_ows(arg);
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), ratio);
  if (ec != std::errc() || end != t.data() + t.size() || !(ratio >= 0.0 && ratio <= 1.0)) {
    errors.push_back("OTEL_TRACES_SAMPLER_ARG: must be a ratio from 0 to 1, such as 0.01 (got \"" +
                     arg.substr(0, 40) + "\")");
    return;
  }
  c.sampler.ratio = ratio;
}

void load_resource(const config::EnvMap& env, TraceConfig& c, std::vector<std::string>& errors) {
  std::vector<std::pair<std::string, std::string>> listed;
  if (const std::string text = get(env, "OTEL_RESOURCE_ATTRIBUTES"); !text.empty())
    if (const auto problem = parse_key_value_list(text, listed)) {
      errors.push_back("OTEL_RESOURCE_ATTRIBUTES: " + *problem);
      return;
    }
  const auto find = [&](std::string_view key) -> const std::string* {
    for (const auto& [k, v] : listed)
      if (k == key) return &v;
    return nullptr;
  };
  std::string service = get(env, "OTEL_SERVICE_NAME");
  if (service.empty()) service = find("service.name") ? *find("service.name") : "smartlb";
  c.resource.clear();
  c.resource.emplace_back("service.name", service);
  if (!find("service.version")) c.resource.emplace_back("service.version", kVersion);
  for (auto& kv : listed)
    if (kv.first != "service.name") c.resource.push_back(std::move(kv));
  c.resource.emplace_back("telemetry.sdk.name", "smartlb");
  c.resource.emplace_back("telemetry.sdk.language", "cpp");
  c.resource.emplace_back("telemetry.sdk.version", kVersion);
}

void load_batching(const config::EnvMap& env, TraceConfig& c, std::vector<std::string>& errors) {
  read_count(env, "OTEL_BSP_MAX_QUEUE_SIZE", c.max_queue_spans, errors);
  read_count(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", c.max_batch_spans, errors);
  if (c.max_batch_spans > c.max_queue_spans)
    errors.push_back("OTEL_BSP_MAX_EXPORT_BATCH_SIZE: must not exceed OTEL_BSP_MAX_QUEUE_SIZE (" +
                     std::to_string(c.max_queue_spans) + ")");
  const std::string delay = get(env, "OTEL_BSP_SCHEDULE_DELAY");
  read_millis({"OTEL_BSP_SCHEDULE_DELAY", delay, !delay.empty()}, 3'600'000, c.schedule_delay, errors);
}

}  // namespace

std::optional<std::string> parse_key_value_list(std::string_view text,
                                                std::vector<std::pair<std::string, std::string>>& out) {
  out.clear();
  std::size_t begin = 0, entry = 0;
  for (;;) {
    const std::size_t comma = std::min(text.find(',', begin), text.size());
    const std::string_view item = base::trim_ows(text.substr(begin, comma - begin));
    ++entry;
    if (!item.empty()) {
      const std::size_t eq = item.find('=');
      const std::string where = "entry " + std::to_string(entry);
      if (eq == std::string_view::npos) return where + " is not key=value";
      const std::string_view key = base::trim_ows(item.substr(0, eq));
      if (key.empty()) return where + " has an empty key";
      if (std::any_of(key.begin(), key.end(),
                      [](char c) { return static_cast<unsigned char>(c) <= ' ' || c == 0x7f; }))
        return where + " has a space or control character in its key";
      std::string value;
      if (!percent_decode(base::trim_ows(item.substr(eq + 1)), value))
        return where + " (" + std::string(key.substr(0, 40)) + ") has a bad percent-encoding in its value";
      out.emplace_back(std::string(key), std::move(value));
    }
    if (comma == text.size()) return std::nullopt;
    begin = comma + 1;
  }
}

TraceConfigResult load_trace_config(const config::EnvMap& env) {
  TraceConfigResult r;
  TraceConfig c;
  const std::string disabled = lower(base::trim_ows(get(env, "OTEL_SDK_DISABLED")));
  const std::string exporter = lower(base::trim_ows(get(env, "OTEL_TRACES_EXPORTER")));
  const bool endpoint_set =
      either(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT").set;
  if (!disabled.empty() && disabled != "true" && disabled != "false")
    r.errors.push_back("OTEL_SDK_DISABLED: must be true or false (got \"" + disabled.substr(0, 40) + "\")");
  if (!exporter.empty() && exporter != "otlp" && exporter != "none")
    r.errors.push_back("OTEL_TRACES_EXPORTER: smartlb exports otlp (or none); got \"" +
                       exporter.substr(0, 40) + "\"");
  if (disabled == "true" || exporter == "none" || !endpoint_set || !r.errors.empty()) {
    if (r.errors.empty()) r.config = TraceConfig{};
    return r;
  }
  load_endpoint(env, c, r.errors);
  load_headers(env, c, r.errors);
  load_transport(env, c, r.errors);
  load_sampler(env, c, r.errors, r.warnings);
  load_resource(env, c, r.errors);
  load_batching(env, c, r.errors);
  if (r.errors.empty()) r.config = std::move(c);
  return r;
}

}  // namespace smartlb::tracing
