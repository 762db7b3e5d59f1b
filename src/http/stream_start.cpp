#include "smartlb/http/stream_start.hpp"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace smartlb {
namespace {

// The line starting at `pos`: its end (exclusive, before the terminator) and where the next one
// starts. False when no complete line is there yet; a CR as the last byte waits for what follows
// (it may be the first half of CRLF).
bool next_line(std::string_view text, std::size_t pos, std::size_t& end, std::size_t& next) {
  // Two memchr passes (LF, then CR before it: none in most streams) instead of find_first_of,
  // which looks each byte up in the set.
  if (pos >= text.size()) return false;
  const char* const first = text.data() + pos;
  const std::size_t left = text.size() - pos;
  const void* lf = std::memchr(first, '\n', left);
  const std::size_t span = lf ? static_cast<std::size_t>(static_cast<const char*>(lf) - first) : left;
  const void* cr = std::memchr(first, '\r', span);
  if (!lf && !cr) return false;
  const std::size_t at = pos + (cr ? static_cast<std::size_t>(static_cast<const char*>(cr) - first) : span);
  if (text[at] == '\r') {
    if (at + 1 == text.size()) return false;
    next = text[at + 1] == '\n' ? at + 2 : at + 1;
  } else {
    next = at + 1;
  }
  end = at;
  return true;
}

struct Field {
  std::string_view name, value;
};

Field split_field(std::string_view line) {
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return {line, line.substr(line.size())};  // empty, at the line's end
  std::string_view value = line.substr(colon + 1);
  if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  return {line.substr(0, colon), value};
}

bool is_one_of(std::string_view s, std::initializer_list<std::string_view> names) {
  for (const std::string_view n : names)
    if (s == n) return true;
  return false;
}

std::string_view string_member(const nlohmann::json& o, const char* key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                          : std::string_view();
}

// The reason of an `error` member's value: the errors a prompt gets on every backend alike are
// the client's; anything else (server_error, a bare string, ...) is the backend's.
StartReason error_reason(const nlohmann::json& error) {
  if (!error.is_object()) return StartReason::ServerError;
  const std::string_view code = string_member(error, "code");
  const std::string_view type = string_member(error, "type");
  std::string_view inner;
  if (const auto it = error.find("innererror"); it != error.end() && it->is_object())
    inner = string_member(*it, "code");
  if (is_one_of(code, {"content_filter", "content_policy_violation", "ResponsibleAIPolicyViolation",
                       "context_length_exceeded", "invalid_request_error", "invalid_prompt"}) ||
      inner == "ResponsibleAIPolicyViolation" || type == "invalid_request_error")
    return StartReason::ClientError;
  return StartReason::ServerError;
}

// The error an event's data reports, if any: a non-null top-level `error`, a Responses API
// error event (`{"type":"error","code":...}`, its fields at the top level), or the
// `response.error` of `response.failed` (ServerError without one: the response failed all the
// same). nullopt when `data` is not a JSON object or reports none.
std::optional<StartReason> reported_error(std::string_view data) {
  const nlohmann::json j = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  if (const auto it = j.find("error"); it != j.end() && !it->is_null()) return error_reason(*it);
  const std::string_view type = string_member(j, "type");
  if (type == "error") return error_reason(j);
  if (type == "response.failed") {
    if (const auto r = j.find("response"); r != j.end() && r->is_object())
      if (const auto e = r->find("error"); e != r->end() && !e->is_null()) return error_reason(*e);
    return StartReason::ServerError;
  }
  return std::nullopt;
}

// What a Responses API event's `type` says about the stream's start.
enum class EventType : std::uint8_t {
  None,       // no top-level string `type` (chat and completions chunks)
  Lifecycle,  // response.created / in_progress / queued: no content yet
  Error,      // `error` or `response.failed`
  Other,      // output items, deltas, response.completed, ...: the stream has begun
};

EventType event_type(std::string_view type) {
  if (type == "error" || type == "response.failed") return EventType::Error;
  if (is_one_of(type, {"response.created", "response.in_progress", "response.queued"}))
    return EventType::Lifecycle;
  return EventType::Other;
}

using Byte = unsigned char;

constexpr bool is_ws(Byte c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
constexpr bool is_digit(Byte c) { return c >= '0' && c <= '9'; }

// The value of the 4 hex digits at p (at least 4 bytes there), or -1.
int hex4(const Byte* p) {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    const Byte c = p[i];
    int d;
    if (is_digit(c))
      d = c - '0';
    else if (c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return -1;
    v = v << 4 | d;
  }
  return v;
}

// The length of the well-formed UTF-8 sequence of 2 to 4 bytes at p (RFC 3629: no overlong
// forms, no surrogates, nothing past U+10FFFF), or 0.
std::size_t utf8_length(const Byte* p, const Byte* end) {
  const auto cont = [&](std::size_t i, Byte lo, Byte hi) {
    return end - p > static_cast<std::ptrdiff_t>(i) && p[i] >= lo && p[i] <= hi;
  };
  const Byte c = p[0];
  if (c >= 0xC2 && c <= 0xDF) return cont(1, 0x80, 0xBF) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const Byte lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const Byte lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2, 0x80, 0xBF) && cont(3, 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

// A string's text between its quotes (valid: scanned before) with its escapes decoded into
// `buf`, when that fits and decodes to ASCII; else `raw` itself, which holds a backslash and so
// equals none of the names it is compared with (all short ASCII).
std::string_view unescaped(std::string_view raw, char* buf, std::size_t cap) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    char c = raw[i];
    if (c == '\\') {
      const char e = raw[++i];
      if (e == 'u') {
        const int code = hex4(reinterpret_cast<const Byte*>(raw.data()) + i + 1);
        i += 4;
        if (code >= 0x80) return raw;
        c = static_cast<char>(code);
      } else {
        c = e == 'b' ? '\b' : e == 'f' ? '\f' : e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : e;
      }
    }
    if (n == cap) return raw;
    buf[n++] = c;
  }
  return {buf, n};
}

// One event's data read in one pass that validates it as JSON and notes the few members that
// say whether it carries content or reports an error; nothing is allocated (unless arrays and
// objects nest over 512 deep, or a number over 127 characters needs its range checked).
// Valid means what nlohmann::json::parse accepts: RFC 8259, UTF-8 checked, \u surrogates
// paired, a number that overflows a double refused, a leading byte-order mark skipped. Of a
// duplicated member, any occurrence counts.
class EventShape {
 public:
  bool object = false;        // the root is an object
  bool error_member = false;  // a non-null top-level `error`
  bool chat = false;          // a top-level `choices` or `prompt_filter_results`
  bool content = false;       // a choice carries content
  bool usage = false;         // a non-null top-level `usage`
  EventType type = EventType::None;

