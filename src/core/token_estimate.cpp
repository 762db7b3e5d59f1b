#include "smartlb/token_estimate.hpp"

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

namespace smartlb {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Reads what the estimate needs in one SAX pass over the body: no DOM of the whole request
// (a DOM parse was a third of the instructions per request with a declared quota).
// Counts the characters of text in the top-level value under `prompt_key`: strings, arrays
// of strings or of content parts (objects' "text" and "content" members, recursively), and
// token arrays (4 characters a token); and the top-level completion budget keys.
class EstimateReader final : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit EstimateReader(std::string_view prompt_key) : prompt_key_(prompt_key) {}

  std::size_t characters = 0;
  std::int64_t budget[3] = {0, 0, 0};  // max_tokens, max_completion_tokens, max_output_tokens
  bool root_is_object = false;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t v) override { return integer(v); }
  bool number_unsigned(number_unsigned_t v) override {
    return integer(v > static_cast<number_unsigned_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(v));
  }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t& v) override {
    if (counts()) characters += v.size();
    return value();
  }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(true); }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    if (frames_.size() == 1) {
      f.key_counts = k == prompt_key_;
      budget_slot_ = k == "max_tokens" ? 0 : k == "max_completion_tokens" ? 1 : k == "max_output_tokens" ? 2 : -1;
    } else {
      f.key_counts = f.counted && (k == "text" || k == "content");
    }
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  struct Frame {
    bool object;
    bool counted;          // values in here count (arrays; objects: only under text/content)
    bool key_counts = false;
  };

  // Whether the value being read now counts as prompt text.
  bool counts() const {
    if (frames_.empty()) return false;
    const Frame& f = frames_.back();
    return f.object ? f.key_counts : f.counted;
  }
  bool value() {
    budget_slot_ = -1;
    return true;
  }
  bool integer(std::int64_t v) {
    if (counts()) characters += 4;
    if (frames_.size() == 1 && budget_slot_ >= 0 && v > 0 && budget[budget_slot_] == 0) budget[budget_slot_] = v;
    return value();
  }
  bool open(bool object) {
    if (frames_.empty()) {
      root_is_object = object;
      frames_.push_back({object, false});
    } else {
      frames_.push_back({object, counts()});
    }
    return value();
  }
  bool close() {
    frames_.pop_back();
    return true;
  }

  std::string_view prompt_key_;
  std::vector<Frame> frames_;
  int budget_slot_ = -1;  // the top-level key just read names a completion budget
};

}  // namespace

std::int64_t estimate_request_tokens(std::string_view path, std::string_view body) {
  std::string_view key;
  bool completion = true;
  bool whole_body = false;
  if (ends_with(path, "/chat/completions")) {
    key = "messages";
  } else if (ends_with(path, "/completions")) {
    key = "prompt";
  } else if (ends_with(path, "/embeddings")) {
    key = "input";
    completion = false;  // embeddings produce no completion tokens
  } else if (ends_with(path, "/responses")) {
    key = "input";
  } else {
    whole_body = true;
  }
  EstimateReader r(key);
  if (!nlohmann::json::sax_parse(body, &r) || !r.root_is_object)
    return static_cast<std::int64_t>((body.size() + 3) / 4) + kDefaultMaxTokensEstimate;
  const std::size_t chars = whole_body ? body.size() : r.characters;
  // Rounded up and at least one: never below the backend's own (rounded-down) estimate.
  const std::int64_t prompt = std::max<std::int64_t>(static_cast<std::int64_t>((chars + 3) / 4), 1);
  std::int64_t budget = kDefaultMaxTokensEstimate;
  for (const std::int64_t b : r.budget)
    if (b > 0) {
      budget = b;
      break;
    }
  return prompt + (completion ? budget : 0);
}

}  // namespace smartlb
