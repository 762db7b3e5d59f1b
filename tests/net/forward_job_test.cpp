// The policy of one request (ForwardJob) without sockets: a fake Exchange plays each backend's
// part and a manual clock keeps time, so the order of failover, the hold-back's verdicts, the
// answer when nothing is left, the stateful pin and each outcome of an attempt's ticket are
// shown exactly.
#include "smartlb/net/forward_job.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "smartlb/clients/budget_registry.hpp"
#include "smartlb/config/config_file.hpp"
#include "smartlb/config/url.hpp"
#include "smartlb/routing/latency_stats.hpp"

namespace smartlb::net {
namespace forward_job_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

// What one backend does with each request it gets.
struct Plays {
  bool answers = true;  // else a transport failure
  routing::TransportFailure failure = routing::TransportFailure::Connect;
  unsigned status = 200;
  std::vector<std::pair<std::string, std::string>> fields{};
  Relayed relay{RelayEnd::Keep};   // how relaying its answer ends
  Relayed rest{RelayEnd::Keep};    // how relaying a handed-off stream's rest ends
  std::deque<Relayed> rests{};     // ... before that, each relay of it (HandedOff: it waits)
  std::string body = "not found";  // what read_body gives (a held answer)
  base::Nanos first_content{0};    // a held stream's first content comes this long after the head
  base::Nanos drain_takes{0};      // reading the rest of its answer (a failure's) takes this long
};

void ignore_wake(std::unique_ptr<int>) {}

// The mechanism, played: each send() goes to the backend its call names, and that backend's
// Plays say what happens; what the policy asked for is recorded.
class FakeExchange final : public Exchange {
 public:
  std::map<std::size_t, Plays> backends;          // by BackendId::value
  std::map<std::size_t, std::deque<Plays>> then;  // plays for later sends, each used once
  std::vector<std::size_t> sent_to;               // in order
  std::vector<std::string> heads;                 // the request heads sent, in order
  std::vector<std::string> events;                // what else the policy asked for
  std::vector<std::chrono::seconds> head_waits;   // each send's wait for the answer's head
  std::vector<RelayOptions> relays;               // each relay's options
  ErrorReply refused;                             // smartlb's own answer, when it gave one
  bool refused_once = false;
  base::ManualClock* clock = nullptr;
  std::size_t client_leaves_in_wait = 0;  // the client leaves during this wait for capacity (1: the first)
  std::size_t drain_in_wait = 0;          // a drain begins during this one
  std::size_t waits = 0;
  const std::atomic<std::uint32_t>* waiting = nullptr;  // the first class's queue
  std::vector<std::uint32_t> waiting_seen;              // its length during each wait

  Task<Exchanged> send(const UpstreamCall& call) override {
    sent_to.push_back(call.backend.value);
    heads.emplace_back(call.head);
    head_waits.push_back(call.timeout);
    if (auto& later = then[call.backend.value]; sends_[call.backend.value]++ > 0 && !later.empty()) {
      backends[call.backend.value] = later.front();
      later.pop_front();
    }
    const Plays& p = backends[call.backend.value];
    Exchanged r;
    if (!p.answers) {
      r.failure = p.failure;
      r.detail = "played failure";
      co_return r;
    }
    head_ = http1::ResponseHead{};
    head_.status = p.status;
    for (const auto& [name, value] : p.fields) head_.fields.add(http1::field_id(name), name, value);
    current_ = &p;
    r.answered = true;
    co_return r;
  }
  const http1::ResponseHead& answer_head() const override { return head_; }
  Task<void> drain_or_close() override {
    events.push_back("drained");
    if (clock && current_) clock->advance(current_->drain_takes);
    co_return;
  }
  void discard() override { events.push_back("discarded"); }
  Task<Relayed> relay(const RelayOptions& o) override {
    events.push_back("relayed from " + std::string(o.backend_name));
    relays.push_back(o);
    rests_ = current_->rests;
    Relayed r = current_->relay;
    if (current_->first_content.count() > 0 && clock) {
      clock->advance(current_->first_content);
      r.content_at = clock->now();
    }
    co_return r;
  }
  Task<Relayed> relay_committed() override {
    events.push_back("relayed the rest");
    if (rests_.empty()) co_return current_->rest;
    const Relayed r = rests_.front();
    rests_.pop_front();
    co_return r;
  }
  void await_committed(StreamWaker wake) override {
    events.push_back("waited");
    std::move(wake)();
  }
  Task<BodyRead> read_body(std::string& out, std::size_t) override {
    out += current_->body;
    co_return BodyRead::Done;
  }
  Task<Relayed> write_answer(const http1::ResponseHead& res, std::string_view,
                             const RelayOptions& o) override {
    events.push_back("wrote held " + std::to_string(res.status) + " from " + std::string(o.backend_name));
    co_return Relayed{RelayEnd::Keep};
  }
  Task<bool> refuse(const ErrorReply& r) override {
    refused = r;
    refused_once = true;
    events.push_back("refused " + std::to_string(static_cast<unsigned>(r.status)));
    co_return r.keep_alive;
  }
  Task<void> open_session(const WebSocketSession&) override {
    events.push_back("session");
    co_return;
  }
  bool client_may_go_on() const override { return true; }
  Task<void> pause(std::chrono::milliseconds delay) override {
    events.push_back("paused " + std::to_string(delay.count()) + " ms");
    if (clock) clock->advance(delay);
    co_return;
  }
  Task<CapacityWaitEnd> wait_for_capacity(base::Nanos delay) override {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(delay);
    waiting_seen.push_back(waiting ? waiting->load() : 0);
    if (++waits == client_leaves_in_wait) {
      events.push_back("client left while waiting");
      co_return CapacityWaitEnd::ClientLeft;
    }
    if (waits == drain_in_wait) {
      events.push_back("drained while waiting");
      co_return CapacityWaitEnd::Draining;
    }
    events.push_back("waited " + std::to_string(ms.count()) + " ms");
    if (clock) clock->advance(delay);
    co_return CapacityWaitEnd::Waited;
  }

