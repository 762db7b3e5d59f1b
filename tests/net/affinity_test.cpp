// Affinity end to end: the key comes from the x-smartlb-affinity header, else the body's
// prompt_cache_key, else its user (read with the body's other facts, once), and pins a
// conversation to one target.
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace affinity_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr int kBackends = 4;
const std::string kOpenAiChat = "/v1/chat/completions";

class Affinity : public ::testing::Test {
 protected:
  void SetUp() override {
    config::EnvMap env;
    std::string yaml = "backends:\n";
    for (int i = 0; i < kBackends; ++i) {
      const std::string name = "b" + std::to_string(i);
      backends_.push_back(std::make_unique<MockBackend>([name](const SeenRequest&) {
        return MockReply{200, {}, name};
      }));
      env["URL" + std::to_string(i)] = backends_.back()->url();
      yaml += "  - name: " + name + "\n    url: ${URL" + std::to_string(i) + "}\n";
    }
    yaml += "targets:\n";
    for (int i = 0; i < kBackends; ++i)
      yaml += "  - id: t" + std::to_string(i) + "\n    backend: b" + std::to_string(i) +
              "\n    deployment: gpt-4o\n";
    yaml +=
        "rules:\n  - id: sticky\n    type: weight-based-routing\n    affinity: true\n    "
        "load_balance_targets:\n";
    for (int i = 0; i < kBackends; ++i) yaml += "      - target: t" + std::to_string(i) + "\n";
    ASSERT_EQ(proxy_.use_config_text(env, yaml), "");
    proxy_.start();
  }

  // The backend that answered a chat request with `members` (JSON text) beside the model.
  std::string served(const std::string& members, const Headers& headers = {}) {
    const std::string body =
        R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],)" + members + "}";
    const HttpResponse r = http_call(proxy_.port(), "POST", kOpenAiChat, headers, body);
    EXPECT_EQ(r.status, 200u) << r.body;
    return r.body;
  }

  std::vector<std::unique_ptr<MockBackend>> backends_;
  ProxyHarness proxy_;
};

TEST_F(Affinity, ThePromptCacheKeyPinsATarget) {
  std::set<std::string> used;
  for (int key = 0; key < 12; ++key) {
    const std::string members = R"("prompt_cache_key":"conversation-)" + std::to_string(key) + "\"";
    const std::string first = served(members);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(served(members), first) << "key " << key;
    used.insert(first);
  }
  EXPECT_GT(used.size(), 1u) << "different keys spread over the targets";
}

TEST_F(Affinity, TheUserIsTheKeyWithoutAPromptCacheKey) {
  for (int user = 0; user < 6; ++user) {
    const std::string members = R"("user":"user-)" + std::to_string(user) + "\"";
    const std::string first = served(members);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(served(members), first) << "user " << user;
  }
}

TEST_F(Affinity, ThePromptCacheKeyComesBeforeTheUserAndTheHeaderBeforeBoth) {
  const std::string pinned = served(R"("prompt_cache_key":"k1")");
  for (int user = 0; user < 8; ++user)
    EXPECT_EQ(served(R"("prompt_cache_key":"k1","user":"u)" + std::to_string(user) + "\""), pinned);
  const std::string by_header = served("\"user\":\"x\"", {{"x-smartlb-affinity", "h1"}});
  for (int key = 0; key < 8; ++key)
    EXPECT_EQ(served(R"("prompt_cache_key":"k)" + std::to_string(key) + "\"", {{"x-smartlb-affinity", "h1"}}),
              by_header);
}

TEST_F(Affinity, AKeyIsReadAsItsJsonMeans) {
  // The same key written with an escape, in the member's escaped name, and after nested decoys.
  const std::string pinned = served(R"("prompt_cache_key":"abc")");
  EXPECT_EQ(served(R"("prompt_c\u0061che_key":"abc")"), pinned);
  EXPECT_EQ(served(R"("tools":[{"prompt_cache_key":"other"}],"prompt_cache_key":"abc")"), pinned);
}

}  // namespace affinity_test
}  // namespace smartlb::testing
