#pragma once
// What one request cost: its usage priced by the price table. Plain C++.
#include <cstdint>
#include <optional>

#include "smartlb/cost/money.hpp"
#include "smartlb/cost/price_table.hpp"

namespace smartlb::cost {

// The tokens an answer reported, as they are billed. -1: not reported.
struct BilledTokens {
  std::int64_t input = -1;         // prompt_tokens / input_tokens, cached ones included
  std::int64_t cached_input = -1;  // of those, read from the prompt cache
  std::int64_t output = -1;        // completion_tokens / output_tokens (reasoning included)
};

// Input tokens at the input price, except the cached ones, which are billed at the cached price
// instead (not both); output tokens at the output price. An unreported count is 0; cached
// tokens beyond the input count are taken as all of the input. Nullopt when nothing was
// reported (no usage: no cost known).
std::optional<PicoUnits> cost_of(const BilledTokens& used, const ModelPrice& price);

// The most a request may cost before its answer says what it did: `input_tokens` (an estimate)
// at the input price and `max_output_tokens` at the output price. What a cost budget admits.
PicoUnits cost_estimate(std::int64_t input_tokens, std::int64_t max_output_tokens, const ModelPrice& price);

}  // namespace smartlb::cost
