#include "smartlb/net/health_prober.hpp"

#include <spdlog/spdlog.h>

#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "smartlb/credentials/entra/token_fetcher.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb::net {

using namespace smartlb::io;

std::string_view to_string(ProbeReport::State s) {
  switch (s) {
    case ProbeReport::State::Off:
      return "off";
    case ProbeReport::State::Pending:
      return "pending";
    case ProbeReport::State::Up:
      return "up";
    case ProbeReport::State::Down:
      return "down";
  }
  return "pending";
}

std::string probe_target(const config::BackendConfig& b) {
  if (!b.health_probe_path.empty()) return b.url.base_path + b.health_probe_path;
  // The models list costs no tokens: Azure's needs an api-version.
  return b.url.base_path + (b.azure_host ? "/openai/models?api-version=2024-10-21" : "/v1/models");
}

namespace {

// The URL a probe asks for: the backend's origin and base path, then its probe's path.
std::string probe_url(const config::BackendConfig& b) {
  return std::string(b.url.tls ? "https://" : "http://") + b.url.host_header + probe_target(b);
}

}  // namespace

struct HealthProber::Impl {
  Impl(const config::Config& c, const base::Published<Snapshot>& p, routing::BackendStates& s,
       const base::Clock& k, ssl::context& t)
      : cfg(c), published(p), states(s), clock(k), tls(t) {}

  const config::Config& cfg;
  const base::Published<Snapshot>& published;
  routing::BackendStates& states;
  const base::Clock& clock;
  ssl::context& tls;
  routing::ProbeSharer* sharer = nullptr;

  struct Entry {
    ProbeReport report;
    base::MonoNanos due = 0;  // the next probe's (or turn's) time
    base::Nanos interval{0};
    std::int64_t applied_ms = 0;  // the time of the result applied last
    bool probing = false;         // a probe, or the question whose turn it is, under way
  };
  mutable std::mutex mutex;  // the entries: this thread writes, /status reads
  std::map<std::string, Entry> entries;

  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::thread thread;

  base::Nanos interval_of(const config::BackendConfig& b) const {
    return std::chrono::duration_cast<base::Nanos>(
        b.health_probe_interval.value_or(cfg.health_probe_interval));
  }

  bool any_probing() const {
    const auto snap = published.current();
    for (const config::BackendConfig& b : snap->backends)
      if (interval_of(b).count() > 0) return true;
    return cfg.health_probe_interval.count() > 0;  // a reload may add backends that probe
  }

  // Each second: the backends of the current configuration whose probe is due get one.
  Task<void> loop() {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    for (;;) {
      const auto snap = published.current();
      const base::MonoNanos now = clock.now();
      for (std::size_t i = 0; i < snap->backends.size(); ++i) {
        const config::BackendConfig& b = snap->backends[i];
        const base::Nanos interval = interval_of(b);
        std::lock_guard lock(mutex);
        Entry& e = entries[b.name];
        e.report.backend = b.name;
        if (interval.count() == 0) {
          e.report.state = ProbeReport::State::Off;
          continue;
        }
        if (e.report.state == ProbeReport::State::Off) e.report.state = ProbeReport::State::Pending;
        e.interval = interval;
        if (e.probing || e.due > now) continue;
        e.probing = true;
        e.due = now + interval.count();
        take_turn(b, snap->table.member(i).id, interval);
      }
      timer.expires_after(std::chrono::seconds(1));
      auto [ec] = co_await timer.async_wait(use_tuple);
      if (ec) co_return;
    }
  }

  // Probes now, or reads what the replica whose turn it is found (REDIS_URL).
  void take_turn(const config::BackendConfig& b, routing::BackendId id, base::Nanos interval) {
    if (sharer == nullptr) {
      asio::co_spawn(ioc, probe(b, id, interval), asio::detached);
      return;
    }
    // The answer comes on the Redis thread (or here, at once, when Redis is down).
    sharer->take_turn(b.name, interval, [this, b, id, interval](routing::ProbeSharer::Turn turn) {
      asio::post(ioc, [this, b, id, interval, turn = std::move(turn)] {
        if (turn.mine)
          asio::co_spawn(ioc, probe(b, id, interval), asio::detached);
        else
          read_turn(b, id, interval, turn);
      });
    });
  }

