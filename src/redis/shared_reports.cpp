#include "smartlb/redis/shared_reports.hpp"

#include "smartlb/redis/keys.hpp"

namespace smartlb::redis {

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

void SharedReports::on_moment(const routing::MomentNotice& notice) {
  if (!redis_.up()) return;
  const MomentMessage m{std::string(notice.backend), std::string(notice.deployment), redis_.replica_id(),
                        notice.kind, states_.to_epoch_ms(notice.at)};
  if (m.kind == routing::MomentNotice::Kind::Retry) {  // 429s that crossed one another name one moment
    std::lock_guard lock(mutex_);
    if (last_retry_ms_.size() >= kMaxTargets) last_retry_ms_.clear();
    std::int64_t& last = last_retry_ms_[m.backend + '/' + m.deployment];
    if (m.at_ms >= last - kMinGap.count() && m.at_ms < last + kMinGap.count()) return;
    last = m.at_ms;
  }
  redis_.command({"PUBLISH", channel_, encode(m)});
  moments_published_.fetch_add(1, std::memory_order_relaxed);
}

void SharedReports::apply(std::string_view payload) {
  if (const auto m = decode_report(payload)) {
    if (m->replica == redis_.replica_id()) return;  // our own is applied already
    if (states_.apply_shared_report(m->backend, m->deployment, m->report, m->sent_ms))
      applied_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const auto m = decode_moment(payload);
  if (!m || m->replica == redis_.replica_id()) return;
  if (states_.apply_shared_moment(m->backend, m->deployment, m->kind, m->at_ms))
    moments_applied_.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace smartlb::redis
