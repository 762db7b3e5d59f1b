#pragma once
// What a backend last said remains of its own rate limit for one deployment
// (`x-ratelimit-remaining-tokens` / `-requests`, on every answer), minus what smartlb sent there
// since, plus what the limiter is known to give back over time.
//
// A report says "this much is left now"; how the limiter refills is unknown: in steps (a fixed
// window), continuously (a sliding window, a token bucket), over a window nobody told us. So a
// report that is too low for a request only moves it elsewhere, and refuses nothing for long:
//   * Fits: the report (less smartlb's sends since) has room, or its reset hint has passed;
//   * Confirmed: no room, and the request that brought the report left less than kFreshFor ago:
//     a fresh observation, on which smartlb may answer 429 itself when every target is out;
//   * Probe: no room by the report, but it is no longer fresh, or the learned refill says the
//     cost is back: one request may test it (claim_probe: one at a time, at most one per
//     kFreshFor), and its answer is the next report (or a 429, whose Retry-After cools it down).
// So a wrong guess costs at most kFreshFor of one target, never a window of all of them.
//
// The refill rate is learned from successive reports: between two of them, whatever came back
// beyond smartlb's own sends, over short intervals only. A fixed window's jump (more than a
// quarter of the most ever reported at once) is not a rate: spread over the interval it would
// promise room in the middle of a window that has none.
//
// Negative or unparsable reports (Azure has answered `-1`) are "unknown", never "empty": the
// parser drops them (parse_rate_limit_report). A deployment that reports nothing still says
// something with each 429: nothing was left when that request arrived ("blind"). From its first
// such 429 smartlb counts its sends there, so that the echo of a sliding window can be learned
// from the 429s' Retry-After (RefillEcho); once it is, each 429 is a report of nothing left, and
// each answer that the echo predicted carries the prediction on as the next report. An answer
// the echo did not predict (the backend took more) drops the prediction until the next 429:
// for a limiter that is no sliding window of smartlb's own sends, nothing changes. A target
// short by the echo may be probed no later than kMaxFresh after its 429; each 429 that confirms
// the echo doubles that, up to kMaxProbeGap, as a probe that finds nothing costs a 429.
// Where no echo explains the 429s, their Retry-Afters may still show a token bucket's refill
// (BlindBucket): once its rate is learned, each 429 anchors the bucket's level (the refused
// request's cost at the moment it fits), the refill since counts as room, and a request is
// sent there only when the level holds it. A request taken where the level said no raises it.
//
// Thread-safe: the request path reads atomics and, only while the budget is low (`watched`),
// adds its cost to two atomic counters; reports take a mutex of this deployment.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/class_reserve.hpp"
#include "smartlb/routing/refill_echo.hpp"
#include "smartlb/routing/throttle_headers.hpp"

namespace smartlb::routing {

class BlindBucket;

class ReportedBudget {
 public:
  ReportedBudget();
  ~ReportedBudget();
  ReportedBudget(const ReportedBudget&) = delete;
  ReportedBudget& operator=(const ReportedBudget&) = delete;

  // Below either of these remaining counts a deployment is watched: requests to it are
  // estimated and counted. Above both, a request's estimate cannot matter (larger requests
  // than this are left to the backend's 429).
  static constexpr std::int64_t kWatchBelowTokens = 65'536;
  static constexpr std::int64_t kWatchBelowRequests = 64;
  // How long a report confirms "no room" after its request left when nothing predicts the
  // refill, and how long a probe's answer is waited for before another may go.
  static constexpr base::Nanos kFreshFor = std::chrono::milliseconds(250);
  // No prediction (a learned refill, a learned boundary) holds a target back longer than this
  // after its report (or after the last answer without one that it predicted, at most
  // kMaxConfirmed after the report): a wrong one costs at most this much of one target.
  static constexpr base::Nanos kMaxFresh = std::chrono::milliseconds(500);
  static constexpr base::Nanos kMaxConfirmed = std::chrono::seconds(2);
  // Reports closer together than this are not a refill sample (the next one is measured from
  // the earlier baseline).
  static constexpr base::Nanos kMinSampleGap = std::chrono::milliseconds(20);
  // The learned rate follows the samples of about the last few seconds.
  static constexpr base::Nanos kRateHalfLife = std::chrono::seconds(2);
  // Blind (a deployment that reports nothing): the longest a target short by the echo of its
  // sends waits for a probe, and how long a deployment without a learned echo keeps counting
  // its sends after its last 429.
  static constexpr base::Nanos kMaxProbeGap = std::chrono::seconds(8);
  static constexpr base::Nanos kForgetBlind = std::chrono::minutes(4);

