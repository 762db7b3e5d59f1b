#pragma once
// What a request routes with, fixed for its whole life: the backends and their prepared
// credentials, the rules (each a routing table of targets and a selector), and who may call. Built whole from
// a configuration and published (Published<Snapshot>); a worker hands each request a lease on the latest one
// (SnapshotCache), so that a new configuration never changes a request half-way and the request
// path takes no lock and touches no shared reference count.
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "smartlb/base/published.hpp"
#include "smartlb/clients/budget_plan.hpp"
#include "smartlb/clients/client_auth.hpp"
#include "smartlb/clients/jwt/key_set_service.hpp"
#include "smartlb/clients/priority_classes.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/credentials/entra/credential_service.hpp"
#include "smartlb/credentials/entra/token_cell.hpp"
#include "smartlb/http/json_body.hpp"
#include "smartlb/routing/backend_id.hpp"
#include "smartlb/routing/first_token.hpp"
#include "smartlb/routing/routing_table.hpp"
#include "smartlb/routing/rule_match.hpp"
#include "smartlb/routing/selector.hpp"
#include "smartlb/stateful/resource_tag.hpp"

namespace smartlb::routing {
class LatencyStats;
}

namespace smartlb::net {

// Credential header values per backend, computed once.
struct PreparedBackend {
  std::string bearer;  // "Bearer <key>"
  std::shared_ptr<credentials::entra::TokenCell>
      entra;  // auth: entra -- the token the credential service keeps fresh
};

// A target of a rule: where a member of the rule's table sends a request, and how.
struct RouteTarget {
  std::size_t backend = 0;    // position in Snapshot::backends
  std::string target_id;      // as configured ("eastus/gpt-4o"; the backend's name in the default rule)
  std::string upstream_name;  // replaces the client's deployment or body model ("": kept)
  // override_params: top-level body members set or removed (empty: the client's body goes as
  // it is). `renamed` is the same followed by the body's `model` set to `upstream_name`, for
  // OpenAI-style requests; both are made once here, not per request.
  std::vector<http::BodyEdit> overrides, renamed;
  std::optional<std::uint32_t> allowed_failures_per_minute;  // failure_tolerance
  base::Nanos breaker_cooldown{0};
  routing::FirstTokenSetting first_token;  // a streamed request's wait for its first content
  // TrueFoundry's per-target options (config.hpp, RuleTarget), when the file gives them.
  std::optional<config::RetryConfig> retry;
  std::optional<std::vector<unsigned>> fallback_status;
};

struct Rule {
  std::string id;
  config::RuleType type = config::RuleType::Priority;
  routing::RuleConditions when;
  routing::RoutingTable table;     // one member per target, ids of their backends
  std::vector<RouteTarget> route;  // by table position
  std::unique_ptr<routing::Selector> selector;
  bool affinity = false;
  std::string affinity_header;  // where the affinity key is (a virtual model's sticky routing)
  base::Nanos slow_start{0};
  base::Nanos lookback{std::chrono::minutes(10)};  // latency rules
  bool implicit = false;
  std::vector<std::string> catalog;  // the model names it answers, for the model catalog
  // Requests pinned to a resource (docs/stateful-apis.md): the resource of each table position
  // (an index into Snapshot::resources), and this rule restricted to each resource it has
  // members on (null where it has none), by resource index.
  std::vector<std::uint32_t> resource_at;
  std::vector<std::unique_ptr<Rule>> on_resource;
};

// Where stateful objects live: the backends that share one resource name (BACKEND_X_RESOURCE,
// or their URL's origin and base path), and the tag the ids of its objects carry.
struct Resource {
  std::string name;  // canonical (stateful::default_resource, or as configured): its tag's source
  // What clients are told: the configured resource name, else its first backend's name (never a
  // URL: error messages reach API clients).
  std::string label;
  stateful::ResourceTag tag;
  std::vector<std::size_t> backends;  // positions in Snapshot::backends
  // Every backend of the resource, by its priority and weight, with its own credential: for a
  // pinned request whose rule has no member here, or that no rule serves (it names no model).
  std::unique_ptr<Rule> rule;
};

struct Snapshot {
  std::vector<config::BackendConfig> backends;  // by table position
  routing::RoutingTable table;                  // every backend once (status, state tracking)
  std::vector<PreparedBackend> prepared;        // by table position
  std::vector<Rule> rules;                      // tried in order
  clients::ClientAuthenticator client_auth;
  clients::BudgetPlan budgets;                // which client budgets a caller counts against
  cost::PriceTable prices;                    // what answers cost (docs/operations.md#cost)
  clients::PriorityClasses priority_classes;  // which class a request is in (its reserve of each quota)
  std::string config_hash;                    // of the config file ("" for env only)
  std::uint64_t generation = 0;               // 1, 2, 3, ... in the order snapshots were made
  bool any_quota = false;                     // some target declares a quota (the token estimate is needed)

  routing::RuleIndex rule_index;  // the rules by model

  std::vector<Resource> resources;
  std::vector<std::uint32_t> resource_of;  // by backend position
  // Every backend, by its priority and weight: a stateful request that names no model when no
  // rule serves it (GET /v1/files, a stored response by id).
  std::unique_ptr<Rule> any_backend;
  // The resource whose tag has these bits, or null (a configuration that no longer has it).
  const Resource* resource_tagged(std::uint64_t bits) const {
    const auto it = resource_by_tag.find(bits);
    return it == resource_by_tag.end() ? nullptr : &resources[it->second];
  }
  std::unordered_map<std::uint64_t, std::uint32_t> resource_by_tag;

  // The first rule `facts` match, or null (404 model_not_found).
  const Rule* match(const routing::RequestFacts& facts) const {
    const auto i =
        rule_index.find(facts.model, [&](std::uint32_t k) { return rules[k].when.matches(facts); });
    return i < 0 ? nullptr : &rules[static_cast<std::size_t>(i)];
  }
};

// `ids` gives the backends their identities (kept across configurations by name). A `cfg`
// without rules routes every backend by priority, then weight (the implicit default rule).
// `latency` keeps the latency rules' statistics (it outlives snapshots); may be null when no
// rule is latency-based. `credentials` gives the token cells of backends with `auth: entra`
// (without it, they get none and fail over with cause `credential`). `budgets` keeps the
// client budgets (it outlives snapshots); without it, client limits are not enforced.
// `key_sets` gives the signing keys of the clients' token issuers (without it, tokens are
// refused: no keys).
std::shared_ptr<const Snapshot> make_snapshot(const config::Config& cfg, routing::BackendIds& ids,
                                              routing::LatencyStats* latency = nullptr,
                                              credentials::entra::CredentialService* credentials = nullptr,
                                              clients::BudgetRegistry* budgets = nullptr,
                                              clients::jwt::KeySetService* key_sets = nullptr);

// One worker's view of the published snapshot. Single-threaded (its worker's thread): leases
// count their users without atomics, and a snapshot replaced while requests still use it is
// kept until the last of them ends.
class SnapshotCache {
  struct Entry {
    std::shared_ptr<const Snapshot> snapshot;
    std::size_t users = 0;
  };

 public:
  explicit SnapshotCache(const base::Published<Snapshot>& source) : source_(source) {}
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

  const base::Published<Snapshot>& source_;
  std::uint64_t version_ = 0;
  std::list<Entry> entries_;  // stable addresses
  Entry* current_ = nullptr;
};

}  // namespace smartlb::net