 private:
  http1::ResponseHead head_;
  const Plays* current_ = nullptr;
  std::deque<Relayed> rests_;                 // the current stream's relays to come
  std::map<std::size_t, std::size_t> sends_;  // by backend
};

// A configuration, its snapshot and the shared state, on a manual clock.
struct Policy : ::testing::Test {
  base::ManualClock clock;
  config::Config cfg;
  routing::BackendIds ids;
  std::unique_ptr<base::Published<Snapshot>> published;
  std::unique_ptr<routing::BackendStates> states;
  routing::LatencyStats latency;
  clients::BudgetRegistry budgets;
  io::ssl::context tls{io::ssl::context::tls_client};
  std::unique_ptr<Shared> shared;
  base::FastRandom rng{7};
  FakeExchange exchange;
  ForwardBuffers buffers;
  telemetry::RequestRecord rec;

  void add_backend(const std::string& name, int priority = 1, const std::string& resource = "") {
    config::BackendConfig b;
    b.id = static_cast<int>(cfg.backends.size()) + 1;
    b.name = name;
    b.url = *config::parse_backend_url("http://" + name + ".example:80").url;
    b.priority = priority;
    b.api_key = "key-" + name;
    b.resource = resource;
    cfg.backends.push_back(b);
  }
  void start() {
    exchange.clock = &clock;
    published =
        std::make_unique<base::Published<Snapshot>>(make_snapshot(cfg, ids, nullptr, nullptr, &budgets));
    states = std::make_unique<routing::BackendStates>(
        clock, routing::CooldownPolicy{cfg.default_cooldown, cfg.min_cooldown, cfg.max_cooldown});
    states->track(published->current()->table);
    shared = std::make_unique<Shared>(cfg, *published, *states, latency, clock, tls, nullptr);
  }
  std::size_t id_of(const std::string& name) const {
    const Snapshot& s = *published->current();
    for (std::size_t i = 0; i < s.backends.size(); ++i)
      if (s.backends[i].name == name) return s.table.member(i).id.value;
    ADD_FAILURE() << name;
    return 0;
  }
  Plays& backend(const std::string& name) { return exchange.backends[id_of(name)]; }
  std::vector<std::string> tried() const {
    std::vector<std::string> out;
    const Snapshot& s = *published->current();
    for (std::size_t id : exchange.sent_to)
      for (std::size_t i = 0; i < s.backends.size(); ++i)
        if (s.table.member(i).id.value == id) out.push_back(s.backends[i].name);
    return out;
  }
  std::function<void()> on_hand_off;  // called when a request's stream is handed off, before its rest
  // Runs one request through the policy to its end; whether the connection may go on.
  bool forward(const std::string& method, const std::string& target, const std::string& body = "{}") {
    http1::RequestHead req;
    req.method = beast::http::string_to_verb(method);
    req.method_text = method;
    req.target = target;
    req.body = body;
    req.fields.add(beast::http::field::host, "Host", "smartlb");
    const http::RequestTarget rt = *http::parse_request_target(req.target);
    rec = telemetry::RequestRecord{};
    rec.start = clock.coarse_now();
    const std::shared_ptr<const Snapshot> snap = published->current();
    const clients::ClientIdentity caller = clients::ClientAuthenticator::anonymous();
    io::asio::io_context ioc;
    bool keep = false;
    io::asio::co_spawn(
        ioc.get_executor(),
        [&]() -> Task<void> {
          ForwardJob job(*shared, rng, exchange, *snap, req, rt, caller, rec, buffers, nullptr);
          keep = co_await job.run();
          if (job.stream_ready()) {  // as a client connection does with a stream handed off
            if (on_hand_off) on_hand_off();
            Relayed relayed;
            while ((relayed = co_await job.relay_stream()).end ==
                   RelayEnd::HandedOff)  // it waits: woken at once here
              job.await_stream(StreamWaker::make<int, ignore_wake, ignore_wake>(std::make_unique<int>()));
            keep = job.end_stream(relayed);
          }
        },
        io::asio::detached);
    ioc.run();
    return keep;
  }
  static constexpr const char* kChat = "/openai/deployments/gpt/chat/completions?api-version=2024-10-21";
};

// A stream committed to the client leaves run() for its connection to relay the rest in a coroutine
// of its own: its attempt stays in flight on its target (an admin drain waits for it) and is
// closed, as relayed, only when the rest has gone; the request's relay asked for the hand-off.
TEST_F(Policy, AHandedOffStreamStaysInFlightUntilItsRestIsRelayed) {
  add_backend("a", 1);
  start();
  backend("a").relay = Relayed{RelayEnd::HandedOff};
  backend("a").rest = Relayed{RelayEnd::Keep};
  const routing::BackendId a{static_cast<std::uint32_t>(id_of("a"))};
  std::int64_t in_flight_handed_off = -1;
  on_hand_off = [&] { in_flight_handed_off = states->in_flight(a); };
  EXPECT_TRUE(forward("POST", kChat, R"({"stream":true})"));
  EXPECT_EQ(in_flight_handed_off, 1);
  EXPECT_EQ(states->in_flight(a), 0);
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"relayed from a", "relayed the rest"}));
  ASSERT_EQ(exchange.relays.size(), 1u);
  EXPECT_TRUE(exchange.relays[0].may_hand_off);
  ASSERT_EQ(rec.attempt_count, 1u);
  EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::None);
  EXPECT_EQ(rec.served_by, static_cast<int>(a.value));
}

