#pragma once
// The other replicas' priority-class demand per target, as their messages tell it
// (redis::SharedClassDemand): the sum of each replica's last rates while fresh. Plain state on
// the caller's clock, bounded whatever the messages say (anyone with access to Redis may
// publish).
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/class_reserve.hpp"

namespace smartlb::redis {

class HeardDemand {
 public:
  static constexpr std::size_t kMaxTargets = 4096;
  static constexpr std::size_t kMaxReplicas = 64;  // per target

  explicit HeardDemand(base::Nanos ttl) : ttl_(ttl) {}

  struct Sum {
    routing::ClassDemand::Rates rates{};
    base::MonoNanos until = 0;  // when the oldest rate in it is no longer fresh
  };
  // `replica` says it sends `rates` to `target` now: the fresh rates of every replica there,
  // summed. Nullopt when the message is not kept (too many replicas at one target).
  std::optional<Sum> hear(const std::string& target, const std::string& replica,
                          const routing::ClassDemand::Rates& rates, base::MonoNanos now);
  // A target this replica does not have: nothing kept of it.
  void forget(const std::string& target) { targets_.erase(target); }
  std::size_t targets() const { return targets_.size(); }

 private:
  struct Heard {
    routing::ClassDemand::Rates rates;
    base::MonoNanos at = 0;
  };
  base::Nanos ttl_;
  std::unordered_map<std::string, std::unordered_map<std::string, Heard>> targets_;
};

}  // namespace smartlb::redis
