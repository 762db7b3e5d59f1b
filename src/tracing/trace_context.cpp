#include "smartlb/tracing/trace_context.hpp"

#include <algorithm>
#include <vector>

#include "smartlb/base/text.hpp"

namespace smartlb::tracing {
namespace {

// `text` (2 * N lower-case hex digits) into `out`; false when it is not hex.
template <std::size_t N>
bool read_hex(std::string_view text, std::array<std::uint8_t, N>& out) {
  for (std::size_t i = 0; i < N; ++i) {
    const int hi = base::lower_hex_digit_value(text[2 * i]),
              lo = base::lower_hex_digit_value(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<std::uint8_t>(hi * 16 + lo);
  }
  return true;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& id) {
  return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

void put_u64(std::uint8_t* out, std::uint64_t v) {
  for (int i = 7; i >= 0; --i, v >>= 8) out[i] = static_cast<std::uint8_t>(v & 0xff);
}

std::uint64_t random_u64(base::RandomSource& rng) { return rng.below(~std::uint64_t{0}); }

bool lcalpha(char c) { return c >= 'a' && c <= 'z'; }
bool digit(char c) { return c >= '0' && c <= '9'; }
bool key_char(char c) { return lcalpha(c) || digit(c) || c == '_' || c == '-' || c == '*' || c == '/'; }

// simple-key = lcalpha 0*255(keychar); multi-tenant-key = tenant-id "@" system-id, tenant-id =
// (lcalpha / DIGIT) 0*240(keychar), system-id = lcalpha 0*13(keychar).
bool valid_key(std::string_view key) {
  const std::size_t at = key.find('@');
  const auto all_key_chars = [](std::string_view s) { return std::all_of(s.begin(), s.end(), key_char); };
  if (at == std::string_view::npos)
    return !key.empty() && key.size() <= 256 && lcalpha(key[0]) && all_key_chars(key);
  const std::string_view tenant = key.substr(0, at), system = key.substr(at + 1);
  return !tenant.empty() && tenant.size() <= 241 && (lcalpha(tenant[0]) || digit(tenant[0])) &&
         all_key_chars(tenant) && !system.empty() && system.size() <= 14 && lcalpha(system[0]) &&
         all_key_chars(system);
}

// value = 0*255(chr) nblk-chr; chr = %x20 / nblk-chr; nblk-chr = %x21-2B / %x2D-3C / %x3E-7E.
bool valid_value(std::string_view value) {
  if (value.empty() || value.size() > 256 || value.back() == ' ') return false;
  return std::all_of(value.begin(), value.end(),
                     [](char c) { return c >= 0x20 && c <= 0x7e && c != ',' && c != '='; });
}

}  // namespace

std::optional<TraceParent> parse_traceparent(std::string_view v) {
  // version "-" trace-id "-" parent-id "-" trace-flags: 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55.
  if (v.size() < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-') return std::nullopt;
  std::array<std::uint8_t, 1> version{};
  if (!read_hex(v.substr(0, 2), version) || version[0] == 0xff) return std::nullopt;
  if (version[0] == 0 && v.size() != 55) return std::nullopt;
  if (version[0] != 0 && v.size() > 55 && v[55] != '-') return std::nullopt;
  TraceParent p;
  std::array<std::uint8_t, 1> flags{};
  if (!read_hex(v.substr(3, 32), p.trace_id) || !read_hex(v.substr(36, 16), p.parent_id) ||
      !read_hex(v.substr(53, 2), flags))
    return std::nullopt;
  if (all_zero(p.trace_id) || all_zero(p.parent_id)) return std::nullopt;
  p.flags = flags[0];
  return p;
}

std::string checked_tracestate(std::span<const std::string_view> fields) {
  struct Member {
    std::string_view text;  // key=value, trimmed
    std::string_view key;
  };
  std::vector<Member> members;
  std::size_t combined = 0;  // the length of the fields joined by commas
  for (const std::string_view field : fields) {
    combined += field.size() + (combined ? 1 : 0);
    std::size_t begin = 0;
    for (;;) {
      const std::size_t comma = std::min(field.find(',', begin), field.size());
      const std::string_view m = base::trim_ows(field.substr(begin, comma - begin));
      if (!m.empty()) {  // empty members (OWS between commas) are allowed
        const std::size_t eq = m.find('=');
        if (eq == std::string_view::npos || !valid_key(m.substr(0, eq)) || !valid_value(m.substr(eq + 1)))
          return {};
        if (members.size() == kTraceStateMaxMembers) return {};
        const std::string_view key = m.substr(0, eq);
        for (const Member& other : members)
          if (other.key == key) return {};
        members.push_back({m, key});
      }
      if (comma == field.size()) break;
      begin = comma + 1;
    }
  }
  if (combined <= kTraceStateMaxBytes) {  // unchanged, as the client sent it
    if (members.empty()) return {};
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) out.push_back(',');
      out.append(fields[i]);
    }
    return out;
  }
  // Too long: members over 128 characters go first, then members from the right.
  const auto length = [&] {
    std::size_t n = 0;
    for (const Member& m : members) n += m.text.size() + (n ? 1 : 0);
    return n;
  };
  for (std::size_t i = members.size(); i-- > 0 && length() > kTraceStateMaxBytes;)
    if (members[i].text.size() > 128) members.erase(members.begin() + static_cast<std::ptrdiff_t>(i));
  while (length() > kTraceStateMaxBytes) members.pop_back();
  std::string out;
  for (const Member& m : members) {
    if (!out.empty()) out.push_back(',');
    out.append(m.text);
  }
  return out;
}

telemetry::TraceId new_trace_id(base::RandomSource& rng) {
  telemetry::TraceId id{};
  while (all_zero(id)) {
    put_u64(id.data(), random_u64(rng));
    put_u64(id.data() + 8, random_u64(rng));
  }
  return id;
}

telemetry::SpanId new_span_id(base::RandomSource& rng) {
  telemetry::SpanId id{};
  while (all_zero(id)) put_u64(id.data(), random_u64(rng));
  return id;
}

namespace {

char* write_hex(char* p, std::span<const std::uint8_t> bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (const std::uint8_t b : bytes) {
    *p++ = kHex[b >> 4];
    *p++ = kHex[b & 0xf];
  }
  return p;
}

}  // namespace

void append_hex(std::string& out, std::span<const std::uint8_t> bytes) {
  char
      text[2 * sizeof(telemetry::TraceId)];  // written here and appended once: one size check, not two a byte
  out.append(text, write_hex(text, bytes.first(std::min(bytes.size(), sizeof(telemetry::TraceId)))));
}

void append_trace_fields(std::string& out, const telemetry::TraceId& trace, const telemetry::SpanId& span,
                         bool sampled, std::string_view tracestate) {
  static constexpr std::string_view kName = "traceparent: 00-", kSampled = "-01\r\n", kNotSampled = "-00\r\n";
  char line[kName.size() + 2 * sizeof(telemetry::TraceId) + 1 + 2 * sizeof(telemetry::SpanId) +
            kSampled.size()];
  char* p = std::copy(kName.begin(), kName.end(), line);
  p = write_hex(p, trace);
  *p++ = '-';
  p = write_hex(p, span);
  const std::string_view flags = sampled ? kSampled : kNotSampled;
  p = std::copy(flags.begin(), flags.end(), p);
  out.append(line, p);
  if (tracestate.empty()) return;
  out.append("tracestate: ").append(tracestate).append("\r\n");
}

}  // namespace smartlb::tracing
