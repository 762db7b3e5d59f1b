#pragma once
// Which rule a request follows: the first whose conditions all hold (TrueFoundry's `when`).
// Plain data in, yes or no out.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace smartlb::routing {

using MetadataPair = std::pair<std::string, std::string>;

// What is known of a request when it is matched.
struct RequestFacts {
  std::span<const std::string> subjects;   // of the client's key ("team:search", "user:alice")
  std::string_view model;                  // the deployment path segment, or the body's `model`
  std::span<const MetadataPair> metadata;  // the x-smartlb-metadata header's members
};

struct RuleConditions {
  std::vector<std::string> subjects;   // any of them (empty: anyone)
  std::vector<std::string> models;     // any of them (empty: any model)
  std::vector<MetadataPair> metadata;  // every one of them, exactly

  bool empty() const { return subjects.empty() && models.empty() && metadata.empty(); }
  bool matches(const RequestFacts& facts) const;
};

// The rules a request may match, found by its model without trying every rule: a rule listing
// models is indexed under each of them, the others may match any request. Candidates come in
// rule order, so the first that matches is the first rule that matches.
class RuleIndex {
 public:
  RuleIndex() = default;
  explicit RuleIndex(std::span<const RuleConditions> rules);

  // Calls `fn(i)` for each candidate rule `i` for `model`, in order, until `fn` returns true.
  // Returns the `i` it stopped at, or -1.
  template <class Fn>
  std::int64_t find(std::string_view model, Fn&& fn) const {
    static const std::vector<std::uint32_t> kNone;
    auto it = by_model_.find(model);
    const std::vector<std::uint32_t>& listed = it == by_model_.end() ? kNone : it->second;
    std::size_t a = 0, b = 0;
    while (a < listed.size() || b < any_model_.size()) {
      const bool take_listed = b == any_model_.size() || (a < listed.size() && listed[a] < any_model_[b]);
      const std::uint32_t i = take_listed ? listed[a++] : any_model_[b++];
      if (fn(i)) return i;
    }
    return -1;
  }

 private:
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::uint32_t> any_model_;  // rules without models, in order
  std::unordered_map<std::string, std::vector<std::uint32_t>, StringHash, std::equal_to<>> by_model_;
};

}  // namespace smartlb::routing