// A handed-off stream that waits for its next event is relayed again once woken, until it ends:
// in flight on its target the whole time.
TEST_F(Policy, AHandedOffStreamThatWaitsIsRelayedAgainOnceWoken) {
  add_backend("a", 1);
  start();
  backend("a").relay = Relayed{RelayEnd::HandedOff};
  backend("a").rests = {Relayed{RelayEnd::HandedOff}, Relayed{RelayEnd::HandedOff}};
  backend("a").rest = Relayed{RelayEnd::Keep};
  EXPECT_TRUE(forward("POST", kChat, R"({"stream":true})"));
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"relayed from a", "relayed the rest", "waited",
                                                       "relayed the rest", "waited", "relayed the rest"}));
  EXPECT_EQ(states->in_flight(routing::BackendId{static_cast<std::uint32_t>(id_of("a"))}), 0);
  EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::None);
}

// A handed-off stream that the backend cuts short is that backend's failure, as one cut in run()'s
// own relay is: its target cools down, and the next request goes elsewhere.
TEST_F(Policy, AHandedOffStreamCutShortCoolsItsTarget) {
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  backend("a").relay = Relayed{RelayEnd::HandedOff};
  backend("a").rest = Relayed{RelayEnd::Close, RelayFault::Transport, routing::TransportFailure::Lost};
  EXPECT_FALSE(forward("POST", kChat, R"({"stream":true})"));
  EXPECT_EQ(tried(), (std::vector<std::string>{"a"})) << "the client had its head: no failover";
  ASSERT_EQ(rec.attempt_count, 1u);
  EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::ConnectionLost);
  exchange.sent_to.clear();
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"b"}));
}

TEST_F(Policy, A429FailsOverAtOnceToTheNextPriorityAndCoolsTheFirst) {
  add_backend("ptu", 1);
  add_backend("paygo", 2);
  start();
  backend("ptu") = {true, {}, 429, {{"retry-after", "20"}}};
  EXPECT_TRUE(forward("POST", kChat));
  EXPECT_EQ(tried(), (std::vector<std::string>{"ptu", "paygo"}));
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "relayed from paygo"}));
  ASSERT_EQ(rec.attempt_count, 2u);
  EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::Throttled);
  EXPECT_EQ(rec.attempts[0].cooldown_ms, 20000);
  EXPECT_EQ(rec.attempts[1].cause, routing::FailureCause::None);
  EXPECT_EQ(rec.served_by, static_cast<int>(id_of("paygo")));
  // The next request goes straight to the second while the first cools down...
  exchange.sent_to.clear();
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"paygo"}));
  // ... and to the first again once its Retry-After has passed.
  clock.advance(20s);
  exchange.sent_to.clear();
  backend("ptu") = {};
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"ptu"}));
}

