// estimate_request_tokens (routing/token_estimate) over read_request_body (http/request_body),
// and UsageSniffer / parse_usage_json (telemetry/usage_sniffer). Input: one byte choosing the
// path and the piece size, then a body. Invariants: an estimate is never negative; the body's
// facts agree with top_level_strings (http/json_body) on the members both read; parse_usage_json
// reads what a DOM (nlohmann) reads where the document is unambiguous; the sniffer
// gives the same usage and the same response facts (telemetry/response_facts, for spans) fed in
// pieces as fed at once (and as finish_with), holds no more than its limits allow, and keeps
// facts within theirs.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "smartlb/http/json_body.hpp"
#include "smartlb/http/request_body.hpp"
#include "smartlb/routing/token_estimate.hpp"
#include "smartlb/telemetry/response_facts.hpp"
#include "smartlb/telemetry/usage_sniffer.hpp"

namespace {

using namespace smartlb;

bool same(const telemetry::TokenUsage& a, const telemetry::TokenUsage& b) {
  return a.prompt_tokens == b.prompt_tokens && a.completion_tokens == b.completion_tokens;
}
bool same(const telemetry::ResponseFacts& a, const telemetry::ResponseFacts& b) {
  return a.id == b.id && a.model == b.model && a.finish_reasons == b.finish_reasons;
}
bool bounded(const telemetry::ResponseFacts& f) {
  if (f.id.size() > telemetry::ResponseFacts::kMaxText ||
      f.model.size() > telemetry::ResponseFacts::kMaxText ||
      f.finish_reasons.size() > telemetry::ResponseFacts::kMaxFinishReasons)
    return false;
  for (const std::string& r : f.finish_reasons)
    if (r.empty() || r.size() > telemetry::ResponseFacts::kMaxText) return false;
  return true;
}

struct Sniffed {
  telemetry::TokenUsage usage;
  telemetry::ResponseFacts facts;
};

constexpr std::size_t kJsonLimit = 2048;  // small, so that inputs reach the bounds
constexpr std::size_t kEventLimit = 512;

Sniffed sniff(telemetry::UsageSniffer::Mode mode, std::string_view body, std::size_t piece, bool last_with) {
  Sniffed out;
  telemetry::UsageSniffer s(mode, kJsonLimit, kEventLimit);
  s.read_facts_into(&out.facts);
  while (body.size() > piece) {
    s.feed(body.substr(0, piece));
    body.remove_prefix(piece);
    // The current line, the event's data and the last usage event, each bounded (plus the
    // bytes of one feed for a line being assembled).
    if (mode == telemetry::UsageSniffer::Mode::EventStream &&
        s.buffered_bytes() > 4 * kEventLimit + 4 * piece)
      __builtin_trap();
    if (mode == telemetry::UsageSniffer::Mode::Json && s.buffered_bytes() > kJsonLimit + piece)
      __builtin_trap();
  }
  if (last_with) {
    out.usage = s.finish_with(body.data(), body.size());
  } else {
    s.feed(body);
    out.usage = s.finish();
  }
  if (!bounded(out.facts)) __builtin_trap();
  return out;
}

using Json = nlohmann::ordered_json;

// A count as the scanner reads it: a non-negative integer that fits int64, else -1.
std::int64_t dom_count(const Json& usage, const char* name) {
  const auto it = usage.find(name);
  if (it == usage.end()) return -1;
  if (it->is_number_unsigned())
    return it->get<std::uint64_t>() <= INT64_MAX ? static_cast<std::int64_t>(it->get<std::uint64_t>()) : -1;
  if (it->is_number_integer()) return it->get<std::int64_t>() >= 0 ? it->get<std::int64_t>() : -1;
  return -1;
}

std::int64_t dom_count(const Json& usage, const char* a, const char* b) {
  const std::int64_t v = dom_count(usage, a);
  return v >= 0 ? v : dom_count(usage, b);
}

// The usage a DOM reads (the oracle of parse_usage_json), for documents whose reading is
// unambiguous: valid JSON, no escape (the scanner compares keys as written), no NUL byte, no key
// twice in one object. The object is the first in document order of the top-level "usage" and
// "response" -> "usage" whose value is an object.
std::optional<telemetry::TokenUsage> dom_usage(std::string_view body) {
  // nlohmann's lexer takes a NUL byte for the end of input (a C string's end), so a document
  // followed by NUL and more text would parse: the scanner reads the whole text.
  if (body.find('\\') != std::string_view::npos || body.find('\0') != std::string_view::npos)
    return std::nullopt;
  std::vector<std::set<std::string>> keys;
  bool duplicate = false;
  const Json::parser_callback_t note_keys = [&](int, Json::parse_event_t event, Json& parsed) {
    if (event == Json::parse_event_t::object_start) keys.emplace_back();
    if (event == Json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
    if (event == Json::parse_event_t::key && !keys.empty() &&
        !keys.back().insert(parsed.get<std::string>()).second)
      duplicate = true;
    return true;
  };
  const Json doc = Json::parse(body.begin(), body.end(), note_keys, false);
  if (doc.is_discarded() || duplicate || !doc.is_object()) return std::nullopt;
  const Json* usage = nullptr;
  for (const auto& [key, value] : doc.items()) {
    if (key == "usage" && value.is_object()) usage = &value;
    if (key == "response" && value.is_object() && value.contains("usage") && value["usage"].is_object())
      usage = &value["usage"];
    if (usage) break;
  }
  telemetry::TokenUsage u;
  if (!usage) return u;
  u.prompt_tokens = dom_count(*usage, "prompt_tokens", "input_tokens");
  u.completion_tokens = dom_count(*usage, "completion_tokens", "output_tokens");
  for (const char* details : {"prompt_tokens_details", "input_tokens_details"}) {
    const auto d = usage->find(details);
    if (d != usage->end() && d->is_object() && (u.cached_tokens = dom_count(*d, "cached_tokens")) >= 0) break;
  }
  return u;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static constexpr std::string_view kPaths[] = {"/v1/chat/completions",
                                                "/openai/deployments/d/completions",
                                                "/v1/embeddings",
                                                "/v1/responses",
                                                "/openai/deployments/d/images/generations",
                                                "",
                                                "/chat/completions",
                                                "/v1/models"};
  const std::uint8_t opt = data[0];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);

  const http::RequestBodyFacts facts = http::read_request_body(kPaths[opt & 7], body);
  if (routing::estimate_request_tokens(facts) < 0) __builtin_trap();
  static constexpr std::string_view kKeys[] = {"model", "user", "prompt_cache_key"};
  std::optional<std::string_view> strings[3];
  if (http::top_level_strings(body, kKeys, strings) != facts.json_object || strings[0] != facts.model ||
      strings[1] != facts.user || strings[2] != facts.prompt_cache_key)
    __builtin_trap();

  const telemetry::TokenUsage scanned = telemetry::parse_usage_json(body);
  if (const std::optional<telemetry::TokenUsage> dom = dom_usage(body))
    if (!same(scanned, *dom) || scanned.cached_tokens != dom->cached_tokens) __builtin_trap();
  const std::size_t piece = 1 + (opt >> 3);  // 1..32 bytes
  for (const auto mode : {telemetry::UsageSniffer::Mode::Json, telemetry::UsageSniffer::Mode::EventStream}) {
    const Sniffed whole = sniff(mode, body, body.size() + 1, false);
    for (const auto& [size, last_with] : {std::pair{body.size() + 1, true}, {piece, false}, {piece, true}}) {
      const Sniffed other = sniff(mode, body, size, last_with);
      if (!same(whole.usage, other.usage) || !same(whole.facts, other.facts)) __builtin_trap();
    }
    if (mode == telemetry::UsageSniffer::Mode::Json && body.size() <= kJsonLimit) {
      telemetry::ResponseFacts direct;  // the sniffer reads a JSON body as one document
      read_response_facts(body, direct);
      if (!same(direct, whole.facts)) __builtin_trap();
    }
  }
  (void)telemetry::UsageSniffer::mode_for(body.substr(0, body.find('\n')));
  return 0;
}
