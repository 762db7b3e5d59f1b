// The shipped config/smartlb.example.yaml, end to end: every rule's requests are answered by
// one of its own targets (the backends' URLs pointed at mock backends, nothing else changed).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "http_client.hpp"
#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {
namespace example_config_test {  // named, not anonymous: tests/CMakeLists.txt

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct ExampleConfig : ::testing::Test {
  // A mock per backend of the example, answering with its own name.
  std::map<std::string, std::unique_ptr<MockBackend>> backends;
  ProxyHarness p;

  void SetUp() override {
    std::string yaml = read_file(std::string(SMARTLB_SOURCE_DIR) + "/config/smartlb.example.yaml");
    ASSERT_FALSE(yaml.empty());
    // Each `- name: X` then `url: ...`: the URL becomes X's mock.
    const std::regex backend(R"((- name: ([\w.-]+)\n\s+url: )\S+)");
    std::string pointed;
    auto begin = std::sregex_iterator(yaml.begin(), yaml.end(), backend);
    std::size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      const std::string name = (*it)[2];
      auto& mock = backends[name];
      mock = std::make_unique<MockBackend>([name](const SeenRequest&) {
        return MockReply{200, {{"content-type", "application/json"}}, R"({"from":")" + name + R"("})"};
      });
      pointed +=
          yaml.substr(last, static_cast<std::size_t>(it->position()) - last) + (*it)[1].str() + mock->url();
      last = static_cast<std::size_t>(it->position() + it->length());
    }
    pointed += yaml.substr(last);
    ASSERT_EQ(backends.size(), 4u) << "the example's backends";
    const config::EnvMap env = {{"EASTUS_KEY", "k1"},
                                {"SWEDEN_KEY", "k2"},
                                {"WESTUS_KEY", "k3"},
                                {"OPENAI_KEY", "k4"},
                                {"SEARCH_APP_KEY", "search-key"},
                                {"ASSISTANT_APP_KEY", "assistant-key"}};
    ASSERT_EQ(p.use_config_text(env, pointed), "");
    p.start();
  }

  // The backend that served a request, or its status when none did.
  std::string call(const std::string& target, const std::string& key, const std::string& body) {
    const auto r =
        http_call(p.port(), "POST", target, {{"content-type", "application/json"}, {"api-key", key}}, body);
    return r.status == 200 ? r.header("x-smartlb-backend") : "status " + std::to_string(r.status);
  }
};

const std::string kAzureChat = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21";
const std::string kAzureMini = "/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21";
const std::string kChatBody = R"({"messages":[{"role":"user","content":"hi"}]})";

TEST_F(ExampleConfig, BatchJobsGoToThePayAsYouGoRegionsOnly) {
  // batch-jobs' key is "test" (the file holds its SHA-256).
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE((std::set<std::string>{"sweden", "westus"}).count(call(kAzureChat, "test", kChatBody)));
  EXPECT_EQ(backends["eastus-ptu"]->request_count(), 0u) << "never the PTU";
}

TEST_F(ExampleConfig, TheAssistantAppIsServedByOpenAIOnV1Paths) {
  EXPECT_EQ(call("/v1/chat/completions", "assistant-key",
                 R"({"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]})"),
            "openai");
  const SeenRequest seen = backends["openai"]->last_request();
  EXPECT_EQ(seen.target, "/v1/chat/completions") << "no doubled /v1";
  EXPECT_EQ(seen.header("authorization"), "Bearer k4");
}

TEST_F(ExampleConfig, InteractiveGpt4oGoesToThePtuFirst) {
  EXPECT_EQ(call(kAzureChat, "search-key", kChatBody), "eastus-ptu");
  EXPECT_EQ(backends["eastus-ptu"]->last_request().target,
            "/openai/deployments/gpt-4o-ptu/chat/completions?api-version=2024-10-21")
      << "the target's own deployment name";
}

TEST_F(ExampleConfig, MiniGoesToTheRegionsThatServeIt) {
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE((std::set<std::string>{"sweden", "westus"}).count(call(kAzureMini, "search-key", kChatBody)));
}

}  // namespace example_config_test
}  // namespace smartlb::testing