TEST_F(Policy, EveryOutcomeThatFailsOverTriesEachBackendOnceThenAnswersWhenToComeBack) {
  add_backend("a", 1);
  add_backend("b", 2);
  add_backend("c", 3);
  start();
  backend("a") = {false, routing::TransportFailure::Connect};
  backend("b") = {true, {}, 503, {{"retry-after", "3"}}};
  backend("c") = {true, {}, 429, {{"retry-after-ms", "1500"}}};
  EXPECT_TRUE(forward("POST", kChat));
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_TRUE(exchange.refused_once);
  // Throttled beside failed: a 429 that says when the soonest is back (c, in 1.5 s).
  EXPECT_EQ(exchange.refused.status, beast::http::status::too_many_requests);
  EXPECT_EQ(exchange.refused.retry_after, 1500ms);
  EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::ConnectFailed);
  EXPECT_EQ(rec.attempts[1].cause, routing::FailureCause::ServerError);
  EXPECT_EQ(rec.attempts[2].cause, routing::FailureCause::Throttled);
}

// A backend's short retry-after-ms may pass before the request has nothing left to try: it was
// still rate limited (a 429 tells the client to slow down), not failed (a 502).
TEST_F(Policy, A429WhoseShortRetryAfterPassedBeforeTheAnswerIsStillA429) {
  add_backend("a");
  start();
  Plays throttled{true, {}, 429, {{"retry-after-ms", "100"}}};
  throttled.drain_takes = 150ms;
  backend("a") = throttled;
  EXPECT_TRUE(forward("POST", kChat));
  EXPECT_EQ(tried(), (std::vector<std::string>{"a"}));
  ASSERT_TRUE(exchange.refused_once);
  EXPECT_EQ(exchange.refused.status, beast::http::status::too_many_requests);
  EXPECT_EQ(exchange.refused.code, "rate_limit_exceeded");
}

TEST_F(Policy, A400IsRelayedAsItIsAndCoolsNothing) {
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  backend("a") = {true, {}, 400};
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"relayed from a"}));
  EXPECT_TRUE(states->available(published->current()->table.member(0), "gpt"));
}

TEST_F(Policy, AHeldStreamWhoseFirstEventIsAnErrorFailsOverLikeA5xx) {
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  backend("a").relay = Relayed{RelayEnd::FailOver, RelayFault::ErrorEvent, {}, "an error event"};
  forward("POST", kChat, R"({"stream":true})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::StreamError);
  EXPECT_EQ(rec.served_by, static_cast<int>(id_of("b")));
}

TEST_F(Policy, AHeldStreamWhoseConnectionFailsFailsOverAndCoolsTheBackend) {
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  backend("a").relay =
      Relayed{RelayEnd::FailOver, RelayFault::Transport, routing::TransportFailure::Lost, "lost"};
  forward("POST", kChat, R"({"stream":true})");
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::ConnectionLost);
  EXPECT_FALSE(states->available(published->current()->table.member(0), "other-model"))
      << "the whole backend";
}

TEST_F(Policy, AStreamCutAfterItsHeadIsAFailureItsBreakerCounts) {
  cfg.backends.clear();
  const char* yaml = R"(
backends:
  - {name: a, url: "http://a.example"}
  - {name: b, url: "http://b.example"}
targets:
  - {id: a/gpt, backend: a}
  - {id: b/gpt, backend: b}
model_configs:
  - model: a/gpt
    failure_tolerance: {allowed_failures_per_minute: 1, cooldown_period_minutes: 5}
rules:
  - id: r
    type: priority-based-routing
    when: {models: [gpt]}
    load_balance_targets:
      - {target: a/gpt, priority: 1}
      - {target: b/gpt, priority: 2}
)";
  auto loaded = config::load_config_text({}, yaml, "t.yaml");
  ASSERT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0]);
  cfg = *loaded.config;
  start();
  backend("a").relay = Relayed{RelayEnd::Close, RelayFault::Transport, routing::TransportFailure::Lost};
  for (int i = 0; i < 2; ++i) {
    exchange.sent_to.clear();
    forward("POST", kChat, R"({"stream":true})");
    EXPECT_EQ(tried(), (std::vector<std::string>{"a"})) << "the client had its head: no failover";
    EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::ConnectionLost);
    EXPECT_EQ(rec.attempts[0].breaker_tripped, i == 1);
    clock.advance(11s);  // past the cut's own cooldown
  }
  exchange.sent_to.clear();
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"b"})) << "the breaker holds a/gpt out";
}

