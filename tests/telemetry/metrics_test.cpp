#include "smartlb/telemetry/metrics.hpp"

#include <gtest/gtest.h>

#include <thread>

namespace smartlb {
namespace metrics_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr base::MonoNanos kSecond = 1'000'000'000;

telemetry::RequestRecord served_by(int backend, const char* deployment, unsigned status = 200) {
  telemetry::RequestRecord r;
  r.method = "POST";
  r.deployment = deployment;
  r.start = 10 * kSecond;
  r.end = r.start + kSecond / 2;  // 0.5 s
  r.status = status;
  r.served_by = backend;
  telemetry::AttemptRecord& a = r.add_attempt();
  a.backend = static_cast<std::size_t>(backend);
  a.status = status;
  a.ttfb_us = 30'000;  // 30 ms
  return r;
}

// Backend 0 answers 429 (cooldown), backend 1 serves.
telemetry::RequestRecord failed_over(const char* deployment) {
  telemetry::RequestRecord r;
  r.deployment = deployment;
  r.start = 10 * kSecond;
  r.end = r.start + 2 * kSecond;
  telemetry::AttemptRecord& a = r.add_attempt();
  a.backend = 0;
  a.status = 429;
  a.cause = routing::FailureCause::Throttled;
  a.cooldown_ms = 5000;
  a.ttfb_us = 1000;
  telemetry::AttemptRecord& b = r.add_attempt();
  b.backend = 1;
  b.status = 200;
  b.ttfb_us = 200'000;
  r.served_by = 1;
  r.status = 200;
  r.prompt_tokens = 100;
  r.completion_tokens = 20;
  return r;
}

std::uint32_t dep(const telemetry::MetricsSnapshot& s, const char* name) {
  const int i = s.deployment_index(name);
  EXPECT_GE(i, 0) << name;
  return static_cast<std::uint32_t>(i);
}

TEST(Metrics, CountsRequestsByBackendDeploymentAndCode) {
  telemetry::Metrics m({{"east", ""}, {"west", ""}});
  m.on_request(served_by(0, "gpt-4o"));
  m.on_request(served_by(0, "gpt-4o"));
  m.on_request(served_by(1, "gpt-4o", 400));
  m.on_request(served_by(1, "embed"));
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(s.counter(telemetry::CounterKind::Requests, 0, dep(s, "gpt-4o"), 200), 2u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::Requests, 1, dep(s, "gpt-4o"), 400), 1u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::Requests, 1, dep(s, "embed"), 200), 1u);
  EXPECT_EQ(s.backends[0].served, 2u);
  EXPECT_EQ(s.backends[1].served, 2u);
  EXPECT_EQ(s.backends[0].errors, 0u) << "a passed-through 400 is not the backend's error";
  EXPECT_EQ(s.finished, 4u);
}

TEST(Metrics, FailoverCooldownTokensAndHistograms) {
  telemetry::Metrics m({{"east", ""}, {"west", ""}});
  m.on_request(failed_over("gpt-4o"));
  const telemetry::MetricsSnapshot s = m.snapshot();
  const auto d = dep(s, "gpt-4o");
  const auto throttled = static_cast<std::uint32_t>(routing::FailureCause::Throttled);
  EXPECT_EQ(s.counter(telemetry::CounterKind::Failovers, 0, d, throttled), 1u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::CooldownsStarted, 0, d, throttled), 1u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::PromptTokens, 1, d), 100u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::CompletionTokens, 1, d), 20u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::Requests, 1, d, 200), 1u);
  EXPECT_EQ(s.backends[0].attempts, 1u);
  EXPECT_EQ(s.backends[0].errors, 1u);
  EXPECT_EQ(s.backends[0].throttled, 1u);
  EXPECT_EQ(s.backends[0].served, 0u);
  EXPECT_EQ(s.backends[0].last_error.cause, routing::FailureCause::Throttled);
  EXPECT_EQ(s.backends[0].last_error.status, 429u);
  EXPECT_EQ(s.backends[0].last_error.deployment, "gpt-4o");
  EXPECT_EQ(s.backends[0].last_error.at, 12 * kSecond);
  EXPECT_EQ(s.backends[1].prompt_tokens, 100u);
  EXPECT_EQ(s.backends[1].completion_tokens, 20u);

  // Attempts per request: 2 lands in the le=2 bucket (index 1).
  EXPECT_EQ(s.attempts.count, 1u);
  EXPECT_EQ(s.attempts.buckets[1], 1u);
  EXPECT_DOUBLE_EQ(s.attempts.sum, 2.0);
  // Duration 2 s, served by backend 1: bucket le=2.5 (index 5).
  EXPECT_EQ(s.backends[1].duration.count, 1u);
  EXPECT_EQ(s.backends[1].duration.buckets[5], 1u);
  EXPECT_DOUBLE_EQ(s.backends[1].duration.sum, 2.0);
  // TTFB: 1 ms on backend 0 (le=0.005), 200 ms on backend 1 (le=0.25).
  EXPECT_EQ(s.backends[0].ttfb.buckets[0], 1u);
  EXPECT_EQ(s.backends[1].ttfb.buckets[5], 1u);
  EXPECT_DOUBLE_EQ(s.backends[1].ttfb.sum, 0.2);
}

