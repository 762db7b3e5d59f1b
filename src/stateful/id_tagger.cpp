#include "smartlb/stateful/id_tagger.hpp"

#include "json_id_walk.hpp"

namespace smartlb::stateful {

using detail::JsonIdWalk;
using detail::JsonToken;

bool tag_json_ids(std::string_view json, const ResourceTag& tag, std::string& out) {
  const std::size_t start = out.size();
  JsonIdWalk walk(json);
  std::size_t copied = 0;  // bytes of `json` already in `out`
  for (;;) {
    switch (walk.next()) {
      case http::JsonToken::String:
        if (walk.is_id() && taggable(walk.lexer().raw())) {
          const std::size_t quote = walk.lexer().end() - 1;  // the closing quote
          out.append(json.substr(copied, quote - copied));
          out.append(tag.view());
          copied = quote;
        }
        break;
      case http::JsonToken::End:
        out.append(json.substr(copied));
        return true;
      case http::JsonToken::Invalid:
        out.resize(start);
        return false;
      default:
        break;
    }
  }
}

}  // namespace smartlb::stateful
