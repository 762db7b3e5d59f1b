#include "smartlb/telemetry/usage_sniffer.hpp"

#include <algorithm>

#include <cstring>

#include <array>
#include <charconv>

#include "smartlb/base/text.hpp"

namespace smartlb::telemetry {
namespace {

// True when `s` has a `"usage"` key whose value is an object (not `null`): a cheap test
// that spares a JSON parse for every streamed chunk ("usage":null is common).
bool has_usage_object(std::string_view s) {
  static constexpr std::string_view key = "\"usage\"";
  for (std::size_t at = s.find(key); at != std::string_view::npos; at = s.find(key, at + 1)) {
    std::size_t i = at + key.size();
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    if (i >= s.size() || s[i] != ':') continue;
    ++i;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    if (i < s.size() && s[i] == '{') return true;
  }
  return false;
}

// The index of the quote that closes the JSON string whose contents start at `begin`, or
// npos. memchr finds the candidates: the bodies are mostly string contents.
std::size_t closing_quote(std::string_view s, std::size_t begin) {
  std::size_t i = begin;
  while (i < s.size()) {
    const void* q = std::memchr(s.data() + i, '"', s.size() - i);
    if (!q) return std::string_view::npos;
    const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(q) - s.data());
    std::size_t k = at;
    while (k > begin && s[k - 1] == '\\') --k;
    if ((at - k) % 2 == 0) return at;  // not escaped (an even run of backslashes)
    i = at + 1;
  }
  return std::string_view::npos;
}

}  // namespace

namespace {

// Finds the `usage` object of an OpenAI response without building a DOM of the whole body:
// one pass that follows nesting (and skips strings, escapes included), returning the text of
// the object under the top-level key "usage", or under "response" -> "usage" (Responses API
// events), or "message" -> "usage" (Anthropic's message_start). Parsing only that small object
// costs a fraction of parsing the body.
std::string_view find_usage_object(std::string_view s) {
  int depth = 0;
  bool in_response = false;   // inside the top-level "response" object
  std::string_view last_key;  // the last key read at depth 1 or 2
  bool expect_value = false;  // a key and ':' were just read
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"') {
      const std::size_t begin = i + 1;
      i = closing_quote(s, begin);
      if (i == std::string_view::npos) return {};
      const std::string_view str = s.substr(begin, i - begin);
      std::size_t j = i + 1;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r')) ++j;
      if (j < s.size() && s[j] == ':') {  // a key
        last_key = str;
        expect_value = true;
        i = j;
      } else {
        expect_value = false;
      }
      continue;
    }
    if (c == '{' || c == '[') {
      const bool object = c == '{';
      if (object && expect_value && last_key == "usage" && (depth == 1 || (depth == 2 && in_response))) {
        // The usage object itself: take it up to its matching brace.
        int inner = 0;
        for (std::size_t k = i; k < s.size(); ++k) {
          if (s[k] == '"') {
            k = closing_quote(s, k + 1);
            if (k == std::string_view::npos) return {};
            continue;
          }
          if (s[k] == '{' || s[k] == '[') ++inner;
          if ((s[k] == '}' || s[k] == ']') && --inner == 0) return s.substr(i, k - i + 1);
        }
        return {};
      }
      if (object && expect_value && depth == 1 && (last_key == "response" || last_key == "message"))
        in_response = true;
      ++depth;
      expect_value = false;
      continue;
    }
    if (c == '}' || c == ']') {
      --depth;
      if (depth == 1) in_response = false;
      expect_value = false;
      continue;
    }
    if (c == ',') expect_value = false;
  }
  return {};
}

bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// The members a usage object's reading needs, each by its slot in ObjectMembers::value_at.
enum UsageMember : std::uint8_t {
  kPrompt,
  kInput,
  kCompletion,
  kOutput,
  kPromptDetails,
  kInputDetails,
  kCacheRead,      // Anthropic's: prompt tokens read from its cache, not in input_tokens
  kCacheCreation,  // ... and written to it, not in input_tokens either
  kUsageMembers
};
constexpr std::array<std::string_view, kUsageMembers> kUsageKeys = {
    "prompt_tokens",           "input_tokens",
    "completion_tokens",       "output_tokens",
    "prompt_tokens_details",   "input_tokens_details",
    "cache_read_input_tokens", "cache_creation_input_tokens"};
constexpr std::array<std::string_view, 1> kDetailsKeys = {"cached_tokens"};

// An object's text and where the value of the first member of each of some keys starts in it
// (npos: absent). Read in the pass that finds the object's end: one scan, not one per key.
template <std::size_t N>
struct ObjectMembers {
  std::string_view text;
  std::array<std::size_t, N> value_at{};
};

