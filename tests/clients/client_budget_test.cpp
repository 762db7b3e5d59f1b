#include "smartlb/clients/client_budget.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/clients/budget_registry.hpp"

namespace smartlb {
namespace client_budget_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono;

// 2026-11-25 10:00:00 UTC.
const base::WallTime kWall = sys_days(year(2026) / November / 25) + hours(10);

struct Budget : ::testing::Test {
  base::ManualClock clock;
  clients::BudgetTime at(base::Nanos later = base::Nanos(0)) const {
    return {clock.now() + later.count(), kWall + later};
  }
};

TEST_F(Budget, AdmitsWhileTheMinuteHasRoomAndSaysWhenItFrees) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_minute = 1000});
  clients::BudgetCharge c;
  EXPECT_FALSE(b.admit(600, at(), c));
  EXPECT_EQ(c.tokens, 600);
  const auto refused = b.admit(600, at(seconds(10)), c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::TokensPerMinute);
  EXPECT_EQ(refused->used, 600);
  EXPECT_EQ(refused->requested, 600);
  EXPECT_EQ(refused->limit_value, 1000);
  // The first charge leaves the window a minute (and at most a bucket) after it was made.
  EXPECT_GT(refused->retry_after, seconds(49));
  EXPECT_LE(refused->retry_after, seconds(51));
  EXPECT_FALSE(b.admit(600, at(seconds(61)), c));
}

// Refused by the minute and the day at once: the day's is the answer (its wait is the longer),
// not a Retry-After after which the request is refused again.
TEST_F(Budget, OfTheLimitsThatRefuseTheOneThatAdmitsLastAnswers) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_minute = 1000, .tokens_per_day = 950});
  clients::BudgetCharge c;
  EXPECT_FALSE(b.admit(900, at(), c));
  const auto refused = b.admit(120, at(seconds(1)), c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::TokensPerDay);
  EXPECT_EQ(refused->limit_value, 950);
  EXPECT_EQ(refused->retry_after, hours(14) - seconds(1));  // midnight UTC
}

TEST_F(Budget, CountsRequestsPerMinute) {
  clients::ClientBudget b(config::ClientLimits{.requests_per_minute = 2});
  clients::BudgetCharge c;
  EXPECT_FALSE(b.admit(5, at(), c));
  EXPECT_FALSE(b.admit(5, at(), c));
  const auto refused = b.admit(5, at(), c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::RequestsPerMinute);
}

TEST_F(Budget, ARefusedRequestChargesNothing) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_minute = 100, .requests_per_minute = 10});
  clients::BudgetCharge c;
  EXPECT_TRUE(b.admit(101, at(), c));
  const auto s = b.state(at());
  EXPECT_EQ(s.tokens_minute_used, 0);
  EXPECT_EQ(s.requests_minute_used, 0);
}

TEST_F(Budget, SettlingCorrectsTheChargeToTheRealUsage) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_minute = 1000, .tokens_per_day = 5000});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(900, at(), c));  // prompt estimate + max_tokens
  b.settle(c, 150, at(seconds(2)));     // the answer's usage
  auto s = b.state(at(seconds(2)));
  EXPECT_EQ(s.tokens_minute_used, 150);
  EXPECT_EQ(s.tokens_day_used, 150);
  EXPECT_EQ(s.tokens.remaining, 850);  // the minute binds: less remains there than in the day
  clients::BudgetCharge more;
  EXPECT_FALSE(b.admit(800, at(seconds(3)), more));
  // More than estimated is charged too (a completion without max_tokens).
  b.settle(more, 900, at(seconds(4)));
  s = b.state(at(seconds(4)));
  EXPECT_EQ(s.tokens_minute_used, 1050);
  EXPECT_EQ(s.tokens.remaining, 0);
}

TEST_F(Budget, ASettlementAfterTheWindowForgotTheChargeRefundsNothing) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_minute = 1000});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(500, at(), c));
  clients::BudgetCharge later;
  ASSERT_FALSE(b.admit(300, at(seconds(70)), later));
  b.settle(c, 0, at(seconds(70)));  // a stream that outlived the window
  EXPECT_EQ(b.state(at(seconds(70))).tokens_minute_used, 300);
}