std::uint64_t responses(const telemetry::MetricsSnapshot& s, std::uint32_t backend, std::uint32_t code) {
  return s.counter(telemetry::CounterKind::UpstreamResponses, backend, 0, code);
}

std::uint32_t transport(routing::FailureCause c) {
  return telemetry::kUpstreamTransport + static_cast<std::uint32_t>(c);
}

TEST(Metrics, ABreakerTripCountsAsAFailureToleranceCooldown) {
  telemetry::Metrics m({{"east", ""}, {"west", ""}});
  telemetry::RequestRecord r = failed_over("gpt-4o");
  r.attempts[0].breaker_tripped = true;
  m.on_request(r);
  const telemetry::MetricsSnapshot s = m.snapshot();
  const auto d = dep(s, "gpt-4o");
  const auto tolerance = static_cast<std::uint32_t>(routing::FailureCause::FailureTolerance);
  EXPECT_EQ(s.counter(telemetry::CounterKind::CooldownsStarted, 0, d, tolerance), 1u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::CooldownsStarted, 0, d,
                      static_cast<std::uint32_t>(routing::FailureCause::Throttled)),
            1u)
      << "beside the 429's own cooldown";
  EXPECT_EQ(s.counter(telemetry::CounterKind::Failovers, 0, d, tolerance), 0u)
      << "the attempt failed over as a 429";
}

TEST(Metrics, AStreamThatStartedWithAnErrorCountsAsAStreamErrorFailoverUnderItsStatus) {
  telemetry::Metrics m({{"east", ""}, {"west", ""}});
  telemetry::RequestRecord r = failed_over("gpt-4o");
  r.attempts[0].status = 200;  // a 200 whose stream's first event was an error
  r.attempts[0].cause = routing::FailureCause::StreamError;
  m.on_request(r);
  const telemetry::MetricsSnapshot s = m.snapshot();
  const auto d = dep(s, "gpt-4o");
  const auto stream_error = static_cast<std::uint32_t>(routing::FailureCause::StreamError);
  EXPECT_EQ(s.counter(telemetry::CounterKind::Failovers, 0, d, stream_error), 1u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::CooldownsStarted, 0, d, stream_error), 1u);
  EXPECT_EQ(responses(s, 0, 200), 1u) << "what the backend answered: a 200";
  EXPECT_EQ(responses(s, 0, transport(routing::FailureCause::StreamError)), 0u) << "not a transport failure";
}

TEST(Metrics, UpstreamResponsesCountEachAttemptByBackendAndStatus) {
  telemetry::Metrics m({{"east", ""}, {"west", ""}});
  m.on_request(failed_over("gpt-4o"));  // east 429, then west 200
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(responses(s, 0, 429), 1u);
  EXPECT_EQ(responses(s, 1, 200), 1u);
  EXPECT_EQ(responses(s, 0, 200), 0u);
  EXPECT_EQ(responses(s, 1, 429), 0u);
  std::uint64_t total = 0;
  for (const auto& [k, v] : s.counters)
    if (k.kind == telemetry::CounterKind::UpstreamResponses) {
      total += v;
      EXPECT_EQ(k.deployment, 0u) << "no deployment label";
    }
  EXPECT_EQ(total, 2u) << "one per attempt";
}

