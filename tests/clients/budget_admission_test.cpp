#include "smartlb/clients/budget_admission.hpp"

#include <gtest/gtest.h>

#include "smartlb/base/clock.hpp"
#include "smartlb/clients/budget_plan.hpp"

namespace smartlb {
namespace budget_admission_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono;

const base::WallTime kWall = sys_days(year(2026) / November / 25) + hours(10);

struct Admission : ::testing::Test {
  base::ManualClock clock;
  clients::BudgetRegistry registry;
  clients::BudgetTime at() const { return {clock.now(), kWall}; }

  config::Policy policy() {
    config::Policy p;
    config::ClientConfig alice;
    alice.name = "alice";
    alice.subjects = {"team:search", "tier:free"};
    alice.limits.tokens_per_minute = 1000;
    p.clients.push_back(alice);
    config::ClientConfig bob;
    bob.name = "bob";
    bob.subjects = {"team:search"};
    p.clients.push_back(bob);
    p.subject_limits.push_back(
        config::SubjectLimit{"team:search", true, config::ClientLimits{.tokens_per_minute = 1500}});
    p.subject_limits.push_back(
        config::SubjectLimit{"tier:free", false, config::ClientLimits{.requests_per_minute = 2}});
    return p;
  }
};

clients::ClientIdentity who(std::string_view name, const std::vector<std::string>& subjects) {
  return clients::ClientIdentity{name, subjects, name};
}

TEST_F(Admission, ACallerCountsAgainstItsOwnItsTeamsAndItsSubjectsBudgets) {
  const clients::BudgetPlan plan(policy(), registry);
  const std::vector<std::string> alice_subjects = {"team:search", "tier:free"},
                                 bob_subjects = {"team:search"};
  clients::BudgetPlan::Budgets budgets;
  EXPECT_EQ(plan.budgets_for(who("alice", alice_subjects), budgets), 3u);
  EXPECT_EQ(plan.budgets_for(who("bob", bob_subjects), budgets), 1u);
  const std::vector<std::string> none;
  EXPECT_EQ(plan.budgets_for(who("carol", none), budgets), 0u);
}

TEST_F(Admission, ATeamBudgetIsSharedAndARefusalChargesNoBudget) {
  const clients::BudgetPlan plan(policy(), registry);
  const std::vector<std::string> alice_subjects = {"team:search", "tier:free"},
                                 bob_subjects = {"team:search"};
  clients::BudgetPlan::Budgets a, b;
  clients::BudgetAdmission alice(a, plan.budgets_for(who("alice", alice_subjects), a));
  ASSERT_FALSE(alice.admit(900, at()));
  clients::BudgetAdmission bob(b, plan.budgets_for(who("bob", bob_subjects), b));
  const auto refused = bob.admit(700, at());  // the team has 600 left
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->by.owner, "subject");
  EXPECT_EQ(refused->by.subject, "team:search");
  EXPECT_EQ(
      refusal_message(*refused),
      "Rate limit reached for subject 'team:search' on tokens per min (TPM): Limit 1500, Used 900, Requested "
      "700. Please try again in 1m1s.");

  // alice's own budget admits 100 more, her per-caller "tier:free" budget one more request;
  // the team's refuses 700 and must not keep alice's charges either.
  clients::BudgetAdmission again(a, plan.budgets_for(who("alice", alice_subjects), a));
  ASSERT_TRUE(again.admit(700, at()));
  clients::BudgetAdmission small(a, plan.budgets_for(who("alice", alice_subjects), a));
  EXPECT_FALSE(small.admit(100, at()));  // the second request of tier:free's two
}

TEST_F(Admission, EachCallerOfASubjectHasABudgetOfItsOwn) {
  config::Policy p;
  p.subject_limits.push_back(
      config::SubjectLimit{"*", false, config::ClientLimits{.requests_per_minute = 1}});
  const clients::BudgetPlan plan(p, registry);
  const std::vector<std::string> none;
  clients::BudgetPlan::Budgets x;
  for (std::string_view principal : {"user:1", "user:2"}) {
    clients::BudgetAdmission first(x, plan.budgets_for(clients::ClientIdentity{"entra", none, principal}, x));
    EXPECT_FALSE(first.admit(1, at())) << principal;
    clients::BudgetAdmission second(x,
                                    plan.budgets_for(clients::ClientIdentity{"entra", none, principal}, x));
    EXPECT_TRUE(second.admit(1, at())) << principal;
  }
  EXPECT_EQ(registry.size(), 2u);
}

