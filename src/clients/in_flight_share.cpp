#include "smartlb/clients/in_flight_share.hpp"

#include <algorithm>

namespace smartlb::clients {

void InFlightShare::set_shared(bool shared, std::size_t live_replicas) {
  shared_ = shared;
  replicas_ = std::max<std::size_t>(live_replicas, 1);
  // What the store held for this replica is unknown again (it may have expired meanwhile): the
  // next ask says what is in use, and the store grants at least that.
  lease_ = others_ = 0;
  asking_ = denied_ = failed_ = false;
  renew_at_ = 0;
  ++generation_;  // an ask still out answers for a lease this replica no longer counts on
}

std::int64_t InFlightShare::allowed(std::int64_t cap) const {
  const std::int64_t local = std::max<std::int64_t>(1, cap / static_cast<std::int64_t>(replicas_));
  if (!shared_ || failed_) return local;
  return std::min(lease_, cap);
}

std::int64_t InFlightShare::in_flight_everywhere(std::int64_t in_use, std::int64_t cap) const {
  if (!shared_) return in_use;
  // The others' leases fill the cap at most; this replica's own are counted whatever the cap (a
  // reload may have lowered it under them).
  return std::max(in_use, std::min(cap, in_use + others_));
}

InFlightShare::Ask InFlightShare::send(std::int64_t in_use, std::int64_t want, std::int64_t cap) {
  // Giving back takes effect here at once: what is admitted while the ask is out stays within
  // what the store will hold for this replica.
  lease_ = std::min(lease_, std::max(want, in_use));
  short_ = 0;
  asking_ = true;
  return {in_use, want, cap, generation_};
}

InFlightShare::Verdict InFlightShare::take(std::int64_t in_use, std::int64_t cap, std::optional<Ask>& ask,
                                           bool waiting) {
  if (in_use >= cap) return Verdict::Refuse;  // no lease can hold more
  if (in_use < allowed(cap)) return Verdict::Admit;
  if (!shared_ || failed_) return Verdict::Refuse;  // the local share is all there is
  // Told "no" since the last tick: the cap is reached elsewhere. No round trip per refused
  // request: asks go out again after the tick.
  if (denied_) return Verdict::Refuse;
  if (!waiting) ++short_;  // once per request, not at each of its looks
  if (asking_) return Verdict::Wait;
  // One slot more for each request that began waiting since the last ask (this one at least).
  ask = send(in_use, std::min(cap, in_use + std::max<std::int64_t>(short_, 1)), cap);
  return Verdict::Wait;
}

std::optional<InFlightShare::Ask> InFlightShare::tick(std::int64_t in_use, std::int64_t cap,
                                                      base::MonoNanos now) {
  if (!shared_ || asking_) return std::nullopt;
  // A request refused since asks again when it comes back (a class's wait looks again every
  // 50 ms); the tick asks for none: a slot leased for a request that is gone would only be kept
  // from the other replicas for a tick.
  denied_ = false;
  // A slot held beyond the requests in flight goes back.
  const std::int64_t want = std::min(std::max<std::int64_t>(cap, 0), in_use);
  // Idle here while other replicas hold slots: an ask for nothing once a second learns when they
  // end (what /status shows as in flight on every replica).
  const bool watching = lease_ == 0 && others_ > 0;
  if (!failed_ && want == lease_ && ((lease_ == 0 && !watching) || now < renew_at_)) return std::nullopt;
  return send(in_use, want, cap);
}

void InFlightShare::granted(const Ask& ask, std::int64_t grant, std::int64_t others, base::MonoNanos now) {
  if (ask.generation != generation_) return;
  asking_ = failed_ = false;
  lease_ = grant;
  others_ = std::max<std::int64_t>(others, 0);
  denied_ = grant < ask.want;
  renew_at_ = now + kInFlightRenewEvery.count();
}

void InFlightShare::ask_failed(const Ask& ask) {
  if (ask.generation != generation_) return;
  asking_ = false;
  failed_ = true;
}

}  // namespace smartlb::clients