  // False when `data` is not valid JSON.
  bool read(std::string_view data);

 private:
  // The containers whose members matter; every other one is Other.
  enum class Frame : std::uint8_t { Other, Root, Choices, Choice, Delta, Payload };
  // What the member whose value comes next is.
  enum class Key : std::uint8_t {
    None,
    Error,
    Type,
    Choices,
    PromptFilter,
    Usage,
    Delta,
    FinishReason,
    Payload
  };

  static Key member(Frame in, std::string_view k) {
    switch (in) {
      case Frame::Root:
        if (k == "error") return Key::Error;
        if (k == "type") return Key::Type;
        if (k == "choices") return Key::Choices;
        if (k == "prompt_filter_results") return Key::PromptFilter;
        if (k == "usage") return Key::Usage;
        return Key::None;
      case Frame::Choice:
        if (k == "delta") return Key::Delta;
        if (k == "text") return Key::Payload;  // legacy completions
        if (k == "finish_reason") return Key::FinishReason;
        return Key::None;
      case Frame::Delta:
        // Everything a delta holds but its role is what the model made: content, refusal,
        // tool_calls, function_call, reasoning_content, reasoning, audio, ...
        return k == "role" ? Key::None : Key::Payload;
      default:
        return Key::None;
    }
  }

  void skip_ws() {
    while (p_ != end_ && is_ws(*p_)) ++p_;
  }
  bool string(std::string_view& text, bool& escaped);
  bool number();
  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() || std::memcmp(p_, word.data(), word.size()) != 0)
      return false;
    p_ += word.size();
    return true;
  }
  bool member_key();
  bool scalar();
  void open(bool is_object);
  void close();
  void on_value(bool non_null, bool present);
  // Something (a member or an element) directly inside a payload array or object: not empty.
  void note_inside() {
    if (top() == Frame::Payload) content = true;
  }
  Frame top() const { return depth_ == 0 || depth_ > kFrames ? Frame::Other : frames_[depth_ - 1]; }
  bool in_object() const {
    const std::size_t i = depth_ - 1;
    return i < kInlineLevels ? (inline_kinds_[i / 64] >> (i % 64) & 1) != 0 : spill_kinds_.back();
  }

  const Byte* p_ = nullptr;
  const Byte* end_ = nullptr;
  // Root, choices, a choice, its delta, a payload: nothing deeper matters.
  static constexpr std::size_t kFrames = 5;
  Frame frames_[kFrames] = {};
  Key key_ = Key::None;
  std::size_t depth_ = 0;
  // Whether each open container is an object (to match its closing bracket).
  static constexpr std::size_t kInlineLevels = 512;
  std::uint64_t inline_kinds_[kInlineLevels / 64] = {};
  std::vector<bool> spill_kinds_;  // deeper levels: never in a real stream
};