TEST_F(Policy, AClientThatLeftMidStreamCostsTheBackendNothing) {
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  backend("a").relay = Relayed{RelayEnd::Close};
  forward("POST", kChat, R"({"stream":true})");
  exchange.sent_to.clear();
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a"}));
}

TEST_F(Policy, ATaggedIdPinsTheRequestToItsResourceAndNotFoundIsHeldWhileOthersAreTried) {
  add_backend("east", 1, "east-resource");
  add_backend("west", 1, "west-resource");
  start();
  // An untagged id: each resource in turn; a "not found" is held while the other is tried.
  backend("east") = {true, {}, 404, {{"content-type", "application/json"}}};
  backend("west") = {true, {}, 404, {{"content-type", "application/json"}}};
  backend("east").body = backend("west").body = R"({"error":{"code":"not_found","message":"No such file"}})";
  forward("GET", "/openai/files/file-abc?api-version=2024-10-21", "");
  EXPECT_EQ(exchange.sent_to.size(), 2u) << "both resources were asked";
  ASSERT_FALSE(exchange.events.empty());
  EXPECT_EQ(exchange.events.back().substr(0, 14), "wrote held 404") << "the last 'not found' is the answer";
  EXPECT_TRUE(states->available(published->current()->table.member(0), "")) << "nothing cools down";
}

constexpr const char* kStreamed = R"({"messages":[{"role":"user","content":"hi"}],"stream":true})";

TEST_F(Policy, AStreamWithoutContentWithinItsFirstTokenDeadlineFailsOverAndTheLastIsNeverCut) {
  cfg.first_token_timeout = 5s;  // FIRST_TOKEN_TIMEOUT_SECONDS=5
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  backend("a").relay = Relayed{RelayEnd::FailOver, RelayFault::Stalled, {}, "no content"};
  forward("POST", kChat, kStreamed);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::Stalled);
  EXPECT_EQ(rec.served_by, static_cast<int>(id_of("b")));
  ASSERT_EQ(exchange.relays.size(), 2u);
  EXPECT_TRUE(exchange.relays[0].fail_over_stall);
  EXPECT_EQ(exchange.relays[0].hold_timeout, 5s) << "its head came at once: the whole deadline is left";
  EXPECT_FALSE(exchange.relays[1].fail_over_stall) << "the last candidate gets its whole timeout";
  EXPECT_EQ(exchange.relays[1].hold_timeout, base::Nanos(100s));
  EXPECT_EQ(exchange.head_waits, (std::vector<std::chrono::seconds>{5s, 100s}));
  EXPECT_FALSE(states->available(published->current()->table.member(0), "gpt")) << "cooled down";
}

TEST_F(Policy, AHeadThatDoesNotComeWithinTheFirstTokenDeadlineIsAStall) {
  cfg.first_token_timeout = 5s;
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  backend("a") = {false, routing::TransportFailure::Timeout};
  forward("POST", kChat, kStreamed);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(rec.attempts[0].cause, routing::FailureCause::Stalled);
}

TEST_F(Policy, ARequestThatDoesNotStreamHasNoFirstTokenDeadline) {
  cfg.first_token_timeout = 5s;
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  forward("POST", kChat, R"({"messages":[],"stream":false})");
  EXPECT_EQ(exchange.head_waits, (std::vector<std::chrono::seconds>{100s}));
  EXPECT_FALSE(exchange.relays[0].fail_over_stall);
}

TEST_F(Policy, ByDefaultTheFirstTokenDeadlineIsLearnedFromTheDeploymentsOwnFirstTokens) {
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  backend("a").first_content = 150ms;
  for (std::size_t i = 0; i < routing::FirstTokenStats::kEnough; ++i) {
    forward("POST", kChat, kStreamed);
    EXPECT_FALSE(exchange.relays.back().fail_over_stall) << "nothing known yet: no deadline of smartlb's own";
  }
  forward("POST", kChat, kStreamed);
  EXPECT_TRUE(exchange.relays.back().fail_over_stall);
  EXPECT_EQ(exchange.relays.back().hold_timeout, routing::FirstTokenStats::kFloor)
      << "a fast deployment: the floor";
  EXPECT_EQ(exchange.head_waits.back(), 8s);
  // A reasoning effort never seen on it is not cut.
  forward("POST", kChat, R"({"messages":[],"stream":true,"reasoning_effort":"high"})");
  EXPECT_FALSE(exchange.relays.back().fail_over_stall);
}