  // What smartlb had sent there when a request left (its own cost included, when counted).
  struct Mark {
    std::int64_t tokens = 0, requests = 0;
    std::int64_t own_tokens = 0, own_requests = 0;  // the request's own part of it
    // Its estimate, counted or not (0: not estimated): a request sent before its deployment
    // was watched is remembered for the echo when its answer's report turns watching on.
    std::int64_t cost = 0;
  };

  enum class Room : std::uint8_t { Fits, Confirmed, Probe };

  static bool is_low(const RateLimitReport& r) {
    return (r.remaining_tokens && *r.remaining_tokens < kWatchBelowTokens) ||
           (r.remaining_requests && *r.remaining_requests < kWatchBelowRequests);
  }

  bool watched() const { return watched_.load(std::memory_order_relaxed); }
  // Watched because its 429s reported nothing (below): its echo is of this replica's sends only.
  bool blind() const { return blind_.load(std::memory_order_relaxed); }
  // Whether the reports (or, for a deployment that reports nothing, the learned echo of its
  // sends) say what is left: only then may they decide before a cooldown's floor ends.
  bool models_room() const {
    return watched() &&
           (!blind_.load(std::memory_order_relaxed) || tokens_.base.load(std::memory_order_relaxed) != kNone);
  }

  // Counts a request of `cost` tokens sent now (only while watched; otherwise free).
  Mark charge(std::int64_t cost);

  // A report from the answer to a request sent at `sent` with `mark`; `taken`: the backend
  // took the request (not a 429: then its cost is given back, it spent nothing there). Older
  // reports than the last one taken are ignored. An empty report is the blind case (above).
  // `answered`: when the answer came (0: at `sent`). Returns how `watched()` changed: +1, -1 or 0.
  int observe(const RateLimitReport& r, base::MonoNanos sent, Mark mark, bool taken = true,
              base::MonoNanos answered = 0);
  // A report another replica read (redis::SharedReports), from an answer to a request it sent at
  // `sent`: counts every send of this replica so far as in it (at most its sends of the last
  // round trip are counted once too many: it errs toward less room). It corrects what is left
  // now and nothing else: the refill and the echo are learnt from this replica's own reports, whose
  // sends it knows. Older than the last report taken: ignored. Returns as observe does.
  int observe_shared(const RateLimitReport& r, base::MonoNanos sent);

  // Whether `cost` tokens (at least 1) and one request fit at `now`, by the last report.
  // `cls`: with what a lower priority class leaves to the classes above (routing/class_reserve.hpp):
  // their demand until room comes back (room_back_in), at most its share of the most ever
  // reported.
  Room room(std::int64_t cost, base::MonoNanos now, ClassReserve cls = {}) const;
  bool fits(std::int64_t cost, base::MonoNanos now, ClassReserve cls = {}) const {
    return room(cost, now, cls) == Room::Fits;
  }
  // Takes the one probe a target short by its reports may have at `now`: true at most once per
  // kFreshFor (the caller sends the request).
  bool claim_probe(base::MonoNanos now);
  // Another replica took this target's probe, out until `until`: none is taken here before then
  // (or before an answer to a request sent since, as for a probe of this replica's own).
  void probe_elsewhere(base::MonoNanos until);
  // Another replica's 429 there: whichever probe was out has its answer.
  void probe_elsewhere_answered() { probe_until_.store(0, std::memory_order_relaxed); }
  // A 429 said when the backend will take the request again: its Retry-After, over at `at`
  // (smartlb's cooldown may last longer: it has a floor). From then the last report is no
  // confirmation, and one request may test it. The moments a limiter that jumps (no refill
  // rate) gives room back are learned from these: the latest, and the period between them.
  void retry_at(base::MonoNanos at);
  // Whether the last 429's Retry-After has passed at `now`: from then the reports decide, even
  // while smartlb's own floor on cooldowns still holds the target.
  bool retry_passed(base::MonoNanos now) const {
    const base::MonoNanos retry = backend_retry_.load(std::memory_order_relaxed);
    return retry != 0 && now >= retry;
  }
  // When a request of `cost` may test it again (`now` when it fits): by the learned refill, a
  // reset hint or a 429's Retry-After, else when the report is no longer fresh, and never later
  // than kMaxFresh after the report (or an answer as its refill foretold). Orders the targets a
  // probe may test.
  base::MonoNanos back_at(std::int64_t cost, base::MonoNanos now, ClassReserve cls = {}) const;
  // The soonest time at or after `now` when a request of `cost` may go there (it fits, or may
  // be probed and no probe is out).
  base::MonoNanos next_chance(std::int64_t cost, base::MonoNanos now, ClassReserve cls = {}) const;

