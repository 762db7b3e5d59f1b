#pragma once
// What the backends did, as runtime state keyed by BackendId: cooldowns per backend and per
// (backend, deployment), and the windows of declared quotas. Kept outside any RoutingTable, so
// it outlives the table that introduced a backend. Thread-safe without a global lock:
// deadlines are atomics, and each backend guards only its own deployment map.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/admin_state.hpp"
#include "smartlb/routing/backend_id.hpp"
#include "smartlb/routing/class_reserve.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/routing/report_sharing.hpp"
#include "smartlb/routing/reported_budget.hpp"
#include "smartlb/routing/routing_table.hpp"
#include "smartlb/routing/shared_lease.hpp"
#include "smartlb/routing/sliding_window_budget.hpp"

namespace smartlb::routing {

struct CooldownPolicy {
  std::chrono::milliseconds default_cooldown{10'000};
  std::chrono::milliseconds min_cooldown{100};
  std::chrono::milliseconds max_cooldown{300'000};
};

// Why nothing could be picked, and when the soonest backend comes back.
struct Unavailability {
  std::chrono::milliseconds retry_after{0};
  bool throttled = false;  // some backend is cooling for a 429 or at its quota (answer 429)
  bool not_found = false;  // every backend is out because it said the deployment is not there
  // Every backend is out until an operator changes it (drained, disabled, a cooldown held until
  // lifted): nobody can say when one comes back.
  bool out_of_service = false;
  // The soonest back is out only by smartlb's own prediction (its reports, a declared quota, a
  // class's reserve): no backend refused it. A backend cooling down for its 429 or failure is not.
  bool predicted = false;
};

struct CooldownView {
  base::MonoNanos until = 0;  // 0 or past: available
  FailureCause cause = FailureCause::None;
};

// A cooldown applied on this replica (record_failure, hold) that grew a deadline, for whoever
// shares cooldowns with other replicas (docs/scale-out.md). Backends are named by their
// configured name: BackendIds are per process.
struct CooldownNotice {
  std::string_view backend;
  std::string_view deployment;  // the state's deployment key; empty for a whole-backend cooldown
  bool whole_backend = false;
  base::MonoNanos until = 0;
  FailureCause cause = FailureCause::None;
};
class CooldownListener {
 public:
  virtual ~CooldownListener() = default;
  // Called on the thread that applied the cooldown (a worker): must not block.
  virtual void on_cooldown(const CooldownNotice& notice) = 0;
};

// Told of every change an operator makes on this replica (the admin API), for whoever shares
// them with other replicas (redis/shared_admin). Called on the admin thread: must not block.
class AdminListener {
 public:
  virtual ~AdminListener() = default;
  virtual void on_admin_change(const AdminChange& change) = 0;
};

// A scope's admin settings as a resynchronisation reads them (deployment none: the backend's).
struct AdminEntry {
  std::string backend;
  std::optional<std::string> deployment;
  AdminSettings settings;
};

// One attempt counted in flight on a (backend, deployment) for as long as it lives: from the
// request's pick to the end of its answer (a stream's last byte), so that a drain can tell when
// nothing is left. Move-only.
class InFlight {
 public:
  InFlight() = default;
  explicit InFlight(std::atomic<std::int64_t>* count) : count_(count) {
    count_->fetch_add(1, std::memory_order_relaxed);
  }
  InFlight(InFlight&& o) noexcept : count_(std::exchange(o.count_, nullptr)) {}
  InFlight& operator=(InFlight&& o) noexcept {
    if (this != &o) {
      release();
      count_ = std::exchange(o.count_, nullptr);
    }
    return *this;
  }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  ~InFlight() { release(); }
  void release() {
    if (count_) count_->fetch_sub(1, std::memory_order_relaxed);
    count_ = nullptr;
  }

 private:
  std::atomic<std::int64_t>* count_ = nullptr;
};

class BackendStates {
 public:
  BackendStates(const base::Clock& clock, CooldownPolicy policy);
  ~BackendStates();
  BackendStates(const BackendStates&) = delete;
  BackendStates& operator=(const BackendStates&) = delete;

  // Makes room for the ids of `table`. Called before a table serves requests (at start, and
  // for each new configuration), never on the request path; readers need no lock.
  void track(const RoutingTable& table);
  // Ids past this are refused by track() (state is allocated in chunks, found without a lock).
  static constexpr std::size_t kMaxBackends = 64 * 1024;

  // Deployment names come from clients: past this many per backend, new names share one
  // overflow entry (so their cooldowns and quota still apply) instead of growing memory.
  static constexpr std::size_t kMaxDeploymentsPerBackend = 1024;
  static constexpr std::string_view kOverflowDeployment = "(other)";

  // `deployment` is always the one the client asked for; a member with a fixed deployment
  // keeps its state under that one (PoolMember::effective_deployment).

  // Not cooling down, `cost` tokens and one request fit in what the backend last reported
  // remaining (ReportedBudget), and (with a declared quota) in the quota. `cls`: a request of a
  // lower priority class fits only with what the classes above ask for to spare
  // (routing/class_reserve.hpp; a request larger than the rest fits in an empty window).
  bool available(const PoolMember& m, std::string_view deployment, base::MonoNanos now, std::int64_t cost = 0,
                 ClassReserve cls = {}) const {
    return standing(m, deployment, now, cost, cls) == Standing::Available;
  }
  // The same, telling a hard limit (a cooldown, a declared quota) from the soft ones, which may
  // only reorder: the backend's reports, and a failed health probe (Unhealthy: passed over while
  // anything else may serve, used rather than refuse the request).
  enum class Standing : std::uint8_t { Available, Out, ReportedShort, Unhealthy };
  Standing standing(const PoolMember& m, std::string_view deployment, base::MonoNanos now,
                    std::int64_t cost = 0, ClassReserve cls = {}) const;
  bool available(const PoolMember& m, std::string_view deployment) const {
    return available(m, deployment, clock_.now());
  }

  // Counts a request of `cost` tokens against the member's quota. False when it no longer fits
  // (another thread took the room since the pick). Always true without a declared quota.
  bool reserve(const PoolMember& m, std::string_view deployment, std::int64_t cost, ClassReserve cls = {});
  // Counts `tokens` the member used beyond any request's reservation (a Realtime session's
  // responses, told as they end), whether they fit or not: they were spent at the backend, and
  // the next requests must see it. Nothing without a declared token quota.
  void charge_used(const PoolMember& m, std::string_view deployment, std::int64_t tokens);

  // The backends' own rate-limit reports (x-ratelimit-remaining-*), fed from every answer
  // (ReportedBudget: a short report moves requests elsewhere, and refuses only while fresh).
  // True while some deployment's reported budget is low: only then is a request's token
  // estimate worth its body scan, or a target worth probing. One relaxed load.
  bool reported_budget_low() const { return watched_reports_.load(std::memory_order_relaxed) > 0; }
  // Counts a request sent to `m` (cheap when nothing is low); hand the mark to observe_report.
  ReportedBudget::Mark charge_reported(const PoolMember& m, std::string_view deployment, std::int64_t cost);
  // The report on the answer to a request sent at `sent` with `mark`; `taken`: not a 429.
  void observe_report(const PoolMember& m, std::string_view deployment, const RateLimitReport& report,
                      base::MonoNanos sent, ReportedBudget::Mark mark, bool taken = true);
  ReportedBudget::View reported_budget(const PoolMember& m, std::string_view deployment) const;
  // Short reports shared with other replicas (null: none).
  void set_report_listener(ReportListener* listener) {
    report_listener_.store(listener, std::memory_order_release);
  }
  // A short report another replica read (ReportedBudget::observe_shared), from a request it sent
  // at `sent_epoch_ms` (Unix ms); `deployment` is a state key. False when the backend is unknown
  // here, reports are off, or the report is older than one taken.
  bool apply_shared_report(std::string_view backend, std::string_view deployment,
                           const RateLimitReport& report, std::int64_t sent_epoch_ms);
  // A moment another replica told (Unix ms), as if it happened here: its probe is left to it (no
  // probe is taken here before `at`, kFreshFor at most), its 429's Retry-After is when one
  // request may test the target here too (ReportedBudget::retry_at). False when the backend is
  // unknown here or its deployment's reports are not watched.
  bool apply_shared_moment(std::string_view backend, std::string_view deployment, MomentNotice::Kind kind,
                           std::int64_t at_epoch_ms);
  // Priority classes' demand, shared by replicas (redis::SharedClassDemand). Each target where
  // this replica sent any level at least `min_requests_per_second` lately, by backend name and
  // state key; nothing until a lower class was seen here or on another replica.
  struct TargetDemand {
    std::string backend, deployment;
    ClassDemand::Rates rates;
  };
  std::vector<TargetDemand> class_demand(double min_requests_per_second) const;
  // The other replicas' demand at a target, summed (ClassDemand::set_remote), counted for `ttl`.
  // A lower class in it starts this replica's own counting. False when the backend is unknown.
  bool apply_shared_demand(std::string_view backend, std::string_view deployment,
                           const ClassDemand::Rates& rates, base::Nanos ttl);
  // A request of class `level` that no target had room for, before any attempt: demand all the
  // same, counted at the members of `table`'s best group by their weights (where it would have
  // gone). Counting only what is sent measured the classes above lowest just after a gap had
  // refused them, and a lower class took what they then needed again.
  void count_refused(const RoutingTable& table, std::string_view deployment, std::int64_t cost,
                     std::size_t level);
  // Off: reports are not read at all (ROUTE_ON_REMAINING=off), only 429s and declared quotas
  // route. Set before the first request.
  void set_route_on_remaining(bool on) { route_on_remaining_ = on; }

  // A member only its backend's reports hold back (no cooldown, room in any declared quota),
  // which one request may test now (ReportedBudget::Room::Probe, no probe out): when its cost
  // may be tested (ReportedBudget::back_at: the soonest first). nullopt
  // when it may not be probed.
  std::optional<base::MonoNanos> probe_rank(const PoolMember& m, std::string_view deployment,
                                            base::MonoNanos now, std::int64_t cost,
                                            ClassReserve cls = {}) const;
  // Takes that member's one probe (false: another request took it first).
  bool claim_probe(const PoolMember& m, std::string_view deployment, base::MonoNanos now);

  // Applies a failover verdict: cool down for the clamped hint, or the default. Deadlines
  // only grow. Returns the cooldown applied. `sent` (0: unknown): when the failed request left;
  // a 429's hint is counted from halfway between then and now (when the backend answered, as
  // near as can be told) for the moment room returns.
  std::chrono::milliseconds record_failure(const PoolMember& m, std::string_view deployment,
                                           const Verdict& verdict,
                                           std::optional<std::chrono::milliseconds> hint,
                                           base::MonoNanos sent = 0);

  // Active health (net/health_prober): a failed probe marks the backend unhealthy until `until`
  // (a result not renewed goes stale); a passed one ends that, and ends a cooldown that the
  // backend's network failures started (it is back: slow start applies as after any cooldown).
  void health_failed(BackendId id, base::MonoNanos until);
  void health_passed(BackendId id);
  bool unhealthy(BackendId id, base::MonoNanos now) const;

  // Takes the member's deployment out for exactly `duration` (a breaker's cooldown period, not
  // clamped like a backend's hint). Deadlines only grow.
  void hold(const PoolMember& m, std::string_view deployment, FailureCause cause, base::Nanos duration);

  // When every member of `table` is out for `deployment`: the soonest recovery (a cooldown's
  // end, or the time until `cost` fits in a quota).
  Unavailability unavailability(const RoutingTable& table, std::string_view deployment, std::int64_t cost = 0,
                                ClassReserve cls = {}) const;

  // What a request of a lower priority class may take of `table`'s declared quotas
  // (routing/class_reserve.hpp). The demand above it goes from a full member to another, so
  // what matters is what the members keep between them: their room now and what their windows
  // give back, against the demand above at all of them (a lower class that checked each member
  // alone took the one where it saw the least demand, and left too little in all).
  //   Holds: the members keep the reserve once `cost` is taken; one need only fit its cost.
  //   HoldsReports: so do they where members without a declared quota were counted by their
  //   reports (a sliding window whose echo of smartlb's own sends is known: ReportedBudget::
  //   pool_share); there too one need only fit its cost.
  //   Short: they do not; the request is refused.
  //   Unbounded: the first class, a member with no declared quota whose reports do not say
  //   what its window gives back, or quotas shared with other replicas (leases): each member
  //   keeps its own reserve.
  enum class PoolReserve : std::uint8_t { Unbounded, Holds, HoldsReports, Short };
  PoolReserve pool_reserve(const RoutingTable& table, std::string_view deployment, std::int64_t cost,
                           ClassReserve cls) const;

  struct QuotaUsage {
    std::int64_t tokens_used = 0, tokens_limit = 0, requests_used = 0, requests_limit = 0;
  };
  QuotaUsage quota_usage(const PoolMember& m, std::string_view deployment) const;

  // When the member's latest cooldown for `deployment` (or its backend's) ended or ends, or an
  // operator brought it back (enabled, a held cooldown lifted or over); 0 when it never cooled
  // down. For slow start.
  base::MonoNanos cooldown_ended(const PoolMember& m, std::string_view deployment) const;

  // Scale-out. The listener is told of every deadline record_failure and hold move later
  // (null: nobody); it must outlive its registration.
  void set_cooldown_listener(CooldownListener* listener) {
    listener_.store(listener, std::memory_order_release);
  }
  // Declared quotas shared by replicas (docs/scale-out.md): with a broker, every quota made
  // from now on also holds a lease per limit, and a request must fit in both its local window
  // and its lease. Set before the first request; it must outlive this object's use.
  void set_lease_broker(LeaseBroker* broker) { broker_ = broker; }
  // The name a member's quota has across replicas: "<backend>/<deployment>", or
  // "group:<group>[/<deployment>]" for a quota group (then ":tokens" or ":requests" per limit).
  static std::string quota_name(const PoolMember& m, std::string_view deployment);
  // The leases of a member's quota, for status pages and tests (null: none).
  struct Leases {
    std::optional<LeasedQuota::View> tokens, requests;
  };
  Leases leases(const PoolMember& m, std::string_view deployment) const;

  // A deadline another replica published, as wall-clock epoch milliseconds (turned into this
  // clock's time), for the backend configured as `backend`. Deadlines only grow; the listener
  // is not told (no echo). False when no backend has that name here or nothing changed.
  bool apply_remote_cooldown(std::string_view backend, std::string_view deployment, bool whole_backend,
                             std::int64_t until_epoch_ms, FailureCause cause);
  // hold() for the backend configured as `backend`, `deployment` being a state key already (a
  // member's effective_deployment): a breaker tripped by the replicas' shared failure count. The
  // listener is told, as for any hold. False when no backend has that name here.
  bool hold_by_name(std::string_view backend, std::string_view deployment, FailureCause cause,
                    base::Nanos duration);
  // `until` on this clock as wall-clock epoch milliseconds, the form replicas exchange.
  std::int64_t to_epoch_ms(base::MonoNanos until) const;

  // The admin API (docs/operations.md). A change by an operator of this replica: applied, and
  // the admin listener told. False when no backend of the current configuration has that name.
  bool change_admin(const AdminChange& c);
  // The same change made by another replica (or this one, read back through Redis): applied
  // without telling the listener.
  bool apply_remote_admin(const AdminChange& c);
  // What the store holds, whole (a resynchronisation): every scope of the current backends gets
  // its entry's settings, and those without one are cleared.
  void replace_admin(const std::vector<AdminEntry>& entries);
  // Told of every change_admin (null: nobody); it must outlive its registration.
  void set_admin_listener(AdminListener* listener) {
    admin_listener_.store(listener, std::memory_order_release);
  }
  struct AdminView {
    std::optional<std::string> deployment;  // none: the whole backend
    AdminSettings settings;
    std::int64_t in_flight = 0;  // the backend's: every deployment's together
    CooldownView cooldown;       // the scope's own cooldown (a 429's, a failure's)
  };
  // A scope of the backend configured as `backend` (nullopt: none is, in the current
  // configuration).
  std::optional<AdminView> admin_view(std::string_view backend,
                                      const std::optional<std::string>& deployment) const;
  // The id of the current configuration's backend named `backend` (nullopt: none).
  std::optional<BackendId> current_backend(std::string_view backend) const;
  // The scopes of backend `id` whose settings take it or a deployment out now (the backend's
  // first, then by deployment), for /status.
  std::vector<AdminView> admin_scopes(BackendId id) const;
  // After a reload: backends `current` no longer has lose their admin settings (one added back
  // later starts enabled), and change_admin refuses their names.
  void forget_removed(const RoutingTable& current);

  // Counts an attempt to `m` for `deployment` in flight while the result lives.
  InFlight begin_attempt(const PoolMember& m, std::string_view deployment);
  // Attempts in flight on backend `id`, every deployment together.
  std::int64_t in_flight(BackendId id) const;
  // Counts a relayed WebSocket session (Realtime) open on backend `id` while the result lives.
  InFlight begin_websocket_session(BackendId id);
  std::int64_t websocket_sessions(BackendId id) const;

  CooldownView backend_cooldown(BackendId id) const;
  CooldownView deployment_cooldown(const PoolMember& m, std::string_view deployment) const;
  // Every deployment with state on backend `id`, with its cooldown (for status pages).
  std::vector<std::pair<std::string, CooldownView>> deployment_cooldowns(BackendId id) const;

  std::chrono::milliseconds clamp_cooldown(std::optional<std::chrono::milliseconds> hint) const;
  const base::Clock& clock() const { return clock_; }

 private:
  struct Deadline {
    std::atomic<base::MonoNanos> until{0};
    std::atomic<FailureCause> cause{FailureCause::None};
    bool extend(base::MonoNanos t, FailureCause c);  // true when the deadline moved
    void lift();                                     // ends it now (an operator's DELETE)
    CooldownView view() const;
  };
  // What the request path reads of a scope's admin settings.
  struct AdminSlot {
    std::atomic<base::MonoNanos> out_until{0};  // out while later than now (kAdminForever: until changed)
    std::atomic<base::MonoNanos> back_at{0};    // when it last came back, for slow start
  };
  // One limit (tokens or requests) summed over a pool's members (pool_reserve).
  struct PoolSum {
    std::int64_t left = 0, limit = 0;
    double per_second = 0;  // the demand above
    base::Nanos window{0};  // the longest
    std::vector<WindowRelease> releases;
    bool unbounded = false;  // a member does not declare it
  };
  // Declared quota budgets: a (backend, deployment)'s own, or those of its quota group.
  struct Quota {
    std::mutex quota_mutex;  // per (backend, deployment), or per group
    std::optional<SlidingWindowBudget> tokens, requests;
    base::Nanos window{0};  // the budgets'
    // Shared quotas only (a LeaseBroker is set): the same limits, leased from the store.
    std::unique_ptr<SharedLease> tokens_lease, requests_lease;
    // Under quota_mutex: the limits as `m` (today's configuration) declares them. A reload's new
    // limit applies at once and what was used stays counted; a new window starts afresh. True
    // when a limit needs a lease it does not have yet (make_missing_leases, without the lock).
    bool sync(const PoolMember& m);
    bool fits(const PoolMember& m, std::int64_t cost, base::MonoNanos now, const base::Clock& clock,
              ClassReserve cls = {});
    base::Nanos wait_for(const PoolMember& m, std::int64_t cost, base::MonoNanos now,
                         const base::Clock& clock, ClassReserve cls = {});
    // Adds its windows' room, limits, releases and `above`'s demand to the pool's sums.
    void add_to_pool(const PoolMember& m, base::MonoNanos now, const ClassReserve& above, PoolSum& tokens,
                     PoolSum& requests);
  };
  // The leases a quota's limits need and it lacks (a quota declared by a reload), made and
  // attached outside its lock.
  void make_missing_leases(Quota& q, const PoolMember& m, std::string_view deployment) const;
  // A (backend, deployment): its cooldown and, when declared, its quota budgets.
  struct DeploymentState : Deadline, Quota {
    std::string_view name;  // its key in the backend's map (entries are never erased)
    ReportedBudget reported;
    ClassDemand demand;  // of each priority class (only once a lower class was seen)
    AdminSlot admin;
    // False while only attempts were counted here: /status lists it once anything else is kept.
    std::atomic<bool> listed{false};
    // Written by every attempt on every worker: a cache line of its own, so that the readers of
    // the deadline above do not pay for it.
    alignas(64) std::atomic<std::int64_t> in_flight{0};
  };
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct BackendState {
    Deadline backend;
    std::atomic<base::MonoNanos> unhealthy_until{0};  // a failed health probe's, until renewed
    std::atomic<std::int64_t> websocket_sessions{0};
    // Some answer of it carried a rate-limit report: its answers without one are no blind
    // deployment's sends (observe_report).
    std::atomic<bool> reported{false};
    AdminSlot admin;
    mutable std::shared_mutex mutex;  // guards the map's shape only; entries are atomics
    std::unordered_map<std::string, std::unique_ptr<DeploymentState>, StringHash, std::equal_to<>>
        deployments;
    // The deployment this backend was first asked for, found without the map's hash and lock:
    // most backends serve one (an Azure deployment each), looked up twice per request.
    std::atomic<DeploymentState*> first_deployment{nullptr};
    // The admin settings themselves (the slots above are what requests read): the backend's and
    // its deployments' (those with any). Changed one at a time, on the admin or Redis thread.
    mutable std::mutex admin_mutex;
    AdminSettings admin_settings;
    std::unordered_map<std::string, AdminSettings, StringHash, std::equal_to<>> deployment_admin;
  };
  static constexpr std::size_t kChunk = 64;

  BackendState& state(BackendId id) const;
  // Fills in what the classes above `cls` ask of `d` (nothing for the first class, or no state).
  static void with_demand(const DeploymentState* d, ClassReserve& cls, base::MonoNanos now) {
    if (d != nullptr && cls.any())
      d->demand.above(cls.level, now, cls.tokens_per_second, cls.requests_per_second);
  }
  Standing deployment_standing(const PoolMember& m, std::string_view deployment, base::MonoNanos now,
                               std::int64_t cost, ClassReserve cls) const;
  // The budgets `m`'s requests for `deployment` count against: its quota group's when it names
  // one (created on first use with `m`'s limits), else the deployment's own. A member that
  // passes the client's deployment through (a backend's group) shares per deployment, since
  // Azure's quotas are per model; a target with a fixed deployment shares the group as named.
  Quota& quota_of(const PoolMember& m, std::string_view deployment, DeploymentState& d) const;
  Quota* find_quota_of(const PoolMember& m, std::string_view deployment, DeploymentState* d) const;
  static std::string group_key(const PoolMember& m, std::string_view deployment);
  DeploymentState* find_deployment(BackendId id, std::string_view deployment) const;
  void notify(const PoolMember& m, std::string_view deployment, bool whole_backend, base::MonoNanos until,
              FailureCause cause) const;
  DeploymentState& deployment_state(const PoolMember& m, std::string_view deployment) const;
  // The same, not listed for /status by this (a request's attempt counted in flight).
  DeploymentState& counted_state(const PoolMember& m, std::string_view deployment) const;
  // The current configuration's member named `backend` (false: none).
  bool current_member(std::string_view backend, PoolMember& out) const;
  // Sets a scope's settings (under its backend's admin_mutex) and what requests read of them;
  // `lift`: its cooldowns end now too.
  void store_admin(const PoolMember& m, BackendState& s, const std::optional<std::string>& deployment,
                   const AdminSettings& settings, bool lift);
  void set_slot(AdminSlot& slot, const AdminSettings& settings) const;
  // When the scope's admin settings take `m` out for `deployment`: 0 when they do not.
  base::MonoNanos admin_out(const PoolMember& m, const DeploymentState* d) const;
  base::MonoNanos recovery_at(const PoolMember& m, std::string_view deployment, FailureCause* cause) const;
  // Whether `m` serves `d` at all now: no cooldown, no operator's hold, healthy (room aside).
  bool in_service(const PoolMember& m, const DeploymentState* d, base::MonoNanos now) const;

  // kMaxBackends / kChunk slots, each null or a chunk of kChunk states; a chunk, once
  // published, never moves.
  std::unique_ptr<std::atomic<BackendState*>[]> chunks_;
  std::mutex grow_mutex_;
  mutable std::shared_mutex groups_mutex_;  // guards the map's shape only
  mutable std::unordered_map<std::string, std::unique_ptr<Quota>, StringHash, std::equal_to<>> groups_;
  const base::Clock& clock_;
  CooldownPolicy policy_;
  std::atomic<int> watched_reports_{0};  // deployments whose ReportedBudget is watched
  // A request of a lower priority class was seen (here, or another replica's demand).
  std::atomic<bool> classes_in_use_{false};
  bool route_on_remaining_ = true;
  std::atomic<CooldownListener*> listener_{nullptr};
  std::atomic<ReportListener*> report_listener_{nullptr};
  LeaseBroker* broker_ = nullptr;
  mutable std::mutex leases_mutex_;  // one maker of missing leases at a time
  std::atomic<AdminListener*> admin_listener_{nullptr};
  // Every tracked backend by configured name (the latest table's member), for remote cooldowns,
  // and whether the current configuration has it (admin changes).
  struct Named {
    PoolMember member;
    bool current = true;
  };
  mutable std::mutex names_mutex_;
  std::unordered_map<std::string, Named, StringHash, std::equal_to<>> by_name_;
};

}  // namespace smartlb::routing
