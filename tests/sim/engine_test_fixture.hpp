#pragma once
// A SimEngine on a ManualClock with scripted random draws, for the engine's unit tests that
// live apart from sim_engine_test.cpp (Messages API, probes, first-token waits).

#include "smartlb/sim/sim_engine.hpp"

#include <deque>
#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace smartlb::sim::test {

inline std::string header(const SimResponse& response, std::string_view name) {
  const auto value = find_header(response.headers, name);
  return value ? std::string(*value) : std::string("<absent>");
}

class EngineTest : public ::testing::Test {
 protected:
  EngineTest() {
    settings_.name = "eastus";
    settings_.api_key = "k1";
    // claude: 100 tokens and 10 requests per 60 s window.
    settings_.deployments = {{"claude", {100, 10}}, {"gpt-4o", {1'000'000, 1'000}}};
    settings_.chunk_interval = std::chrono::milliseconds(7);
  }

  // Built on first use, so a test can change settings_ first.
  SimEngine& engine() {
    if (!engine_) {
      engine_ = std::make_unique<SimEngine>(settings_, clock_, [this] {
        const double draw = draws_.empty() ? 0.999 : draws_.front();
        if (!draws_.empty()) draws_.pop_front();
        return draw;
      });
    }
    return *engine_;
  }

  SimResponse send(std::string method, std::string target, std::string body, HeaderList headers) {
    return engine().handle({std::move(method), std::move(target), std::move(headers), std::move(body)});
  }
  SimResponse post(std::string target, std::string body, HeaderList headers = {{"api-key", "k1"}}) {
    return send("POST", std::move(target), std::move(body), std::move(headers));
  }
  SimResponse get(std::string target, HeaderList headers = {}) {
    return send("GET", std::move(target), "", std::move(headers));
  }
  void set_faults(const std::string& patch) {
    ASSERT_EQ(post("/_sim/faults", patch, {}).status, 200) << patch;
  }

  SimSettings settings_;
  ManualClock clock_;  // Unix time 1'700'000'000 = 2023-11-14T22:13:20Z at the start
  std::deque<double> draws_;
  std::unique_ptr<SimEngine> engine_;
};

}  // namespace smartlb::sim::test