  // What a sliding window whose echo of smartlb's own sends is known has left now (its last
  // report, less the sends since, plus what their echo gave back since), the most it ever
  // reported, and (appended to `token_releases` and `request_releases`) what it gives back
  // from now on: a lower class checks the pool as a whole with it (BackendStates::pool_reserve).
  // False, and nothing appended, where that is not known (not watched, no echo learned, no
  // standing report of its tokens).
  struct PoolShare {
    std::int64_t tokens_left = 0, tokens_limit = 0;
    std::int64_t requests_left = 0, requests_limit = 0;
    bool requests_known = false;  // a standing report of its requests
    base::Nanos window{0};
  };
  bool pool_share(base::MonoNanos now, PoolShare& share, std::vector<WindowRelease>& token_releases,
                  std::vector<WindowRelease>& request_releases) const;

  struct View {
    bool watched = false;
    std::int64_t tokens_left = -1, requests_left = -1;      // -1: no limiting report
    double tokens_per_second = 0, requests_per_second = 0;  // learned refill (0: none seen)
    base::MonoNanos reported_at = 0;                        // when the report's request left
  };
  View view() const;

 private:
  static constexpr std::int64_t kNone = std::numeric_limits<std::int64_t>::max();
  // One limit (tokens or requests): the report, the learned refill, and its baseline.
  struct Limit {
    // remaining as reported + what we had sent then: left now = base - sent since.
    std::atomic<std::int64_t> base{kNone};
    std::atomic<std::int64_t> cap{0};          // the most ever reported: refill stops there
    std::atomic<double> rate{0};               // learned refill, per nanosecond
    std::atomic<base::MonoNanos> reset_at{0};  // a reset hint: full again then (0: none)
    // Low since then with nothing come back (0: not low; kNever: something came back since it
    // went low, a refill or a jump): how long its window is at least (room_back_in).
    std::atomic<base::MonoNanos> low_since{0};
    // A limiter that jumps (a fixed window): the last report that showed room come back all at
    // once, and the period between such jumps (0: not known); until a second jump, how long the
    // limit was low before the first (the first window was at least that long). Only a lower
    // class's reserve looks at them (room_back_in): probing keeps to what 429s taught.
    std::atomic<base::MonoNanos> jumped_at{0};
    std::atomic<std::int64_t> jump_period{0}, first_window{0};
    // Learning, under the mutex: the last report's base and time, and the rate's sums.
    std::int64_t baseline = kNone;
    base::MonoNanos baseline_at = 0;
    double refilled = 0, over = 0;  // decayed sums of refill and of time (ns)
    // Samples in a row whose refill the rate learned before them foretold (within a quarter): a
    // continuous refill (a token bucket), which a sliding window's bursts of echo are not.
    static constexpr int kBorneOut = 3;
    int borne_out = 0;  // at most kBorneOut
    bool refill_borne_out() const {
      return base.load(std::memory_order_relaxed) == kNone || borne_out >= kBorneOut;
    }