bool EventShape::read(std::string_view data) {
  p_ = reinterpret_cast<const Byte*>(data.data());
  end_ = p_ + data.size();
  if (data.starts_with("\xEF\xBB\xBF")) p_ += 3;
  skip_ws();
  for (;;) {
    // A value starts here.
    if (p_ == end_) return false;
    if (*p_ == '{' || *p_ == '[') {
      const bool obj = *p_++ == '{';
      open(obj);
      skip_ws();
      if (p_ == end_ || *p_ != (obj ? '}' : ']')) {
        if (obj && !member_key()) return false;
        continue;
      }
      ++p_;
      close();
    } else if (!scalar()) {
      return false;
    }
    // After a value: close what it ended, up to the next member or element.
    for (;;) {
      skip_ws();
      if (depth_ == 0) return p_ == end_;
      if (p_ == end_) return false;
      const bool obj = in_object();
      if (*p_ == ',') {
        ++p_;
        skip_ws();
        if (obj && !member_key()) return false;
        break;
      }
      if (*p_ != (obj ? '}' : ']')) return false;
      ++p_;
      close();
    }
  }
}

// A string from its opening quote: `text` is what lies between the quotes, `escaped` whether it
// holds an escape.
bool EventShape::string(std::string_view& text, bool& escaped) {
  if (p_ == end_ || *p_ != '"') return false;
  const Byte* const begin = ++p_;
  escaped = false;
  for (;;) {
#if defined(__SSE2__)
    // Plain bytes (printable ASCII but '"' and '\\') 16 at a time: most of an event is in
    // its strings.
    while (end_ - p_ >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
      // Signed: bytes >= 0x80 are negative, so below 0x20 too.
      const __m128i special = _mm_or_si128(
          _mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
          _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
      if (const int mask = _mm_movemask_epi8(special)) {
        p_ += std::countr_zero(static_cast<unsigned>(mask));
        break;
      }
      p_ += 16;
    }
#endif
    if (p_ == end_) return false;
    const Byte c = *p_;
    if (c == '"') break;
    if (c == '\\') {
      escaped = true;
      if (end_ - p_ < 2) return false;
      const Byte e = p_[1];
      if (e != 'u') {
        if (std::strchr("\"\\/bfnrt", e) == nullptr || e == 0) return false;
        p_ += 2;
        continue;
      }
      if (end_ - p_ < 6) return false;
      const int u = hex4(p_ + 2);
      p_ += 6;
      if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF)) return false;
      if (u >= 0xD800 && u <= 0xDBFF) {  // must be followed by the pair's low half
        if (end_ - p_ < 6 || p_[0] != '\\' || p_[1] != 'u') return false;
        const int low = hex4(p_ + 2);
        if (low < 0xDC00 || low > 0xDFFF) return false;
        p_ += 6;
      }
    } else if (c < 0x20) {
      return false;
    } else if (c < 0x80) {
      ++p_;
    } else {
      const std::size_t n = utf8_length(p_, end_);
      if (n == 0) return false;
      p_ += n;
    }
  }
  text = {reinterpret_cast<const char*>(begin), static_cast<std::size_t>(p_ - begin)};
  ++p_;
  return true;
}

