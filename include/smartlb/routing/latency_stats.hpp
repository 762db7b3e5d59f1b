#pragma once
// How fast each target has been lately, for latency-based routing: the mean latency per output
// token of the requests a (backend, deployment) served within a lookback of up to an hour.
// Thread-safe; kept beside BackendStates (outside any RoutingTable), keyed the same way.
//
// Granularity: samples are kept in 10-second buckets (kBucket) over the last hour (kMaxLookback).
// A read over `lookback` counts every bucket that overlaps [now - lookback, now]: the samples
// of the last `lookback`, plus at most one bucket's worth (under 10 s) of older ones.
//
// Memory: one target costs kSlots buckets of 16 bytes (~5.8 KiB; a bucket sums in a float, 7
// significant digits, plenty for a mean). A target, once seen, is kept for the life of the
// LatencyStats. Deployment names can come from clients, so at most `max_keys` targets are kept
// (4096 by default: ~24 MiB at worst); samples for further targets are dropped, and reading
// them answers "no samples".
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/backend_id.hpp"

namespace smartlb::routing {

struct LatencyReading {
  double ms_per_token = 0;  // the mean over the samples (0 without samples)
  std::uint32_t samples = 0;
};

class LatencyStats {
 public:
  static constexpr base::Nanos kBucket = std::chrono::seconds(10);
  static constexpr base::Nanos kMaxLookback = std::chrono::minutes(60);
  // The buckets of a full lookback plus the current, partly elapsed one.
  static constexpr std::size_t kSlots = kMaxLookback / kBucket + 1;
  static constexpr std::size_t kDefaultMaxKeys = 4096;

  explicit LatencyStats(std::size_t max_keys = kDefaultMaxKeys);
  ~LatencyStats();
  LatencyStats(const LatencyStats&) = delete;
  LatencyStats& operator=(const LatencyStats&) = delete;

  // One served request: `latency` (negative counts as 0) over max(output_tokens, 1) tokens,
  // stored as milliseconds per token at time `now` (>= 0, a MonoNanos of the one clock).
  void record(BackendId id, std::string_view deployment, base::MonoNanos now, base::Nanos latency,
              std::int64_t output_tokens);

  // The mean and count of the samples of (id, deployment) in the last `lookback` at `now`
  // (see the granularity above). `lookback` is clamped to [0, kMaxLookback]; 0 reads the
  // current bucket only.
  LatencyReading read(BackendId id, std::string_view deployment, base::MonoNanos now,
                      base::Nanos lookback) const;

  // How many targets have samples (at most max_keys).
  std::size_t keys() const;

 private:
  struct Series;
  struct Key {
    BackendId id;
    std::string deployment;
  };
  struct KeyView {
    BackendId id;
    std::string_view deployment;
  };
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(const KeyView& k) const {
      return std::hash<std::string_view>{}(k.deployment) ^ (std::size_t{k.id.value} * 0x9E3779B97F4A7C15u);
    }
    std::size_t operator()(const Key& k) const { return (*this)(KeyView{k.id, k.deployment}); }
  };
  struct KeyEqual {
    using is_transparent = void;
    static KeyView view(const Key& k) { return {k.id, k.deployment}; }
    static KeyView view(const KeyView& k) { return k; }
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view(a).id == view(b).id && view(a).deployment == view(b).deployment;
    }
  };

  Series* find(BackendId id, std::string_view deployment) const;

  const std::size_t max_keys_;
  mutable std::shared_mutex mutex_;  // guards the map's shape; each Series guards its buckets
  std::unordered_map<Key, std::unique_ptr<Series>, KeyHash, KeyEqual> series_;
};

}  // namespace smartlb::routing
