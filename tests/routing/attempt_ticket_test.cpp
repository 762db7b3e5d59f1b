// An attempt's ticket: the one path from an attempt's outcome to routing state. Each outcome
// closes it once, and what it changes (cooldown, breaker, latency sample, log line) follows.
#include "smartlb/routing/attempt_ticket.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "routing_fixture.hpp"

namespace smartlb {
namespace attempt_ticket_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

struct RecordingLog : routing::FailureLog {
  std::vector<routing::FailedAttempt> lines;
  void failed(const routing::FailedAttempt& f) override { lines.push_back(f); }
};

struct RecordingSelector : routing::Selector {
  mutable std::vector<routing::Answered> seen;
  std::optional<std::size_t> pick(const routing::RoutingTable&, const routing::BackendStates&,
                                  const routing::PickRequest&, base::RandomSource&) const override {
    return std::nullopt;
  }
  void observe(const routing::Answered& a) const override { seen.push_back(a); }
};

struct Ticket : RoutingFixture {
  routing::FailureBreakers breakers;
  RecordingLog log;
  RecordingSelector selector;
  std::unique_ptr<routing::RoutingState> routing;

  void SetUp() override {
    make({{"a", 1, 1, ""}, {"b", 1, 1, ""}});
    routing = std::make_unique<routing::RoutingState>(routing::RoutingState{*states, breakers, clock, &log});
  }
  routing::TicketTarget target(std::size_t i, routing::BreakerRule breaker = {}) {
    return routing::TicketTarget{&member(i), &selector, breaker, member(i).name, "BACKEND_1_APIKEY"};
  }
  // An attempt sent to member i whose answer's head is `status` with these headers.
  routing::Closed answered(std::size_t i, unsigned status, http::ThrottleHeaders h = {}) {
    routing::AttemptTicket t(*routing, target(i), "gpt", 0);
    t.sent();
    const routing::Verdict v = t.answer(status, h, true);
    return t.close({v.fail_over ? routing::AttemptEnd::Refused : routing::AttemptEnd::Relayed});
  }
};

TEST_F(Ticket, ARefusedAnswerCoolsItsDeploymentForTheHintAndIsLogged) {
  http::ThrottleHeaders h;
  h.retry_after = "7";
  routing::AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  EXPECT_TRUE(t.answer(429, h, true).fail_over);
  const routing::Closed c =
      t.close({routing::AttemptEnd::Refused, {}, false, false, false, -1, {}, "HTTP 429"});
  EXPECT_TRUE(c.verdict.fail_over);
  EXPECT_EQ(c.verdict.cause, routing::FailureCause::Throttled);
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
  routing::AttemptTicket t(*routing, target(1), "gpt", 0);
  t.sent();
  clock.advance(250ms);
  EXPECT_FALSE(t.answer(200, {}, true).fail_over);
  const routing::Closed c = t.close({routing::AttemptEnd::Relayed, {}, false, true, false, 12});
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
  routing::AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  const routing::Closed c = t.close({routing::AttemptEnd::TransportFailed,
                                     routing::TransportFailure::Connect,
                                     false,
                                     false,
                                     false,
                                     -1,
                                     {},
                                     "refused"});
  EXPECT_EQ(c.verdict.cause, routing::FailureCause::ConnectFailed);
  EXPECT_EQ(c.verdict.scope, routing::CooldownScope::Backend);
  EXPECT_FALSE(available(0, "other-model")) << "the backend, not one deployment";
}

TEST_F(Ticket, AStreamCutAfterItsHeadTripsTheBreakerAndIsLoggedLikeAnyFailure) {
  const routing::BreakerRule breaker{1, 300s, "a/gpt"};
  for (int i = 0; i < 2; ++i) {
    routing::AttemptTicket t(*routing, target(0, breaker), "gpt", 0);
    t.sent();
    t.answer(200, {}, true);
    const routing::Closed c = t.close({routing::AttemptEnd::CutAfterHead,
                                       routing::TransportFailure::Lost,
                                       false,
                                       false,
                                       false,
                                       -1,
                                       {},
                                       "end of stream"});
    EXPECT_EQ(c.verdict.cause, routing::FailureCause::ConnectionLost);
    EXPECT_EQ(c.breaker_tripped, i == 1) << "failure " << i + 1 << " of 1 allowed a minute";
    clock.advance(11s);  // past the cooldown of the cut
  }
  EXPECT_FALSE(available(0, "gpt")) << "the breaker holds it out";
  EXPECT_EQ(states->deployment_cooldown(member(0), "gpt").cause, routing::FailureCause::FailureTolerance);
  ASSERT_EQ(log.lines.size(), 2u);
  EXPECT_EQ(log.lines[1].end, routing::AttemptEnd::CutAfterHead);
  EXPECT_TRUE(log.lines[1].breaker_tripped);
  ASSERT_EQ(selector.seen.size(), 2u);
  EXPECT_FALSE(selector.seen[0].complete);
}

TEST_F(Ticket, AnErrorEventBeforeContentIsAStreamError) {
  routing::AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  t.answer(200, {}, true);
  EXPECT_EQ(t.close({routing::AttemptEnd::StreamFailed, {}, true}).verdict.cause,
            routing::FailureCause::StreamError);
  EXPECT_FALSE(available(0, "gpt"));
}

TEST_F(Ticket, AStallCoolsTheDeploymentAndFailsOver) {
  routing::AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  const routing::Closed c = t.close({routing::AttemptEnd::Stalled});
  EXPECT_TRUE(c.verdict.fail_over);
  EXPECT_EQ(c.verdict.cause, routing::FailureCause::Stalled);
  EXPECT_FALSE(available(0, "gpt"));
  EXPECT_TRUE(available(0, "other-model")) << "one slow deployment, not the resource";
}

TEST_F(Ticket, AClientThatLeftCostsTheBackendNothing) {
  routing::AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  EXPECT_FALSE(t.close({routing::AttemptEnd::ClientLeft}).verdict.fail_over);
  EXPECT_TRUE(available(0, "gpt"));
  EXPECT_TRUE(log.lines.empty());
  EXPECT_TRUE(selector.seen.empty());
}

TEST_F(Ticket, AMissingCredentialCoolsTheBackendUntilOneMayBeHadAndTripsNoBreaker) {
  const routing::BreakerRule breaker{0, 300s, "a/gpt"};
  routing::AttemptTicket t(*routing, target(0, breaker), "gpt", 0);
  routing::AttemptOutcome o{routing::AttemptEnd::NoCredential};
  o.retry_hint = 4000ms;
  const routing::Closed c = t.close(o);
  EXPECT_EQ(c.verdict.cause, routing::FailureCause::Credential);
  EXPECT_EQ(c.cooldown, 4000ms);
  EXPECT_FALSE(c.breaker_tripped) << "nothing was sent";
}

TEST_F(Ticket, ItClosesOnce) {
  routing::AttemptTicket t(*routing, target(0), "gpt", 0);
  t.sent();
  EXPECT_TRUE(t.close({routing::AttemptEnd::Stalled}).verdict.fail_over);
  EXPECT_TRUE(t.closed());
  EXPECT_FALSE(t.close({routing::AttemptEnd::Stalled}).verdict.fail_over);
  EXPECT_EQ(log.lines.size(), 1u);
}

TEST_F(Ticket, TheAttemptIsInFlightUntilTheTicketEnds) {
  {
    routing::AttemptTicket t(*routing, target(0), "gpt", 0);
    EXPECT_EQ(states->in_flight(member(0).id), 1);
  }
  EXPECT_EQ(states->in_flight(member(0).id), 0);
}

TEST_F(Ticket, AnAnswersReportIsKeptWhateverItsStatus) {
  http::ThrottleHeaders h;
  h.remaining_requests = "0";
  h.remaining_tokens = "0";
  EXPECT_FALSE(answered(0, 200, h).verdict.fail_over);
  EXPECT_TRUE(states->reported_budget_low()) << "a report of nothing left is watched";
}

struct SentTimes : routing::ReportListener {
  std::vector<base::MonoNanos> reports, moments;
  void on_report(const routing::ReportNotice& n) override { reports.push_back(n.sent); }
  void on_moment(const routing::MomentNotice& n) override { moments.push_back(n.at); }
};

// A new connection's handshake comes before the request goes: its reports and a 429's moment
// are read from when it went out, where the backend's limiter counted it (a sliding window's
// echo learned from the attempt's start was off by the handshake).
TEST_F(Ticket, AnAnswerIsReadFromWhenTheRequestWentOutOnItsConnection) {
  SentTimes heard;
  states->set_report_listener(&heard);
  http::ThrottleHeaders low;
  low.remaining_requests = "0";
  low.remaining_tokens = "0";
  routing::AttemptTicket first(*routing, target(0), "gpt", 0);
  const base::MonoNanos began = first.sent();
  clock.advance(5ms);  // the handshake
  first.went(clock.now());
  clock.advance(2ms);
  first.answer(200, low, true);
  ASSERT_EQ(heard.reports.size(), 1u);
  EXPECT_EQ(heard.reports[0], began + 5'000'000);

  http::ThrottleHeaders refused = low;
  refused.retry_after_ms = "1000";
  routing::AttemptTicket second(*routing, target(0), "gpt", 0);
  second.sent();
  clock.advance(4ms);
  const base::MonoNanos went = clock.now();
  second.went(went);
  clock.advance(2ms);
  second.answer(429, refused, true);
  second.close({routing::AttemptEnd::Refused});
  ASSERT_EQ(heard.moments.size(), 1u);
  EXPECT_EQ(heard.moments[0], went + 1'000'000 + 1'000'000'000) << "halfway from when it went, plus the hint";
}

}  // namespace attempt_ticket_test
}  // namespace smartlb
