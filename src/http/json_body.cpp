#include "smartlb/http/json_body.hpp"

#include <array>
#include <vector>

#include "smartlb/base/text.hpp"
#include "smartlb/http/json_lexer.hpp"

namespace smartlb::http {
namespace {

// One top-level member as found: `"key"` starts at `start`; its value spans
// [value_start, value_end).
struct Member {
  std::size_t start;
  std::string_view raw_key;
  bool key_escaped;
  std::size_t value_start, value_end;
};

// Calls on_member(const Member&) for each top-level member of the object `body`, in order,
// while validating all of it. `open_end` is set past the `{`. False when `body` is not a
// valid JSON object (members may have been reported before that is known).
template <class OnMember>
bool for_each_member(std::string_view body, std::size_t& open_end, OnMember&& on_member) {
  JsonLexer lexer(body);
  if (lexer.next() != JsonToken::BeginObject) return false;
  open_end = lexer.end();
  for (;;) {
    const JsonToken key = lexer.next();
    if (key == JsonToken::EndObject) break;
    if (key != JsonToken::Key) return false;
    Member m;
    m.start = lexer.begin();
    m.raw_key = lexer.raw();
    m.key_escaped = lexer.escaped();
    JsonToken t = lexer.next();
    m.value_start = lexer.begin();
    if (t == JsonToken::BeginObject || t == JsonToken::BeginArray) {
      while (lexer.depth() > 1 && t != JsonToken::Invalid) t = lexer.next();  // to the value's end
    }
    if (t == JsonToken::Invalid) return false;
    m.value_end = lexer.end();
    on_member(m);
  }
  return lexer.next() == JsonToken::End;
}

// A key without a backslash costs one memcmp.
bool key_equals(const Member& m, std::string_view key) {
  return m.key_escaped ? json_raw_equals(m.raw_key, key) : m.raw_key == key;
}

std::optional<std::string_view> string_contents(std::string_view body, const Member& m) {
  if (body[m.value_start] != '"') return std::nullopt;
  return body.substr(m.value_start + 1, m.value_end - m.value_start - 2);
}

}  // namespace

bool top_level_strings(std::string_view body, std::span<const std::string_view> keys,
                       std::span<std::optional<std::string_view>> out) {
  for (auto& o : out) o.reset();
  std::size_t open_end = 0;
  const bool valid = for_each_member(body, open_end, [&](const Member& m) {
    for (std::size_t i = 0; i < keys.size() && i < out.size(); ++i) {
      if (key_equals(m, keys[i])) out[i] = string_contents(body, m);
    }
  });
  if (!valid) {
    for (auto& o : out) o.reset();
  }
  return valid;
}

std::optional<std::string_view> top_level_string(std::string_view body, std::string_view key) {
  std::optional<std::string_view> out;
  top_level_strings(body, std::span<const std::string_view>(&key, 1), std::span(&out, 1));
  return out;
}

std::optional<std::string> edit_json_body(std::string_view body, std::span<const BodyEdit> edits) {
  // Which edits have been written (or, for a later edit of the same key, are shadowed).
  constexpr std::size_t kInline = 64;
  std::array<bool, kInline> done_inline{};
  std::vector<bool> done_more;
  if (edits.size() > kInline) done_more.resize(edits.size() - kInline);
  const auto done = [&](std::size_t i) -> bool {
    return i < kInline ? done_inline[i] : static_cast<bool>(done_more[i - kInline]);
  };
  const auto set_done = [&](std::size_t i) {
    if (i < kInline) {
      done_inline[i] = true;
    } else {
      done_more[i - kInline] = true;
    }
  };
  for (std::size_t i = 0; i < edits.size(); ++i) {
    for (std::size_t j = 0; j < i && !done(i); ++j) {
      if (edits[j].key == edits[i].key) set_done(i);
    }
  }

  std::size_t room = body.size();
  for (const BodyEdit& e : edits) {
    if (e.json_value) room += json_string_size(e.key) + 1 + e.json_value->size() + 1;  // : and ,
  }
  std::string out;
  out.reserve(room);

  const auto write_member = [&](const BodyEdit& e) {
    append_json_string(out, e.key);
    out += ':';
    out += *e.json_value;
  };
  std::size_t emitted = 0;
  std::size_t prev_end = 0;  // where the previous member (kept or not) ended
  bool any_member = false;
  std::size_t open_end = 0;
  const bool valid = for_each_member(body, open_end, [&](const Member& m) {
    // The `{` and the spaces before the first member stay even if that member goes; a member
    // written after another one keeps the separator (`,` and spaces) that preceded it.
    if (!any_member) out.append(body.substr(0, m.start));
    const auto separator = [&] {
      if (emitted > 0) out.append(body.substr(prev_end, m.start - prev_end));
    };
    std::optional<std::size_t> edit;
    for (std::size_t i = 0; i < edits.size(); ++i) {
      if (key_equals(m, edits[i].key)) {
        edit = i;
        break;
      }
    }
    any_member = true;
    if (!edit) {
      separator();
      out.append(body.substr(m.start, m.value_end - m.start));
      ++emitted;
    } else if (edits[*edit].json_value && !done(*edit)) {
      separator();
      write_member(edits[*edit]);
      set_done(*edit);
      ++emitted;
    }
    prev_end = m.value_end;
  });
  if (!valid) return std::nullopt;

  if (!any_member) {
    out.append(body.substr(0, open_end));
    prev_end = open_end;
  }
  for (std::size_t i = 0; i < edits.size(); ++i) {
    if (!edits[i].json_value || done(i)) continue;
    if (emitted > 0) out += ',';
    write_member(edits[i]);
    ++emitted;
  }
  out.append(body.substr(prev_end));
  return out;
}

std::size_t json_string_size(std::string_view text) {
  std::size_t n = 2;
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t') {
      n += 2;
    } else if (c < 0x20) {
      n += 6;
    } else {
      n += 1;
    }
  }
  return n;
}

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  std::size_t run = 0;  // start of the bytes copied as they are
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out.append(text.substr(run, i - run));
    run = i + 1;
    out += '\\';
    switch (c) {
      case '"':
      case '\\':
        out += static_cast<char>(c);
        break;
      case '\b':
        out += 'b';
        break;
      case '\f':
        out += 'f';
        break;
      case '\n':
        out += 'n';
        break;
      case '\r':
        out += 'r';
        break;
      case '\t':
        out += 't';
        break;
      default:
        out += "u00";
        out += base::hex_digit(c >> 4);
        out += base::hex_digit(c & 0xF);
    }
  }
  out.append(text.substr(run));
  out += '"';
}

std::string json_string(std::string_view text) {
  std::string out;
  out.reserve(json_string_size(text));
  append_json_string(out, text);
  return out;
}

}  // namespace smartlb::http
