// What Redis (or whoever answers in its place) sends a replica: RESP replies, read through
// hiredis's reader exactly as RedisConnection feeds it, and the cooldown messages of other
// replicas, their priority classes' demand, their rate-limit reports, probes and 429 moments;
// and REDIS_URL. Invariants: no crash, no hang; a decoded
// message re-encodes to one that decodes the same; a refused URL is not quoted in its error.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "smartlb/config/redis_url.hpp"
#include "smartlb/redis/cooldown_message.hpp"
#include "smartlb/redis/demand_message.hpp"
#include "smartlb/redis/report_message.hpp"
#include "smartlb/redis/resp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace smartlb;
  const std::string_view input(reinterpret_cast<const char*>(data), size);

  // RESP in two pieces (a split anywhere must read the same).
  redis::RespReader reader;
  const std::size_t cut = size / 2;
  try {
    if (reader.feed(input.substr(0, cut)))
      while (reader.next()) {
      }
    if (reader.feed(input.substr(cut)))
      while (reader.next()) {
      }
  } catch (const std::runtime_error&) {
    // a protocol error: the connection would be dropped
  }

  if (auto m = redis::decode_cooldown(input)) {
    auto again = redis::decode_cooldown(redis::encode(*m));
    if (!again || again->until_ms != m->until_ms || again->whole_backend != m->whole_backend)
      __builtin_trap();
  }

  if (auto m = redis::decode_report(input)) {
    auto again = redis::decode_report(redis::encode(*m));
    if (!again || again->sent_ms != m->sent_ms ||
        again->report.remaining_tokens != m->report.remaining_tokens ||
        again->report.remaining_requests != m->report.remaining_requests)
      __builtin_trap();
  }

  if (auto m = redis::decode_moment(input)) {
    auto again = redis::decode_moment(redis::encode(*m));
    if (!again || again->kind != m->kind || again->at_ms != m->at_ms || again->backend != m->backend)
      __builtin_trap();
  }

  if (auto m = redis::decode_demand(input)) {
    auto again = redis::decode_demand(redis::encode(*m));
    if (!again || again->replica != m->replica || again->targets.size() != m->targets.size())
      __builtin_trap();
    for (std::size_t i = 0; i < m->targets.size(); ++i) {
      const auto &a = m->targets[i], &b = again->targets[i];
      if (a.backend != b.backend || a.deployment != b.deployment) __builtin_trap();
      // Levels after the last one with requests are left out of a message (nobody sent there).
      std::size_t sent = a.rates.size();
      while (sent > 0 && a.rates[sent - 1].requests_per_second == 0) --sent;
      for (std::size_t l = 0; l < a.rates.size(); ++l)
        if (b.rates[l].requests_per_second != a.rates[l].requests_per_second ||
            (l < sent && b.rates[l].tokens_per_second != a.rates[l].tokens_per_second))
          __builtin_trap();
    }
  }

  // A refusal never quotes the input (it may hold the password).
  const auto url = config::parse_redis_url(input);
  if (url.url)
    (void)url.url->redacted();
  else if (input.find('@') != std::string_view::npos && url.error.find(input) != std::string::npos)
    __builtin_trap();
  return 0;
}
