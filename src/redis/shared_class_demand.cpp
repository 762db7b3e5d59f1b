#include "smartlb/redis/shared_class_demand.hpp"

#include <algorithm>

#include "smartlb/redis/keys.hpp"

namespace smartlb::redis {

SharedClassDemand::SharedClassDemand(RedisService& redis, routing::BackendStates& states,
                                     const base::Clock& clock)
    : redis_(redis),
      states_(states),
      clock_(clock),
      channel_(class_demand_channel(redis.key_prefix())),
      ticker_(redis, kPeriod, [this] { publish(); }) {
  redis_.subscribe(channel_, [this](std::string_view payload) { apply(payload); });
}

void SharedClassDemand::publish() {
  DemandMessage m{redis_.replica_id(), states_.class_demand(kMinRequestsPerSecond)};
  if (m.targets.empty()) return;           // nothing sent lately, or no lower class anywhere
  if (m.targets.size() > kMaxPublished) {  // a different part each time: every target's demand travels
    const std::size_t first = next_published_ % m.targets.size();
    std::rotate(m.targets.begin(), m.targets.begin() + static_cast<std::ptrdiff_t>(first), m.targets.end());
    m.targets.resize(kMaxPublished);
    next_published_ = first + kMaxPublished;
  }
  redis_.command({"PUBLISH", channel_, encode(m)});
}

void SharedClassDemand::apply(std::string_view payload) {
  const auto m = decode_demand(payload);
  if (!m || m->replica == redis_.replica_id()) return;  // our own demand is counted already
  const base::MonoNanos now = clock_.now();
  for (const auto& t : m->targets) {
    const std::string key = t.backend + '\n' + t.deployment;
    const auto sum = heard_.hear(key, m->replica, t.rates, now);
    if (sum &&
        !states_.apply_shared_demand(t.backend, t.deployment, sum->rates, base::Nanos(sum->until - now)))
      heard_.forget(key);  // a backend this replica does not have
  }
}

}  // namespace smartlb::redis
