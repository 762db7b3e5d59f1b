#include "smartlb/routing/reported_budget.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "smartlb/routing/blind_bucket.hpp"

namespace smartlb::routing {

ReportedBudget::ReportedBudget() = default;
ReportedBudget::~ReportedBudget() = default;

ReportedBudget::Mark ReportedBudget::charge(std::int64_t cost) {
  if (!watched()) {
    return {sent_tokens_.load(std::memory_order_relaxed), sent_requests_.load(std::memory_order_relaxed), 0,
            0, cost};
  }
  return {sent_tokens_.fetch_add(cost, std::memory_order_relaxed) + cost,
          sent_requests_.fetch_add(1, std::memory_order_relaxed) + 1, cost, 1, cost};
}

std::optional<ReportedBudget::Limit::Sample> ReportedBudget::Limit::learn(std::int64_t base_now,
                                                                          base::MonoNanos at) {
  const base::Nanos gap(at - baseline_at);
  if (gap < kMinSampleGap) return std::nullopt;  // measured later, from this baseline
  // What came back beyond our own sends (less, if someone else spent some: never below 0).
  const std::int64_t back = std::max<std::int64_t>(base_now - baseline, 0);
  const double foretold = rate.load(std::memory_order_relaxed) * static_cast<double>(gap.count());
  borne_out = foretold > 0 && std::abs(static_cast<double>(back) - foretold) <= std::max(foretold / 4, 2.0)
                  ? std::min(borne_out + 1, kBorneOut)
                  : 0;
  if (back > 0) low_since.store(kNever, std::memory_order_relaxed);
  if (back * 4 <= cap.load(std::memory_order_relaxed)) {
    const double decay =
        std::exp2(-static_cast<double>(gap.count()) / static_cast<double>(kRateHalfLife.count()));
    refilled = refilled * decay + static_cast<double>(back);
    over = over * decay + static_cast<double>(gap.count());
    rate.store(refilled / over, std::memory_order_relaxed);
  }
  const Sample sample{baseline_at, at, back};
  baseline = base_now;
  baseline_at = at;
  return sample;
}

std::optional<ReportedBudget::Limit::Sample> ReportedBudget::Limit::take(
    std::optional<std::int64_t> remaining, std::int64_t mark, base::MonoNanos sent,
    std::optional<std::chrono::milliseconds> reset, bool low, bool counted) {
  if (!remaining) {  // this answer says nothing of this limit
    base.store(kNone, std::memory_order_relaxed);
    reset_at.store(0, std::memory_order_relaxed);
    baseline = kNone;
    return std::nullopt;
  }
  if (*remaining > cap.load(std::memory_order_relaxed)) cap.store(*remaining, std::memory_order_relaxed);
  const std::int64_t base_now = *remaining + mark;
  std::optional<Sample> sample;
  if (counted && baseline != kNone) {
    const base::MonoNanos since = low_since.load(std::memory_order_relaxed);
    sample = learn(base_now, sent);
    // A jump: much came back at once, and at least half the limit is free (a window that
    // started again). Much coming back into a window still short -- a sliding window another
    // replica also fills, seen by one that sends little -- is none: taken for one, it would hold
    // a batch replica's reserve for a made-up period.
    const std::int64_t most = cap.load(std::memory_order_relaxed);
    if (sample && sample->back * 4 > most && *remaining * 2 >= most) {
      if (jumped_at.load(std::memory_order_relaxed) == 0 && since != 0 && since < sent)
        first_window.store(sent - since, std::memory_order_relaxed);
      learn_boundary(jumped_at, jump_period, sent);  // somewhere since the sample's start
    }
  } else {
    baseline = base_now;
    baseline_at = sent;
  }
  base.store(low ? base_now : kNone, std::memory_order_relaxed);
  // A reset of 0 beside nothing left contradicts itself: no hint.
  reset_at.store(low && reset && reset->count() > 0 ? sent + base::Nanos(*reset).count() : 0,
                 std::memory_order_relaxed);
  if (!low) {
    baseline = kNone;  // sends are not counted while the budget is plentiful
    low_since.store(0, std::memory_order_relaxed);
  } else if (low_since.load(std::memory_order_relaxed) == 0) {
    low_since.store(sent, std::memory_order_relaxed);
  }
  return sample;
}

void ReportedBudget::publish_echoes(base::MonoNanos reported_at) {
  const auto refills = echo_.refills_after(reported_at, kEchoes);
  for (std::size_t k = 0; k < refills.size(); ++k) {
    echo_at_[k].store(refills[k].at, std::memory_order_relaxed);
    echo_tokens_[k].store(refills[k].tokens, std::memory_order_relaxed);
    echo_requests_[k].store(refills[k].requests, std::memory_order_relaxed);
  }
  echo_count_.store(refills.size(), std::memory_order_relaxed);
  echo_known_.store(echo_.window().has_value(), std::memory_order_relaxed);
}

int ReportedBudget::observe(const RateLimitReport& r, base::MonoNanos sent, Mark mark, bool taken,
                            base::MonoNanos answered) {
  if (taken && mark.own_requests > 0) {  // counted, and taken: it will echo a window later
    std::lock_guard lock(mutex_);
    echo_.sent(sent, mark.own_tokens);
  }
  if (!taken) {
    // Refused: it took nothing there. (A refill would otherwise seem to have brought its cost
    // back, and a rate learned from it would promise room that never comes.)
    sent_tokens_.fetch_sub(mark.own_tokens, std::memory_order_relaxed);
    sent_requests_.fetch_sub(mark.own_requests, std::memory_order_relaxed);
    mark.tokens -= mark.own_tokens;
    mark.requests -= mark.own_requests;
  }
  if (r.empty()) {
    const bool blind = blind_.load(std::memory_order_relaxed);
    // A deployment whose reports are watched is no blind one (one answer without them says less).
    if (!taken) return blind || !watched() ? refused_blind(sent, mark) : refused_unreported(sent);
    if (mark.own_requests == 0) {
      // Not counted (nothing watched yet): remembered where nothing was ever reported, as the
      // first 429 there names the end of the first sends' window.
      if (!reported_.load(std::memory_order_relaxed)) {
        std::lock_guard lock(mutex_);
        echo_.sent(sent, mark.cost);
      }
      return 0;
    }
    return blind ? took_blind(sent, mark) : took_unreported(sent, mark);
  }
  const bool low = is_low(r);
  reported_.store(true, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  // Sent before watching began, taken, and its report is low: its echo comes a window later
  // like any other's. (The first 429 of a sliding window names the end of the first sends'
  // window: without them, no lag it suggests is the window.) The daemon estimates no cost while
  // nothing is watched: then its moment is remembered without its tokens, and the window is
  // counted as giving back that much less.
  if (taken && low && mark.own_requests == 0) echo_.sent(sent, mark.cost);
  if (sent < last_sent_) return 0;  // an answer to an older request than one already taken
  last_sent_ = sent;
  blind_.store(false, std::memory_order_relaxed);
  drop_bucket();
  const bool was = watched_.load(std::memory_order_relaxed);
  if (const auto refill = tokens_.take(r.remaining_tokens, mark.tokens, sent, r.reset_tokens, low, was))
    echo_.refilled(refill->from, refill->to, refill->back);
  requests_.take(r.remaining_requests, mark.requests, sent, r.reset_requests, low, was);
  return settle(sent, low, answered);
}

int ReportedBudget::observe_shared(const RateLimitReport& r, base::MonoNanos sent) {
  if (r.empty()) return 0;
  reported_.store(true, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  peer_report_at_ = std::max(peer_report_at_, sent);
  if (sent < last_sent_) return 0;
  last_sent_ = sent;
  blind_.store(false, std::memory_order_relaxed);
  drop_bucket();
  const bool low = is_low(r);
  // The standing only (Limit::take would take it as a refill sample, or reset the baseline).
  const auto stand_at = [&](Limit& l, std::optional<std::int64_t> remaining, std::int64_t mark,
                            std::optional<std::chrono::milliseconds> reset) {
    if (!remaining) return;
    if (*remaining > l.cap.load(std::memory_order_relaxed))
      l.cap.store(*remaining, std::memory_order_relaxed);
    l.base.store(low ? *remaining + mark : kNone, std::memory_order_relaxed);
    l.reset_at.store(low && reset && reset->count() > 0 ? sent + base::Nanos(*reset).count() : 0,
                     std::memory_order_relaxed);
  };
  stand_at(tokens_, r.remaining_tokens, sent_tokens_.load(std::memory_order_relaxed), r.reset_tokens);
  stand_at(requests_, r.remaining_requests, sent_requests_.load(std::memory_order_relaxed), r.reset_requests);
  return settle(sent, low);
}

void ReportedBudget::probe_answered(base::MonoNanos sent) {
  // The answer to a probe (or to anything sent since it left) is the observation it was sent
  // for: the next probe need not wait for the probe's time to run out.
  const base::MonoNanos probe_until = probe_until_.load(std::memory_order_relaxed);
  if (probe_until != 0 && sent >= probe_until - kFreshFor.count())
    probe_until_.store(0, std::memory_order_relaxed);
}

int ReportedBudget::settle(base::MonoNanos sent, bool low, base::MonoNanos answered) {
  const bool was = watched_.load(std::memory_order_relaxed);
  reported_at_.store(sent, std::memory_order_relaxed);
  echo_from_.store(std::max(sent, answered), std::memory_order_relaxed);
  publish_echoes(sent);
  // A report from a request that left after a 429's Retry-After ended supersedes it.
  if (const base::MonoNanos retry = retry_at_.load(std::memory_order_relaxed); retry != 0 && sent >= retry)
    retry_at_.store(0, std::memory_order_relaxed);
  probe_answered(sent);
  watched_.store(low, std::memory_order_relaxed);
  return static_cast<int>(low) - static_cast<int>(was);
}

int ReportedBudget::refused_unreported(base::MonoNanos sent) {
  std::lock_guard lock(mutex_);
  if (sent >= last_sent_) probe_answered(sent);  // the report still stands
  return 0;
}

int ReportedBudget::took_unreported(base::MonoNanos sent, Mark mark) {
  std::lock_guard lock(mutex_);
  if (sent < last_sent_) return 0;
  // What the limiter gave back since the report's request left, as far as was learned (its
  // refill rate; tokens: the echo of smartlb's own sends), when this replica is the only one
  // known to send there: another replica's sends take from the same refill, uncounted here.
  const base::MonoNanos at = reported_at_.load(std::memory_order_relaxed);
  const bool alone = peer_report_at_ == 0 || sent - peer_report_at_ > kPeersQuietFor.count();
  const auto beyond = [&](const Limit& l, std::int64_t sent_so_far, std::int64_t echoed) {
    const std::int64_t base = l.base.load(std::memory_order_relaxed);
    if (base == kNone) return false;
    if (!alone) return base - sent_so_far < 0;
    const double refilled = l.rate.load(std::memory_order_relaxed) * static_cast<double>(sent - at);
    return base - sent_so_far + echoed + static_cast<std::int64_t>(std::min(refilled, 1e15)) < 0;
  };
  // Taken where the last report (and what came back since, as learned) left no room: that report
  // no longer describes the limiter, and this answer brought none. Nothing is known until the
  // next. Taken within what came back: the report, and its refill, still stand, and a probe has
  // its answer (else, where half the answers report nothing, each probe's unreported answer
  // would open the target to a flood until the next report).
  if (!beyond(tokens_, mark.tokens, alone ? echo_.refilled_between(at, sent) : 0) &&
      !beyond(requests_, mark.requests, 0)) {
    if (alone) {
      probe_answered(sent);
      // Only a refill its reports have borne out: a sliding window's learned rate is an average
      // of bursts, and holding its target to it past kMaxFresh served less than not.
      if (!echo_.window() && tokens_.refill_borne_out() && requests_.refill_borne_out())
        confirmed_at_.store(sent, std::memory_order_relaxed);
    }
    return 0;
  }
  last_sent_ = sent;
  for (Limit* l : {&tokens_, &requests_}) {
    l->base.store(kNone, std::memory_order_relaxed);
    l->reset_at.store(0, std::memory_order_relaxed);
    l->baseline = kNone;
  }
  return settle(sent, false);
}

int ReportedBudget::refused_blind(base::MonoNanos sent, Mark mark) {
  std::lock_guard lock(mutex_);
  if (sent < last_sent_) return 0;
  last_sent_ = sent;
  const bool was = watched_.load(std::memory_order_relaxed);
  blind_.store(true, std::memory_order_relaxed);
  blind_at_ = sent;
  // Its sends are counted from now on, so that the echo can be learned from them.
  watched_.store(true, std::memory_order_relaxed);
  probe_answered(sent);
  requests_.base.store(kNone, std::memory_order_relaxed);
  tokens_.reset_at.store(0, std::memory_order_relaxed);
  const bool held = tokens_.base.load(std::memory_order_relaxed) != kNone;
  const bool bucket = bucket_at_.load(std::memory_order_relaxed) != 0;
  drop_bucket();
  refused_.reset();
  if (mark.own_requests > 0) refused_ = Refused{sent, mark.own_tokens, mark.tokens};
  if (!echo_.covers(sent)) {
    // Nothing predicts the room but, once its Retry-After comes (retry_at), a bucket's refill.
    // A probe the level said would not fit, refused: the level was right.
    if (bucket) {
      const bool right = held && bucket_->level(sent, mark.tokens) < mark.own_tokens;
      probe_gap_ = right ? std::min<base::Nanos>(2 * probe_gap_, kMaxProbeGap) : kMaxFresh;
    }
    tokens_.base.store(kNone, std::memory_order_relaxed);
    return was ? 0 : 1;
  }
  // A probe that found nothing (or any 429 while the echo held): the echo was right.
  probe_gap_ = held ? std::min<base::Nanos>(2 * probe_gap_, kMaxProbeGap) : kMaxFresh;
  probe_cap_.store(sent + probe_gap_.count(), std::memory_order_relaxed);
  tokens_.base.store(mark.tokens, std::memory_order_relaxed);  // nothing left when it arrived
  reported_at_.store(sent, std::memory_order_relaxed);
  echo_from_.store(sent, std::memory_order_relaxed);
  publish_echoes(sent);
  return was ? 0 : 1;
}

int ReportedBudget::took_blind(base::MonoNanos sent, Mark mark) {
  std::lock_guard lock(mutex_);
  if (sent < last_sent_) return 0;
  const std::int64_t base = tokens_.base.load(std::memory_order_relaxed);
  if (bucket_) {
    // Each request taken checks the bucket's rate (and raises a level that said it would not fit).
    const base::MonoNanos anchored = bucket_->anchor_at();
    bucket_->taken(sent, mark.own_tokens, mark.tokens - mark.own_tokens);
    if (base != kNone && bucket_at_.load(std::memory_order_relaxed) != 0) {
      if (!bucket_->known()) {  // no bucket after all: cooldowns only
        drop_bucket();
        tokens_.base.store(kNone, std::memory_order_relaxed);
        probe_gap_ = kMaxFresh;
      } else if (bucket_->anchor_at() != anchored) {
        store_bucket();
      }
      return 0;
    }
  }
  if (base == kNone) {
    if (sent - blind_at_ < kForgetBlind.count()) return 0;
    blind_.store(false, std::memory_order_relaxed);  // long without a 429: stop counting
    watched_.store(false, std::memory_order_relaxed);
    return -1;
  }
  last_sent_ = sent;
  const base::MonoNanos at = reported_at_.load(std::memory_order_relaxed);
  const std::int64_t left = base - mark.tokens + echo_.refilled_between(at, sent);
  // Taken beyond what the echo gave back: it does not describe this limiter (or no longer
  // remembers all the sends it would need).
  if (left < 0 || !echo_.covers(at)) {
    tokens_.base.store(kNone, std::memory_order_relaxed);
    probe_gap_ = kMaxFresh;
    return 0;
  }
  // As predicted: the prediction is the report of what was left when it arrived.
  tokens_.base.store(left + mark.tokens, std::memory_order_relaxed);
  return settle(sent, true);
}

ReportedBudget::Standing ReportedBudget::stand(const Limit& l, std::int64_t sent, std::int64_t need,
                                               base::MonoNanos reported_at, base::MonoNanos now,
                                               const std::atomic<std::int64_t>* echo, std::int64_t credit,
                                               double bucket_rate) const {
  Standing s;
  const std::int64_t base = l.base.load(std::memory_order_relaxed);
  if (base == kNone) return s;
  const base::MonoNanos reset = l.reset_at.load(std::memory_order_relaxed);
  if (reset != 0 && now >= reset) return s;  // the backend said it would be full again by now
  const std::int64_t left = base - sent + credit;
  if (left >= need) return s;
  s.short_now = true;
  s.refill_at = reset != 0 ? reset : kNever;
  if (bucket_rate > 0) {  // a blind bucket: its refill says when
    s.refill_at = now + static_cast<base::MonoNanos>(
                            std::ceil(std::min(static_cast<double>(need - left) / bucket_rate, 1e15)));
    return s;
  }
  // A sliding window's echo of smartlb's own sends says when exactly; else the learned rate.
  const std::size_t echoes = echo_count_.load(std::memory_order_relaxed);
  for (std::size_t k = 0; k < echoes; ++k)
    if (echo[k].load(std::memory_order_relaxed) >= need - left) {
      s.refill_at = std::min(s.refill_at, echo_at_[k].load(std::memory_order_relaxed));
      return s;
    }
  const double rate = l.rate.load(std::memory_order_relaxed);
  if (rate > 0 && need <= l.cap.load(std::memory_order_relaxed)) {
    const double wait = static_cast<double>(need - left) / rate;
    if (wait < 1e15)
      s.refill_at = std::min(s.refill_at, reported_at + static_cast<base::MonoNanos>(std::ceil(wait)));
  }
  return s;
}

base::Nanos ReportedBudget::room_back_in(const Limit& l, base::MonoNanos now) const {
  if (l.rate.load(std::memory_order_relaxed) > 0) return kReserveHorizon;  // a refill: room comes back soon
  base::MonoNanos back = kNever;
  if (const base::MonoNanos reset = l.reset_at.load(std::memory_order_relaxed); reset > now) back = reset;
  if (const base::MonoNanos boundary = next_boundary(now); boundary > now) back = std::min(back, boundary);
  // A window that jumps back: its next jump, by the period two taught or, after the first, as
  // long again as the limit was low before it.
  std::int64_t period = l.jump_period.load(std::memory_order_relaxed);
  if (period == 0) period = l.first_window.load(std::memory_order_relaxed);
  if (const base::MonoNanos jump = next_of(l.jumped_at.load(std::memory_order_relaxed), period, now);
      jump > now)
    back = std::min(back, jump);
  // The next echo of smartlb's own sends (a sliding window gives them back a window later).
  for (std::size_t k = 0, n = echo_count_.load(std::memory_order_relaxed); k < n && k < kEchoes; ++k)
    if (const base::MonoNanos at = echo_at_[k].load(std::memory_order_relaxed); at > now) {
      back = std::min(back, at);
      break;
    }
  if (back != kNever) return std::max(kReserveHorizon, base::Nanos(back - now));
  // Nothing says when. Measured: with kReserveHorizon alone, a lower class took a first window
  // down to nothing, and the classes above were refused from there to its end, then again each
  // window after, where that gap came round. A third of the time the limit has been low: with
  // half the demand above, a lower class is held back in a first window only above 93 % of the
  // limit (at half the time, 80 %: never refused where the backend had room).
  const base::MonoNanos since = l.low_since.load(std::memory_order_relaxed);
  if (since == 0 || since == kNever || since >= now) return kReserveHorizon;
  return std::max(kReserveHorizon, base::Nanos((now - since) / 3));
}

ReportedBudget::Reserves ReportedBudget::class_reserves(base::MonoNanos now, ClassReserve cls) const {
  const std::int64_t token_cap = tokens_.cap.load(std::memory_order_relaxed);
  const std::int64_t request_cap = requests_.cap.load(std::memory_order_relaxed);
  if (echo_known_.load(std::memory_order_relaxed) &&
      (cls.tokens_per_second > 0 || cls.requests_per_second > 0)) {
    static thread_local std::vector<WindowRelease> token_releases, request_releases;
    token_releases.clear();
    request_releases.clear();
    std::optional<base::Nanos> window;
    {
      std::lock_guard lock(mutex_);
      // Only while every send whose echo is still to come is remembered: else what comes back
      // would be missing some, and the reserve too large.
      if (echo_.covers(now)) {
        window = echo_.window();
        echo_.releases_after(now, token_releases, request_releases);
      }
    }
    if (window) {
      const auto shortfall = [&](const std::vector<WindowRelease>& releases, double per_second,
                                 std::int64_t cap) {
        const std::int64_t least = reserve_amount(cls, per_second, kReserveHorizon, cap);
        return reserve_capped(cls, demand_shortfall(releases, per_second, least, *window), cap);
      };
      return {shortfall(token_releases, cls.tokens_per_second, token_cap),
              shortfall(request_releases, cls.requests_per_second, request_cap)};
    }
  }
  return {reserve_amount(cls, cls.tokens_per_second, room_back_in(tokens_, now), token_cap),
          reserve_amount(cls, cls.requests_per_second, room_back_in(requests_, now), request_cap)};
}

bool ReportedBudget::pool_share(base::MonoNanos now, PoolShare& share,
                                std::vector<WindowRelease>& token_releases,
                                std::vector<WindowRelease>& request_releases) const {
  if (!watched() || !echo_known_.load(std::memory_order_relaxed)) return false;
  std::lock_guard lock(mutex_);
  const std::int64_t tokens = tokens_.base.load(std::memory_order_relaxed);
  const std::int64_t requests = requests_.base.load(std::memory_order_relaxed);
  const std::optional<base::Nanos> window = echo_.window();
  if (tokens == kNone || !window || !echo_.covers(now)) return false;
  share.window = *window;
  const base::MonoNanos from = echo_from_.load(std::memory_order_relaxed);
  share.tokens_left =
      tokens - sent_tokens_.load(std::memory_order_relaxed) + echo_.refilled_between(from, now);
  share.tokens_limit = tokens_.cap.load(std::memory_order_relaxed);
  share.requests_known = requests != kNone;
  if (share.requests_known) {
    share.requests_left =
        requests - sent_requests_.load(std::memory_order_relaxed) + echo_.sends_between(from, now);
    share.requests_limit = requests_.cap.load(std::memory_order_relaxed);
  }
  echo_.releases_after(now, token_releases, request_releases);
  return true;
}

ReportedBudget::Outlook ReportedBudget::outlook(std::int64_t cost, base::MonoNanos now,
                                                ClassReserve cls) const {
  if (!watched()) return {};
  const base::MonoNanos at = reported_at_.load(std::memory_order_relaxed);
  // A lower class leaves the demand of the classes above until room comes back, at most its
  // share of the most ever reported (the limit, as near as the reports tell it).
  std::int64_t tokens_need = std::max<std::int64_t>(cost, 1), requests_need = 1;
  if (cls.any() && !cls.reports_checked) {
    const Reserves reserve = class_reserves(now, cls);
    tokens_need = with_reserve(tokens_need, tokens_.cap.load(std::memory_order_relaxed), reserve.tokens);
    requests_need =
        with_reserve(requests_need, requests_.cap.load(std::memory_order_relaxed), reserve.requests);
  }
  const bool bucket = bucket_at_.load(std::memory_order_relaxed) != 0;
  const Standing t =
      stand(tokens_, sent_tokens_.load(std::memory_order_relaxed), tokens_need, at, now, echo_tokens_,
            bucket_credit(now), bucket ? bucket_rate_.load(std::memory_order_relaxed) : 0);
  const Standing r = stand(requests_, sent_requests_.load(std::memory_order_relaxed), requests_need, at, now,
                           echo_requests_);
  if (!t.short_now && !r.short_now) return {};
  base::MonoNanos back = std::max(t.short_now ? t.refill_at : 0, r.short_now ? r.refill_at : 0);
  if (blind_.load(std::memory_order_relaxed)) {
    // Short by the echo alone: tested when it says, and no later than the probe gap allows.
    back = std::min(back, probe_cap_.load(std::memory_order_relaxed));
  } else {
    back = guessed_back(back, at);
  }
  // A 429 said when the backend would take a request again: no later than that. (A blind
  // bucket's level holds that 429's request then, and counts the sends since.)
  if (const base::MonoNanos retry = retry_at_.load(std::memory_order_relaxed); retry != 0 && !bucket)
    back = std::min(back, retry);
  return {false, back};
}

base::MonoNanos ReportedBudget::guessed_back(base::MonoNanos back, base::MonoNanos at) const {
  // Nothing predicts it (no rate: a limiter that jumps, or nothing learned yet): the horizon
  // the probes' answers taught.
  if (back == kNever) {
    const base::MonoNanos boundary = next_boundary(at);
    back = boundary != kNever ? boundary : at + kFreshFor.count();
  }
  // No guess holds a target back longer than kMaxFresh after what last bore it out: the report,
  // or an answer without one taken as the refill foretold (where half the answers report -1, a
  // report stands that long; a probe at its kMaxFresh, where the refill said the cost was not
  // back yet, was refused).
  const base::MonoNanos confirmed =
      std::clamp(confirmed_at_.load(std::memory_order_relaxed), at, at + kMaxConfirmed.count());
  return std::min(back, confirmed + kMaxFresh.count());
}

ReportedBudget::Room ReportedBudget::room(std::int64_t cost, base::MonoNanos now, ClassReserve cls) const {
  const Outlook o = outlook(cost, now, cls);
  if (o.fits) return Room::Fits;
  return now >= o.back ? Room::Probe : Room::Confirmed;
}

bool ReportedBudget::claim_probe(base::MonoNanos now) {
  base::MonoNanos until = probe_until_.load(std::memory_order_relaxed);
  while (until <= now)
    if (probe_until_.compare_exchange_weak(until, now + kFreshFor.count(), std::memory_order_relaxed)) {
      return true;
    }
  return false;
}

void ReportedBudget::probe_elsewhere(base::MonoNanos until) {
  base::MonoNanos was = probe_until_.load(std::memory_order_relaxed);
  while (was < until && !probe_until_.compare_exchange_weak(was, until, std::memory_order_relaxed)) {
  }
}

std::int64_t ReportedBudget::bucket_credit(base::MonoNanos now) const {
  const base::MonoNanos at = bucket_at_.load(std::memory_order_relaxed);
  if (at == 0) return 0;
  const double credit = bucket_rate_.load(std::memory_order_relaxed) * static_cast<double>(now - at);
  return static_cast<std::int64_t>(std::floor(std::clamp(credit, -1e15, 1e15)));
}

void ReportedBudget::store_bucket() {
  tokens_.base.store(bucket_->anchor_level() + bucket_->anchor_taken(), std::memory_order_relaxed);
  bucket_rate_.store(bucket_->rate(), std::memory_order_relaxed);
  bucket_at_.store(bucket_->anchor_at(), std::memory_order_relaxed);
}

void ReportedBudget::publish_bucket(base::MonoNanos retry) {
  if (!bucket_->known()) return;
  store_bucket();
  probe_cap_.store(retry + probe_gap_.count(), std::memory_order_relaxed);
}

void ReportedBudget::retry_at(base::MonoNanos at) {
  retry_at_.store(at, std::memory_order_relaxed);
  backend_retry_.store(at, std::memory_order_relaxed);
  std::lock_guard lock(mutex_);
  // A blind 429's Retry-After: a moment a token bucket holds the refused request's cost.
  if (refused_ && blind_.load(std::memory_order_relaxed) && refused_->sent == last_sent_) {
    if (!bucket_) bucket_ = std::make_unique<BlindBucket>();
    bucket_->refused(refused_->sent, at, refused_->cost, refused_->taken);
    if (!echo_.covers(refused_->sent)) publish_bucket(at);
    refused_.reset();
  }
  const bool knew = echo_.window().has_value();
  echo_.room_at(at, blind_.load(std::memory_order_relaxed));
  if (knew || echo_.window()) publish_echoes(reported_at_.load(std::memory_order_relaxed));
  learn_boundary(boundary_, period_, at);
}

void ReportedBudget::learn_boundary(std::atomic<base::MonoNanos>& last, std::atomic<std::int64_t>& period,
                                    base::MonoNanos at) {
  const base::MonoNanos before = last.load(std::memory_order_relaxed);
  // 429s (or reports) that crossed one another name the same boundary, give or take their
  // round trips.
  const std::int64_t gap = at - before;
  if (before != 0 && gap < kMinPeriod.count()) return;
  last.store(at, std::memory_order_relaxed);
  if (before == 0) return;
  // The period is the gap between two boundaries, or the smaller period that divides it (a
  // window passed without one seen).
  const std::int64_t known = period.load(std::memory_order_relaxed);
  if (known == 0 || gap < known - known / 20) {
    period.store(gap, std::memory_order_relaxed);
    return;
  }
  const std::int64_t off = gap % known;
  if (std::min(off, known - off) > known / 20) period.store(gap, std::memory_order_relaxed);  // contradicted
}

base::MonoNanos ReportedBudget::next_of(base::MonoNanos last, std::int64_t period, base::MonoNanos t) {
  if (last == 0) return kNever;
  if (t < last) return last;
  if (period <= 0) return kNever;
  return last + ((t - last) / period + 1) * period;
}

base::MonoNanos ReportedBudget::back_at(std::int64_t cost, base::MonoNanos now, ClassReserve cls) const {
  const Outlook o = outlook(cost, now, cls);
  return o.fits ? now : o.back;
}

base::MonoNanos ReportedBudget::next_chance(std::int64_t cost, base::MonoNanos now, ClassReserve cls) const {
  const Outlook o = outlook(cost, now, cls);
  if (o.fits) return now;
  return std::max({now, o.back, probe_until_.load(std::memory_order_relaxed)});
}

ReportedBudget::View ReportedBudget::view() const {
  View v;
  v.watched = watched();
  v.tokens_per_second = tokens_.rate.load(std::memory_order_relaxed) * 1e9;
  v.requests_per_second = requests_.rate.load(std::memory_order_relaxed) * 1e9;
  v.reported_at = reported_at_.load(std::memory_order_relaxed);
  if (!v.watched) return v;
  const std::int64_t tokens = tokens_.base.load(std::memory_order_relaxed);
  const std::int64_t requests = requests_.base.load(std::memory_order_relaxed);
  if (tokens != kNone) v.tokens_left = tokens - sent_tokens_.load(std::memory_order_relaxed);
  if (requests != kNone) v.requests_left = requests - sent_requests_.load(std::memory_order_relaxed);
  return v;
}

}  // namespace smartlb::routing