TEST_F(Policy, FirstTokenTimeoutZeroTurnsTheDeadlineOff) {
  cfg.first_token_timeout = 0s;
  add_backend("a", 1);
  add_backend("b", 2);
  start();
  backend("a").first_content = 150ms;
  for (std::size_t i = 0; i < routing::FirstTokenStats::kEnough + 2; ++i) forward("POST", kChat, kStreamed);
  EXPECT_FALSE(exchange.relays.back().fail_over_stall);
}

TEST_F(Policy, NoRuleForTheModelIsA404ModelNotFoundAndNoBackendIsAsked) {
  const char* yaml = R"(
backends:
  - {name: a, url: "http://a.example"}
targets:
  - {id: a/gpt, backend: a}
rules:
  - id: r
    type: priority-based-routing
    when: {models: [gpt]}
    load_balance_targets: [{target: a/gpt}]
)";
  auto loaded = config::load_config_text({}, yaml, "t.yaml");
  ASSERT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0]);
  cfg = *loaded.config;
  start();
  forward("POST", "/openai/deployments/other/chat/completions?api-version=1");
  EXPECT_TRUE(exchange.sent_to.empty());
  EXPECT_EQ(exchange.refused.status, beast::http::status::not_found);
  EXPECT_EQ(exchange.refused.code, "model_not_found");
}

// A priority class's bounded wait for capacity (max_queue_seconds) instead of smartlb's own 429.
struct CapacityWait : Policy {
  void classes(std::chrono::milliseconds max_queue, std::uint32_t max_length = 10) {
    config::PriorityClassConfig interactive{"interactive", 0, {}, {}};
    interactive.max_queue = max_queue;
    interactive.max_queue_length = max_length;
    cfg.policy.priority_classes = {interactive, {"batch", 500, {}, {}}};
  }
  void start_watching() {
    start();
    exchange.waiting = &shared->waiting_for_capacity[0];
  }
  void one_request_a_minute() {  // every caller's budget, shared
    config::SubjectLimit everyone;
    everyone.subject = "*";
    everyone.shared = true;
    everyone.limits.requests_per_minute = 1;
    cfg.policy.subject_limits = {everyone};
  }
};

TEST_F(CapacityWait, ARequestWaitsOutACooldownAndIsServed) {
  add_backend("a");
  classes(5s);
  start_watching();
  backend("a") = {true, {}, 429, {{"retry-after-ms", "2000"}}};
  exchange.then[id_of("a")] = {Plays{}};
  EXPECT_TRUE(forward("POST", kChat));
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "a"}));
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "waited 2000 ms", "relayed from a"}));
  EXPECT_FALSE(exchange.refused_once);
  EXPECT_EQ(rec.queued_ms, 2000);
  EXPECT_EQ(rec.queue_class, "interactive");
  EXPECT_EQ(exchange.waiting_seen, std::vector<std::uint32_t>{1}) << "in its class's queue while it waited";
  EXPECT_EQ(shared->waiting_for_capacity[0].load(), 0u) << "and out of it once routed again";
}

TEST_F(CapacityWait, ByDefaultThe429IsAnsweredAtOnce) {
  add_backend("a");
  start();
  backend("a") = {true, {}, 429, {{"retry-after-ms", "2000"}}};
  forward("POST", kChat);
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "refused 429"}));
  EXPECT_EQ(rec.queued_ms, -1);
}

// CAPACITY_GRACE_MS (100 ms by default): whatever the class, a refusal that only smartlb's own
// prediction made (here a declared quota of one request per 100 ms window) and that says room
// comes back that soon is waited out, rather than refuse a request the backend could serve.
struct CapacityGrace : CapacityWait {
  void one_request_a_window() {
    add_backend("a");
    cfg.backends.back().rpm = 600;  // 1 a window
    cfg.quota_window = 100ms;
    cfg.capacity_grace = 150ms;  // the window and its buckets' rounding (SlidingWindowBudget)
  }
};

TEST_F(CapacityGrace, ARefusalOnlyAPredictionMadeIsWaitedOutWhateverTheClass) {
  one_request_a_window();
  start_watching();  // the default classes: no max_queue_seconds
  EXPECT_TRUE(forward("POST", kChat));
  exchange.events.clear();
  EXPECT_TRUE(forward("POST", kChat));
  ASSERT_EQ(exchange.events.size(), 2u) << ::testing::PrintToString(exchange.events);
  EXPECT_EQ(exchange.events[0].rfind("waited 10", 0), 0u) << exchange.events[0];
  EXPECT_EQ(exchange.events[1], "relayed from a");
  EXPECT_FALSE(exchange.refused_once);
  EXPECT_GE(rec.queued_ms, 100);
  EXPECT_EQ(exchange.waiting_seen, std::vector<std::uint32_t>{1}) << "in its class's queue while it waited";
  EXPECT_EQ(shared->waiting_for_capacity[0].load(), 0u);
}

