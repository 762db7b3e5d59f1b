#pragma once
// Health probes shared by replicas (docs/scale-out.md): the turn to probe a backend is a lease
// in Redis (SET NX PX, for one interval); the replica that takes it probes and publishes what it
// found under the backend's result key; the others read that. Off the request path: probes run
// on the prober's thread and the answers come on the Redis thread. While Redis is down every
// turn is this replica's.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "smartlb/redis/redis_service.hpp"
#include "smartlb/routing/probe_sharing.hpp"

namespace smartlb::redis {

class SharedProbes final : public routing::ProbeSharer {
 public:
  explicit SharedProbes(RedisService& redis);
  SharedProbes(const SharedProbes&) = delete;
  SharedProbes& operator=(const SharedProbes&) = delete;

  void take_turn(const std::string& backend, base::Nanos interval, std::function<void(Turn)> done) override;
  void publish(const std::string& backend, const routing::SharedProbeResult& result,
               base::Nanos ttl) override;

  // Turns this replica took, and turns another replica held.
  std::uint64_t turns_taken() const { return taken_.load(std::memory_order_relaxed); }
  std::uint64_t turns_lost() const { return lost_.load(std::memory_order_relaxed); }

  // The script: KEYS[1] the turn key, KEYS[2] the result key; ARGV: this replica's id, the
  // interval in ms. Returns {1} when the turn is this replica's, else {0, the turn's ms left,
  // the last result ("" when none)}.
  static const RedisScript& script();

 private:
  RedisService& redis_;
  const std::string prefix_;
  std::atomic<std::uint64_t> taken_{0}, lost_{0};
};

// A result as it is kept in Redis (JSON), and read back; none for a value that is not one
// (written by another version, or by hand).
std::string encode(const routing::SharedProbeResult& r);
std::optional<routing::SharedProbeResult> decode_probe_result(std::string_view text);

}  // namespace smartlb::redis
