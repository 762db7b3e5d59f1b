#include "smartlb/sim/anthropic_ratelimit.hpp"

#include <ctime>

namespace smartlb::sim {
namespace {

std::int64_t whole_seconds_up(std::chrono::nanoseconds duration) {
  return std::chrono::ceil<std::chrono::seconds>(duration).count();
}

}  // namespace

std::string rfc3339_utc(std::int64_t unix_seconds) {
  const std::time_t time = static_cast<std::time_t>(unix_seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[32];
  const std::size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return std::string(text, length);
}

QuotaResets quota_resets(const QuotaRefill& refill, std::int64_t now_unix) {
  return {now_unix + whole_seconds_up(refill.requests), now_unix + whole_seconds_up(refill.tokens)};
}

void add_anthropic_ratelimit_headers(HeaderList& headers, const QuotaReport& report,
                                     const QuotaResets& resets) {
  const auto add = [&](const char* quantity, std::int64_t limit, std::int64_t remaining, std::int64_t reset) {
    std::string prefix = "anthropic-ratelimit-";
    prefix += quantity;
    headers.emplace_back(prefix + "-limit", std::to_string(limit));
    headers.emplace_back(prefix + "-remaining", std::to_string(remaining));
    headers.emplace_back(prefix + "-reset", rfc3339_utc(reset));
  };
  add("requests", report.limit_requests, report.remaining_requests, resets.requests_unix);
  for (const char* quantity : {"tokens", "input-tokens", "output-tokens"}) {
    add(quantity, report.limit_tokens, report.remaining_tokens, resets.tokens_unix);
  }
}

}  // namespace smartlb::sim