TEST_F(Admission, SettlingCorrectsEveryBudgetOnce) {
  const clients::BudgetPlan plan(policy(), registry);
  const std::vector<std::string> alice_subjects = {"team:search", "tier:free"};
  clients::BudgetPlan::Budgets a;
  clients::BudgetAdmission alice(a, plan.budgets_for(who("alice", alice_subjects), a));
  ASSERT_FALSE(alice.admit(900, at()));
  alice.settle(100, at());
  alice.settle(50, at());  // ignored: settled already
  for (const auto& e : registry.entries()) {
    if (clients::split_budget_key(e.key).caller.empty()) {
      EXPECT_EQ(e.budget->state(at()).tokens_minute_used, 100) << e.key;
    }
  }
}

TEST_F(Admission, HeadersTellTheTightestBudget) {
  const clients::BudgetPlan plan(policy(), registry);
  const std::vector<std::string> alice_subjects = {"team:search", "tier:free"};
  clients::BudgetPlan::Budgets a;
  clients::BudgetAdmission alice(a, plan.budgets_for(who("alice", alice_subjects), a));
  ASSERT_FALSE(alice.admit(400, at()));
  std::string fields;
  alice.append_fields(fields);
  EXPECT_EQ(fields,
            "x-ratelimit-limit-requests: 2\r\nx-ratelimit-remaining-requests: "
            "1\r\nx-ratelimit-reset-requests: 1m1s\r\n"
            "x-ratelimit-limit-tokens: 1000\r\nx-ratelimit-remaining-tokens: "
            "600\r\nx-ratelimit-reset-tokens: 1m1s\r\n");
}

// A 429's x-ratelimit-reset-tokens is its Retry-After: when the request fits again, not when
// the whole minute is free (which here is 5 s later: the second charge's bucket).
TEST_F(Admission, ARefusalsResetIsItsRetryAfter) {
  config::Policy p;
  config::ClientConfig alice;
  alice.name = "alice";
  alice.limits.tokens_per_minute = 1000;
  p.clients.push_back(alice);
  const clients::BudgetPlan plan(p, registry);
  const std::vector<std::string> none;
  clients::BudgetPlan::Budgets a;
  const auto admit = [&](std::int64_t tokens) {
    clients::BudgetAdmission admission(a, plan.budgets_for(who("alice", none), a));
    auto refused = admission.admit(tokens, at());
    std::string fields;
    admission.append_fields(fields);
    return std::make_pair(refused, fields);
  };
  ASSERT_FALSE(admit(500).first);
  clock.advance(seconds(5));
  ASSERT_FALSE(admit(400).first);
  clock.advance(seconds(5));
  const auto [refused, fields] = admit(200);
  ASSERT_TRUE(refused);
  EXPECT_EQ(clients::format_reset(refused->refusal.retry_after),
            "51s");  // the first charge leaves the window
  EXPECT_EQ(fields,
            "x-ratelimit-limit-tokens: 1000\r\nx-ratelimit-remaining-tokens: 100\r\n"
            "x-ratelimit-reset-tokens: 51s\r\n");
}