bool EventShape::number() {
  const Byte* const begin = p_;
  if (*p_ == '-') ++p_;
  if (p_ == end_ || !is_digit(*p_)) return false;
  if (*p_ == '0')
    ++p_;
  else
    while (p_ != end_ && is_digit(*p_)) ++p_;
  const std::size_t integer_digits = static_cast<std::size_t>(p_ - begin) - (*begin == '-');
  if (p_ != end_ && *p_ == '.') {
    ++p_;
    if (p_ == end_ || !is_digit(*p_)) return false;
    while (p_ != end_ && is_digit(*p_)) ++p_;
  }
  bool exponent = false;
  if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
    exponent = true;
    ++p_;
    if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
    if (p_ == end_ || !is_digit(*p_)) return false;
    while (p_ != end_ && is_digit(*p_)) ++p_;
  }
  // Only an exponent or over 308 digits can overflow a double, which nlohmann refuses.
  if (!exponent && integer_digits <= 308) return true;
  const std::size_t n = static_cast<std::size_t>(p_ - begin);
  char small[128];
  std::string large;
  char* text = small;
  if (n < sizeof small) {
    std::memcpy(small, begin, n);
    small[n] = '\0';
  } else {
    large.assign(reinterpret_cast<const char*>(begin), n);
    text = large.data();
  }
  return std::isfinite(std::strtod(text, nullptr));
}

// A member's key and its colon; key_ says what the member is.
bool EventShape::member_key() {
  std::string_view raw;
  bool escaped = false;
  if (!string(raw, escaped)) return false;
  note_inside();
  char buf[32];  // longer than any name compared
  key_ = member(top(), escaped ? unescaped(raw, buf, sizeof buf) : raw);
  skip_ws();
  if (p_ == end_ || *p_ != ':') return false;
  ++p_;
  skip_ws();
  return true;
}

bool EventShape::scalar() {
  switch (*p_) {
    case '"': {
      std::string_view text;
      bool escaped = false;
      if (!string(text, escaped)) return false;
      if (key_ == Key::Type) {
        char buf[32];
        type = event_type(escaped ? unescaped(text, buf, sizeof buf) : text);
      }
      on_value(true, !text.empty());
      return true;
    }
    case 't':
      if (!literal("true")) return false;
      on_value(true, true);
      return true;
    case 'f':
      if (!literal("false")) return false;
      on_value(true, true);
      return true;
    case 'n':
      if (!literal("null")) return false;
      on_value(false, false);
      return true;
    default:
      if (!number()) return false;
      on_value(true, true);
      return true;
  }
}

// A scalar value (a member's or an array element): `present` unless it is null or "".
void EventShape::on_value(bool non_null, bool present) {
  note_inside();
  switch (key_) {
    case Key::Error:
      error_member = error_member || non_null;
      break;
    case Key::Choices:
    case Key::PromptFilter:
      chat = true;
      break;
    case Key::Usage:
      usage = usage || non_null;
      break;
    case Key::FinishReason:
      content = content || non_null;
      break;
    case Key::Payload:
      content = content || present;
      break;
    default:
      break;
  }
  key_ = Key::None;
}

void EventShape::open(bool is_object) {
  note_inside();
  Frame f = Frame::Other;
  if (depth_ == 0) {
    object = is_object;
    if (is_object) f = Frame::Root;
  } else {
    switch (key_) {
      case Key::Error:
        error_member = true;
        break;
      case Key::Choices:
        chat = true;
        if (!is_object) f = Frame::Choices;
        break;
      case Key::PromptFilter:
        chat = true;
        break;
      case Key::Usage:
        usage = true;
        break;
      case Key::FinishReason:
        content = true;
        break;
      case Key::Delta:
        if (is_object) f = Frame::Delta;
        break;
      case Key::Payload:
        f = Frame::Payload;  // content when anything is inside (see note_inside)
        break;
      default:
        if (top() == Frame::Choices && is_object) f = Frame::Choice;
        break;
    }
  }
  if (depth_ < kFrames) frames_[depth_] = f;
  if (depth_ < kInlineLevels) {
    const std::uint64_t bit = std::uint64_t{1} << (depth_ % 64);
    if (is_object)
      inline_kinds_[depth_ / 64] |= bit;
    else
      inline_kinds_[depth_ / 64] &= ~bit;
  } else {
    spill_kinds_.push_back(is_object);
  }
  ++depth_;
  key_ = Key::None;
}

