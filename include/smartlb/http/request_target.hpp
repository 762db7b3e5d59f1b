#pragma once
// The client's request-target, split so exactly the deployment segment can be rewritten.
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::http {

struct RequestTarget {
  std::string_view path;   // starts with '/'
  std::string_view query;  // without '?', may be empty
  // For /openai/deployments/{d}/...: the raw segment {d} and where it starts in `path`.
  std::string_view deployment;
  std::size_t deployment_offset = 0;
  bool has_deployment() const { return !deployment.empty(); }
};

// nullopt unless `target` is origin-form ("/path[?query]") without control characters.
std::optional<RequestTarget> parse_request_target(std::string_view target);

// Appends base_path + path (deployment segment replaced when `deployment_override` is
// non-empty) + "?" + query to `out` (no allocation when `out` has room).
void append_upstream_target(std::string& out, std::string_view base_path, const RequestTarget& t,
                            std::string_view deployment_override);

}  // namespace smartlb::http
