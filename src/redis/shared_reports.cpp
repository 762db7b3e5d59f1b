#include "smartlb/redis/shared_reports.hpp"

#include <nlohmann/json.hpp>

#include "smartlb/redis/keys.hpp"

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

}  // namespace

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

SharedReports::SharedReports(RedisService& redis, routing::BackendStates& states)
    : redis_(redis), states_(states), channel_(report_channel(redis.key_prefix())) {
  redis_.subscribe(channel_, [this](std::string_view payload) { apply(payload); });
  states_.set_report_listener(this);
}

SharedReports::~SharedReports() { states_.set_report_listener(nullptr); }

void SharedReports::on_report(const routing::ReportNotice& notice) {
  if (!redis_.up()) return;
  ReportMessage m{std::string(notice.backend), std::string(notice.deployment), redis_.replica_id(),
                  states_.to_epoch_ms(notice.sent), notice.report};
  {
    std::lock_guard lock(mutex_);
    if (last_ms_.size() >= kMaxTargets) last_ms_.clear();  // client-named deployments: bounded
    std::int64_t& last = last_ms_[m.backend + '/' + m.deployment];
    if (m.sent_ms < last + kMinGap.count()) return;  // one a moment is enough: the next carries on
    last = m.sent_ms;
  }
  redis_.command({"PUBLISH", channel_, encode(m)});
  published_.fetch_add(1, std::memory_order_relaxed);
}

void SharedReports::apply(std::string_view payload) {
  const auto m = decode_report(payload);
  if (!m || m->replica == redis_.replica_id()) return;  // our own is applied already
  if (states_.apply_shared_report(m->backend, m->deployment, m->report, m->sent_ms))
    applied_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace smartlb::redis