void EventShape::close() {
  --depth_;
  if (depth_ >= kInlineLevels) spill_kinds_.pop_back();
  key_ = Key::None;
}

// What one complete event's data (not `[DONE]`, not empty) says about the stream's start:
// Content, ClientError or ServerError, or None when it carries nothing yet.
StartReason judge_event(std::string_view data) {
  EventShape shape;
  if (!shape.read(data) || !shape.object)
    return StartReason::Content;  // not a JSON object: a stream we cannot judge goes as it is
  if (shape.error_member || shape.type == EventType::Error)
    if (const auto r = reported_error(data)) return *r;
  if (shape.chat) return shape.content || shape.usage ? StartReason::Content : StartReason::None;
  return shape.type == EventType::Lifecycle ? StartReason::None : StartReason::Content;
}

}  // namespace

std::string_view to_string(StartReason r) {
  switch (r) {
    case StartReason::None:
      return "none";
    case StartReason::Content:
      return "content";
    case StartReason::Done:
      return "done";
    case StartReason::ClientError:
      return "client_error";
    case StartReason::ServerError:
      return "server_error";
    case StartReason::Limit:
      return "limit";
  }
  return "unknown";
}

StartReason classify_stream_error(std::string_view data) {
  return reported_error(data).value_or(StartReason::ServerError);
}

StartVerdict StreamStart::advance(std::string_view held) {
  // Only the first `limit_` bytes are read, so the verdict does not depend on how the bytes
  // were split: an event that completes past the limit is not seen, however it arrived.
  const std::string_view within = held.substr(0, limit_);
  std::size_t end = 0, next = 0;
  while (verdict_ == StartVerdict::Hold && next_line(within, scanned_, end, next)) {
    const std::size_t begin = scanned_;
    scanned_ = next;
    on_line(within, begin, end);
  }
  if (verdict_ == StartVerdict::Hold && held.size() >= limit_)
    decide(StartVerdict::Release, StartReason::Limit);
  return verdict_;
}

void StreamStart::on_line(std::string_view held, std::size_t begin, std::size_t end) {
  if (begin == end) {  // an empty line ends the event
    if (data_lines_ > 0) dispatch(held, begin);
    event_begin_ = scanned_;
    data_lines_ = 0;
    error_event_ = false;
    return;
  }
  if (held[begin] == ':') return;  // a comment
  const Field f = split_field(held.substr(begin, end - begin));
  if (f.name == "event") {
    error_event_ = f.value == "error";
  } else if (f.name == "data") {
    if (data_lines_++ == 0) {
      data_begin_ = static_cast<std::size_t>(f.value.data() - held.data());
      data_end_ = data_begin_ + f.value.size();
    }
  }
}

// The event is held[event_begin_, stop): `stop` is where its closing empty line begins.
void StreamStart::dispatch(std::string_view held, std::size_t stop) {
  std::string joined;  // only for an event of several data lines
  std::string_view data = held.substr(data_begin_, data_end_ - data_begin_);
  if (data_lines_ > 1) {
    // The data lines joined with LF, as an SSE client reads them.
    std::size_t pos = event_begin_, end = 0, next = 0;
    bool first = true;
    while (pos < stop && next_line(held, pos, end, next)) {
      const Field f = split_field(held.substr(pos, end - pos));
      if (held[pos] != ':' && f.name == "data") {
        if (!first) joined.push_back('\n');
        first = false;
        joined.append(f.value);
      }
      pos = next;
    }
    data = joined;
  }
  // One empty data line: an SSE client dispatches nothing, whatever its type (a keep-alive).
  if (data.empty()) return;
  if (error_event_) {
    const StartReason r = classify_stream_error(data);
    decide(r == StartReason::ServerError ? StartVerdict::FailOver : StartVerdict::Release, r);
    return;
  }
  if (data == "[DONE]") {
    decide(StartVerdict::Release, StartReason::Done);
    return;
  }
  switch (const StartReason r = judge_event(data)) {
    case StartReason::None:
      return;  // nothing yet: the next event decides
    case StartReason::ServerError:
      decide(StartVerdict::FailOver, r);
      return;
    default:
      decide(StartVerdict::Release, r);
      return;
  }
}

}  // namespace smartlb
