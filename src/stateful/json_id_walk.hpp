#pragma once
// A walk over a JSON text's tokens that knows, for each string value, whether it stands where
// an object's id does (id_fields: under an id key, or in an id list, and not inside user data)
// and under which keys it sits. The response tagger and the request reader share it.
#include <string_view>
#include <vector>

#include "id_fields.hpp"
#include "smartlb/http/json_lexer.hpp"

namespace smartlb::stateful::detail {

using smartlb::http::JsonLexer;
using smartlb::http::JsonToken;

class JsonIdWalk {
 public:
  explicit JsonIdWalk(std::string_view json) : lexer_(json) {}

  // Deeper than this is refused: a frame per level is kept, and the lexer itself has no limit
  // (a 32 MiB request body of '[' would be 32 million frames).
  static constexpr std::size_t kMaxDepth = 1024;

  http::JsonToken next() {
    if (too_deep_) return http::JsonToken::Invalid;
    const http::JsonToken t = lexer_.next();
    switch (t) {
      case http::JsonToken::Key:
        key_ = lexer_.raw();
        break;
      case http::JsonToken::BeginObject:
      case http::JsonToken::BeginArray: {
        if (frames_.size() >= kMaxDepth) {
          too_deep_ = true;
          return http::JsonToken::Invalid;
        }
        const bool object = t == http::JsonToken::BeginObject;
        const Frame* parent = frames_.empty() ? nullptr : &frames_.back();
        const bool member = parent && parent->object;
        Frame f;
        f.object = object;
        f.key = member ? key_ : std::string_view();
        f.user_data = (parent && parent->user_data) || (member && object && user_data_key(key_));
        f.id_list = member && !object && id_list_key(key_);
        frames_.push_back(f);
        break;
      }
      case http::JsonToken::EndObject:
      case http::JsonToken::EndArray:
        frames_.pop_back();
        break;
      default:
        break;
    }
    return t;
  }

  // Of the String token next() returned last:
  // Whether it stands where an id does.
  bool is_id() const {
    if (frames_.empty()) return false;
    const Frame& f = frames_.back();
    if (f.user_data) return false;
    return f.object ? id_key(key_) : f.id_list;
  }
  // Its member's key (in an object) or its array's key.
  std::string_view key() const {
    if (frames_.empty()) return {};
    return frames_.back().object ? key_ : frames_.back().key;
  }
  // The key its container sits under ("" at the top or in an array).
  std::string_view container_key() const { return frames_.empty() ? std::string_view() : frames_.back().key; }

  const http::JsonLexer& lexer() const { return lexer_; }

 private:
  struct Frame {
    std::string_view key;  // the member it is the value of ("": an array element, or the top)
    bool object = false;
    bool user_data = false;  // inside a metadata object
    bool id_list = false;    // an array of ids
  };
  http::JsonLexer lexer_;
  std::string_view key_;  // the last member key read
  std::vector<Frame> frames_;
  bool too_deep_ = false;
};

}  // namespace smartlb::stateful::detail