// The object that opens at `open` in `s`, with the positions of `keys`' members directly inside
// it (not in a nested value); empty text when it does not close. Keys are compared as written.
template <std::size_t N>
ObjectMembers<N> read_members(std::string_view s, std::size_t open,
                              const std::array<std::string_view, N>& keys) {
  constexpr std::size_t npos = std::string_view::npos;
  ObjectMembers<N> m;
  m.value_at.fill(npos);
  int depth = 0;
  for (std::size_t k = open; k < s.size(); ++k) {
    const char c = s[k];
    if (c == '"') {
      const std::size_t begin = k + 1;
      k = closing_quote(s, begin);
      if (k == npos) return {};
      if (depth != 1) continue;
      const std::string_view name = s.substr(begin, k - begin);
      std::size_t slot = 0;
      while (slot < N && keys[slot] != name) ++slot;
      if (slot == N || m.value_at[slot] != npos) continue;
      std::size_t j = k + 1;
      while (j < s.size() && is_json_space(s[j])) ++j;
      if (j >= s.size() || s[j] != ':') continue;  // a string value, not a key
      ++j;
      while (j < s.size() && is_json_space(s[j])) ++j;
      m.value_at[slot] = j - open;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      m.text = s.substr(open, k + 1 - open);
      return m;
    }
  }
  return {};
}
using UsageObject = ObjectMembers<kUsageMembers>;

// The common case in a few hundred instructions: OpenAI writes `usage` last, so take the
// last `"usage"` in the text (at `at`), and accept it only if it is a key whose object is followed by
// nothing but the rest of the top-level object. (In valid JSON those bytes cannot sit inside
// a string: a quote there would be escaped.) Empty when that does not hold; the full scan
// decides then.
constexpr std::string_view kUsageKey = "\"usage\"";

UsageObject find_last_top_level_usage(std::string_view s, std::size_t at) {
  std::size_t before = at;
  while (before > 0 && is_json_space(s[before - 1])) --before;
  if (before == 0 || (s[before - 1] != ',' && s[before - 1] != '{')) return {};
  std::size_t i = at + kUsageKey.size();
  while (i < s.size() && is_json_space(s[i])) ++i;
  if (i >= s.size() || s[i] != ':') return {};
  ++i;
  while (i < s.size() && is_json_space(s[i])) ++i;
  if (i >= s.size() || s[i] != '{') return {};
  const UsageObject usage = read_members(s, i, kUsageKeys);
  if (usage.text.empty()) return {};
  // What follows must close exactly one level (the top-level object), then only spaces.
  int depth = 1;
  for (std::size_t j = i + usage.text.size(); j < s.size(); ++j) {
    const char c = s[j];
    if (c == '"') {
      j = closing_quote(s, j + 1);
      if (j == std::string_view::npos) return {};
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if ((c == '}' || c == ']') && --depth == 0) {
      for (++j; j < s.size(); ++j)
        if (!is_json_space(s[j])) return {};
      return usage;
    }
  }
  return {};
}

}  // namespace

namespace {

// The non-negative integer value that starts at `j` in `object`, or -1 when `j` is npos, or the
// value is null or not such an integer.
std::int64_t integer_at(std::string_view object, std::size_t j) {
  if (j == std::string_view::npos) return -1;
  std::int64_t v = -1;
  const auto [p, ec] = std::from_chars(object.data() + j, object.data() + object.size(), v);
  if (ec != std::errc{} || v < 0) return -1;
  const char after = p < object.data() + object.size() ? *p : '}';
  return after == ',' || after == '}' || is_json_space(after) ? v : -1;
}

// The count of the first of two names that has one (chat's name, then the Responses API's).
std::int64_t first_count(const UsageObject& u, UsageMember a, UsageMember b) {
  const std::int64_t v = integer_at(u.text, u.value_at[a]);
  return v >= 0 ? v : integer_at(u.text, u.value_at[b]);
}

// The prompt tokens served from the prompt cache: chat's prompt_tokens_details.cached_tokens,
// else the Responses API's input_tokens_details.cached_tokens.
std::int64_t cached_count(const UsageObject& u) {
  for (const UsageMember details : {kPromptDetails, kInputDetails}) {
    const std::size_t at = u.value_at[details];
    if (at == std::string_view::npos || u.text[at] != '{') continue;
    const ObjectMembers<1> d = read_members(u.text, at, kDetailsKeys);
    if (d.text.empty()) continue;
    if (const std::int64_t v = integer_at(d.text, d.value_at[0]); v >= 0) return v;
  }
  return -1;
}

// Where the last `"usage"` in `s` starts, or npos. Found by its 'g', a letter no other key
// near the end of an answer has (its usage counts, "service_tier" and "system_fingerprint" at
// most): one memrchr where rfind would compare at every byte from the end.
std::size_t last_usage_key(std::string_view s) {
  constexpr std::size_t g_at = 4;  // the 'g' of "usage", counting its opening quote
  std::size_t end = s.size();
  while (end > 0) {
    const void* g = memrchr(s.data(), 'g', end);
    if (!g) break;
    const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(g) - s.data());
    if (at >= g_at && s.substr(at - g_at, kUsageKey.size()) == kUsageKey) return at - g_at;
    end = at;
  }
  return std::string_view::npos;
}

}  // namespace

