#pragma once
// What the mechanism of forwarding (UpstreamExchange, and the WebSocket relay after it) needs of
// its worker, and nothing else of it: the upstream pool, the process settings, the clock, the
// rooms a relay borrows, the drain, and what a WebSocket session needs. Each worker makes one.
#include <list>
#include <memory>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/base/random.hpp"
#include "smartlb/config/config.hpp"

namespace smartlb::net {

class UpstreamPool;
struct RelayScratch;
struct RelayRound;
class EventRooms;
class DrainListener;

struct ExchangeContext {
  UpstreamPool& pool;
  const config::Config& cfg;  // process settings: timeouts, the hold-back's size
  const base::Clock& clock;
  std::vector<std::unique_ptr<RelayScratch>>& spare_scratch;  // lent out by RelayScratchLease
  std::vector<std::unique_ptr<RelayRound>>& spare_rounds;     // lent out by RelayRoundLease
  EventRooms& spare_event_rooms;                              // lent to streams as they read
  const bool& draining;                                       // the worker's drain began
  std::list<DrainListener*>& drain_listeners;                 // a WebSocket session listens for it
  base::FastRandom& rng;                                      // a WebSocket session's frame masks
};

}  // namespace smartlb::net
