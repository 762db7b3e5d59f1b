#include "smartlb/net/snapshot.hpp"

#include <algorithm>

namespace smartlb::net {
namespace {

std::vector<PoolMember> pool_members(const Config& cfg) {
  std::vector<PoolMember> out;
  // Declared per-minute quotas scaled to the window, rounded down like Azure's own
  // accounting (and never to zero).
  const auto scale = [&](std::int64_t per_minute) -> std::int64_t {
    if (per_minute <= 0) return 0;
    const std::int64_t ms = cfg.quota_window.count();
    return std::max<std::int64_t>(per_minute / 60'000 * ms + per_minute % 60'000 * ms / 60'000, 1);
  };
  for (const auto& b : cfg.backends) {
    PoolMember m;
    m.name = b.name;
    m.priority = b.priority;
    m.weight = b.weight;
    m.deployment_override = b.deployment_name;
    m.tokens_per_window = scale(b.tpm);
    m.requests_per_window = scale(b.rpm);
    m.quota_window = std::chrono::duration_cast<Nanos>(cfg.quota_window);
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<PreparedBackend> prepare(const Config& cfg, entra::CredentialService* credentials) {
  std::vector<PreparedBackend> out;
  for (const auto& b : cfg.backends) {
    PreparedBackend p{"Bearer " + b.api_key, nullptr};
    if (b.auth == AuthStyle::Entra && credentials) p.entra = credentials->credential_for(b);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

std::shared_ptr<const Snapshot> make_snapshot(const Config& cfg, BackendIds& ids,
                                              entra::CredentialService* credentials) {
  return std::make_shared<const Snapshot>(
      Snapshot{cfg.backends,
               RoutingTable(pool_members(cfg), ids),
               {},
               prepare(cfg, credentials),
               ClientAuthenticator(ClientAuthenticator::from_key_list(cfg.client_api_keys))});
}

void SnapshotCache::refresh() {
  version_ = source_.version();  // read first: a publication racing this one is seen next time
  if (current_ && current_->users == 0) drop(current_);
  current_ = &entries_.emplace_back(Entry{source_.current(), 0});
}

void SnapshotCache::drop(Entry* e) {
  entries_.remove_if([e](const Entry& x) { return &x == e; });
}

}  // namespace smartlb::net
