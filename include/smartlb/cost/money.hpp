#pragma once
// Money as an integer count of pico-units (10^-12) of the configured currency. Why integers, and
// why so small a unit: a price per million tokens written with up to six decimals ("2.50",
// "0.075") is a whole number of micro-units per million tokens, which is exactly a whole number
// of pico-units per token; so a request's cost is an exact integer (tokens x price), sums never
// drift by rounding, and a test can compare to a hand calculation with ==. An int64 holds about
// 9.2 million currency units, far above any one request or budget (limits are capped below it).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace smartlb::cost {

using PicoUnits = std::int64_t;

inline constexpr PicoUnits kPicoPerUnit = 1'000'000'000'000;
// The largest amount a price or a budget may be (one million currency units): the sums of a day
// or month of such amounts stay far from int64's end.
inline constexpr PicoUnits kMaxMoney = 1'000'000 * kPicoPerUnit;

// A decimal amount of currency units ("2.5", "0.000125", "10") as pico-units: digits, at most one
// '.', at most 12 decimals, no sign or exponent, at most kMaxMoney. nullopt otherwise.
std::optional<PicoUnits> parse_money(std::string_view text);
// The largest price per million tokens (ten thousand units), so that a price times any token
// count a request can have stays within int64.
inline constexpr PicoUnits kMaxPricePerToken = 10'000 * kPicoPerUnit / 1'000'000;
// A price per million tokens ("2.50") as pico-units per token: at most 6 decimals (a millionth of
// a unit per million tokens), at most 10,000. nullopt otherwise.
std::optional<PicoUnits> parse_price_per_million(std::string_view text);

// Currency units in plain decimal, as short as exact: 1'500'000'000'000 -> "1.5", 0 -> "0",
// 35 -> "0.000000000035". Negative amounts get a '-'.
std::string format_money(PicoUnits amount);
// As a double of currency units (Prometheus' counters are doubles).
inline double money_as_units(PicoUnits amount) {
  return static_cast<double>(amount) / static_cast<double>(kPicoPerUnit);
}

}  // namespace smartlb::cost