  // `b` by value: a reload may replace the snapshot while the probe waits.
  Task<void> probe(config::BackendConfig b, routing::BackendId id, base::Nanos interval) {
    credentials::entra::TokenRequest request{
        "GET", probe_url(b), {{"User-Agent", "smartlb-health-probe"}}, {}, true};
    const credentials::entra::FetchedAnswer a =
        co_await credentials::entra::fetch_token_answer(request, tls, cfg.health_probe_timeout);
    routing::SharedProbeResult r;
    r.up = probe_says_up(a.status);
    r.status = a.status;
    r.detail = r.up ? std::string() : a.status != 0 ? "HTTP " + std::to_string(a.status) : a.error;
    r.unix_ms = wall_ms();
    if (sharer != nullptr) sharer->publish(b.name, r, stale_after(interval));  // signed there
    std::lock_guard lock(mutex);
    Entry& e = entries[b.name];
    e.probing = false;
    ++e.report.probes_sent;
    apply(b.name, id, r, base::Nanos(0), e);
  }

  // Another replica's turn: what it found, if it is new here; asked again when it may have changed.
  void read_turn(const config::BackendConfig& b, routing::BackendId id, base::Nanos interval,
                 const routing::ProbeSharer::Turn& turn) {
    std::optional<base::Nanos> age;
    if (turn.last) age = std::chrono::milliseconds(std::max<std::int64_t>(wall_ms() - turn.last->unix_ms, 0));
    std::lock_guard lock(mutex);
    Entry& e = entries[b.name];
    e.probing = false;
    e.due = clock.now() +
            routing::next_turn_check(interval, cfg.health_probe_timeout, turn.turn_left, age).count();
    if (!turn.last || turn.last->unix_ms <= e.applied_ms || *age >= stale_after(interval)) return;
    ++e.report.results_read;
    apply(b.name, id, *turn.last, *age, e);
  }

  // A probe's result, this replica's or another's (`age` old), applied to routing and the report.
  void apply(const std::string& name, routing::BackendId id, const routing::SharedProbeResult& r,
             base::Nanos age, Entry& e) {
    const base::Nanos interval = e.interval;
    if (r.up)
      states.health_passed(id);
    else  // a result not renewed goes stale
      states.health_failed(id, clock.now() + (stale_after(interval) - age).count());
    const ProbeReport::State was = e.report.state;
    e.applied_ms = r.unix_ms;
    e.report.state = r.up ? ProbeReport::State::Up : ProbeReport::State::Down;
    e.report.status = r.status;
    e.report.detail = r.detail;
    e.report.last_unix_ms = r.unix_ms;
    e.report.by = r.replica;  // "" for this replica's own
    const std::string who = e.report.by.empty() ? std::string() : " (probed by replica " + e.report.by + ")";
    if (!r.up && was != ProbeReport::State::Down)
      spdlog::warn("backend {} failed its health probe ({}){}: passed over while others can serve", name,
                   r.detail, who);
    else if (r.up && was == ProbeReport::State::Down)
      spdlog::info("backend {} passed its health probe again (HTTP {}){}", name, r.status, who);
  }

  // Two intervals and a timeout: a result older than that says nothing any more.
  base::Nanos stale_after(base::Nanos interval) const {
    return 2 * interval + base::Nanos(cfg.health_probe_timeout);
  }

  std::int64_t wall_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock.wall_now().time_since_epoch()).count();
  }
};

HealthProber::HealthProber(const config::Config& cfg, const base::Published<Snapshot>& published,
                           routing::BackendStates& states, const base::Clock& clock, ssl::context& tls)
    : impl_(std::make_unique<Impl>(cfg, published, states, clock, tls)) {}

HealthProber::~HealthProber() { stop(); }

void HealthProber::set_sharer(routing::ProbeSharer* sharer) { impl_->sharer = sharer; }

void HealthProber::start() {
  Impl& I = *impl_;
  if (I.thread.joinable() || !I.any_probing()) return;
  I.work.emplace(I.ioc.get_executor());
  asio::co_spawn(I.ioc, I.loop(), asio::detached);
  I.thread = std::thread([&I] { I.ioc.run(); });
}

void HealthProber::stop() {
  Impl& I = *impl_;
  I.work.reset();
  I.ioc.stop();
  if (I.thread.joinable()) I.thread.join();
}

std::vector<ProbeReport> HealthProber::reports() const {
  const auto snap = impl_->published.current();
  std::vector<ProbeReport> out;
  std::lock_guard lock(impl_->mutex);
  for (const config::BackendConfig& b : snap->backends) {
    const auto it = impl_->entries.find(b.name);
    if (it != impl_->entries.end()) {
      out.push_back(it->second.report);
    } else {
      ProbeReport r;
      r.backend = b.name;
      r.state = impl_->interval_of(b).count() > 0 && impl_->thread.joinable() ? ProbeReport::State::Pending
                                                                              : ProbeReport::State::Off;
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace smartlb::net
