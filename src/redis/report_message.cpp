#include "smartlb/redis/report_message.hpp"

#include <nlohmann/json.hpp>

namespace smartlb::redis {

namespace {

// A count or a delay: a non-negative integer member, or absent.
bool read_count(const nlohmann::json& j, const char* name, std::optional<std::int64_t>& out) {
  const auto it = j.find(name);
  if (it == j.end()) return true;
  if (!it->is_number_integer() || it->get<std::int64_t>() < 0) return false;
  out = it->get<std::int64_t>();
  return true;
}

bool read_text(const nlohmann::json& j, const char* name, std::string& out) {
  const auto it = j.find(name);
  if (it == j.end() || !it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

// The kinds as they travel: a replica that does not know one ignores its messages.
constexpr const char* kProbe = "probe";
constexpr const char* kRetry = "retry";

}  // namespace

std::string encode(const MomentMessage& m) {
  const nlohmann::json j{{"k", m.kind == routing::MomentNotice::Kind::Probe ? kProbe : kRetry},
                         {"b", m.backend},
                         {"d", m.deployment},
                         {"r", m.replica},
                         {"at", m.at_ms}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<MomentMessage> decode_moment(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  // Written by other replicas (or anyone with access to Redis): every member's type is checked.
  MomentMessage m;
  std::string kind;
  std::optional<std::int64_t> at;
  if (!read_text(j, "k", kind) || !read_text(j, "b", m.backend) || !read_text(j, "d", m.deployment) ||
      !read_text(j, "r", m.replica) || !read_count(j, "at", at) || !at || *at == 0)
    return std::nullopt;
  if (kind == kProbe)
    m.kind = routing::MomentNotice::Kind::Probe;
  else if (kind == kRetry)
    m.kind = routing::MomentNotice::Kind::Retry;
  else
    return std::nullopt;
  m.at_ms = *at;
  return m;
}

std::string encode(const ReportMessage& m) {
  nlohmann::json j{{"b", m.backend}, {"d", m.deployment}, {"r", m.replica}, {"t", m.sent_ms}};
  const routing::RateLimitReport& r = m.report;
  if (r.remaining_tokens) j["rt"] = *r.remaining_tokens;
  if (r.remaining_requests) j["rr"] = *r.remaining_requests;
  if (r.reset_tokens) j["xt"] = r.reset_tokens->count();
  if (r.reset_requests) j["xr"] = r.reset_requests->count();
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::optional<ReportMessage> decode_report(std::string_view text) {
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  // Written by other replicas (or anyone with access to Redis): every member's type is checked.
  ReportMessage m;
  std::optional<std::int64_t> sent, reset_tokens, reset_requests;
  if (!read_text(j, "b", m.backend) || !read_text(j, "d", m.deployment) || !read_text(j, "r", m.replica) ||
      !read_count(j, "t", sent) || !sent || !read_count(j, "rt", m.report.remaining_tokens) ||
      !read_count(j, "rr", m.report.remaining_requests) || !read_count(j, "xt", reset_tokens) ||
      !read_count(j, "xr", reset_requests) || m.report.empty())
    return std::nullopt;
  m.sent_ms = *sent;
  if (reset_tokens) m.report.reset_tokens = std::chrono::milliseconds(*reset_tokens);
  if (reset_requests) m.report.reset_requests = std::chrono::milliseconds(*reset_requests);
  return m;
}

}  // namespace smartlb::redis