TEST_F(Budget, CancelTakesTheRequestBackEntirely) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_minute = 1000, .requests_per_minute = 1});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(500, at(), c));
  b.cancel(c, at());
  const auto s = b.state(at());
  EXPECT_EQ(s.tokens_minute_used, 0);
  EXPECT_EQ(s.requests_minute_used, 0);
  EXPECT_FALSE(b.admit(500, at(), c));
}

TEST_F(Budget, ADailyQuotaOpensAgainAtMidnightUtc) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_day = 1000});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(1000, at(), c));
  const auto refused = b.admit(1, at(hours(1)), c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::TokensPerDay);
  EXPECT_EQ(refused->retry_after, hours(13));  // 11:00 -> midnight
  EXPECT_FALSE(b.admit(1000, at(hours(14)), c));
}

TEST_F(Budget, AMonthlyQuotaOpensAgainOnTheFirst) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_month = 10});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(10, at(), c));
  const auto refused = b.admit(1, at(), c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::TokensPerMonth);
  EXPECT_EQ(refused->retry_after,
            duration_cast<base::Nanos>(base::WallTime(sys_days(year(2026) / December / 1)) - kWall));
}

TEST_F(Budget, NewLimitsKeepWhatWasUsed) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_minute = 1000});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(800, at(), c));
  b.set_limits(config::ClientLimits{.tokens_per_minute = 500});
  EXPECT_TRUE(b.admit(1, at(), c));
  b.set_limits(config::ClientLimits{.tokens_per_minute = 2000});
  EXPECT_FALSE(b.admit(1000, at(), c));
}

TEST_F(Budget, StateReportsTheTightestTokenLimit) {
  clients::ClientBudget b(
      config::ClientLimits{.tokens_per_minute = 1000, .requests_per_minute = 10, .tokens_per_day = 1200});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(900, at(), c));
  ASSERT_FALSE(b.admit(100, at(seconds(61)), c));
  const auto s = b.state(at(seconds(61)));
  EXPECT_EQ(s.tokens.limit, 1200);  // the day has 200 left, the minute 900
  EXPECT_EQ(s.tokens.remaining, 200);
  EXPECT_EQ(s.requests.limit, 10);
  EXPECT_EQ(s.requests.remaining, 9);
}

}  // namespace client_budget_test
}  // namespace smartlb

namespace smartlb {
namespace client_budget_test {

// Workers share budgets: charges from several threads at once are all counted (and the
// ThreadSanitizer build checks the locking).
TEST(BudgetThreads, ConcurrentChargesAndSettlementsAreAllCounted) {
  clients::BudgetRegistry registry;
  clients::ClientBudget& shared = registry.get(
      "team", config::ClientLimits{.tokens_per_minute = 1'000'000'000, .requests_per_minute = 1'000'000});
  const clients::BudgetTime t{1'000'000'000'000,
                              std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000))};
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&, k] {
      for (int i = 0; i < 500; ++i) {
        clients::BudgetCharge c;
        ASSERT_FALSE(shared.admit(10, t, c));
        shared.settle(c, 3, t);
        // Callers of their own, found (and made) while others look.
        clients::ClientBudget& own =
            registry.get("caller-" + std::to_string(k) + "-" + std::to_string(i % 7),
                         config::ClientLimits{.requests_per_minute = 1000}, "overflow", 7);
        clients::BudgetCharge o;
        ASSERT_FALSE(own.admit(1, t, o));
      }
    });
  for (auto& th : threads) th.join();
  const clients::ClientBudget::State s = shared.state(t);
  EXPECT_EQ(s.tokens_minute_used, 4 * 500 * 3);
  EXPECT_EQ(s.requests_minute_used, 4 * 500);
  EXPECT_EQ(registry.size(), 1u + 4 * 7);
}

}  // namespace client_budget_test
}  // namespace smartlb

