#pragma once
// Active health (HEALTH_PROBE_SECONDS): each backend is asked, at an interval and on a thread of
// its own, for something that costs no tokens -- its models list (/openai/models on an Azure host,
// else /v1/models, after its URL's base path), or the path configured for it -- without a
// credential: any HTTP answer under 500 says the server is up (a 401 or a 404 included). A
// refused or timed-out connection, a TLS failure, a 5xx or no answer within
// HEALTH_PROBE_TIMEOUT_SECONDS says it is down: BackendStates marks it unhealthy (passed over
// while anything else may serve, used rather than refuse a request), until a probe says
// otherwise or the result goes stale; a probe that passes ends a cooldown the backend's network
// failures started. So a backend that goes dark between requests is found by a probe, not by a
// client's request. With Redis, replicas take turns (routing::ProbeSharer): one probe per backend
// per interval in total, its result read by the others. No Asio in this header.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/base/published.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/net/snapshot.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/probe_sharing.hpp"

namespace boost::asio::ssl {
class context;
}

namespace smartlb::net {

// What the last probe of one backend found, for /status and /metrics.
struct ProbeReport {
  std::string backend;  // its name
  enum class State : std::uint8_t { Off, Pending, Up, Down } state = State::Pending;
  unsigned status = 0;             // the last answer's status (0: none came)
  std::string detail;              // why it is down
  std::int64_t last_unix_ms = 0;   // when the last probe ended (0: none yet)
  std::string by;                  // the replica that probed ("": this one)
  std::uint64_t probes_sent = 0;   // by this replica
  std::uint64_t results_read = 0;  // results of other replicas' probes applied here
};

std::string_view to_string(ProbeReport::State s);

// The path a backend's probe asks for (after its URL's base path).
std::string probe_target(const config::BackendConfig& b);

// Whether a probe's answer says the server is up: any status from 100 to 499. 0 (no answer) and
// 5xx say it is down.
constexpr bool probe_says_up(unsigned status) { return status >= 100 && status < 500; }

class HealthProber {
 public:
  HealthProber(const config::Config& cfg, const base::Published<Snapshot>& published,
               routing::BackendStates& states, const base::Clock& clock, boost::asio::ssl::context& tls);
  ~HealthProber();
  HealthProber(const HealthProber&) = delete;
  HealthProber& operator=(const HealthProber&) = delete;

  // Replicas taking turns (REDIS_URL): set before start(); it must outlive stop().
  void set_sharer(routing::ProbeSharer* sharer);
  void start();  // nothing when every backend's interval is 0
  void stop();
  // One per backend of the current configuration.
  std::vector<ProbeReport> reports() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace smartlb::net
