#pragma once
// Short rate-limit reports shared by replicas (docs/scale-out.md). A backend's
// `x-ratelimit-remaining-*` counts every replica's sends, but each replica subtracts only its
// own from the last report it read: with three replicas, each saw room the others had taken,
// and the backends answered 429 eight times as often as to one replica. So a short report read
// here (routing::ReportListener) is published on a channel, at most one per backend and
// deployment every kMinGap, and the others apply it (BackendStates::apply_shared_report) as
// the latest word on what is left. Pub/sub only: nothing is stored, nothing waits on Redis.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "smartlb/redis/redis_service.hpp"
#include "smartlb/routing/backend_states.hpp"

namespace smartlb::redis {

// One shared report as it travels: who read it, for which target, from a request sent when.
struct ReportMessage {
  std::string backend, deployment, replica;
  std::int64_t sent_ms = 0;  // Unix ms
  routing::RateLimitReport report;
};
std::string encode(const ReportMessage& m);
std::optional<ReportMessage> decode_report(std::string_view text);

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

  std::uint64_t published() const { return published_.load(std::memory_order_relaxed); }
  std::uint64_t applied() const { return applied_.load(std::memory_order_relaxed); }

 private:
  void apply(std::string_view payload);  // on the Redis thread

  RedisService& redis_;
  routing::BackendStates& states_;
  const std::string channel_;
  std::mutex mutex_;  // the last publication's time per "backend/deployment"
  std::unordered_map<std::string, std::int64_t> last_ms_;
  std::atomic<std::uint64_t> published_{0}, applied_{0};
};

}  // namespace smartlb::redis
