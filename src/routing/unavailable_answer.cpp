#include "smartlb/routing/unavailable_answer.hpp"

namespace smartlb::routing {

UnavailableAnswer answer_unavailable(const Unavailability& u, std::size_t attempts,
                                     std::string_view deployment, std::string_view resource,
                                     bool rate_limited) {
  UnavailableAnswer a;
  // A request pinned to its objects' resource speaks of that resource: others may well serve.
  const std::string of =
      resource.empty() ? std::string()
                       : " of resource '" + std::string(resource) + "' (where this request's objects are)";
  if (u.not_found) {
    a.status = 404;
    a.type = "invalid_request_error";
    a.code = "model_not_found";
    a.retry_after = std::nullopt;
    a.message = deployment.empty() ? std::string("No backend has what this request names")
                                   : "The model or deployment '" + std::string(deployment.substr(0, 128)) +
                                         "' does not exist on any backend";
    a.message += " (each answered 404).";
    return a;
  }
  if (u.out_of_service) {
    // Nobody knows when an operator brings one back: no Retry-After (the SDKs back off alone).
    a.status = 503;
    a.type = "server_error";
    a.code = "no_backend_available";
    a.retry_after = std::nullopt;
    a.message = "Every backend" + of;
    if (!deployment.empty()) a.message += " for deployment '" + std::string(deployment.substr(0, 128)) + "'";
    a.message += " is drained or disabled by an operator.";
    return a;
  }
  // Nothing known to wait for (no backend at all, or one that just recovered): a second.
  a.retry_after = u.retry_after.count() > 0 ? u.retry_after : std::chrono::milliseconds(1000);
  if (u.throttled || rate_limited) {
    a.status = 429;
    a.type = "requests";
    a.code = "rate_limit_exceeded";
    a.message = "Every backend" + of + " is rate limited";
  } else if (attempts > 0) {
    a.status = 502;
    a.type = "server_error";
    a.code = "upstream_error";
    a.message = "Every backend" + of + " failed";
  } else {
    a.status = 503;
    a.type = "server_error";
    a.code = "no_backend_available";
    a.message = "No backend" + of + " is available";
  }
  if (!deployment.empty()) a.message.append(" for deployment '").append(deployment).append("'");
  a.message += "; retry after " + std::to_string(a.retry_after->count()) + " ms.";
  return a;
}

}  // namespace smartlb::routing