TEST_F(CapacityGrace, NoGraceWhenItIsTurnedOff) {
  one_request_a_window();
  cfg.capacity_grace = 0ms;
  start();
  forward("POST", kChat);
  exchange.events.clear();
  forward("POST", kChat);
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"refused 429"}));
}

// A backend's own 429 is answered at once, however soon it says room comes back: the client
// retries as it is told (docs/client-budgets.md, "The grace").
TEST_F(CapacityGrace, ABackendsOwnRefusalGetsNoGrace) {
  add_backend("a");
  cfg.capacity_grace = 60s;
  start();
  backend("a") = {true, {}, 429, {{"retry-after-ms", "60"}}};
  forward("POST", kChat);
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "refused 429"}));
  EXPECT_EQ(exchange.refused.retry_after, 100ms) << "the cooldown's floor, MIN_COOLDOWN";
}

TEST_F(CapacityWait, RoomThatComesBackOnlyAfterTheWaitIsA429AtOnce) {
  add_backend("a");
  classes(5s);
  start();
  backend("a") = {true, {}, 429, {{"retry-after", "20"}}};
  forward("POST", kChat);
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "refused 429"}));
  EXPECT_EQ(exchange.refused.retry_after, 20000ms) << "the client is told when to come back";
}

TEST_F(CapacityWait, ARequestRefusedAgainAfterItsWaitWaitsOnWithinItsBound) {
  add_backend("a");
  classes(5s, 1);
  start_watching();
  backend("a") = {true, {}, 429, {{"retry-after-ms", "2000"}}};
  forward("POST", kChat);
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "waited 2000 ms", "drained",
                                                       "waited 2000 ms", "drained", "refused 429"}))
      << "a third wait would end past 5 s";
  EXPECT_EQ(rec.queued_ms, 4000);
  EXPECT_EQ(rec.attempt_count, 3u);
  EXPECT_EQ(exchange.waiting_seen, (std::vector<std::uint32_t>{1, 1}))
      << "a queue of one: its second wait keeps its turn";
  EXPECT_EQ(shared->waiting_for_capacity[0].load(), 0u);
}

TEST_F(CapacityWait, AClientThatLeavesWhileWaitingIsNotAnsweredAndLeavesTheQueue) {
  add_backend("a");
  classes(5s);
  start();
  backend("a") = {true, {}, 429, {{"retry-after-ms", "2000"}}};
  exchange.client_leaves_in_wait = 1;
  EXPECT_FALSE(forward("POST", kChat));
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "client left while waiting"}));
  EXPECT_EQ(exchange.sent_to.size(), 1u);
  EXPECT_TRUE(rec.client_aborted);
  EXPECT_EQ(shared->waiting_for_capacity[0].load(), 0u);
}

TEST_F(CapacityWait, ADrainEndsAWaitWithTheRefusal) {
  add_backend("a");
  classes(5s);
  start();
  backend("a") = {true, {}, 429, {{"retry-after-ms", "2000"}}};
  exchange.drain_in_wait = 1;
  forward("POST", kChat);
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "drained while waiting", "refused 429"}))
      << "answered now rather than cut when the drain's time is up";
  EXPECT_EQ(shared->waiting_for_capacity[0].load(), 0u);
}

TEST_F(CapacityWait, AClientThatLeavesABudgetsWaitIsNotCountedAsLimited) {
  add_backend("a");
  classes(90s);
  one_request_a_minute();
  start();
  forward("POST", kChat);
  exchange.client_leaves_in_wait = 1;
  EXPECT_FALSE(forward("POST", kChat));
  EXPECT_TRUE(rec.client_aborted);
  EXPECT_FALSE(rec.client_limited) << "no 429 was sent";
  EXPECT_EQ(rec.status, 0u);
}

TEST_F(CapacityWait, AFullQueueTurnsANewcomerAwayAtOnce) {
  add_backend("a");
  classes(5s, 3);
  start();
  backend("a") = {true, {}, 429, {{"retry-after-ms", "2000"}}};
  shared->waiting_for_capacity[0] = 3;  // three requests of the class wait already
  forward("POST", kChat);
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "refused 429"}));
  shared->waiting_for_capacity[0] = 0;
}