    // What came back between two reports (their requests' send times).
    struct Sample {
      base::MonoNanos from, to;
      std::int64_t back;
    };
    // Under the mutex: a report of this limit (`counted`: every send since the last one was
    // charged, so the two may be compared); the refill it shows, when it is a sample.
    std::optional<Sample> take(std::optional<std::int64_t> remaining, std::int64_t mark, base::MonoNanos sent,
                               std::optional<std::chrono::milliseconds> reset, bool low, bool counted);
    std::optional<Sample> learn(std::int64_t base_now, base::MonoNanos at);
  };
  static constexpr base::MonoNanos kNever = std::numeric_limits<base::MonoNanos>::max();
  // How one limit stands at `now` for a need of `need`, `sent` being smartlb's sends so far.
  struct Standing {
    bool short_now = false;  // the report (less the sends since) has no room
    base::MonoNanos refill_at =
        0;  // when it should fit by the learned refill or a reset hint (kNever: nothing says)
  };
  // `echo`: the cumulative refill of the echo schedule for this limit (echo_tokens_ or _requests_).
  // `credit`: a blind bucket's refill since its anchor (tokens; 0 otherwise), and `bucket_rate`
  // its rate per nanosecond (0: none).
  Standing stand(const Limit& l, std::int64_t sent, std::int64_t need, base::MonoNanos reported_at,
                 base::MonoNanos now, const std::atomic<std::int64_t>* echo, std::int64_t credit = 0,
                 double bucket_rate = 0) const;
  // When a short target whose reports are not blind may be tested, given `back` by the refill
  // (kNever: nothing predicts it) and the report's time `at`.
  base::MonoNanos guessed_back(base::MonoNanos back, base::MonoNanos at) const;
  struct Outlook {
    bool fits = true;
    base::MonoNanos back = 0;  // not fitting: when a request may test it
  };
  Outlook outlook(std::int64_t cost, base::MonoNanos now, ClassReserve cls) const;
  // How long until the limiter gives room back, as far as is known: soon where a refill rate was
  // learned; else the reset it named, the next boundary its 429s or its reports' jumps taught,
  // or the next echo of smartlb's own sends, whichever comes first; at least kReserveHorizon.
  // Nothing known: a third of the time the limit has been low with nothing come back (its first
  // window is at least that long), else kReserveHorizon.
  base::Nanos room_back_in(const Limit& l, base::MonoNanos now) const;
  // What a lower class leaves for the classes above it, at each limit (the tokens and the
  // requests they ask per second: `cls`). Once a sliding window's echo of smartlb's own
  // sends is learned: the demand that what those sends give back does not cover, over the whole
  // window ahead (demand_shortfall, as for a declared window). A window that gives back little
  // later -- a gap in which it refused them a window ago -- is kept for them ahead of time; the
  // next refill alone as the horizon let a lower class take room that the classes above then
  // missed in that gap, window after window. Else their demand until room comes back.
  struct Reserves {
    std::int64_t tokens = 0, requests = 0;
  };
  Reserves class_reserves(base::MonoNanos now, ClassReserve cls) const;
  // The first learned boundary after `t` (kNever: none known).
  base::MonoNanos next_boundary(base::MonoNanos t) const {
    return next_of(boundary_.load(std::memory_order_relaxed), period_.load(std::memory_order_relaxed), t);
  }
  // Learns a boundary seen at `at` into `last` and `period` (the gap between two, or the smaller
  // period that divides it); the first after `t` by them (kNever: none known).
  static void learn_boundary(std::atomic<base::MonoNanos>& last, std::atomic<std::int64_t>& period,
                             base::MonoNanos at);
  static base::MonoNanos next_of(base::MonoNanos last, std::int64_t period, base::MonoNanos t);
  // 429s whose boundaries are closer than this name the same one.
  static constexpr base::Nanos kMinPeriod = std::chrono::milliseconds(100);

