#include "smartlb/http/stream_event.hpp"

#include <array>
#include <initializer_list>
#include <optional>

#include <nlohmann/json.hpp>

#include "smartlb/http/json_lexer.hpp"

namespace smartlb::http {
namespace {

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

// What a Responses API (or Anthropic Messages API) event's `type` says about the stream's start.
enum class EventType : std::uint8_t {
  None,       // no top-level string `type` (chat and completions chunks)
  Lifecycle,  // response.created / in_progress / queued, message_start, content_block_start, ping:
              // no content yet
  Error,      // `error` or `response.failed`
  Other,      // output items, deltas, response.completed, ...: the stream has begun
};

EventType event_type(std::string_view type) {
  if (type == "error" || type == "response.failed") return EventType::Error;
  if (is_one_of(type, {"response.created", "response.in_progress", "response.queued", "message_start",
                       "content_block_start", "ping"}))
    return EventType::Lifecycle;
  return EventType::Other;
}

// One event's data read in one pass of the lexer, noting the few members that say whether it
// carries content or reports an error.
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

  // The frame of the container at `depth` (0: none).
  Frame frame_at(std::size_t depth) const {
    return depth == 0 || depth > kFrames ? Frame::Other : frames_[depth - 1];
  }
  // Something (a member or an element) directly inside the container at `depth`: a payload
  // container with anything inside is content.
  void note_inside(std::size_t depth) {
    if (frame_at(depth) == Frame::Payload) content = true;
  }
  void on_value(std::size_t depth, bool non_null, bool present);
  void open(std::size_t depth, bool is_object);

  // Root, choices, a choice, its delta, a payload: nothing deeper matters.
  static constexpr std::size_t kFrames = 5;
  Frame frames_[kFrames] = {};
  Key key_ = Key::None;
};

bool EventShape::read(std::string_view data) {
  JsonLexer lexer(data);
  return for_each_json_token(lexer, [&](JsonToken t) {
    const std::size_t depth = lexer.depth();
    // Names are short ASCII: a longer name, left escaped, has a backslash and so is none of them.
    std::array<char, 32> buf;
    switch (t) {
      case JsonToken::Key:
        note_inside(depth);
        key_ =
            member(frame_at(depth), json_short_text(lexer.raw(), lexer.escaped(), buf).value_or(lexer.raw()));
        break;
      case JsonToken::BeginObject:
      case JsonToken::BeginArray:
        open(depth, t == JsonToken::BeginObject);
        break;
      case JsonToken::EndObject:
      case JsonToken::EndArray:
        key_ = Key::None;
        break;
      case JsonToken::String:
        if (key_ == Key::Type)
          type = event_type(json_short_text(lexer.raw(), lexer.escaped(), buf).value_or(lexer.raw()));
        on_value(depth, true, !lexer.raw().empty());
        break;
      case JsonToken::Null:
        on_value(depth, false, false);
        break;
      default:  // a number, true, false
        on_value(depth, true, true);
        break;
    }
  });
}

// A scalar value (a member's or an array element) in the container at `depth`: `present`
// unless it is null or "".
void EventShape::on_value(std::size_t depth, bool non_null, bool present) {
  note_inside(depth);
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

// A container opened at `depth` (the root: 1).
void EventShape::open(std::size_t depth, bool is_object) {
  note_inside(depth - 1);
  Frame f = Frame::Other;
  if (depth == 1) {
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
        if (frame_at(depth - 1) == Frame::Choices && is_object) f = Frame::Choice;
        break;
    }
  }
  if (depth <= kFrames) frames_[depth - 1] = f;
  key_ = Key::None;
}

}  // namespace

StartReason judge_stream_event(std::string_view data) {
  EventShape shape;
  if (!shape.read(data) || !shape.object)
    return StartReason::Content;  // not a JSON object: a stream we cannot judge goes as it is
  if (shape.error_member || shape.type == EventType::Error)
    if (const auto r = reported_error(data)) return *r;
  if (shape.chat) return shape.content || shape.usage ? StartReason::Content : StartReason::None;
  return shape.type == EventType::Lifecycle ? StartReason::None : StartReason::Content;
}

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

}  // namespace smartlb::http
