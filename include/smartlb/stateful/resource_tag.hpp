#pragma once
// Where a stateful object lives -- its *resource* -- and the tag smartlb appends to the ids such
// an object carries, so that a later request naming it finds its way back there (docs/stateful-apis.md).
//
// A resource is named by a canonical string: by default its backend URL's scheme, lower-cased
// host, port (when not the scheme's default) and base path (less a trailing API prefix, so a
// backend configured as https://res.openai.azure.com and one as https://res.openai.azure.com/openai
// are the same resource); or whatever BACKEND_X_RESOURCE / backends[].resource says. The tag is
// `-slb` and 8 lower-case base32 characters (a-z, 2-7): 40 bits of FNV-1a-64 of that string. The
// same configuration gives the same tags on every replica and after every restart, without any
// shared state; nothing secret goes into them.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::stateful {

inline constexpr std::string_view kTagMark = "-slb";
inline constexpr std::size_t kTagDigits = 8;                           // base32, 5 bits each
inline constexpr std::size_t kTagSize = kTagMark.size() + kTagDigits;  // 12
inline constexpr std::uint64_t kTagBitsMask = (std::uint64_t{1} << 40) - 1;

// The canonical string of a backend's own resource: "https://host[:port][/base]". A base path
// ending in /openai/v1, /openai or /v1 loses that ending (those are the API prefixes clients put
// on their paths themselves).
std::string default_resource(bool tls, std::string_view host, std::uint16_t port, std::string_view base_path);

struct ResourceTag {
  std::uint64_t bits = 0;             // 40 bits
  std::array<char, kTagSize> text{};  // "-slb" + 8 digits
  std::string_view view() const { return {text.data(), text.size()}; }
  bool operator==(const ResourceTag& other) const { return bits == other.bits; }
};

// FNV-1a-64 (fixed arithmetic: the same on every build and machine, unlike std::hash).
std::uint64_t fnv1a64(std::string_view text);
// The tag of the resource named `canonical`: the high 40 bits of its FNV-1a-64.
ResourceTag resource_tag(std::string_view canonical);
// The tag whose digits encode `bits` (the low 40 bits).
ResourceTag tag_from_bits(std::uint64_t bits);

// The tag's bits when `value` ends in a well-formed tag behind at least one byte of its own
// (a bare tag is not an id); nullopt otherwise. Says nothing of whether a resource has it.
std::optional<std::uint64_t> trailing_tag(std::string_view value);

// Whether `value` may carry a tag: 1 to 256 bytes, none of them a space, a control character
// or a backslash (a JSON string's raw text with escapes is not an id), and not tagged already.
bool taggable(std::string_view value);

}  // namespace smartlb::stateful
