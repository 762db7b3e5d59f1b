// The readers of what a client or the environment says about tracing: parse_traceparent,
// checked_tracestate and load_trace_config (tracing/). The input is split at '\n': the first
// line is a traceparent value; the next lines, up to an empty one, tracestate fields; the rest
// KEY=VALUE lines of an environment. Invariants: a traceparent read is written back as one that
// reads the same; a tracestate passed on is at most 512 characters and passes unchanged again;
// every error of the settings names an OTEL_ variable, and never quotes a header's value.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/tracing/trace_config.hpp"
#include "smartlb/tracing/trace_context.hpp"

namespace {

std::string_view next_line(std::string_view& rest) {
  const auto nl = rest.find('\n');
  const std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smartlb;
  using namespace smartlb::tracing;
  std::string_view rest(reinterpret_cast<const char*>(data), size);

  if (const auto p = parse_traceparent(next_line(rest))) {
    std::string fields;
    append_trace_fields(fields, p->trace_id, p->parent_id, p->sampled(), "");
    const std::string_view value = std::string_view(fields).substr(13, 55);  // "traceparent: " ... "\r\n"
    const auto again = parse_traceparent(value);
    if (!again || again->trace_id != p->trace_id || again->parent_id != p->parent_id ||
        again->sampled() != p->sampled())
      __builtin_trap();
  }

  std::vector<std::string_view> states;
  while (!rest.empty()) {
    const std::string_view line = next_line(rest);
    if (line.empty()) break;
    states.push_back(line);
  }
  const std::string state = checked_tracestate(states);
  if (state.size() > kTraceStateMaxBytes) __builtin_trap();
  if (!state.empty()) {
    const std::string_view one[] = {state};
    if (checked_tracestate(one) != state) __builtin_trap();
  }

  config::EnvMap env;
  while (!rest.empty()) {
    const std::string_view line = next_line(rest);
    const auto eq = line.find('=');
    if (eq != std::string_view::npos) env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  const TraceConfigResult r = load_trace_config(env);
  if (r.config.has_value() != r.errors.empty()) __builtin_trap();
  for (const std::string& e : r.errors)
    if (e.rfind("OTEL_", 0) != 0) __builtin_trap();
  // A header's value never shows. Checked by its first run of bytes past ASCII, which no
  // message's own text has, so that a match can only be a quote (a match of the whole value could
  // straddle a message's words and a quoted name).
  for (const char* name : {"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}) {
    const auto it = env.find(name);
    if (it == env.end()) continue;
    std::vector<std::pair<std::string, std::string>> headers;
    if (parse_key_value_list(it->second, headers)) continue;
    for (const auto& [key, value] : headers) {
      const auto high = [](char c) { return static_cast<unsigned char>(c) >= 0x80; };
      const auto begin = std::find_if(value.begin(), value.end(), high);
      const std::string run(begin, std::find_if_not(begin, value.end(), high));
      if (run.size() < 2) continue;
      // (Unless the same bytes are also in a header's name or another variable's value, which an
      // error may quote.)
      bool elsewhere = false;
      for (const auto& kv : headers) elsewhere = elsewhere || kv.first.find(run) != std::string::npos;
      for (const auto& [other, text] : env)
        elsewhere = elsewhere || (other != name && text.find(run) != std::string::npos);
      for (const std::string& e : r.errors)
        if (!elsewhere && e.find(run) != std::string::npos) __builtin_trap();
    }
  }
  return 0;
}