TokenUsage parse_usage_json(std::string_view json) {
  TokenUsage u;
  const std::size_t last = last_usage_key(json);
  if (last == std::string_view::npos) return u;  // no key at all: nothing to scan for
  UsageObject object = find_last_top_level_usage(json, last);
  if (object.text.empty()) {
    const std::string_view found = find_usage_object(json);
    if (found.empty()) return u;
    object = read_members(found, 0, kUsageKeys);
  }
  u.prompt_tokens = first_count(object, kPrompt, kInput);
  u.completion_tokens = first_count(object, kCompletion, kOutput);
  u.cached_tokens = cached_count(object);
  // Anthropic counts the cache's tokens apart from input_tokens: the prompt is all of them, and
  // those read from the cache are its cached part (as OpenAI's prompt_tokens and cached_tokens).
  const std::int64_t read = integer_at(object.text, object.value_at[kCacheRead]);
  const std::int64_t created = integer_at(object.text, object.value_at[kCacheCreation]);
  if (u.prompt_tokens >= 0 && (read >= 0 || created >= 0)) {
    u.prompt_tokens += std::max<std::int64_t>(read, 0) + std::max<std::int64_t>(created, 0);
    u.cached_tokens = std::max<std::int64_t>(read, 0);
  }
  return u;
}

UsageSniffer::Mode UsageSniffer::mode_for(std::string_view content_type, std::string_view content_encoding) {
  // What backends send, spelled exactly so: decided without trimming or case folding.
  if (content_encoding.empty()) {
    if (content_type == "application/json") return Mode::Json;
    if (content_type == "text/event-stream" || content_type == "text/event-stream; charset=utf-8")
      return Mode::EventStream;
  }
  const std::string_view enc = base::trim_ows(content_encoding);
  if (!enc.empty() && !base::iequals(enc, "identity")) return Mode::Off;
  const std::string_view type = base::trim_ows(content_type.substr(0, content_type.find(';')));
  if (base::iequals(type, "application/json")) return Mode::Json;
  if (base::iequals(type, "text/event-stream")) return Mode::EventStream;
  return Mode::Off;
}

UsageSniffer::UsageSniffer(Mode mode, std::size_t json_limit, std::size_t event_limit)
    : mode_(mode), json_limit_(json_limit), event_limit_(event_limit), events_(event_limit) {}

void UsageSniffer::feed(const char* data, std::size_t size) {
  if (size == 0 || data == nullptr) return;
  switch (mode_) {
    case Mode::Off:
      return;
    case Mode::Json:
      if (overflow_) return;
      if (body_.size() + size > json_limit_) {
        overflow_ = true;
        std::string().swap(body_);  // give the memory back: this body will not be parsed
        return;
      }
      body_.append(data, size);
      return;
    case Mode::EventStream:
      events_.feed(std::string_view(data, size), *this);
      return;
  }
}

void UsageSniffer::on_event(const http::SseEvent& event) {
  const std::string_view data = event.data;
  // (An event's data past the limit is not read: from a reader that holds more, as the id
  // tagger's does, the same events as from this one's.)
  if (event.data_lines == 0 || data.size() >= event_limit_ || data == "[DONE]") return;
  if (facts_) read_response_facts(data, *facts_);
  if (!has_usage_object(data)) return;
  // Anthropic's stream says its prompt's usage in message_start and its output's in
  // message_delta: the first is kept apart for finish() to join.
  if (first_.empty() && data.find("\"message_start\"") != std::string_view::npos)
    first_.assign(data);
  else
    last_.assign(data);
}

TokenUsage UsageSniffer::finish_with(const char* data, std::size_t size) {
  if (mode_ == Mode::Json && body_.empty() && !overflow_) {
    if (size == 0 || data == nullptr || size > json_limit_) return {};
    const std::string_view body(data, size);
    if (facts_) read_response_facts(body, *facts_);
    return parse_usage_json(body);
  }
  feed(data, size);
  return finish();
}

TokenUsage UsageSniffer::finish() {
  TokenUsage u;
  switch (mode_) {
    case Mode::Off:
      break;
    case Mode::Json:
      if (!overflow_ && !body_.empty()) {
        if (facts_) read_response_facts(body_, *facts_);
        u = parse_usage_json(body_);
      }
      std::string().swap(body_);
      break;
    case Mode::EventStream:
      // A last event without its blank line still counts (the stream ended right after it).
      events_.finish(*this);
      if (!last_.empty()) u = parse_usage_json(last_);
      if (!first_.empty()) {  // Anthropic: the prompt's part from message_start
        const TokenUsage start = parse_usage_json(first_);
        if (u.prompt_tokens < 0) {
          u.prompt_tokens = start.prompt_tokens;
          u.cached_tokens = start.cached_tokens;
        }
        if (u.completion_tokens < 0) u.completion_tokens = start.completion_tokens;
      }
      last_.clear();
      first_.clear();
      break;
  }
  return u;
}

}  // namespace smartlb::telemetry
