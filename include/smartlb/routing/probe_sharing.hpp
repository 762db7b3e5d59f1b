#pragma once
// Replicas probing together (redis::SharedProbes, docs/scale-out.md): in each interval one
// replica takes the turn to probe a backend (a lease in Redis) and publishes what it found; the
// others read that result instead of probing. So a backend sees one probe per interval in total,
// however many replicas run, and every replica passes over a dark backend as soon as one found it.
// Without Redis (or while it is down) every turn is this replica's: probing stays local.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "smartlb/base/clock.hpp"

namespace smartlb::routing {

// What one probe found, as replicas share it.
struct SharedProbeResult {
  bool up = false;
  unsigned status = 0;       // the answer's status (0: none came)
  std::string detail;        // why it is down
  std::int64_t unix_ms = 0;  // when the probe ended
  std::string replica;       // who probed ("": this replica)
};

class ProbeSharer {
 public:
  struct Turn {
    bool mine = true;  // this replica probes now (and publishes what it finds)
    // Else: the latest result a replica published (none yet: its probe is still running), and
    // how long the other replica's turn lasts.
    std::optional<SharedProbeResult> last;
    base::Nanos turn_left{0};
  };
  virtual ~ProbeSharer() = default;
  // Whose turn it is to probe `backend` for the next `interval`. Returns at once; `done` runs on
  // another thread (with `mine` at once when Redis is not up).
  virtual void take_turn(const std::string& backend, base::Nanos interval,
                         std::function<void(Turn)> done) = 0;
  // What this replica's probe found, kept for `ttl` (older results are stale) and signed with
  // this replica's id. Returns at once.
  virtual void publish(const std::string& backend, const SharedProbeResult& result, base::Nanos ttl) = 0;
};

// When a replica that lost the turn asks again. The result it read belongs to the running turn
// when the probe ended after that turn began (`age` ≤ the turn's elapsed time): then at the
// turn's end, when the next turn is to be taken. Otherwise that replica's probe is still running:
// once it must have ended (its timeout, and a margin, after the turn began), and never later than
// the turn's end. Pure.
base::Nanos next_turn_check(base::Nanos interval, base::Nanos probe_timeout, base::Nanos turn_left,
                            std::optional<base::Nanos> result_age);

}  // namespace smartlb::routing
