#include "smartlb/stateful/stateful_path.hpp"

#include <algorithm>
#include <array>

namespace smartlb::stateful {
namespace {

// The APIs whose objects live on the resource that created them.
constexpr std::array<std::string_view, 11> kCollections = {
    "responses",  "conversations", "files",       "uploads",    "batches", "vector_stores",
    "assistants", "threads",       "fine_tuning", "containers", "evals"};

// The words these APIs put in an object's place: actions (cancel, complete, ...), sub-collections
// named right after the collection (threads/runs, responses/input_tokens), fine_tuning's.
constexpr std::array<std::string_view, 27> kApiWords = {
    "alpha",        "cancel",       "checkpoints",  "compact",     "complete",
    "content",      "events",       "file_batches", "files",       "graders",
    "input_items",  "input_tokens", "items",        "jobs",        "messages",
    "output_items", "parts",        "pause",        "permissions", "resume",
    "run",          "runs",         "search",       "steps",       "submit_tool_outputs",
    "validate",     "versions"};

}  // namespace

bool is_api_word(std::string_view segment) {
  return std::find(kApiWords.begin(), kApiWords.end(), segment) != kApiWords.end();
}

StatefulPath classify_path(std::string_view path) {
  StatefulPath s;
  std::size_t at = 0;
  if (path.starts_with("/openai/v1/")) {
    s.prefix = ApiPrefix::AzureV1;
    at = 11;
  } else if (path.starts_with("/openai/")) {
    s.prefix = ApiPrefix::Azure;
    at = 8;
  } else if (path.starts_with("/v1/")) {
    s.prefix = ApiPrefix::V1;
    at = 4;
  } else {
    return s;
  }
  const std::size_t end = std::min(path.find('/', at), path.size());
  const std::string_view first = path.substr(at, end - at);
  if (std::find(kCollections.begin(), kCollections.end(), first) == kCollections.end()) return s;
  s.collection = first;
  s.rest = std::min(end + 1, path.size());
  s.content = path.ends_with("/content");
  return s;
}

}  // namespace smartlb::stateful
