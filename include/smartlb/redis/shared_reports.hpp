#pragma once
// Rate-limit reports shared by replicas (docs/scale-out.md#rate-limit-reports,
// routing/report_sharing.hpp). A backend's `x-ratelimit-remaining-*` counts every replica's
// sends, but each replica subtracts only its own from the last report it read: with three
// replicas, each saw room the others had taken, and the backends answered 429 eight times as
// often as to one replica. So a short report read here (routing::ReportListener) is published on
// a channel, at most one per backend and deployment every kMinGap, and the others apply it
// (BackendStates::apply_shared_report) as the latest word on what is left. So are the probe this
// replica takes at a short target and the moment a 429 there names (its Retry-After): the others
// leave the target to that probe, and test it when the backend said, as this replica does
// (BackendStates::apply_shared_moment). Pub/sub only: nothing is stored, nothing waits on Redis.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "smartlb/redis/redis_service.hpp"
#include "smartlb/redis/report_message.hpp"
#include "smartlb/routing/backend_states.hpp"

namespace smartlb::redis {

class SharedReports final : public routing::ReportListener {
 public:
  static constexpr std::chrono::milliseconds kMinGap{10};
  static constexpr std::size_t kMaxTargets = 4096;

  // Subscribes (call before redis.start()) and listens to `states`.
  SharedReports(RedisService& redis, routing::BackendStates& states);
  ~SharedReports() override;  // stops listening; stop `redis` first
  SharedReports(const SharedReports&) = delete;
  SharedReports& operator=(const SharedReports&) = delete;

  void on_report(const routing::ReportNotice& notice) override;
  void on_moment(const routing::MomentNotice& notice) override;

  std::uint64_t published() const { return published_.load(std::memory_order_relaxed); }
  std::uint64_t applied() const { return applied_.load(std::memory_order_relaxed); }
  std::uint64_t moments_published() const { return moments_published_.load(std::memory_order_relaxed); }
  std::uint64_t moments_applied() const { return moments_applied_.load(std::memory_order_relaxed); }

 private:
  void apply(std::string_view payload);  // on the Redis thread

  RedisService& redis_;
  routing::BackendStates& states_;
  const std::string channel_;
  std::mutex mutex_;  // the last publication's time per "backend/deployment"
  std::unordered_map<std::string, std::int64_t> last_ms_;
  std::unordered_map<std::string, std::int64_t> last_retry_ms_;  // a 429's moment: one per kMinGap too
  std::atomic<std::uint64_t> published_{0}, applied_{0}, moments_published_{0}, moments_applied_{0};
};

}  // namespace smartlb::redis
