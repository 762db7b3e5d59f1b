#include "smartlb/routing/latency_stats.hpp"

#include <algorithm>
#include <array>

namespace smartlb::routing {

struct LatencyStats::Series {
  struct Bucket {
    std::int64_t index = -1;  // now / kBucket of the samples it holds
    float sum_ms_per_token = 0;
    std::uint32_t count = 0;
  };
  std::mutex mutex;
  std::array<Bucket, kSlots> ring;
};

namespace {
constexpr std::int64_t kBucketNanos = LatencyStats::kBucket.count();
}

LatencyStats::LatencyStats(std::size_t max_keys) : max_keys_(max_keys) {}
LatencyStats::~LatencyStats() = default;

LatencyStats::Series* LatencyStats::find(BackendId id, std::string_view deployment) const {
  std::shared_lock lock(mutex_);
  const auto it = series_.find(KeyView{id, deployment});
  return it == series_.end() ? nullptr : it->second.get();
}

void LatencyStats::record(BackendId id, std::string_view deployment, base::MonoNanos now, base::Nanos latency,
                          std::int64_t output_tokens) {
  Series* s = find(id, deployment);
  if (s == nullptr) {
    std::unique_lock lock(mutex_);
    const auto it = series_.find(KeyView{id, deployment});
    if (it != series_.end()) {
      s = it->second.get();
    } else {
      if (series_.size() >= max_keys_) return;
      s = series_.emplace(Key{id, std::string(deployment)}, std::make_unique<Series>()).first->second.get();
    }
  }
  const double ms = std::max<std::int64_t>(latency.count(), 0) / 1e6;
  const double per_token = ms / static_cast<double>(std::max<std::int64_t>(output_tokens, 1));
  const std::int64_t index = now / kBucketNanos;
  std::lock_guard lock(s->mutex);
  Series::Bucket& b = s->ring[static_cast<std::size_t>(index) % kSlots];
  if (b.index != index) b = Series::Bucket{index, 0, 0};
  b.sum_ms_per_token += static_cast<float>(per_token);
  ++b.count;
}

LatencyReading LatencyStats::read(BackendId id, std::string_view deployment, base::MonoNanos now,
                                  base::Nanos lookback) const {
  Series* s = find(id, deployment);
  if (s == nullptr) return {};
  lookback = std::clamp(lookback, base::Nanos(0), kMaxLookback);
  const std::int64_t newest = now / kBucketNanos;
  const std::int64_t oldest = (now - lookback.count()) / kBucketNanos;
  double sum = 0;
  std::uint32_t count = 0;
  std::lock_guard lock(s->mutex);
  for (std::int64_t index = oldest; index <= newest; ++index) {
    const Series::Bucket& b = s->ring[static_cast<std::size_t>(index) % kSlots];
    if (b.index != index) continue;
    sum += b.sum_ms_per_token;
    count += b.count;
  }
  return {count == 0 ? 0 : sum / count, count};
}

std::size_t LatencyStats::keys() const {
  std::shared_lock lock(mutex_);
  return series_.size();
}

}  // namespace smartlb::routing
