// The key-set service alone, over real sockets: it fetches the discovery document and the JWKS
// it names, retries a failure with backoff, and refetches when a token asks for it.
#include "smartlb/clients/jwt/key_set_service.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <nlohmann/json.hpp>
#include <vector>

#include "jwt_signer.hpp"
#include "mock_backend.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb::testing {
namespace key_set_service_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

const TestRsaKey& test_key() {
  static const TestRsaKey k("svc-key");
  return k;
}

// Blocks until the keys' next fetch ends (bounded: a failure, not a hang, if it never does).
bool await_next_result(clients::jwt::IssuerKeys& keys) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  const auto ticket = keys.on_next_result([&] {
    std::lock_guard lock(m);
    done = true;
    cv.notify_all();
  });
  if (ticket == 0) return true;  // none under way: its result is in
  std::unique_lock lock(m);
  const bool ok = cv.wait_for(lock, 30s, [&] { return done; });
  if (!ok) keys.forget_waiter(ticket);
  return ok;
}

class KeySetServiceTest : public ::testing::Test {
 protected:
  KeySetServiceTest()
      : issuer([this](const SeenRequest& r) {
          std::lock_guard lock(mutex);
          if (r.target == "/t/v2.0/.well-known/openid-configuration") {
            if (discovery_failures > 0) {
              --discovery_failures;
              return MockReply{503, {}, "{}"};
            }
            return MockReply{200, {}, nlohmann::json{{"jwks_uri", issuer.url() + "/t/keys"}}.dump()};
          }
          ++jwks_fetches;
          return MockReply{200, {}, jwks_of({&test_key()})};
        }) {}

  std::string url() const { return issuer.url() + "/t/v2.0/.well-known/openid-configuration"; }
  int fetches() {
    std::lock_guard lock(mutex);
    return jwks_fetches;
  }

  std::mutex mutex;
  int discovery_failures = 0;
  int jwks_fetches = 0;
  MockBackend issuer;
  io::ssl::context tls{io::ssl::context::tls_client};
};

TEST_F(KeySetServiceTest, FetchesTheKeysTheDiscoveryDocumentNames) {
  clients::jwt::KeySetService service(tls);
  const auto keys = service.keys_for(url());
  EXPECT_EQ(service.keys_for(url()), keys) << "one IssuerKeys per discovery URL";
  service.start();
  ASSERT_TRUE(await_next_result(*keys));
  ASSERT_TRUE(keys->current());
  EXPECT_TRUE(keys->current()->find("svc-key"));
  EXPECT_EQ(keys->status().state, "valid");
}

TEST_F(KeySetServiceTest, RetriesAFailureWithBackoff) {
  discovery_failures = 1;
  std::mutex m;
  std::condition_variable cv;
  std::vector<bool> results;  // each fetch's, as the service reports them
  clients::jwt::KeySetServiceOptions options;
  options.first_retry = 20ms;
  options.on_fetch = [&](const std::string&, bool ok) {
    std::lock_guard lock(m);
    results.push_back(ok);
    cv.notify_all();
  };
  clients::jwt::KeySetService service(tls, options);
  const auto keys = service.keys_for(url());
  service.start();
  std::unique_lock lock(m);
  ASSERT_TRUE(cv.wait_for(lock, 30s, [&] { return results.size() >= 2; }));
  lock.unlock();  // the service's thread may report again while it stops
  EXPECT_EQ(results, (std::vector<bool>{false, true}))
      << "a failure, then the retry the service made by itself";
  ASSERT_TRUE(keys->current());
  EXPECT_EQ(keys->status().fetches_failed, 1u);
  EXPECT_EQ(keys->status().state, "valid");
}

TEST_F(KeySetServiceTest, RefetchesWhenATokenAsksAndOnlyThen) {
  clients::jwt::KeySetService service(tls);  // the periodic refresh is a day away
  const auto keys = service.keys_for(url());
  service.start();
  ASSERT_TRUE(await_next_result(*keys));
  EXPECT_EQ(fetches(), 1);
  ASSERT_TRUE(keys->request_refetch(base::coarse_monotonic_now()));
  ASSERT_TRUE(await_next_result(*keys));
  EXPECT_EQ(fetches(), 2);
  EXPECT_FALSE(keys->request_refetch(base::coarse_monotonic_now())) << "once a minute";
}

}  // namespace key_set_service_test
}  // namespace smartlb::testing
