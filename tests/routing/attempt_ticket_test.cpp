// An attempt's ticket: the one path from an attempt's outcome to routing state. Each outcome
// closes it once, and what it changes (cooldown, breaker, latency sample, log line) follows.
#include "smartlb/routing/attempt_ticket.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "routing_fixture.hpp"

namespace smartlb {
namespace {

using namespace std::chrono_literals;

struct RecordingLog : FailureLog {
  std::vector<FailedAttempt> lines;
  void failed(const FailedAttempt& f) override { lines.push_back(f); }
};

struct RecordingSelector : Selector {
  mutable std::vector<Answered> seen;
  std::optional<std::size_t> pick(const RoutingTable&, const BackendStates&, const PickRequest&,
                                  RandomSource&) const override {
    return std::nullopt;
  }
  void observe(const Answered& a) const override { seen.push_back(a); }
};

struct Ticket : RoutingFixture {
  FailureBreakers breakers;
  RecordingLog log;
  RecordingSelector selector;
  std::unique_ptr<RoutingState> routing;

  void SetUp() override {
    make({{"a", 1, 1, ""}, {"b", 1, 1, ""}});
    routing = std::make_unique<RoutingState>(RoutingState{*states, breakers, clock, &log});
  }
  TicketTarget target(std::size_t i, BreakerRule breaker = {}) {
    return TicketTarget{&member(i), &selector, breaker, member(i).name, "BACKEND_1_APIKEY"};
  }
  // An attempt sent to member i whose answer's head is `status` with these headers.
  Closed answered(std::size_t i, unsigned status, ThrottleHeaders h = {}) {
    AttemptTicket t(*routing, target(i), "gpt", 0);
    t.sent();
    const Verdict v = t.answer(status, h, true);
    return t.close({v.fail_over ? AttemptEnd::Refused : AttemptEnd::Relayed});
  }
};

TEST_F(Ticket, ARefusedAnswerCoolsItsDeploymentForTheHintAndIsLogged) {
  ThrottleHeaders h;
  h.retry_after = "7";
  AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  EXPECT_TRUE(t.answer(429, h, true).fail_over);
  const Closed c = t.close({AttemptEnd::Refused, {}, false, false, false, -1, {}, "HTTP 429"});
  EXPECT_TRUE(c.verdict.fail_over);
  EXPECT_EQ(c.verdict.cause, FailureCause::Throttled);
  EXPECT_EQ(c.cooldown, 7000ms);
  EXPECT_FALSE(available(0, "gpt"));
  EXPECT_TRUE(available(1, "gpt"));
  ASSERT_EQ(log.lines.size(), 1u);
  EXPECT_EQ(log.lines[0].backend, "a");
  EXPECT_EQ(log.lines[0].why, "HTTP 429");
  EXPECT_EQ(log.lines[0].hint, 7000ms);
}

TEST_F(Ticket, ARelayedAnswerChangesNoStateButTeachesTheSelector) {
  clock.advance(1s);
  AttemptTicket t(*routing, target(1), "gpt", 0);
  t.sent();
  clock.advance(250ms);
  EXPECT_FALSE(t.answer(200, {}, true).fail_over);
  const Closed c = t.close({AttemptEnd::Relayed, {}, false, true, false, 12});
  EXPECT_FALSE(c.verdict.fail_over);
  EXPECT_TRUE(available(1, "gpt"));
  EXPECT_TRUE(log.lines.empty());
  ASSERT_EQ(selector.seen.size(), 1u);
  EXPECT_EQ(selector.seen[0].backend, member(1).id);
  EXPECT_EQ(selector.seen[0].status, 200u);
  EXPECT_TRUE(selector.seen[0].complete);
  EXPECT_EQ(selector.seen[0].took, 250ms);
  EXPECT_EQ(selector.seen[0].completion_tokens, 12);
}

TEST_F(Ticket, ATransportFailureCoolsTheWholeBackend) {
  AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  const Closed c = t.close(
      {AttemptEnd::TransportFailed, TransportFailure::Connect, false, false, false, -1, {}, "refused"});
  EXPECT_EQ(c.verdict.cause, FailureCause::ConnectFailed);
  EXPECT_EQ(c.verdict.scope, CooldownScope::Backend);
  EXPECT_FALSE(available(0, "other-model")) << "the backend, not one deployment";
}

TEST_F(Ticket, AStreamCutAfterItsHeadTripsTheBreakerAndIsLoggedLikeAnyFailure) {
  const BreakerRule breaker{1, 300s, "a/gpt"};
  for (int i = 0; i < 2; ++i) {
    AttemptTicket t(*routing, target(0, breaker), "gpt", 0);
    t.sent();
    t.answer(200, {}, true);
    const Closed c = t.close(
        {AttemptEnd::CutAfterHead, TransportFailure::Lost, false, false, false, -1, {}, "end of stream"});
    EXPECT_EQ(c.verdict.cause, FailureCause::ConnectionLost);
    EXPECT_EQ(c.breaker_tripped, i == 1) << "failure " << i + 1 << " of 1 allowed a minute";
    clock.advance(11s);  // past the cooldown of the cut
  }
  EXPECT_FALSE(available(0, "gpt")) << "the breaker holds it out";
  EXPECT_EQ(states->deployment_cooldown(member(0), "gpt").cause, FailureCause::FailureTolerance);
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_EQ(log.lines[1].end, AttemptEnd::CutAfterHead);
  EXPECT_TRUE(log.lines[1].breaker_tripped);
  ASSERT_EQ(selector.seen.size(), 2u);
  EXPECT_FALSE(selector.seen[0].complete);
}

TEST_F(Ticket, AnErrorEventBeforeContentIsAStreamError) {
  AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  t.answer(200, {}, true);
  EXPECT_EQ(t.close({AttemptEnd::StreamFailed, {}, true}).verdict.cause, FailureCause::StreamError);
  EXPECT_FALSE(available(0, "gpt"));
}

TEST_F(Ticket, AStallCoolsTheDeploymentAndFailsOver) {
  AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  const Closed c = t.close({AttemptEnd::Stalled});
  EXPECT_TRUE(c.verdict.fail_over);
  EXPECT_EQ(c.verdict.cause, FailureCause::Stalled);
  EXPECT_FALSE(available(0, "gpt"));
  EXPECT_TRUE(available(0, "other-model")) << "one slow deployment, not the resource";
}

TEST_F(Ticket, AClientThatLeftCostsTheBackendNothing) {
  AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  EXPECT_FALSE(t.close({AttemptEnd::ClientLeft}).verdict.fail_over);
  EXPECT_TRUE(available(0, "gpt"));
  EXPECT_TRUE(log.lines.empty());
  EXPECT_TRUE(selector.seen.empty());
}

TEST_F(Ticket, AMissingCredentialCoolsTheBackendUntilOneMayBeHadAndTripsNoBreaker) {
  const BreakerRule breaker{0, 300s, "a/gpt"};
  AttemptTicket t(*routing, target(0, breaker), "gpt", 0);
  AttemptOutcome o{AttemptEnd::NoCredential};
  o.retry_hint = 4000ms;
  const Closed c = t.close(o);
  EXPECT_EQ(c.verdict.cause, FailureCause::Credential);
  EXPECT_EQ(c.cooldown, 4000ms);
  EXPECT_FALSE(c.breaker_tripped) << "nothing was sent";
}

TEST_F(Ticket, ItClosesOnce) {
  AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  EXPECT_TRUE(t.close({AttemptEnd::Stalled}).verdict.fail_over);
  EXPECT_TRUE(t.closed());
  EXPECT_FALSE(t.close({AttemptEnd::Stalled}).verdict.fail_over);
  EXPECT_EQ(log.lines.size(), 1u);
}

TEST_F(Ticket, TheAttemptIsInFlightUntilTheTicketEnds) {
  {
    AttemptTicket t(*routing, target(0), "gpt", 0);
    EXPECT_EQ(states->in_flight(member(0).id), 1);
  }
  EXPECT_EQ(states->in_flight(member(0).id), 0);
}

TEST_F(Ticket, AnAnswersReportIsKeptWhateverItsStatus) {
  ThrottleHeaders h;
  h.remaining_requests = "0";
  h.remaining_tokens = "0";
  EXPECT_FALSE(answered(0, 200, h).verdict.fail_over);
  EXPECT_TRUE(states->reported_budget_low()) << "a report of nothing left is watched";
}

}  // namespace
}  // namespace smartlb