// The refusal's dimension tells the limit that refused; the other one, as on an admitted request,
// the tightest of all the caller's budgets (here tier:free's requests, not the refusing budget's
// none).
TEST_F(Admission, ARefusalsHeadersTellTheLimitThatRefusedAndTheTightestOtherwise) {
  const clients::BudgetPlan plan(policy(), registry);
  const std::vector<std::string> alice_subjects = {"team:search", "tier:free"};
  clients::BudgetPlan::Budgets a;
  clients::BudgetAdmission first(a, plan.budgets_for(who("alice", alice_subjects), a));
  ASSERT_FALSE(first.admit(900, at()));
  std::string admitted;
  first.append_fields(admitted);
  EXPECT_EQ(admitted,
            "x-ratelimit-limit-requests: 2\r\nx-ratelimit-remaining-requests: 1\r\n"
            "x-ratelimit-reset-requests: 1m1s\r\n"
            "x-ratelimit-limit-tokens: 1000\r\nx-ratelimit-remaining-tokens: 100\r\n"
            "x-ratelimit-reset-tokens: 1m1s\r\n");
  clock.advance(seconds(10));
  clients::BudgetAdmission second(a, plan.budgets_for(who("alice", alice_subjects), a));
  const auto refused = second.admit(200, at());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->by.owner, "client");
  std::string fields;
  second.append_fields(fields);
  EXPECT_EQ(fields,
            "x-ratelimit-limit-requests: 2\r\nx-ratelimit-remaining-requests: 1\r\n"
            "x-ratelimit-reset-requests: 51s\r\n"
            "x-ratelimit-limit-tokens: 1000\r\nx-ratelimit-remaining-tokens: 100\r\n"
            "x-ratelimit-reset-tokens: " +
                clients::format_reset(refused->refusal.retry_after) + "\r\n");
  EXPECT_EQ(clients::format_reset(refused->refusal.retry_after), "51s");
}

TEST(FormatReset, WritesDurationsTheWayOpenAIDoes) {
  EXPECT_EQ(clients::format_reset(milliseconds(0)), "0ms");
  EXPECT_EQ(clients::format_reset(milliseconds(250)), "250ms");
  EXPECT_EQ(clients::format_reset(milliseconds(1500)), "1.5s");
  EXPECT_EQ(clients::format_reset(minutes(6)), "6m0s");
  EXPECT_EQ(clients::format_reset(hours(2) + minutes(3) + seconds(4)), "2h3m4s");
  EXPECT_EQ(clients::format_reset(microseconds(1)), "1ms");  // rounded up: never "now" too early
}

TEST(RefusalMessage, SaysWhenARequestCanNeverFit) {
  clients::BudgetRefused r{
      clients::BudgetRefusal{clients::BudgetLimit::TokensPerMinute, 1000, 0, 5000, minutes(1)},
      {nullptr, "client", "alice"}};
  EXPECT_EQ(refusal_message(r),
            "Request too large for client 'alice' on tokens per min (TPM): Limit 1000, Requested 5000. The "
            "input or "
            "output tokens must be reduced (max_tokens counts in full) for the request to run.");
}

