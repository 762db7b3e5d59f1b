// The config file's priority classes and its clients' priority_class: what is read, and what is
// refused with a message that names the key.
#include <gtest/gtest.h>

#include "load_result.hpp"
#include "smartlb/config/config_file.hpp"

namespace smartlb {
namespace priority_classes_config_test {  // named, not anonymous: tests/CMakeLists.txt

config::EnvMap env() { return {{"BACKEND_1_URL", "http://127.0.0.1:9"}, {"K", "nightly-key-1"}}; }

TEST(PriorityClassesConfig, ReadsTheClassesTheirReservesAndTheClientsInThem) {
  const auto r = config::load_config_text(env(), R"(
priority_classes:
  - name: interactive
  - name: standard
    reserve_percent: 10
    subjects: [team:web]
  - name: batch
clients:
  - name: nightly
    key: ${K}
    priority_class: batch
)",
                                          "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  const auto& c = r.config->policy.priority_classes;
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], (config::PriorityClassConfig{"interactive", 0, {}, {}}));
  EXPECT_EQ(c[1], (config::PriorityClassConfig{"standard", 100, {"team:web"}, {}}));
  EXPECT_EQ(c[2], (config::PriorityClassConfig{"batch", config::kDefaultClassReserve, {}, {"nightly"}}))
      << "a class below the first keeps the default reserve when it names none";
  EXPECT_NE(
      describe_routing(*r.config).find("priority class standard: leaves the classes above what they ask for, "
                                       "up to 10 % of each quota; callers: subject team:web"),
      std::string::npos)
      << describe_routing(*r.config);
}

TEST(PriorityClassesConfig, AClientMayNameADefaultClass) {
  const auto r = config::load_config_text(
      env(), "clients: [{name: nightly, key: \"${K}\", priority_class: batch}]\n", "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  ASSERT_EQ(r.config->policy.priority_classes.size(), 2u);
  EXPECT_EQ(r.config->policy.priority_classes[1].clients, std::vector<std::string>{"nightly"});
}

TEST(PriorityClassesConfig, WithoutClassesNothingIsDeclared) {
  const auto r = config::load_config_text(env(), "clients: [{name: app, key: \"${K}\"}]\n", "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  EXPECT_TRUE(r.config->policy.priority_classes.empty()) << "the defaults apply where they are used";
}

TEST(PriorityClassesConfig, AClassThatMayTakeWhatTheOneAboveMayNotIsAWarning) {
  // The third class keeps the default (50 %), less than the second's 60 %.
  const auto r = config::load_config_text(
      env(), "priority_classes: [{name: a}, {name: b, reserve_percent: 60}, {name: c}]\n", "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("priority_classes[2].reserve_percent: is lower than the class above it keeps"),
            std::string::npos)
      << r.warnings[0];
}

TEST(PriorityClassesConfig, AClassMayWaitForCapacityABoundedTime) {
  const auto r = config::load_config_text(env(),
                                          "priority_classes: [{name: interactive, max_queue_seconds: 2.5, "
                                          "max_queue_length: 50}, {name: batch}]\n",
                                          "f.yaml");
  ASSERT_TRUE(r.config) << all_errors(r);
  const auto& c = r.config->policy.priority_classes;
  EXPECT_EQ(c[0].max_queue, std::chrono::milliseconds(2500));
  EXPECT_EQ(c[0].max_queue_length, 50u);
  EXPECT_EQ(c[1].max_queue, std::chrono::milliseconds(0)) << "by default: a 429 at once";
  EXPECT_EQ(c[1].max_queue_length, config::kDefaultMaxQueueLength);
  EXPECT_NE(describe_routing(*r.config).find(
                "priority class interactive: waits up to 2.5 s for capacity (at most 50 "
                "at once)"),
            std::string::npos)
      << describe_routing(*r.config);
  const auto negative =
      config::load_config_text(env(), "priority_classes: [{name: a, max_queue_seconds: -1}]\n", "f.yaml");
  EXPECT_TRUE(has_error(negative, "priority_classes[0].max_queue_seconds")) << all_errors(negative);
  const auto none =
      config::load_config_text(env(), "priority_classes: [{name: a, max_queue_length: 0}]\n", "f.yaml");
  EXPECT_TRUE(has_error(none, "priority_classes[0].max_queue_length")) << all_errors(none);
}

TEST(PriorityClassesConfig, BadClassesAreRefusedByName) {
  const auto first =
      config::load_config_text(env(), "priority_classes: [{name: a, reserve_percent: 10}]\n", "f.yaml");
  EXPECT_TRUE(has_error(first, "priority_classes[0].reserve_percent: cannot be set on the first class"))
      << all_errors(first);
  const auto dup = config::load_config_text(env(), "priority_classes: [{name: a}, {name: a}]\n", "f.yaml");
  EXPECT_TRUE(has_error(dup, "priority_classes[1].name: duplicates another class's name \"a\""))
      << all_errors(dup);
  const auto range = config::load_config_text(
      env(), "priority_classes: [{name: a}, {name: b, reserve_percent: 100}]\n", "f.yaml");
  EXPECT_TRUE(has_error(range, "priority_classes[1].reserve_percent")) << all_errors(range);
  const auto nine = config::load_config_text(
      env(),
      "priority_classes: [{name: a}, {name: b}, {name: c}, {name: d}, {name: e}, {name: f}, {name: g}, "
      "{name: h}, {name: i}]\n",
      "f.yaml");
  EXPECT_TRUE(has_error(nine, "priority_classes: has 9 classes; at most 8")) << all_errors(nine);
  const auto unknown_key =
      config::load_config_text(env(), "priority_classes: [{name: a, reserve: 1}]\n", "f.yaml");
  EXPECT_TRUE(has_error(unknown_key, "priority_classes[0]")) << all_errors(unknown_key);
  const auto client = config::load_config_text(
      env(), "clients: [{name: n, key: \"${K}\", priority_class: urgent}]\n", "f.yaml");
  EXPECT_TRUE(has_error(client,
                        "clients[0].priority_class: names no priority class: \"urgent\" (the classes are "
                        "interactive, batch)"))
      << all_errors(client);
}

}  // namespace priority_classes_config_test
}  // namespace smartlb
