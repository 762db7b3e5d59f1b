#pragma once
// Which rule a request follows: the first whose conditions all hold (TrueFoundry's `when`).
// Plain data in, yes or no out.
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace smartlb {

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

}  // namespace smartlb
