#include "smartlb/stateful/resource_tag.hpp"

namespace smartlb::stateful {
namespace {

constexpr std::string_view kDigits = "abcdefghijklmnopqrstuvwxyz234567";  // RFC 4648 base32, lower case

// The value of one base32 digit, or -1.
int digit_value(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= '2' && c <= '7') return c - '2' + 26;
  return -1;
}

char lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr std::size_t kMaxIdBytes = 256;

}  // namespace

std::string default_resource(bool tls, std::string_view host, std::uint16_t port,
                             std::string_view base_path) {
  for (const std::string_view prefix :
       {std::string_view("/openai/v1"), std::string_view("/openai"), std::string_view("/v1")})
    if (base_path.ends_with(prefix)) {
      base_path.remove_suffix(prefix.size());
      break;
    }
  while (base_path.ends_with('/')) base_path.remove_suffix(1);
  std::string out = tls ? "https://" : "http://";
  const bool ipv6 = host.find(':') != std::string_view::npos;
  if (ipv6) out.push_back('[');
  for (const char c : host) out.push_back(lower_ascii(c));
  if (ipv6) out.push_back(']');
  if (port != (tls ? 443 : 80)) out.append(":").append(std::to_string(port));
  out.append(base_path);
  return out;
}

std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

ResourceTag tag_from_bits(std::uint64_t bits) {
  ResourceTag t;
  t.bits = bits & kTagBitsMask;
  std::size_t i = 0;
  for (const char c : kTagMark) t.text[i++] = c;
  for (std::size_t d = 0; d < kTagDigits; ++d)  // most significant digit first
    t.text[i++] = kDigits[(t.bits >> (5 * (kTagDigits - 1 - d))) & 31];
  return t;
}

// The high bits: FNV's multiplication carries every byte's influence upwards, so they are the
// better mixed.
ResourceTag resource_tag(std::string_view canonical) { return tag_from_bits(fnv1a64(canonical) >> 24); }

std::optional<std::uint64_t> trailing_tag(std::string_view value) {
  if (value.size() <= kTagSize) return std::nullopt;
  const std::string_view tail = value.substr(value.size() - kTagSize);
  if (tail.substr(0, kTagMark.size()) != kTagMark) return std::nullopt;
  std::uint64_t bits = 0;
  for (const char c : tail.substr(kTagMark.size())) {
    const int v = digit_value(c);
    if (v < 0) return std::nullopt;
    bits = bits << 5 | static_cast<std::uint64_t>(v);
  }
  return bits;
}

bool taggable(std::string_view value) {
  if (value.empty() || value.size() > kMaxIdBytes) return false;
  for (const char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f || c == '\\') return false;
  }
  return !trailing_tag(value);
}

}  // namespace smartlb::stateful