TEST(Metrics, UpstreamTransportFailureCountsUnderTransportWithItsCause) {
  telemetry::Metrics m({{"east", ""}, {"west", ""}});
  telemetry::RequestRecord r = failed_over("gpt-4o");
  r.attempts[0].status = 0;  // east: no response head
  r.attempts[0].cause = routing::FailureCause::Timeout;
  m.on_request(r);
  telemetry::RequestRecord c = served_by(1, "gpt-4o");
  telemetry::AttemptRecord& first = c.attempts[0];
  first.backend = 0;
  first.status = 0;
  first.cause = routing::FailureCause::ConnectFailed;
  c.add_attempt() = telemetry::AttemptRecord{1, 200, routing::FailureCause::None, 0, 1000};
  m.on_request(c);
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(responses(s, 0, transport(routing::FailureCause::Timeout)), 1u);
  EXPECT_EQ(responses(s, 0, transport(routing::FailureCause::ConnectFailed)), 1u);
  EXPECT_EQ(responses(s, 0, transport(routing::FailureCause::Throttled)), 0u);
  EXPECT_EQ(responses(s, 0, 0), 0u) << "no status is not a code";
  EXPECT_EQ(responses(s, 0, 429), 0u);
  EXPECT_EQ(responses(s, 1, 200), 2u);
}

TEST(Metrics, UpstreamStatusOutsideTheRangeFoldsIntoOther) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"a", ""}});
  for (unsigned status : {99u, 100u, 599u, 600u, 999u, 65535u + 201u})
    m.on_request(served_by(0, "d", status));
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(responses(s, 0, 100), 1u);
  EXPECT_EQ(responses(s, 0, 599), 1u);
  EXPECT_EQ(responses(s, 0, telemetry::kUpstreamOtherStatus), 4u) << "99, 600, 999 and one beyond 16 bits";
  EXPECT_EQ(responses(s, 0, 99), 0u);
  EXPECT_EQ(responses(s, 0, 200), 0u) << "a status beyond 16 bits must not wrap to 200";
  std::size_t series = 0;
  for (const auto& [k, v] : s.counters) series += k.kind == telemetry::CounterKind::UpstreamResponses;
  EXPECT_EQ(series, 3u);
}

TEST(Metrics, BucketUpperBoundIsInclusive) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"a", ""}});
  telemetry::RequestRecord r = served_by(0, "d");
  r.end = r.start + kSecond;  // exactly 1 s: le="1" (index 4)
  m.on_request(r);
  r.end = r.start + 400 * kSecond;  // beyond the last bound: +Inf
  m.on_request(r);
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(s.backends[0].duration.buckets[4], 1u);
  EXPECT_EQ(s.backends[0].duration.buckets.back(), 1u);
}

TEST(Metrics, InFlightFollowsStartAndEnd) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"a", ""}});
  m.on_request_start();
  m.on_request_start();
  EXPECT_EQ(m.snapshot().in_flight(), 2u);
  m.on_request(served_by(0, "d"));
  EXPECT_EQ(m.snapshot().in_flight(), 1u);
}

TEST(Metrics, OwnAnswersAndClientFacing429) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"a", ""}});
  telemetry::RequestRecord r;
  r.deployment = "gpt";
  r.status = 429;
  telemetry::AttemptRecord& a = r.add_attempt();
  a.backend = 0;
  a.status = 429;
  a.cause = routing::FailureCause::Throttled;
  a.cooldown_ms = 1000;
  m.on_request(r);
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(s.counter(telemetry::CounterKind::Requests, telemetry::Metrics::kNoBackend, dep(s, "gpt"), 429),
            1u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::ClientThrottled, telemetry::Metrics::kNoBackend, dep(s, "gpt")),
            1u);
  EXPECT_EQ(s.backends[0].served, 0u);
}

TEST(Metrics, DeploymentLabelsAreCappedThenFoldedIntoOther) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"a", ""}});
  for (std::size_t i = 0; i < telemetry::Metrics::kMaxDeployments + 10; ++i)
    m.on_request(served_by(0, ("dep-" + std::to_string(i)).c_str()));
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(s.deployments.size(), telemetry::Metrics::kMaxDeployments);
  EXPECT_EQ(s.deployments_folded, 10u);
  const auto other = static_cast<std::uint32_t>(telemetry::Metrics::kMaxDeployments);
  EXPECT_EQ(s.deployment_name(other), "other");
  EXPECT_EQ(s.counter(telemetry::CounterKind::Requests, 0, other, 200), 10u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::Requests, 0, dep(s, "dep-0"), 200), 1u);
}

