#pragma once
// Keeps the signing keys of the configured token issuers, in the background: one thread with
// its own io_context (like the backends' CredentialService), one loop per discovery URL that
// fetches the OpenID configuration, then its jwks_uri, and publishes the keys in the issuer's
// IssuerKeys -- at once when started, then every `refresh_interval`, after a failure with
// backoff, and when a token names an unknown kid (IssuerKeys::request_refetch, at most once a
// minute). The workers never fetch. No Asio in this header.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/clients/jwt/issuer_keys.hpp"

namespace boost::asio::ssl {
class context;
}

namespace smartlb::clients::jwt {

struct KeySetServiceOptions {
  base::Nanos refresh_interval = std::chrono::hours(24);
  base::Nanos first_retry = std::chrono::seconds(5);  // after a failure; doubling up to max_retry
  base::Nanos max_retry = std::chrono::minutes(5);
  base::Nanos fetch_timeout = std::chrono::seconds(10);        // each document, connect to answer
  base::Nanos min_refetch_interval = std::chrono::minutes(1);  // refetches asked for by unknown kids
  std::function<void(const std::string& discovery_url, bool ok)> on_fetch;  // metrics
};

class KeySetService {
 public:
  explicit KeySetService(boost::asio::ssl::context& tls, KeySetServiceOptions options = {});
  ~KeySetService();  // stops
  KeySetService(const KeySetService&) = delete;
  KeySetService& operator=(const KeySetService&) = delete;

  // The keys published at `discovery_url`: the same object for every issuer (and configuration)
  // naming the same URL. Fetched from start() on (at once, if started).
  std::shared_ptr<IssuerKeys> keys_for(const std::string& discovery_url);

  void start();
  void stop();  // the thread ends; pending fetches are abandoned

  std::vector<IssuerKeysStatus> status() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `<authority_host>/<tenant>/v2.0/.well-known/openid-configuration`.
std::string discovery_url_of(const std::string& authority_host, const std::string& tenant_id);

}  // namespace smartlb::clients::jwt
