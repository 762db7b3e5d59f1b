// What an operator's settings mean: changes applied to a scope, the phase /status reports, and
// the deadline the request path reads.
#include "smartlb/routing/admin_state.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace admin_state_test {  // named, not anonymous: tests/CMakeLists.txt

routing::AdminChange mode(routing::AdminMode m, std::string by = "ops", std::int64_t at = 1000) {
  routing::AdminChange c;
  c.backend = "east";
  c.kind = routing::AdminChange::Kind::Mode;
  c.mode = m;
  c.stamp = {std::move(by), at};
  return c;
}

routing::AdminChange hold(std::int64_t until_ms) {
  routing::AdminChange c;
  c.backend = "east";
  c.kind = routing::AdminChange::Kind::Hold;
  c.hold_until_ms = until_ms;
  c.stamp = {"ops", 1000};
  return c;
}

routing::AdminChange lift() {
  routing::AdminChange c;
  c.backend = "east";
  c.kind = routing::AdminChange::Kind::Lift;
  return c;
}

TEST(AdminState, NamesRoundTrip) {
  for (routing::AdminMode m :
       {routing::AdminMode::Enabled, routing::AdminMode::Drain, routing::AdminMode::Disable})
    EXPECT_EQ(routing::admin_mode_named(to_string(m)), m);
  EXPECT_EQ(routing::admin_mode_named("drained"), std::nullopt);
  EXPECT_EQ(routing::admin_mode_named(""), std::nullopt);
}

TEST(AdminState, AModeChangeKeepsWhoSetIt) {
  const routing::AdminSettings s =
      apply_change({}, mode(routing::AdminMode::Drain, "alice (write, sha256:0a1b2c3d)", 42));
  EXPECT_EQ(s.mode, routing::AdminMode::Drain);
  EXPECT_EQ(s.mode_set.by, "alice (write, sha256:0a1b2c3d)");
  EXPECT_EQ(s.mode_set.at_ms, 42);
  EXPECT_FALSE(s.hold);
}

TEST(AdminState, ModeAndHoldAreIndependent) {
  routing::AdminSettings s = apply_change({}, hold(5000));
  s = apply_change(s, mode(routing::AdminMode::Drain));
  s = apply_change(s, mode(routing::AdminMode::Enabled));
  ASSERT_TRUE(s.hold) << "enable leaves a held cooldown alone";
  EXPECT_EQ(s.hold->until_ms, 5000);
  s = apply_change(s, mode(routing::AdminMode::Disable));
  s = apply_change(s, lift());
  EXPECT_FALSE(s.hold);
  EXPECT_EQ(s.mode, routing::AdminMode::Disable) << "lifting a cooldown leaves the mode alone";
}

TEST(AdminState, ALaterHoldReplacesTheEarlierOneEvenWhenShorter) {
  routing::AdminSettings s = apply_change({}, hold(0));
  s = apply_change(s, hold(3000));
  EXPECT_EQ(s.hold->until_ms, 3000) << "an operator's hold is what they said last, not the longest";
}

TEST(AdminState, PhaseOfADrainFollowsItsInFlightRequests) {
  const routing::AdminSettings drain = apply_change({}, mode(routing::AdminMode::Drain));
  EXPECT_EQ(admin_phase(drain, 3, 0), routing::AdminPhase::Draining);
  EXPECT_EQ(admin_phase(drain, 0, 0), routing::AdminPhase::Drained);
  const routing::AdminSettings disable = apply_change({}, mode(routing::AdminMode::Disable));
  EXPECT_EQ(admin_phase(disable, 3, 0), routing::AdminPhase::Disabled) << "a disable does not wait";
  EXPECT_EQ(routing::admin_phase({}, 3, 0), routing::AdminPhase::Enabled);
  EXPECT_EQ(to_string(routing::AdminPhase::Draining), "draining");
  EXPECT_EQ(to_string(routing::AdminPhase::Drained), "drained");
}

TEST(AdminState, AHoldIsHeldUntilItEnds) {
  const routing::AdminSettings s = apply_change({}, hold(5000));
  EXPECT_EQ(admin_phase(s, 0, 4999), routing::AdminPhase::Held);
  EXPECT_EQ(admin_phase(s, 0, 5000), routing::AdminPhase::Enabled) << "an ended hold is as good as none";
  EXPECT_FALSE(s.any(5000));
  const routing::AdminSettings forever = apply_change({}, hold(0));
  EXPECT_EQ(admin_phase(forever, 0, 1'000'000'000'000), routing::AdminPhase::Held);
}

TEST(AdminState, TheRequestPathsDeadline) {
  const base::MonoNanos now = 7'000'000'000;
  const std::int64_t now_ms = 1'700'000'000'000;
  EXPECT_EQ(routing::admin_out_until({}, now, now_ms), 0);
  EXPECT_EQ(admin_out_until(apply_change({}, mode(routing::AdminMode::Drain)), now, now_ms),
            routing::kAdminForever);
  EXPECT_EQ(admin_out_until(apply_change({}, mode(routing::AdminMode::Disable)), now, now_ms),
            routing::kAdminForever);
  EXPECT_EQ(admin_out_until(apply_change({}, hold(0)), now, now_ms), routing::kAdminForever);
  EXPECT_EQ(admin_out_until(apply_change({}, hold(now_ms + 1500)), now, now_ms), now + 1'500'000'000);
  EXPECT_EQ(admin_out_until(apply_change({}, hold(now_ms - 1)), now, now_ms), 0) << "over";
  // Whatever Redis says, a hold never ends more than a week away.
  EXPECT_EQ(admin_out_until(apply_change({}, hold(std::numeric_limits<std::int64_t>::max())), now, now_ms),
            now + 7LL * 24 * 3600 * 1'000'000'000);
}

}  // namespace admin_state_test
}  // namespace smartlb
