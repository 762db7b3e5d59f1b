#include "smartlb/http/request_target.hpp"

namespace smartlb::http {

std::optional<RequestTarget> parse_request_target(std::string_view target) {
  if (target.empty() || target.front() != '/') return std::nullopt;
  // No early exit, and an unsigned char accumulator (a bool one defeats GCC's vectorizer): the
  // compiler then checks many bytes per instruction. This runs for every request.
  unsigned char bad = 0;
  for (char c : target) {
    const auto u = static_cast<unsigned char>(c);
    bad |= static_cast<unsigned char>(u <= 0x20) | static_cast<unsigned char>(u == 0x7f);
  }
  if (bad) return std::nullopt;
  RequestTarget t;
  const auto q = target.find('?');
  t.path = target.substr(0, q);
  if (q != std::string_view::npos) t.query = target.substr(q + 1);
  // Also drop a fragment a careless client might send; it never goes on the wire upstream.
  if (const auto h = t.query.find('#'); h != std::string_view::npos) t.query = t.query.substr(0, h);
  if (const auto h = t.path.find('#'); h != std::string_view::npos) t.path = t.path.substr(0, h);

  constexpr std::string_view prefix = "/openai/deployments/";
  if (t.path.substr(0, prefix.size()) == prefix) {
    const std::string_view rest = t.path.substr(prefix.size());
    const auto end = rest.find('/');
    const std::string_view segment = rest.substr(0, end);
    if (!segment.empty()) {
      t.deployment = segment;
      t.deployment_offset = prefix.size();
    }
  }
  return t;
}

void append_upstream_target(std::string& out, std::string_view base_path, const RequestTarget& t,
                            std::string_view deployment_override) {
  out.append(base_path);
  if (t.has_deployment() && !deployment_override.empty()) {
    out.append(t.path.substr(0, t.deployment_offset));
    out.append(deployment_override);
    out.append(t.path.substr(t.deployment_offset + t.deployment.size()));
  } else {
    out.append(t.path);
  }
  if (!t.query.empty()) {
    out.push_back('?');
    out.append(t.query);
  }
}

}  // namespace smartlb::http