TEST(Metrics, LongDeploymentNamesAreTruncated) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"a", ""}});
  const std::string longname(1000, 'x');
  m.on_request(served_by(0, longname.c_str()));
  const telemetry::MetricsSnapshot s = m.snapshot();
  ASSERT_EQ(s.deployments.size(), 1u);
  EXPECT_EQ(s.deployments[0].size(), telemetry::Metrics::kMaxDeploymentLabelBytes);
}

TEST(Metrics, AnAttemptIsLabelledWithTheDeploymentItsBackendWasAskedFor) {
  // Backend 1 serves "gpt4o-eu" whatever the client asked for (a rename): its series say so,
  // as its cooldowns and quotas do.
  telemetry::Metrics m({{"a", ""}, {"b", "gpt4o-eu"}});
  telemetry::RequestRecord rec = failed_over("gpt-4o");
  rec.attempts[1].deployment = "gpt4o-eu";
  m.on_request(rec);
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(s.counter(telemetry::CounterKind::Requests, 1, dep(s, "gpt4o-eu"), 200), 1u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::PromptTokens, 1, dep(s, "gpt4o-eu")), 100u);
  EXPECT_EQ(s.counter(telemetry::CounterKind::Failovers, 0, dep(s, "gpt-4o"),
                      static_cast<std::uint32_t>(routing::FailureCause::Throttled)),
            1u);
}

TEST(Metrics, ConcurrentUpdatesAreAllCounted) {
  // Each thread counts in its own shard; more threads than shards share some.
  telemetry::Metrics m({{"a", ""}, {"b", ""}});
  constexpr int kThreads = static_cast<int>(telemetry::Metrics::kShards) + 4, kEach = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&m, t] {
      for (int i = 0; i < kEach; ++i) {
        m.on_request_start();
        m.on_request(failed_over(t % 2 ? "x" : "y"));
      }
    });
  for (auto& t : threads) t.join();
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(s.finished, std::uint64_t{kThreads} * kEach);
  EXPECT_EQ(s.in_flight(), 0u);
  EXPECT_EQ(s.backends[1].prompt_tokens, std::uint64_t{kThreads} * kEach * 100);
  EXPECT_EQ(s.counter(telemetry::CounterKind::Requests, 1, dep(s, "x"), 200) +
                s.counter(telemetry::CounterKind::Requests, 1, dep(s, "y"), 200),
            std::uint64_t{kThreads} * kEach);
  EXPECT_EQ(s.backends[0].ttfb.count, std::uint64_t{kThreads} * kEach);
  EXPECT_EQ(s.backends[0].throttled, std::uint64_t{kThreads} * kEach);
  EXPECT_EQ(s.backends[1].served, std::uint64_t{kThreads} * kEach);
  EXPECT_EQ(s.backends[1].duration.count, std::uint64_t{kThreads} * kEach);
  EXPECT_DOUBLE_EQ(s.backends[1].duration.sum, 2.0 * kThreads * kEach);
  EXPECT_EQ(s.attempts.count, std::uint64_t{kThreads} * kEach);
  EXPECT_EQ(s.attempts.buckets[1], std::uint64_t{kThreads} * kEach) << "two attempts each";
}

TEST(HistogramQuantile, InterpolatesInsideTheBucket) {
  telemetry::HistogramSnapshot h;
  const double bounds[] = {1, 2, 4};
  h.buckets = {0, 10, 0, 0};
  h.count = 10;
  EXPECT_DOUBLE_EQ(h.quantile(0.5, bounds, 3), 1.5);
  EXPECT_DOUBLE_EQ(h.quantile(1.0, bounds, 3), 2.0);
  h.buckets = {0, 0, 0, 4};  // all in +Inf: the last bound
  h.count = 4;
  EXPECT_DOUBLE_EQ(h.quantile(0.5, bounds, 3), 4.0);
  EXPECT_DOUBLE_EQ(telemetry::HistogramSnapshot{}.quantile(0.5, bounds, 3), 0.0);
}

}  // namespace metrics_test
}  // namespace smartlb