TEST_F(Admission, ACostBudgetsHeadersAreInCurrencyUnits) {
  config::Policy p;
  config::ClientConfig alice;
  alice.name = "alice";
  alice.limits = config::ClientLimits{.tokens_per_minute = 1000, .cost_per_day = 5 * cost::kPicoPerUnit};
  p.clients.push_back(alice);
  const clients::BudgetPlan plan(p, registry);
  clients::BudgetPlan::Budgets a;
  const std::vector<std::string> none;
  clients::BudgetAdmission admission(a, plan.budgets_for(who("alice", none), a));
  EXPECT_TRUE(admission.counts_cost());
  ASSERT_FALSE(admission.admit(400, 5'060'000'000, at()));  // $0.00506
  std::string fields;
  admission.append_fields(fields);
  EXPECT_EQ(fields,
            "x-ratelimit-limit-tokens: 1000\r\nx-ratelimit-remaining-tokens: "
            "600\r\nx-ratelimit-reset-tokens: 1m1s\r\n"
            "x-ratelimit-limit-cost: 5\r\nx-ratelimit-remaining-cost: 4.99494\r\nx-ratelimit-reset-cost: "
            "14h0m0s\r\n");
  admission.settle(500, 5'615'000'000, at());
  EXPECT_EQ(a[0].budget->state(at()).cost_day_used, 5'615'000'000);
}

TEST_F(Admission, ARefusalOfACostBudgetShowsTheCostLimitInItsHeaders) {
  config::Policy p;
  config::ClientConfig alice;
  alice.name = "alice";
  alice.limits = config::ClientLimits{.cost_per_day = cost::kPicoPerUnit / 100};  // one cent a day
  p.clients.push_back(alice);
  const clients::BudgetPlan plan(p, registry);
  clients::BudgetPlan::Budgets a;
  const std::vector<std::string> none;
  clients::BudgetAdmission first(a, plan.budgets_for(who("alice", none), a));
  ASSERT_FALSE(first.admit(0, 6'000'000'000, at()));
  clients::BudgetAdmission second(a, plan.budgets_for(who("alice", none), a));
  const auto refused = second.admit(0, 5'000'000'000, at());
  ASSERT_TRUE(refused);
  std::string fields;
  second.append_fields(fields);
  EXPECT_EQ(fields,
            "x-ratelimit-limit-cost: 0.01\r\nx-ratelimit-remaining-cost: 0.004\r\nx-ratelimit-reset-cost: "
            "14h0m0s\r\n");
  EXPECT_EQ(refusal_message(*refused, "USD"),
            "Rate limit reached for client 'alice' on cost per day (UTC): Limit 0.01 USD, Used 0.006 USD, "
            "Requested 0.005 USD. Please try again in 14h0m0s.");
}

// A request's in-flight slots are given back by release(), and by the admission's end when
// nobody said (a connection gone): never held forever.
TEST_F(Admission, InFlightSlotsAreGivenBackByReleaseOrByTheAdmissionsEnd) {
  config::Policy p;
  p.subject_limits.push_back(config::SubjectLimit{"*", false, config::ClientLimits{.max_in_flight = 1}});
  const clients::BudgetPlan plan(p, registry);
  const std::vector<std::string> none;
  clients::BudgetPlan::Budgets budgets;
  const std::size_t n = plan.budgets_for(who("carol", none), budgets);
  ASSERT_EQ(n, 1u);
  {
    clients::BudgetAdmission first(budgets, n);
    EXPECT_FALSE(first.admit(1, at()));
    clients::BudgetAdmission second(budgets, n);
    const auto refused = second.admit(1, at());
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->refusal.limit, clients::BudgetLimit::InFlight);
    EXPECT_EQ(refusal_message(*refused),
              "Too many requests in flight for client 'carol': Limit 1, In flight 1. Please try again in 1s "
              "or when "
              "one of them has ended.");
    std::string fields;
    second.append_fields(fields);
    EXPECT_EQ(fields, "");  // no x-ratelimit-* of the cap's own
    first.release();
    EXPECT_FALSE(second.admit(1, at()));
    // Replaced by the next request's admission (a keep-alive connection): the slot is free.
    second = clients::BudgetAdmission(budgets, n);
    EXPECT_FALSE(second.admit(1, at()));
  }
  // Both ended without release(): nothing is held.
  clients::BudgetAdmission third(budgets, n);
  EXPECT_FALSE(third.admit(1, at()));
}

// A WebSocket session gives its slot back once admitted, and holds one again while a response is
// in progress: the caller's other requests meet the cap then, and only then.
TEST_F(Admission, ASessionHoldsASlotAgainWhileAResponseIsInProgress) {
  config::Policy p;
  p.subject_limits.push_back(config::SubjectLimit{"*", false, config::ClientLimits{.max_in_flight = 1}});
  const clients::BudgetPlan plan(p, registry);
  const std::vector<std::string> none;
  clients::BudgetPlan::Budgets budgets;
  const std::size_t n = plan.budgets_for(who("dave", none), budgets);
  clients::BudgetAdmission session(budgets, n);
  ASSERT_FALSE(session.admit(1, at()));
  session.release();  // idle
  clients::BudgetAdmission http(budgets, n);
  EXPECT_FALSE(http.admit(1, at())) << "an idle session holds nothing";
  http.release();
  session.hold_in_flight();  // response.created
  session.hold_in_flight();  // (once)
  clients::BudgetAdmission during(budgets, n);
  const auto refused = during.admit(1, at());
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->refusal.limit, clients::BudgetLimit::InFlight);
  session.release();  // response.done
  clients::BudgetAdmission after(budgets, n);
  EXPECT_FALSE(after.admit(1, at()));
  after.release();
  clients::BudgetAdmission refused_one(budgets, n);
  session.hold_in_flight();
  ASSERT_TRUE(refused_one.admit(1, at()));
  refused_one.hold_in_flight();  // not admitted: holds nothing
  session.release();
  clients::BudgetAdmission last(budgets, n);
  EXPECT_FALSE(last.admit(1, at())) << "the refused admission took no slot";
}

}  // namespace budget_admission_test
}  // namespace smartlb
