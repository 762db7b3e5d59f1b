// The admin API without sockets: its routes, every endpoint's answer and change, and the
// requests it refuses (bad JSON, unknown members and backends, wrong methods).
#include "smartlb/admin/admin_api.hpp"

#include <gtest/gtest.h>

#include "smartlb/base/clock.hpp"

namespace smartlb {
namespace admin_api_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

struct AdminApiTest : ::testing::Test {
  base::ManualClock clock;
  routing::RoutingTable table{std::vector<routing::PoolMember>{{"east", 1, 1, ""}, {"west", 2, 1, ""}}};
  routing::BackendStates states{clock, routing::CooldownPolicy{}};
  std::vector<std::string> names{"east", "west"};
  admin::AdminCaller alice{"alice", config::AdminRole::Write, "sha256:0a1b2c3d"};

  void SetUp() override { states.track(table); }

  admin::AdminAnswer call(std::string_view method, std::string_view path, std::string_view query = {},
                          std::string_view body = {}, bool shared = false) {
    const admin::AdminRoute route = admin::route_admin(path);
    EXPECT_NE(route.kind, admin::AdminRoute::Kind::None) << path;
    return answer_admin(route, {method, query, body}, alice, states, {names, shared});
  }
  std::int64_t now_ms() const {
    return std::chrono::duration_cast<base::Millis>(clock.wall_now().time_since_epoch()).count();
  }
};

TEST(AdminRoutes, WhatEachPathIsAndNeeds) {
  EXPECT_EQ(admin::route_admin("/admin/whoami").kind, admin::AdminRoute::Kind::Whoami);
  EXPECT_EQ(admin::route_admin("/admin/backends").kind, admin::AdminRoute::Kind::Backends);
  const admin::AdminRoute one = admin::route_admin("/admin/backends/east");
  EXPECT_EQ(one.kind, admin::AdminRoute::Kind::Backend);
  EXPECT_EQ(one.need, admin::AdminNeed::Read);
  EXPECT_EQ(one.backend, "east");
  for (std::string_view action : {"drain", "disable", "enable"}) {
    const std::string path = "/admin/backends/east/" + std::string(action);
    const admin::AdminRoute r = admin::route_admin(path);  // views into `path`
    EXPECT_EQ(r.kind, admin::AdminRoute::Kind::Action);
    EXPECT_EQ(r.need, admin::AdminNeed::Write);
    EXPECT_EQ(r.action, action);
    EXPECT_EQ(r.allow, "POST");
  }
  EXPECT_EQ(admin::route_admin("/admin/backends/east/cooldown").allow, "POST, DELETE");
  EXPECT_EQ(admin::route_admin("/admin/backends/east/reboot").kind, admin::AdminRoute::Kind::None);
  EXPECT_EQ(admin::route_admin("/admin/backends//drain").kind, admin::AdminRoute::Kind::None);
  EXPECT_EQ(admin::route_admin("/status").kind, admin::AdminRoute::Kind::None);
  EXPECT_EQ(admin::route_admin("/admin").kind, admin::AdminRoute::Kind::None);
}

TEST_F(AdminApiTest, DrainAnswersTheNewStateAndSaysWhoForTheLog) {
  const admin::AdminAnswer a = call("POST", "/admin/backends/east/drain");
  EXPECT_EQ(a.status, 200u);
  EXPECT_EQ(a.body["backend"], "east");
  EXPECT_TRUE(a.body["deployment"].is_null());
  EXPECT_EQ(a.body["state"], "drained") << "nothing in flight";
  EXPECT_EQ(a.body["mode"], "drain");
  EXPECT_EQ(a.body["set_by"], "alice (write, sha256:0a1b2c3d)");
  EXPECT_EQ(a.body["set_at"], admin::iso_utc(now_ms()));
  EXPECT_EQ(a.body["applies_to"], "this replica");
  EXPECT_EQ(a.audit, "backend east drained by alice (write, sha256:0a1b2c3d)");
  EXPECT_FALSE(states.available(table.member(0), "gpt"));
}

TEST_F(AdminApiTest, DrainWithRequestsInFlightIsDraining) {
  routing::InFlight busy = states.begin_attempt(table.member(0), "gpt");
  const admin::AdminAnswer a = call("POST", "/admin/backends/east/drain", "", "", /*shared=*/true);
  EXPECT_EQ(a.body["state"], "draining");
  EXPECT_EQ(a.body["in_flight"], 1);
  EXPECT_EQ(a.body["applies_to"], "every replica");
  busy.release();
  EXPECT_EQ(call("GET", "/admin/backends/east").body["state"], "drained");
}

TEST_F(AdminApiTest, DisableAndEnableOneDeployment) {
  admin::AdminAnswer a = call("POST", "/admin/backends/west/disable", "deployment=gpt-4o");
  EXPECT_EQ(a.status, 200u);
  EXPECT_EQ(a.body["deployment"], "gpt-4o");
  EXPECT_EQ(a.body["state"], "disabled");
  EXPECT_EQ(a.audit, "backend west deployment gpt-4o disabled by alice (write, sha256:0a1b2c3d)");
  EXPECT_FALSE(states.available(table.member(1), "gpt-4o"));
  EXPECT_TRUE(states.available(table.member(1), "mini"));
  const admin::AdminAnswer listed = call("GET", "/admin/backends/west");
  EXPECT_EQ(listed.body["state"], "enabled");
  ASSERT_EQ(listed.body["deployments"].size(), 1u);
  EXPECT_EQ(listed.body["deployments"][0]["deployment"], "gpt-4o");
  a = call("POST", "/admin/backends/west/enable", "deployment=gpt-4o");
  EXPECT_EQ(a.body["state"], "enabled");
  EXPECT_TRUE(a.body["set_by"].is_null()) << "who enabled it is in the log";
  EXPECT_TRUE(states.available(table.member(1), "gpt-4o"));
}

TEST_F(AdminApiTest, HoldForSecondsThenItEnds) {
  const admin::AdminAnswer a = call("POST", "/admin/backends/east/cooldown", "", R"({"seconds": 90})");
  EXPECT_EQ(a.status, 200u);
  EXPECT_EQ(a.body["state"], "held");
  EXPECT_EQ(a.body["hold"]["until"], admin::iso_utc(now_ms() + 90'000));
  EXPECT_EQ(a.body["hold"]["remaining_ms"], 90'000);
  EXPECT_EQ(a.body["hold"]["set_by"], "alice (write, sha256:0a1b2c3d)");
  EXPECT_NE(a.audit.find("cooldown held until"), std::string::npos) << a.audit;
  clock.advance(90s);
  EXPECT_TRUE(states.available(table.member(0), "gpt"));
  EXPECT_TRUE(call("GET", "/admin/backends/east").body["hold"].is_null());
}

TEST_F(AdminApiTest, HoldWithoutSecondsLastsUntilLifted) {
  for (std::string_view body : {"", "{}", "  \n", R"({"seconds": null})"}) {
    const admin::AdminAnswer a = call("POST", "/admin/backends/east/cooldown", "", body);
    ASSERT_EQ(a.status, 200u) << body;
    EXPECT_TRUE(a.body["hold"]["until"].is_null()) << body;
    EXPECT_EQ(a.audit, "backend east cooldown held until lifted by alice (write, sha256:0a1b2c3d)");
  }
  clock.advance(std::chrono::hours(24 * 8));
  EXPECT_FALSE(states.available(table.member(0), "gpt"));
}

TEST_F(AdminApiTest, DeleteLiftsAHoldAndA429sCooldown) {
  states.record_failure(table.member(0), "gpt-4o", routing::judge_status(429, true), 60'000ms);
  call("POST", "/admin/backends/east/cooldown", "deployment=gpt-4o", "{}");
  admin::AdminAnswer a = call("GET", "/admin/backends/east", "deployment=gpt-4o");
  EXPECT_EQ(a.body["cooldown_cause"], "throttled");
  EXPECT_GT(a.body["cooldown_remaining_ms"].get<std::int64_t>(), 0);
  a = call("DELETE", "/admin/backends/east/cooldown", "deployment=gpt-4o");
  EXPECT_EQ(a.status, 200u);
  EXPECT_EQ(a.body["state"], "enabled");
  EXPECT_TRUE(a.body["hold"].is_null());
  EXPECT_EQ(a.body["cooldown_remaining_ms"], 0);
  EXPECT_EQ(a.audit, "backend east deployment gpt-4o cooldowns lifted by alice (write, sha256:0a1b2c3d)");
  EXPECT_TRUE(states.available(table.member(0), "gpt-4o"));
}

TEST_F(AdminApiTest, ABackendShowsItsDeploymentsCoolingAfterA429) {
  states.record_failure(table.member(0), "gpt-4o", routing::judge_status(429, true), 20'000ms);
  const admin::AdminAnswer a = call("GET", "/admin/backends/east");
  EXPECT_EQ(a.body["cooldown_remaining_ms"], 0) << "the backend itself is not cooling";
  ASSERT_EQ(a.body["deployments"].size(), 1u) << a.body;
  EXPECT_EQ(a.body["deployments"][0]["deployment"], "gpt-4o");
  EXPECT_EQ(a.body["deployments"][0]["cooldown_cause"], "throttled");
  EXPECT_EQ(a.body["deployments"][0]["cooldown_remaining_ms"], 20000);
  EXPECT_EQ(a.body["deployments"][0]["state"], "enabled");
  clock.advance(20s);
  EXPECT_TRUE(call("GET", "/admin/backends/east").body["deployments"].empty()) << "its cooldown over";
}

TEST_F(AdminApiTest, BadBodiesAre400) {
  for (std::string_view body :
       {"{", "[1]", "\"x\"", R"({"seconds": "60"})", R"({"seconds": 0})", R"({"seconds": -5})",
        R"({"seconds": 604801})", R"({"seconds": 1e999})", R"({"seconds": 5, "force": true})"}) {
    const admin::AdminAnswer a = call("POST", "/admin/backends/east/cooldown", "", body);
    EXPECT_EQ(a.status, 400u) << body;
    EXPECT_EQ(a.body["error"]["type"], "invalid_request_error") << body;
    EXPECT_TRUE(a.audit.empty());
  }
  EXPECT_TRUE(states.available(table.member(0), "gpt")) << "nothing was held";
}

TEST_F(AdminApiTest, BadQueriesAre400) {
  for (std::string_view query : {"deployment=", "deployment=a/b", "deployment=%2F",
                                 "deployment=a&deployment=b", "backend=west", "deployment"}) {
    const admin::AdminAnswer a = call("POST", "/admin/backends/east/drain", query);
    EXPECT_EQ(a.status, 400u) << query;
  }
  EXPECT_TRUE(states.available(table.member(0), "gpt"));
}

TEST_F(AdminApiTest, UnknownBackendsAre404) {
  for (std::string_view method : {"POST", "DELETE"}) {
    const admin::AdminAnswer a = call(method, "/admin/backends/north/cooldown");
    EXPECT_EQ(a.status, 404u);
    EXPECT_EQ(a.body["error"]["type"], "not_found");
  }
  EXPECT_EQ(call("POST", "/admin/backends/north/drain").status, 404u);
  EXPECT_EQ(call("GET", "/admin/backends/north").status, 404u);
  EXPECT_EQ(call("GET", "/admin/backends/%0d%0a").status, 404u);
}

TEST_F(AdminApiTest, WrongMethodsAre405) {
  EXPECT_EQ(call("GET", "/admin/backends/east/drain").status, 405u);
  EXPECT_EQ(call("DELETE", "/admin/backends/east/drain").status, 405u);
  EXPECT_EQ(call("PUT", "/admin/backends/east/cooldown").status, 405u);
  EXPECT_EQ(call("POST", "/admin/backends/east").status, 405u);
  EXPECT_EQ(call("POST", "/admin/whoami").status, 405u);
  EXPECT_TRUE(states.available(table.member(0), "gpt"));
}

TEST_F(AdminApiTest, BackendsListsEveryBackend) {
  call("POST", "/admin/backends/west/drain");
  const admin::AdminAnswer a = call("GET", "/admin/backends");
  ASSERT_EQ(a.body["backends"].size(), 2u);
  EXPECT_EQ(a.body["backends"][0]["backend"], "east");
  EXPECT_EQ(a.body["backends"][0]["state"], "enabled");
  EXPECT_EQ(a.body["backends"][1]["state"], "drained");
}

TEST_F(AdminApiTest, WhoAmI) {
  admin::AdminAnswer a = call("GET", "/admin/whoami");
  EXPECT_EQ(a.body["name"], "alice");
  EXPECT_EQ(a.body["role"], "write");
  a = answer_admin(admin::route_admin("/admin/whoami"), {"GET", "", ""}, std::nullopt, states,
                   {names, false});
  EXPECT_EQ(a.body["role"], "read") << "no tokens set: reading is open";
  EXPECT_EQ(a.body["tokens"], false);
}

TEST(AdminApiTime, IsoUtc) {
  EXPECT_EQ(admin::iso_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(admin::iso_utc(1'700'000'000'123), "2023-11-14T22:13:20.123Z");
}

}  // namespace admin_api_test
}  // namespace smartlb
