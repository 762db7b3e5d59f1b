#include "smartlb/cost/request_cost.hpp"

#include <algorithm>

namespace smartlb::cost {
namespace {

// tokens x price, saturating at kMaxMoney (a count no answer reports; but it comes from outside).
PicoUnits times(std::int64_t tokens, PicoUnits price) {
  PicoUnits product = 0;
  if (tokens <= 0 || price <= 0) return 0;
  if (__builtin_mul_overflow(tokens, price, &product) || product > kMaxMoney) return kMaxMoney;
  return product;
}

PicoUnits plus(PicoUnits a, PicoUnits b) { return std::min(a + b, kMaxMoney); }  // each <= kMaxMoney

}  // namespace

std::optional<PicoUnits> cost_of(const BilledTokens& used, const ModelPrice& price) {
  if (used.input < 0 && used.output < 0) return std::nullopt;
  const std::int64_t input = std::max<std::int64_t>(used.input, 0);
  const std::int64_t cached = std::clamp<std::int64_t>(used.cached_input, 0, input);
  return plus(plus(times(input - cached, price.input), times(cached, price.cached_input)),
              times(std::max<std::int64_t>(used.output, 0), price.output));
}

PicoUnits cost_estimate(std::int64_t input_tokens, std::int64_t max_output_tokens, const ModelPrice& price) {
  return plus(times(input_tokens, price.input), times(max_output_tokens, price.output));
}

}  // namespace smartlb::cost
