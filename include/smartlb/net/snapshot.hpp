#pragma once
// What a request routes with, fixed for its whole life: the backends, their routing table and
// selector, their prepared credentials, and who may call. Built whole from a configuration and
// published (Published<Snapshot>); a worker hands each request a lease on the latest one
// (SnapshotCache), so that a new configuration never changes a request half-way and the request
// path takes no lock and touches no shared reference count.
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "smartlb/base/published.hpp"
#include "smartlb/clients/client_auth.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/credentials/entra/credential_service.hpp"
#include "smartlb/credentials/entra/token_cell.hpp"
#include "smartlb/routing/backend_id.hpp"
#include "smartlb/routing/routing_table.hpp"
#include "smartlb/routing/selectors/priority_selector.hpp"

namespace smartlb::net {

// Credential header values per backend, computed once.
struct PreparedBackend {
  std::string bearer;                       // "Bearer <key>"
  std::shared_ptr<entra::TokenCell> entra;  // auth: entra -- the token the credential service keeps fresh
};

struct Snapshot {
  std::vector<BackendConfig> backends;  // by table position
  RoutingTable table;
  PrioritySelector selector;
  std::vector<PreparedBackend> prepared;  // by table position
  ClientAuthenticator client_auth;

  const Selector& routing() const { return selector; }
};

// `ids` gives the backends their identities (kept across configurations by name);
// `credentials` the token cells of backends with `auth: entra` (without it, they get none and
// fail over with cause `credential`).
std::shared_ptr<const Snapshot> make_snapshot(const Config& cfg, BackendIds& ids,
                                              entra::CredentialService* credentials = nullptr);

// One worker's view of the published snapshot. Single-threaded (its worker's thread): leases
// count their users without atomics, and a snapshot replaced while requests still use it is
// kept until the last of them ends.
class SnapshotCache {
  struct Entry {
    std::shared_ptr<const Snapshot> snapshot;
    std::size_t users = 0;
  };

 public:
  explicit SnapshotCache(const Published<Snapshot>& source) : source_(source) {}
  SnapshotCache(const SnapshotCache&) = delete;
  SnapshotCache& operator=(const SnapshotCache&) = delete;

  class Lease {
   public:
    Lease(Lease&& other) noexcept : entry_(std::exchange(other.entry_, nullptr)), cache_(other.cache_) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (entry_ && --entry_->users == 0 && entry_ != cache_->current_) cache_->drop(entry_);
    }
    const Snapshot& operator*() const { return *entry_->snapshot; }
    const Snapshot* operator->() const { return entry_->snapshot.get(); }

   private:
    friend class SnapshotCache;
    Lease(Entry* e, SnapshotCache* c) : entry_(e), cache_(c) { ++entry_->users; }
    Entry* entry_;
    SnapshotCache* cache_;
  };

  // The latest published snapshot, held for as long as the lease lives.
  Lease acquire() {
    if (source_.version() != version_) refresh();
    return Lease(current_, this);
  }
  // Snapshots kept: the current one, and replaced ones still leased.
  std::size_t held() const { return entries_.size(); }

 private:
  void refresh();
  void drop(Entry* e);

  const Published<Snapshot>& source_;
  std::uint64_t version_ = 0;
  std::list<Entry> entries_;  // stable addresses
  Entry* current_ = nullptr;
};

}  // namespace smartlb::net
