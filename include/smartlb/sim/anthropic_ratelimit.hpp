#pragma once
// What an answer of the Messages API reports of the quota, in Anthropic's headers:
// anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset},
// the reset being the RFC 3339 UTC time when that limit is whole again. The sim has one token
// limiter per deployment, shared by input and output: the three token reports are the same.
// Pure.

#include "smartlb/sim/quota_report.hpp"
#include "smartlb/sim/sim_exchange.hpp"

#include <cstdint>
#include <string>

namespace smartlb::sim {

/// e.g. "2026-11-29T05:41:30Z".
std::string rfc3339_utc(std::int64_t unix_seconds);

/// When each limit is whole again, in Unix seconds.
struct QuotaResets {
  std::int64_t requests_unix = 0;
  std::int64_t tokens_unix = 0;
};

/// The resets of a quota `refill` away from `now_unix` (rounded up to whole seconds).
QuotaResets quota_resets(const QuotaRefill& refill, std::int64_t now_unix);

/// Appends the twelve anthropic-ratelimit-* headers of `report` and `resets`.
void add_anthropic_ratelimit_headers(HeaderList& headers, const QuotaReport& report,
                                     const QuotaResets& resets);

}  // namespace smartlb::sim
