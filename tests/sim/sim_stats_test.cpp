#include "smartlb/sim/sim_stats.hpp"

#include <gtest/gtest.h>

namespace smartlb::sim {
namespace sim_stats_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(SimStats, CountsStatusesTotalAndPerDeployment) {
  SimStats stats;
  stats.record_status(200, "a");
  stats.record_status(200, "a");
  stats.record_status(429, "b");
  stats.record_status(404, "");
  stats.record_tokens("a", 10, 20);
  stats.record_tokens("a", 5, 7);
  const auto json = stats.to_json();
  EXPECT_EQ(json["requests"], 4);
  EXPECT_EQ(json["by_status"], (nlohmann::json{{"200", 2}, {"404", 1}, {"429", 1}}));
  EXPECT_EQ(json["tokens_served"], 15);
  EXPECT_EQ(json["tokens_charged"], 27);
  EXPECT_EQ(json["deployments"]["a"]["requests"], 2);
  EXPECT_EQ(json["deployments"]["a"]["tokens_served"], 15);
  EXPECT_EQ(json["deployments"]["b"]["by_status"]["429"], 1);
  EXPECT_EQ(json["deployments"].size(), 2u);
}

TEST(SimStats, RemembersLastRequestWithLowerCaseHeaders) {
  SimStats stats;
  stats.record_request({"POST", "/first", {{"X-A", "1"}}, "one"});
  stats.record_request({"POST",
                        "/openai/deployments/d/chat/completions?api-version=1",
                        {{"Api-Key", "k1"}, {"X-Multi", "a"}, {"x-multi", "b"}},
                        "{}"});
  const auto json = stats.to_json();
  EXPECT_EQ(json["last_request_method"], "POST");
  EXPECT_EQ(json["last_request_path"], "/openai/deployments/d/chat/completions?api-version=1");
  EXPECT_EQ(json["last_request_headers"], (nlohmann::json{{"api-key", "k1"}, {"x-multi", "a, b"}}));
  EXPECT_EQ(json["last_request_body"], "{}");
}

TEST(SimStats, ProbesAreCountedApartFromRequests) {
  SimStats stats;
  stats.record_status(200, "a");
  stats.record_probe(200);
  stats.record_probe(200);
  stats.record_probe(503);
  const auto json = stats.to_json();
  EXPECT_EQ(json["requests"], 1);
  EXPECT_EQ(json["by_status"], (nlohmann::json{{"200", 1}}));
  EXPECT_EQ(json["probes"], 3);
  EXPECT_EQ(json["probes_by_status"], (nlohmann::json{{"200", 2}, {"503", 1}}));
}

TEST(SimStats, ClearForgetsEverything) {
  SimStats stats;
  stats.record_request({"GET", "/x", {{"a", "b"}}, ""});
  stats.record_status(200, "a");
  stats.record_probe(200);
  stats.clear();
  const auto json = stats.to_json();
  EXPECT_EQ(json["probes"], 0);
  EXPECT_TRUE(json["probes_by_status"].empty());
  EXPECT_EQ(json["requests"], 0);
  EXPECT_TRUE(json["by_status"].empty());
  EXPECT_TRUE(json["deployments"].empty());
  EXPECT_TRUE(json["last_request_headers"].empty());
  EXPECT_EQ(json["last_request_path"], "");
}

}  // namespace sim_stats_test
}  // namespace smartlb::sim