  std::atomic<bool> watched_{false};
  // Some answer (or another replica) reported here: a deployment whose answers report nothing
  // remembers its sends for the echo before it is watched (observe).
  std::atomic<bool> reported_{false};
  std::atomic<std::int64_t> sent_tokens_{0}, sent_requests_{0};
  std::atomic<base::MonoNanos> reported_at_{0};  // when the last report's request left
  // When the last report's answer came. The limiter read the report somewhere between the
  // request's leaving and its answer, and what left the window meanwhile may be in it already:
  // what a lower class leaves the classes above counts the echo from here (pool_share). (Where
  // sends follow evenly spaced arrivals, a window's echo comes in step with them, and such a
  // refill, counted twice, was a request of room that was not there. Counted from here for
  // every class, it refused requests of the first class that the backend would have taken.)
  std::atomic<base::MonoNanos> echo_from_{0};
  std::atomic<base::MonoNanos> confirmed_at_{0};   // an answer without a report, as predicted, left then
  std::atomic<base::MonoNanos> probe_until_{0};    // a probe is out until then
  std::atomic<base::MonoNanos> retry_at_{0};       // a 429's Retry-After ends then (0: none since the report)
  std::atomic<base::MonoNanos> backend_retry_{0};  // the last 429's Retry-After ends then
  // A jumping limiter's boundaries, from 429s: the latest and the period (0: not known).
  std::atomic<base::MonoNanos> boundary_{0};
  std::atomic<std::int64_t> period_{0};
  Limit tokens_, requests_;

  mutable std::mutex mutex_;  // reports (and a lower class's look at the echo: class_reserves)
  base::MonoNanos last_sent_ = std::numeric_limits<base::MonoNanos>::min();
  // A sliding window's refills, the echo of smartlb's own sends (RefillEcho, under the mutex),
  // and what it says comes back after the last report: the next kEchoes moments, with what has
  // come back by each in all (read without the lock: a torn read costs one early or late probe).
  RefillEcho echo_;
  static constexpr std::size_t kEchoes = 8;
  std::atomic<std::size_t> echo_count_{0};
  std::atomic<bool> echo_known_{false};  // a window is learned: class_reserves looks at the echo
  std::atomic<base::MonoNanos> echo_at_[kEchoes] = {};
  std::atomic<std::int64_t> echo_tokens_[kEchoes] = {}, echo_requests_[kEchoes] = {};
  void publish_echoes(base::MonoNanos reported_at);  // under the mutex
  // Under the mutex: a report (own or shared) from a request sent at `sent` is the latest.
  int settle(base::MonoNanos sent, bool low, base::MonoNanos answered = 0);
  void probe_answered(base::MonoNanos sent);  // under the mutex
  // An answer that reported nothing, from a deployment whose reports are watched (under the
  // mutex): a 429 is a report of nothing left; a request taken where the report left no room
  // makes that report stale.
  int refused_unreported(base::MonoNanos sent);
  int took_unreported(base::MonoNanos sent, Mark mark);
  // Under the mutex: the latest report another replica shared (0: none). Within kPeersQuietFor
  // of one, other replicas are known to send here too.
  base::MonoNanos peer_report_at_ = 0;
  static constexpr base::Nanos kPeersQuietFor = std::chrono::minutes(1);
  // Blind: a 429, and an answer taken (under the mutex).
  int refused_blind(base::MonoNanos sent, Mark mark);
  int took_blind(base::MonoNanos sent, Mark mark);
  std::atomic<bool> blind_{false};
  std::atomic<base::MonoNanos> probe_cap_{0};  // blind: a target short by the echo may be probed then
  base::Nanos probe_gap_ = kMaxFresh;          // under the mutex
  base::MonoNanos blind_at_ = 0;               // under the mutex: the last 429's request left then
  // Blind, a token bucket (BlindBucket, under the mutex): the last 429's request, waiting for
  // its Retry-After (retry_at), and what the request path reads. While `bucket_at_` is set,
  // tokens_.base is the bucket's level then plus smartlb's sends by then, and the refill since
  // (`bucket_rate_` per nanosecond, less before) is room too.
  std::unique_ptr<BlindBucket> bucket_;  // made at the first blind 429 with a Retry-After
  struct Refused {
    base::MonoNanos sent = 0;
    std::int64_t cost = 0, taken = 0;
  };
  std::optional<Refused> refused_;  // under the mutex
  std::atomic<base::MonoNanos> bucket_at_{0};
  std::atomic<double> bucket_rate_{0};
  void publish_bucket(base::MonoNanos retry);  // under the mutex: from a 429 whose room returns then
  void store_bucket();                         // under the mutex: the anchor and rate, for the request path
  void drop_bucket() { bucket_at_.store(0, std::memory_order_relaxed); }
  std::int64_t bucket_credit(base::MonoNanos now) const;
};

}  // namespace smartlb::routing
