// What an operator's settings mean: changes applied to a scope, the phase /status reports, and
// the deadline the request path reads.
#include "smartlb/routing/admin_state.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace {

AdminChange mode(AdminMode m, std::string by = "ops", std::int64_t at = 1000) {
  AdminChange c;
  c.backend = "east";
  c.kind = AdminChange::Kind::Mode;
  c.mode = m;
  c.stamp = {std::move(by), at};
  return c;
}

AdminChange hold(std::int64_t until_ms) {
  AdminChange c;
  c.backend = "east";
  c.kind = AdminChange::Kind::Hold;
  c.hold_until_ms = until_ms;
  c.stamp = {"ops", 1000};
  return c;
}

AdminChange lift() {
  AdminChange c;
  c.backend = "east";
  c.kind = AdminChange::Kind::Lift;
  return c;
}

TEST(AdminState, NamesRoundTrip) {
  for (AdminMode m : {AdminMode::Enabled, AdminMode::Drain, AdminMode::Disable})
    EXPECT_EQ(admin_mode_named(to_string(m)), m);
  EXPECT_EQ(admin_mode_named("drained"), std::nullopt);
  EXPECT_EQ(admin_mode_named(""), std::nullopt);
}

TEST(AdminState, AModeChangeKeepsWhoSetIt) {
  const AdminSettings s = apply_change({}, mode(AdminMode::Drain, "alice (write, sha256:0a1b2c3d)", 42));
  EXPECT_EQ(s.mode, AdminMode::Drain);
  EXPECT_EQ(s.mode_set.by, "alice (write, sha256:0a1b2c3d)");
  EXPECT_EQ(s.mode_set.at_ms, 42);
  EXPECT_FALSE(s.hold);
}

TEST(AdminState, ModeAndHoldAreIndependent) {
  AdminSettings s = apply_change({}, hold(5000));
  s = apply_change(s, mode(AdminMode::Drain));
  s = apply_change(s, mode(AdminMode::Enabled));
  ASSERT_TRUE(s.hold) << "enable leaves a held cooldown alone";
  EXPECT_EQ(s.hold->until_ms, 5000);
  s = apply_change(s, mode(AdminMode::Disable));
  s = apply_change(s, lift());
  EXPECT_FALSE(s.hold);
  EXPECT_EQ(s.mode, AdminMode::Disable) << "lifting a cooldown leaves the mode alone";
}

TEST(AdminState, ALaterHoldReplacesTheEarlierOneEvenWhenShorter) {
  AdminSettings s = apply_change({}, hold(0));
  s = apply_change(s, hold(3000));
  EXPECT_EQ(s.hold->until_ms, 3000) << "an operator's hold is what they said last, not the longest";
}

TEST(AdminState, PhaseOfADrainFollowsItsInFlightRequests) {
  const AdminSettings drain = apply_change({}, mode(AdminMode::Drain));
  EXPECT_EQ(admin_phase(drain, 3, 0), AdminPhase::Draining);
  EXPECT_EQ(admin_phase(drain, 0, 0), AdminPhase::Drained);
  const AdminSettings disable = apply_change({}, mode(AdminMode::Disable));
  EXPECT_EQ(admin_phase(disable, 3, 0), AdminPhase::Disabled) << "a disable does not wait";
  EXPECT_EQ(admin_phase({}, 3, 0), AdminPhase::Enabled);
  EXPECT_EQ(to_string(AdminPhase::Draining), "draining");
  EXPECT_EQ(to_string(AdminPhase::Drained), "drained");
}

TEST(AdminState, AHoldIsHeldUntilItEnds) {
  const AdminSettings s = apply_change({}, hold(5000));
  EXPECT_EQ(admin_phase(s, 0, 4999), AdminPhase::Held);
  EXPECT_EQ(admin_phase(s, 0, 5000), AdminPhase::Enabled) << "an ended hold is as good as none";
  EXPECT_FALSE(s.any(5000));
  const AdminSettings forever = apply_change({}, hold(0));
  EXPECT_EQ(admin_phase(forever, 0, 1'000'000'000'000), AdminPhase::Held);
}

TEST(AdminState, TheRequestPathsDeadline) {
  const MonoNanos now = 7'000'000'000;
  const std::int64_t now_ms = 1'700'000'000'000;
  EXPECT_EQ(admin_out_until({}, now, now_ms), 0);
  EXPECT_EQ(admin_out_until(apply_change({}, mode(AdminMode::Drain)), now, now_ms), kAdminForever);
  EXPECT_EQ(admin_out_until(apply_change({}, mode(AdminMode::Disable)), now, now_ms), kAdminForever);
  EXPECT_EQ(admin_out_until(apply_change({}, hold(0)), now, now_ms), kAdminForever);
  EXPECT_EQ(admin_out_until(apply_change({}, hold(now_ms + 1500)), now, now_ms), now + 1'500'000'000);
  EXPECT_EQ(admin_out_until(apply_change({}, hold(now_ms - 1)), now, now_ms), 0) << "over";
  // Whatever Redis says, a hold never ends more than a week away.
  EXPECT_EQ(admin_out_until(apply_change({}, hold(std::numeric_limits<std::int64_t>::max())), now, now_ms),
            now + 7LL * 24 * 3600 * 1'000'000'000);
}

}  // namespace
}  // namespace smartlb