namespace smartlb {
namespace client_budget_test {

// Shared by replicas (docs/scale-out.md): a broker standing in for Redis records the asks and
// the test answers them.
struct RecordingBroker : routing::LeaseBroker {
  std::vector<routing::SharedLease*> attached;
  std::vector<routing::PendingAsk> asks;
  void attach(routing::SharedLease& lease) override {
    attached.push_back(&lease);
    std::lock_guard lock(lease.mutex);
    lease.quota.set_shared(true, 2);
  }
  void send(routing::SharedLease& lease, const routing::LeasedQuota::Ask& ask) override {
    asks.push_back({&lease, ask});
  }
  void answer(std::size_t i, std::int64_t grant, base::WallTime now) {
    std::lock_guard lock(asks[i].lease->mutex);
    asks[i].lease->quota.granted(asks[i].ask, grant, now);
  }
};

const base::WallTime kMinuteStart = sys_days(year(2026) / November / 25) + hours(10);

TEST(SharedBudget, TheMinuteLimitsAdmitOnlyWhatTheStoreGrantsAndSettleMovesTheLease) {
  base::ManualClock clock;
  RecordingBroker broker;
  clients::BudgetRegistry registry;
  clients::ClientBudget& b =
      registry.get("client\x1fsearch", config::ClientLimits{.tokens_per_minute = 10'000});
  registry.set_lease_broker(&broker);  // a budget made before is shared too
  ASSERT_EQ(broker.attached.size(), 6u);
  EXPECT_EQ(broker.attached[0]->name, "budget:client\x1fsearch:tokens");
  const clients::BudgetTime t{clock.now(), kMinuteStart};
  clients::BudgetCharge c1, c2, c3;
  EXPECT_FALSE(b.admit(200, t, c1)) << "the first request on credit";
  ASSERT_EQ(broker.asks.size(), 1u) << "the requests limit is unset: only tokens are leased";
  EXPECT_EQ(broker.asks[0].ask.used, 200);
  broker.answer(0, 300, t.wall);
  EXPECT_FALSE(b.admit(300, t, c2));
  const auto refused = b.admit(100, t, c3);
  ASSERT_TRUE(refused) << "the local minute has room; the lease has not";
  EXPECT_EQ(refused->limit, clients::BudgetLimit::TokensPerMinute);
  b.settle(c2, 100, t);  // the answer used 100 of the 300
  EXPECT_FALSE(b.admit(200, t, c3)) << "what the answer did not use is the replica's again";
}

TEST(SharedBudget, TheDayQuotaIsLeasedTooAndRefusesUntilTheDaysEndOnceSpent) {
  base::ManualClock clock;
  RecordingBroker broker;
  clients::BudgetRegistry registry;
  registry.set_lease_broker(&broker);
  clients::ClientBudget& b =
      registry.get("client\x1fsearch", config::ClientLimits{.tokens_per_day = 100'000});
  ASSERT_EQ(broker.attached.size(), 6u);
  EXPECT_EQ(broker.attached[2]->name, "budget:client\x1fsearch:day_tokens");
  const clients::BudgetTime t{clock.now(), kMinuteStart};
  clients::BudgetCharge c;
  EXPECT_FALSE(b.admit(200, t, c)) << "on credit";
  ASSERT_EQ(broker.asks.size(), 1u);
  EXPECT_EQ(broker.asks[0].ask.subwindow, calendar_period(base::CalendarPeriod::Day, t.wall).index)
      << "the lease's window is the UTC day";
  broker.answer(0, 0, t.wall);  // the other replicas spent the day
  const auto refused = b.admit(100, t, c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::TokensPerDay);
  EXPECT_EQ(refused->retry_after, hours(14)) << "until midnight UTC";
}

TEST(SharedBudget, TheMonthQuotaIsLeasedOnTheCalendarsMonths) {
  base::ManualClock clock;
  RecordingBroker broker;
  clients::BudgetRegistry registry;
  registry.set_lease_broker(&broker);
  clients::ClientBudget& b =
      registry.get("client\x1fsearch", config::ClientLimits{.tokens_per_month = 1'000'000});
  ASSERT_EQ(broker.attached.size(), 6u);
  EXPECT_EQ(broker.attached[3]->name, "budget:client\x1fsearch:month_tokens");
  const clients::BudgetTime t{clock.now(), kMinuteStart};
  clients::BudgetCharge c;
  EXPECT_FALSE(b.admit(200, t, c)) << "on credit";
  ASSERT_EQ(broker.asks.size(), 1u);
  EXPECT_EQ(broker.asks[0].ask.subwindow, calendar_period(base::CalendarPeriod::Month, t.wall).index)
      << "the lease's window is the UTC month";
  broker.answer(0, 0, t.wall);  // the other replicas spent the month
  const auto refused = b.admit(100, t, c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::TokensPerMonth);
  EXPECT_EQ(refused->retry_after, base::WallTime(sys_days(year(2026) / December / 1)) - t.wall)
      << "until the first of the next month, midnight UTC";
}

TEST(SharedBudget, ANewBudgetIsSharedFromItsStart) {
  RecordingBroker broker;
  clients::BudgetRegistry registry;
  registry.set_lease_broker(&broker);
  registry.get("subject\x1fteam-a", config::ClientLimits{.requests_per_minute = 5});
  ASSERT_EQ(broker.attached.size(), 6u);
  EXPECT_EQ(broker.attached[1]->name, "budget:subject\x1fteam-a:requests");
}

}  // namespace client_budget_test
}  // namespace smartlb

namespace smartlb {
namespace client_budget_test {

using namespace std::chrono;

// Cost budgets, in pico-units of the prices' currency: $1 = 10^12.
constexpr cost::PicoUnits kDollar = cost::kPicoPerUnit;

struct CostBudget : ::testing::Test {
  base::ManualClock clock;
  clients::BudgetTime at(base::Nanos later = base::Nanos(0)) const {
    return {clock.now() + later.count(), kWall + later};
  }
};

TEST_F(CostBudget, ADayQuotaOfMoneyRefusesUntilMidnightOnceItsEstimateDoesNotFit) {
  clients::ClientBudget b(config::ClientLimits{.cost_per_day = 5 * kDollar});
  clients::BudgetCharge c;
  EXPECT_FALSE(b.admit(100, 3 * kDollar, at(), c));
  EXPECT_EQ(c.cost, 3 * kDollar);
  const auto refused = b.admit(100, 2 * kDollar + 1, at(seconds(1)), c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::CostPerDay);
  EXPECT_EQ(refused->limit_value, 5 * kDollar);
  EXPECT_EQ(refused->used, 3 * kDollar);
  EXPECT_EQ(refused->requested, 2 * kDollar + 1);
  EXPECT_EQ(refused->retry_after, hours(14) - seconds(1));  // midnight UTC
  EXPECT_FALSE(b.admit(100, 2 * kDollar, at(seconds(2)), c)) << "exactly what is left fits";
  EXPECT_FALSE(b.admit(100, 5 * kDollar, at(hours(14)), c)) << "a new day";
}

TEST_F(CostBudget, AMonthQuotaOfMoneyOpensOnTheFirst) {
  clients::ClientBudget b(config::ClientLimits{.cost_per_month = kDollar});
  clients::BudgetCharge c;
  EXPECT_FALSE(b.admit(0, kDollar, at(), c));
  const auto refused = b.admit(0, 1, at(), c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::CostPerMonth);
  EXPECT_EQ(refused->retry_after, hours(24 * 5 + 14)) << "until 2026-12-01 00:00 UTC";
}

TEST_F(CostBudget, SettlingCorrectsTheCostToWhatTheAnswerCost) {
  clients::ClientBudget b(config::ClientLimits{.cost_per_day = 10 * kDollar});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(1000, 5'060'000'000, at(), c));  // the estimate
  EXPECT_EQ(b.state(at()).cost_day_used, 5'060'000'000);
  b.settle(c, 2306, 5'615'000'000, at());  // the answer's cost by the price table
  EXPECT_EQ(b.state(at()).cost_day_used, 5'615'000'000);
  clients::BudgetCharge d;
  ASSERT_FALSE(b.admit(10, 1000, at(), d));
  b.settle(d, 10, -1, at());  // no price for the answer's model: the estimate stays
  EXPECT_EQ(b.state(at()).cost_day_used, 5'615'001'000);
  b.cancel(d, at());
  EXPECT_EQ(b.state(at()).cost_day_used, 5'615'000'000) << "a cancelled request costs nothing";
}

TEST_F(CostBudget, ARequestWithoutAPriceIsRefusedOnceTheQuotaIsSpent) {
  clients::ClientBudget b(config::ClientLimits{.cost_per_day = kDollar});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(10, 0, at(), c));  // an unpriced model: estimated at nothing
  b.settle(c, 10, kDollar, at());         // its answer's model had a price
  EXPECT_TRUE(b.admit(10, 0, at(), c)) << "nothing is left, not even for an estimate of 0";
}

TEST_F(CostBudget, StateReportsTheTightestCostLimit) {
  clients::ClientBudget b(config::ClientLimits{
      .tokens_per_minute = 1000, .cost_per_day = 5 * kDollar, .cost_per_month = 100 * kDollar});
  clients::BudgetCharge c;
  ASSERT_FALSE(b.admit(10, kDollar, at(), c));
  const clients::ClientBudget::State s = b.state(at());
  EXPECT_EQ(s.cost.limit, 5 * kDollar);
  EXPECT_EQ(s.cost.remaining, 4 * kDollar);
  EXPECT_EQ(s.cost.reset, hours(14));
  EXPECT_EQ(s.cost_month_used, kDollar);
  EXPECT_EQ(s.tokens.limit, 1000) << "tokens and cost are separate dimensions";
}

TEST(SharedBudget, TheCostQuotasAreLeasedLikeTheTokenQuotas) {
  base::ManualClock clock;
  RecordingBroker broker;
  clients::BudgetRegistry registry;
  registry.set_lease_broker(&broker);
  clients::ClientBudget& b =
      registry.get("client\x1fsearch", config::ClientLimits{.cost_per_day = 5 * kDollar});
  ASSERT_EQ(broker.attached.size(), 6u);
  EXPECT_EQ(broker.attached[4]->name, "budget:client\x1fsearch:day_cost");
  EXPECT_EQ(broker.attached[5]->name, "budget:client\x1fsearch:month_cost");
  const clients::BudgetTime t{clock.now(), kMinuteStart};
  clients::BudgetCharge c;
  EXPECT_FALSE(b.admit(0, kDollar, t, c)) << "on credit";
  ASSERT_EQ(broker.asks.size(), 1u);
  EXPECT_EQ(broker.asks[0].lease, broker.attached[4]);
  broker.answer(0, 0, t.wall);  // the other replicas spent the day's money
  const auto refused = b.admit(0, kDollar, t, c);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::CostPerDay);
  EXPECT_EQ(refused->retry_after, hours(14)) << "until midnight UTC";
}

// max_in_flight: a slot per admitted request until it is released; a refusal says so with a
// short wait, holds nothing and charges nothing.
TEST_F(Budget, TheInFlightCapRefusesUntilARequestEnds) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_minute = 1000, .max_in_flight = 2});
  clients::BudgetCharge first, second, third;
  EXPECT_FALSE(b.admit(10, at(), first));
  EXPECT_FALSE(b.admit(10, at(), second));
  EXPECT_EQ(b.state(at()).in_flight, 2);
  const auto refused = b.admit(10, at(), third);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::InFlight);
  EXPECT_EQ(refused->limit_value, 2);
  EXPECT_EQ(refused->used, 2);
  EXPECT_EQ(refused->retry_after, seconds(1));
  EXPECT_FALSE(third.in_flight);
  EXPECT_EQ(b.state(at()).tokens_minute_used, 20);  // the refused request charged nothing
  b.release(first);
  b.release(first);  // once only
  EXPECT_EQ(b.state(at()).in_flight, 1);
  EXPECT_FALSE(b.admit(10, at(), third));
  EXPECT_EQ(b.state(at()).in_flight, 2);
}

// Refused by the cap and by the minute: the minute's longer wait is the answer.
TEST_F(Budget, AFullMinuteOutwaitsTheInFlightCap) {
  clients::ClientBudget b(config::ClientLimits{.tokens_per_minute = 100, .max_in_flight = 1});
  clients::BudgetCharge c, d;
  EXPECT_FALSE(b.admit(100, at(), c));
  const auto refused = b.admit(10, at(), d);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::TokensPerMinute);
}

TEST_F(Budget, ACancelledRequestGivesItsSlotBack) {
  clients::ClientBudget b(config::ClientLimits{.max_in_flight = 1});
  clients::BudgetCharge c;
  EXPECT_FALSE(b.admit(10, at(), c));
  b.cancel(c, at());
  EXPECT_EQ(b.state(at()).in_flight, 0);
  EXPECT_FALSE(b.admit(10, at(), c));
}

// The cap held with other replicas: the budget takes its slots from its share (no ask within
// it); short of it, the refusal awaits the share's answer, whose ask is sent once the budget's
// lock is released. The store here is a test's: it answers when told to.
struct RecordingInFlightBroker : clients::InFlightBroker {
  clients::InFlightLease* lease = nullptr;
  std::vector<clients::InFlightShare::Ask> sent;
  void attach(clients::InFlightLease& l) override {
    lease = &l;
    std::lock_guard lock(l.mutex);
    l.share.set_shared(true, 2);
  }
  void send(clients::InFlightLease& l, const clients::InFlightShare::Ask& ask) override {
    bool released = false;
    std::thread([&] {  // another thread's look: the caller's own lock cannot be tried by itself
      if (l.mutex.try_lock()) {
        released = true;
        l.mutex.unlock();
      }
    })
        .join();
    EXPECT_TRUE(released) << "sent with the budget's lock released";
    sent.push_back(ask);
  }
  void answer(std::int64_t grant, std::int64_t others) {
    std::lock_guard lock(lease->mutex);
    lease->share.granted(sent.back(), grant, others, 0);
  }
};

TEST_F(Budget, ASharedCapAdmitsWithinThisReplicasShareAndAwaitsTheStoreBeyondIt) {
  clients::ClientBudget b(config::ClientLimits{.max_in_flight = 3});
  RecordingInFlightBroker broker;
  b.share_in_flight(broker, "budget:batch");
  EXPECT_EQ(broker.lease->name, "budget:batch");
  clients::BudgetCharge first, second, third;
  auto refused = b.admit(10, at(), first);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->limit, clients::BudgetLimit::InFlight);
  EXPECT_TRUE(refused->awaiting_share);
  ASSERT_EQ(broker.sent.size(), 1u);
  EXPECT_EQ(broker.sent[0].want, 1);
  broker.answer(2, 0);
  EXPECT_FALSE(b.admit(10, at(), first));
  EXPECT_FALSE(b.admit(10, at(), second));
  EXPECT_EQ(broker.sent.size(), 1u) << "within its share: no ask";
  // Short again: the store says the third slot is another replica's.
  ASSERT_TRUE(b.admit(10, at(), third));
  ASSERT_EQ(broker.sent.size(), 2u);
  broker.answer(2, 1);
  refused = b.admit(10, at(), third);
  ASSERT_TRUE(refused);
  EXPECT_FALSE(refused->awaiting_share) << "told no: answered now";
  EXPECT_EQ(refused->used, 3) << "in flight on every replica, as far as this one knows";
  EXPECT_EQ(refused->retry_after, seconds(1));
  EXPECT_FALSE(third.in_flight);
  const auto state = b.state(at());
  EXPECT_EQ(state.in_flight, 2) << "on this replica";
  EXPECT_EQ(state.in_flight_everywhere, 3) << "with the other replica's lease (/status, metrics)";
}

TEST_F(Budget, WithoutSharingTheCountEverywhereIsThisReplicas) {
  clients::ClientBudget b(config::ClientLimits{.max_in_flight = 3});
  clients::BudgetCharge one;
  ASSERT_FALSE(b.admit(10, at(), one));
  EXPECT_EQ(b.state(at()).in_flight_everywhere, 1);
}

}  // namespace client_budget_test
}  // namespace smartlb
