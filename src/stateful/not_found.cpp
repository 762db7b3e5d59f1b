#include "smartlb/stateful/not_found.hpp"

#include <string>

#include "smartlb/http/json_lexer.hpp"

namespace smartlb::stateful {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool message_says_not_found(std::string_view message) {
  const std::string m = lower(message);
  return m.find("not found") != std::string::npos || m.find("does not exist") != std::string::npos ||
         (m.starts_with("no ") && m.find(" found") != std::string::npos);
}

}  // namespace

bool says_not_found(unsigned status, std::string_view body) {
  if (status == 404) return true;
  if (status != 400) return false;
  // {"error": {"code": "..._not_found", "message": "... not found ..."}}
  http::JsonLexer lexer(body);
  std::string_view key;
  bool in_error = false;
  bool found = false;  // counts once the whole body is known to be JSON
  for (;;) {
    const http::JsonToken t = lexer.next();
    switch (t) {
      case http::JsonToken::Key:
        key = lexer.raw();
        break;
      case http::JsonToken::BeginObject:
        if (lexer.depth() == 2 && key == "error") in_error = true;
        break;
      case http::JsonToken::EndObject:
        if (lexer.depth() == 1) in_error = false;
        break;
      case http::JsonToken::String:
        if (in_error && lexer.depth() == 2) {
          if (key == "code" && lexer.raw().find("not_found") != std::string_view::npos) found = true;
          if (key == "message" && message_says_not_found(lexer.raw())) found = true;
        }
        break;
      case http::JsonToken::End:
        return found;
      case http::JsonToken::Invalid:
        return false;
      default:
        break;
    }
  }
}

}  // namespace smartlb::stateful