namespace smartlb {
namespace metrics_test {

TEST(Metrics, CountsRequestsTokensAndRefusalsPerClientName) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  telemetry::RequestRecord a = served_by(0, "gpt-4o");
  a.client = "search";
  a.prompt_tokens = 100;
  a.completion_tokens = 20;
  m.on_request(a);
  telemetry::RequestRecord refused;
  refused.client = "search";
  refused.deployment = "gpt-4o";
  refused.status = 429;
  refused.client_limited = true;
  m.on_request(refused);
  telemetry::RequestRecord upstream = refused;
  upstream.client = "chat";
  upstream.client_limited = false;
  m.on_request(upstream);
  const telemetry::MetricsSnapshot s = m.snapshot();
  ASSERT_EQ(s.clients.size(), 2u);
  EXPECT_EQ(s.clients[0].name, "search");
  EXPECT_EQ(s.clients[0].requests, 2u);
  EXPECT_EQ(s.clients[0].throttled, 1u);
  EXPECT_EQ(s.clients[0].limited, 1u);
  EXPECT_EQ(s.clients[0].prompt_tokens, 100u);
  EXPECT_EQ(s.clients[0].completion_tokens, 20u);
  EXPECT_EQ(s.clients[1].name, "chat");
  EXPECT_EQ(s.clients[1].limited, 0u);
  const std::uint32_t d = static_cast<std::uint32_t>(s.deployment_index("gpt-4o"));
  EXPECT_EQ(s.counter(telemetry::CounterKind::ClientThrottled, telemetry::Metrics::kNoBackend, d, 1), 1u)
      << "cause client_limit";
  EXPECT_EQ(s.counter(telemetry::CounterKind::ClientThrottled, telemetry::Metrics::kNoBackend, d, 0), 1u)
      << "cause upstream";
}

TEST(Metrics, ClientNamesPastTheBoundFoldIntoOther) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  for (std::size_t i = 0; i <= telemetry::Metrics::kMaxClients; ++i) {
    telemetry::RequestRecord r;
    r.client = "c" + std::to_string(i);
    m.on_request(r);
  }
  const telemetry::MetricsSnapshot s = m.snapshot();
  ASSERT_EQ(s.clients.size(), telemetry::Metrics::kMaxClients + 1);
  EXPECT_EQ(s.clients.back().name, "other");
  EXPECT_EQ(s.clients.back().requests, 1u);
}

}  // namespace metrics_test
}  // namespace smartlb

namespace smartlb {
namespace metrics_test {

TEST(Metrics, CountsTheRequestsOfLowerPriorityClassesAndTheir429s) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  for (unsigned status : {200u, 429u, 429u}) {
    telemetry::RequestRecord r;
    r.status = status;
    r.priority_class = "batch";
    m.on_request(r);
  }
  telemetry::RequestRecord first;  // the first class: not counted by class
  first.status = 429;
  m.on_request(first);
  const telemetry::MetricsSnapshot s = m.snapshot();
  ASSERT_EQ(s.priority_classes.size(), 1u);
  EXPECT_EQ(s.priority_classes.at("batch").requests, 3u);
  EXPECT_EQ(s.priority_classes.at("batch").throttled, 2u);
}

TEST(Metrics, CountsTheRequestsThatWaitedForCapacityByHowTheirWaitEnded) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  const auto waited = [&](unsigned status, bool left, std::int64_t ms) {
    telemetry::RequestRecord r;
    r.status = status;
    r.client_aborted = left;
    r.queued_ms = ms;
    r.queue_class = "interactive";
    m.on_request(r);
  };
  waited(200, false, 1500);
  waited(429, false, 5000);
  waited(0, true, 500);
  telemetry::RequestRecord never;  // did not wait: not counted
  never.status = 429;
  m.on_request(never);
  const telemetry::MetricsSnapshot s = m.snapshot();
  ASSERT_EQ(s.queues.size(), 1u);
  const auto& q = s.queues.at("interactive");
  EXPECT_EQ(q.answered, 1u);
  EXPECT_EQ(q.refused, 1u);
  EXPECT_EQ(q.left, 1u);
  EXPECT_DOUBLE_EQ(q.seconds, 7.0);
}

TEST(Metrics, CountsRefusedAuthenticationsByReason) {
  telemetry::Metrics m(std::vector<telemetry::Metrics::BackendInfo>{{"east", ""}});
  for (std::string_view reason : {"expired", "expired", "invalid_api_key"}) {
    telemetry::RequestRecord r;
    r.status = 401;
    r.auth_failure = reason;
    m.on_request(r);
  }
  const telemetry::MetricsSnapshot s = m.snapshot();
  EXPECT_EQ(s.auth_failures, (std::map<std::string, std::uint64_t>{{"expired", 2}, {"invalid_api_key", 1}}));
}

}  // namespace metrics_test
}  // namespace smartlb
