// The token fetcher alone, over real sockets: the request as sent, and a token endpoint that
// never answers ends at the deadline instead of holding its credential's refresh forever.
#include "smartlb/credentials/entra/token_fetcher.hpp"

#include <gtest/gtest.h>

#include "mock_backend.hpp"

namespace smartlb::testing {
namespace token_fetcher_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
using namespace smartlb::io;

credentials::entra::FetchedAnswer run_fetch(const credentials::entra::TokenRequest& request,
                                            std::chrono::nanoseconds timeout) {
  asio::io_context ioc;
  ssl::context tls(ssl::context::tls_client);
  credentials::entra::FetchedAnswer got;
  asio::co_spawn(
      ioc.get_executor(),
      [&]() -> Task<> { got = co_await credentials::entra::fetch_token_answer(request, tls, timeout); },
      asio::detached);
  ioc.run();
  return got;
}

TEST(TokenFetcher, SendsTheRequestAsBuiltAndReturnsTheAnswer) {
  MockBackend endpoint([](const SeenRequest&) { return MockReply{200, {}, R"({"access_token":"t"})"}; });
  credentials::entra::TokenRequest r{"POST",
                                     endpoint.url() + "/tenant/oauth2/v2.0/token?x=1",
                                     {{"Accept", "application/json"}},
                                     "grant_type=client_credentials"};
  const auto got = run_fetch(r, 30s);
  EXPECT_EQ(got.status, 200u) << got.error;
  EXPECT_EQ(got.body, R"({"access_token":"t"})");
  const SeenRequest seen = endpoint.last_request();
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/tenant/oauth2/v2.0/token?x=1");
  EXPECT_EQ(seen.header("accept"), "application/json");
  EXPECT_EQ(seen.header("host"), "127.0.0.1:" + std::to_string(endpoint.port()));
  EXPECT_EQ(seen.header("content-length"), "29");
  EXPECT_EQ(seen.body, "grant_type=client_credentials");
}

TEST(TokenFetcher, AnEndpointThatNeverAnswersEndsAtTheDeadline) {
  MockBackend endpoint([](const SeenRequest&) { return MockReply{}; });
  const GatePtr never = endpoint.make_gate();
  endpoint.set_handler([never](const SeenRequest&) {
    MockReply r{200, {}, "{}"};
    r.hold_headers = never;
    return r;
  });
  const auto got = run_fetch({"GET", endpoint.url() + "/msi/token", {}, ""}, 200ms);
  EXPECT_EQ(got.status, 0u);
  EXPECT_NE(got.error.find("reading the token answer"), std::string::npos) << got.error;
  endpoint.open(never);
}

TEST(TokenFetcher, AnUnreachableEndpointIsAnError) {
  const auto got = run_fetch({"GET", "http://127.0.0.1:1/metadata/identity/oauth2/token", {}, ""}, 30s);
  EXPECT_EQ(got.status, 0u);
  EXPECT_NE(got.error.find("connecting to 127.0.0.1:1"), std::string::npos) << got.error;
}

}  // namespace token_fetcher_test
}  // namespace smartlb::testing