TEST_F(CapacityWait, AClientBudgetsRefusalIsWaitedOutToo) {
  add_backend("a");
  classes(90s);
  one_request_a_minute();
  start();
  EXPECT_TRUE(forward("POST", kChat));
  EXPECT_TRUE(forward("POST", kChat));
  ASSERT_EQ(exchange.events.size(), 3u) << ::testing::PrintToString(exchange.events);
  EXPECT_EQ(exchange.events[1].rfind("waited ", 0), 0u) << exchange.events[1];
  EXPECT_EQ(exchange.events[2], "relayed from a");
  EXPECT_FALSE(rec.client_limited);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "a"}));
}

// TrueFoundry's per-target options (docs/routing-policy.md, From TrueFoundry), from a file.
struct TargetOptions : Policy {
  void load(const std::string& targets) {
    const std::string yaml = R"(
backends:
  - {name: a, url: "http://a.example"}
  - {name: b, url: "http://b.example"}
  - {name: c, url: "http://c.example"}
targets:
  - {id: a/gpt, backend: a}
  - {id: b/gpt, backend: b}
  - {id: c/gpt, backend: c}
rules:
  - id: r
    type: priority-based-routing
    when: {models: [gpt]}
    load_balance_targets:
)" + targets;
    auto loaded = config::load_config_text({}, yaml, "t.yaml");
    ASSERT_TRUE(loaded.config) << (loaded.errors.empty() ? "" : loaded.errors[0]);
    cfg = *loaded.config;
    start();
  }
};

TEST_F(TargetOptions, RetryConfigTriesTheSameTargetAgainAfterItsDelay) {
  load(
      R"(      - {target: a/gpt, priority: 0, retry_config: {attempts: 2, delay: 100, on_status_codes: ["503"]}}
      - {target: b/gpt, priority: 1}
)");
  backend("a") = {true, {}, 503};
  forward("POST", kChat);
  // Twice more on a (its two retries), then b at once.
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "a", "a", "b"}));
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "paused 100 ms", "drained", "paused 100 ms",
                                                       "drained", "relayed from b"}));
  EXPECT_EQ(rec.served_by, static_cast<int>(id_of("b")));
}

TEST_F(TargetOptions, ARetryThatSucceedsIsRelayedAndCostsTheTargetNothing) {
  load(
      R"(      - {target: a/gpt, priority: 0, retry_config: {attempts: 2, delay: 100, on_status_codes: ["503"]}}
      - {target: b/gpt, priority: 1}
)");
  backend("a") = {true, {}, 503};
  exchange.then[id_of("a")].push_back(Plays{});  // its second answer: a 200
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "a"}));
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "paused 100 ms", "relayed from a"}));
  EXPECT_EQ(rec.served_by, static_cast<int>(id_of("a")));
  EXPECT_TRUE(states->available(published->current()->table.member(0), "gpt"));
}

TEST_F(TargetOptions, ARetryNeverWaitsLessThanTheBackendAskedItMovesOnAtOnce) {
  load(R"(      - {target: a/gpt, priority: 0, retry_config: {attempts: 2, delay: 100}}
      - {target: b/gpt, priority: 1}
)");
  backend("a") = {true, {}, 429, {{"retry-after", "30"}}};
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"drained", "relayed from b"}));
  EXPECT_EQ(rec.attempts[0].cooldown_ms, 30000);
}

TEST_F(TargetOptions, AListedStatusThatIsNoFailureMovesOnWithoutCoolingTheTarget) {
  load(R"(      - {target: a/gpt, priority: 0, fallback_status_codes: ["400", "429"]}
      - {target: b/gpt, priority: 1}
)");
  backend("a") = {true, {}, 400};
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(states->available(published->current()->table.member(0), "gpt"));
}

TEST_F(TargetOptions, AFailureNotListedIsRelayedAndStillCoolsTheTarget) {
  load(R"(      - {target: a/gpt, priority: 0, fallback_status_codes: ["429"]}
      - {target: b/gpt, priority: 1}
)");
  backend("a") = {true, {}, 503, {{"retry-after", "5"}}};
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a"}));
  EXPECT_EQ(exchange.events, (std::vector<std::string>{"relayed from a"}));
  EXPECT_FALSE(states->available(published->current()->table.member(0), "gpt"));
}

TEST_F(TargetOptions, ATargetThatIsNoFallbackCandidateIsNeverTriedAsOne) {
  load(R"(      - {target: a/gpt, priority: 0}
      - {target: b/gpt, priority: 1, fallback_candidate: false}
      - {target: c/gpt, priority: 2}
)");
  backend("a") = {true, {}, 429, {{"retry-after", "30"}}};
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"a", "c"}));
  // It is still chosen first when its turn comes: a cools down, b is the best priority left.
  exchange.sent_to.clear();
  forward("POST", kChat);
  EXPECT_EQ(tried(), (std::vector<std::string>{"b"}));
}

}  // namespace forward_job_test
}  // namespace smartlb::net
