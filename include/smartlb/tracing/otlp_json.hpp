#pragma once
// OTLP/HTTP's JSON body: an ExportTraceServiceRequest in the protobuf-JSON mapping that OTLP
// specifies (ids as lower-case hex, not base64; 64-bit integers as strings; enums as numbers;
// lowerCamelCase field names). Written by hand, as text: one pass, no DOM.
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smartlb/tracing/span_model.hpp"

namespace smartlb::tracing {

// Who sent the spans: the resource's attributes (service.name first) and the instrumentation
// scope.
struct Resource {
  std::vector<std::pair<std::string, std::string>> attributes;
  std::string scope_name = "smartlb";
  std::string scope_version;
};

// {"resourceSpans":[{"resource":{...},"scopeSpans":[{"scope":{...},"spans":[...]}]}]}
void append_export_request(std::string& out, const Resource& resource, std::span<const Span> spans);

// A JSON string of `text`: quotes, backslashes and control characters escaped, and any byte
// that is not part of valid UTF-8 replaced by U+FFFD (OTLP strings are UTF-8; a client's path
// need not be).
void append_json_string(std::string& out, std::string_view text);

}  // namespace smartlb::tracing
