#pragma once
// Keeps the Entra ID tokens of the backends fresh, in the background: one thread with its own
// io_context, one refresh coroutine per credential (a source, identity and scope; backends that
// share one share its token), each fetching when its RefreshSchedule says -- at once when
// started, then ahead of expiry, with backoff after a failure. The workers never fetch: they
// read the TokenCell, and wait on it only while no valid token exists.
// No Asio in this header (the server's headers include it).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/config/config.hpp"
#include "smartlb/credentials/entra/refresh_schedule.hpp"
#include "smartlb/credentials/entra/token_cell.hpp"
#include "smartlb/credentials/entra/token_sources.hpp"

namespace boost::asio::ssl {
class context;
}

namespace smartlb::credentials::entra {

struct CredentialServiceOptions {
  RefreshTiming timing;
  base::Nanos fetch_timeout = std::chrono::seconds(30);  // one token request, connect to answer
  // Told of every fetch's result, for each backend using the credential (metrics).
  std::function<void(const std::string& backend, bool ok)> on_refresh;
  ReadFile read_file = read_whole_file;  // the federated token file
};

class CredentialService {
 public:
  CredentialService(const base::Clock& clock, boost::asio::ssl::context& tls,
                    CredentialServiceOptions options = {});
  ~CredentialService();  // stops
  CredentialService(const CredentialService&) = delete;
  CredentialService& operator=(const CredentialService&) = delete;

  // The token cell for a backend with `auth: entra`: the same for every backend with the same
  // credential and scope. Its refreshing starts with start() (or at once, if started).
  std::shared_ptr<TokenCell> credential_for(const config::BackendConfig& backend);

  void start();
  void stop();  // the thread ends; pending fetches are abandoned

  std::vector<CredentialStatus> status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The key two backends share a credential by: source, identity, endpoints and scope.
std::string credential_key(const config::EntraCredentialConfig& c);

}  // namespace smartlb::credentials::entra
