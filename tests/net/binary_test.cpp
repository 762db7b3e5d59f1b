// The smartlb executable as users run it: flags, refusing a bad configuration, and a clean
// exit on SIGTERM.
#include <gtest/gtest.h>

#include <signal.h>

#include <string>
#include <vector>

#include "child_process.hpp"
#include "http_client.hpp"
#include "mock_backend.hpp"

namespace smartlb::testing {
namespace {

// The smartlb executable with `args` and only the environment `env`.
class Child : public ChildProcess {
 public:
  Child(std::vector<std::string> args, std::vector<std::string> env)
      : ChildProcess(SMARTLB_BINARY, std::move(args), std::move(env)) {}
};

TEST(Binary, HelpAndVersion) {
  Child help({"--help"}, {});
  EXPECT_EQ(help.wait_exit(), 0);
  EXPECT_NE(help.output().find("BACKEND_X_URL"), std::string::npos);
  Child version({"--version"}, {});
  EXPECT_EQ(version.wait_exit(), 0);
  EXPECT_EQ(version.output().rfind("smartlb ", 0), 0u);
}

TEST(Binary, BadConfigurationRefusesToStartNamingEveryVariableWithoutTheKey) {
  Child c({}, {"BACKEND_1_URL=not-a-url", "BACKEND_1_APIKEY=sk-very-secret-value ",
               "BACKEND_2_URL=https://ok.example.com", "BACKEND_2_WEIGHT=-3", "PORT=http"});
  EXPECT_EQ(c.wait_exit(), 2);
  const std::string out = c.output();
  for (const char* var : {"BACKEND_1_URL", "BACKEND_1_APIKEY", "BACKEND_2_WEIGHT", "PORT"})
    EXPECT_NE(out.find(var), std::string::npos) << var << " in:\n" << out;
  EXPECT_EQ(out.find("very-secret"), std::string::npos) << "the key is never echoed:\n" << out;
}

TEST(Binary, UnknownFlagIsRefused) {
  Child c({"--frobnicate"}, {});
  EXPECT_EQ(c.wait_exit(), 2);
}

TEST(Binary, ServesThenDrainsAndExitsZeroOnSigterm) {
  MockBackend backend([](const SeenRequest&) { return MockReply{200, {}, "ok"}; });
  Child c({}, {"BACKEND_1_URL=" + backend.url(), "BACKEND_1_APIKEY=sk-secret-in-config", "PORT=0",
               "ADMIN_PORT=0", "LISTEN_ADDRESS=127.0.0.1", "THREADS=1"});
  const std::string started = c.read_until(" backend(s)");
  const auto at = started.find("listening on 127.0.0.1:");
  ASSERT_NE(at, std::string::npos) << started;
  const int port = std::stoi(started.substr(at + std::string("listening on 127.0.0.1:").size()));
  auto r = http_call(static_cast<std::uint16_t>(port), "POST", "/v1/chat/completions", {}, "{}");
  EXPECT_EQ(r.status, 200u);
  EXPECT_EQ(backend.last_request().header("authorization"), "Bearer sk-secret-in-config");
  c.signal(SIGTERM);
  EXPECT_EQ(c.wait_exit(), 0);
  EXPECT_NE(c.output().find("draining"), std::string::npos);
  EXPECT_EQ(c.output().find("sk-secret-in-config"), std::string::npos) << "no key in the log:\n"
                                                                       << c.output();
}

}  // namespace
}  // namespace smartlb::testing
