#include "smartlb/tracing/otlp_json.hpp"

#include <bit>
#include <charconv>
#include <cstdio>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "smartlb/tracing/trace_context.hpp"

namespace smartlb::tracing {
namespace {

// The length of the valid UTF-8 sequence at s[i], or 0 (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xbf;  // the range of the second byte
  if (c >= 0xc2 && c <= 0xdf) {
    n = 2;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (i + n > s.size() || at(i + 1) < lo || at(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (at(i + k) < 0x80 || at(i + k) > 0xbf) return 0;
  return n;
}

void append_key(std::string& out, std::string_view key) {
  out.push_back('"');
  out.append(key);
  out.append("\":");
}

void append_int_string(std::string& out, std::int64_t v) {  // int64 as a JSON string
  char text[24];
  text[0] = '"';
  char* end = std::to_chars(text + 1, text + sizeof text - 1, v).ptr;
  *end++ = '"';
  out.append(text, end);
}

// A byte a JSON string holds as it is: printable ASCII but the quote and the backslash.
bool plain(unsigned char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }

// The end of the run of plain bytes from s[i]: 16 bytes a step where SSE2 is (signed, a byte
// from 0x80 compares below 0x20 too).
std::size_t plain_run_end(std::string_view s, std::size_t i) {
#if defined(__SSE2__)
  while (s.size() - i >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s.data() + i));
    const __m128i special = _mm_or_si128(
        _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f))),
        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
    if (const int mask = _mm_movemask_epi8(special)) return i + std::countr_zero(static_cast<unsigned>(mask));
    i += 16;
  }
#endif
  while (i < s.size() && plain(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

void append_any_value(std::string& out, const AttributeValue& value) {
  out.push_back('{');
  if (const auto* s = std::get_if<std::string>(&value)) {
    append_key(out, "stringValue");
    append_json_string(out, *s);
  } else if (const auto* i = std::get_if<std::int64_t>(&value)) {
    append_key(out, "intValue");
    append_int_string(out, *i);
  } else if (const auto* d = std::get_if<double>(&value)) {
    append_key(out, "doubleValue");
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", *d);
    out.append(text);
  } else if (const auto* b = std::get_if<bool>(&value)) {
    append_key(out, "boolValue");
    out.append(*b ? "true" : "false");
  } else if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
    out.append("\"arrayValue\":{\"values\":[");
    for (std::size_t k = 0; k < list->size(); ++k) {
      if (k) out.push_back(',');
      out.append("{\"stringValue\":");
      append_json_string(out, (*list)[k]);
      out.push_back('}');
    }
    out.append("]}");
  }
  out.push_back('}');
}

void append_key_value(std::string& out, std::string_view key, const AttributeValue& value) {
  out.append("{\"key\":");
  append_json_string(out, key);
  out.append(",\"value\":");
  append_any_value(out, value);
  out.push_back('}');
}

// A span's attribute: its key is one of span_model's literals, plain ASCII, written as it is.
void append_attribute(std::string& out, const Attribute& a) {
  out.append("{\"key\":\"").append(a.key).append("\",\"value\":");
  append_any_value(out, a.value);
  out.push_back('}');
}

void append_span(std::string& out, const Span& s) {
  out.append("{\"traceId\":\"");
  append_hex(out, s.trace_id);
  out.append("\",\"spanId\":\"");
  append_hex(out, s.span_id);
  out.push_back('"');
  if (s.parent_span_id != telemetry::SpanId{}) {
    out.append(",\"parentSpanId\":\"");
    append_hex(out, s.parent_span_id);
    out.push_back('"');
  }
  if (!s.trace_state.empty()) {
    out.append(",\"traceState\":");
    append_json_string(out, s.trace_state);
  }
  out.append(",\"name\":");
  append_json_string(out, s.name);
  out.append(",\"kind\":").push_back(static_cast<char>('0' + static_cast<int>(s.kind)));  // 2 or 3
  out.append(",\"startTimeUnixNano\":");
  append_int_string(out, s.start_unix_ns);
  out.append(",\"endTimeUnixNano\":");
  append_int_string(out, s.end_unix_ns);
  out.append(",\"attributes\":[");
  for (std::size_t k = 0; k < s.attributes.size(); ++k) {
    if (k) out.push_back(',');
    append_attribute(out, s.attributes[k]);
  }
  out.append("],\"status\":{");
  if (s.status != SpanStatus::Unset)
    out.append("\"code\":").push_back(static_cast<char>('0' + static_cast<int>(s.status)));  // 1 or 2
  out.append("}}");
}

}  // namespace

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (std::size_t i = 0; i < text.size();) {
    // Runs of plain bytes (most of every text) are appended whole.
    const std::size_t run = plain_run_end(text, i);
    out.append(text.data() + i, run - i);
    if ((i = run) == text.size()) break;
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x80) {
      const std::size_t n = utf8_length(text, i);
      if (n == 0) {
        out.append("\\ufffd");
        ++i;
      } else {
        out.append(text.substr(i, n));
        i += n;
      }
      continue;
    }
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f) {
      out.append("\\u00");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    } else {
      out.push_back(static_cast<char>(c));
    }
    ++i;
  }
  out.push_back('"');
}

void append_export_request(std::string& out, const Resource& resource, std::span<const Span> spans) {
  out.reserve(out.size() + 1024 + spans.size() * 1536);  // a span is about 1 kB: few regrowths
  out.append("{\"resourceSpans\":[{\"resource\":{\"attributes\":[");
  for (std::size_t k = 0; k < resource.attributes.size(); ++k) {
    if (k) out.push_back(',');
    append_key_value(out, resource.attributes[k].first, resource.attributes[k].second);
  }
  out.append("]},\"scopeSpans\":[{\"scope\":{\"name\":");
  append_json_string(out, resource.scope_name);
  if (!resource.scope_version.empty()) {
    out.append(",\"version\":");
    append_json_string(out, resource.scope_version);
  }
  out.append("},\"spans\":[");
  for (std::size_t k = 0; k < spans.size(); ++k) {
    if (k) out.push_back(',');
    append_span(out, spans[k]);
  }
  out.append("]}]}]}");
}

}  // namespace smartlb::tracing
