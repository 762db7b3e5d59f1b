#include "smartlb/cost/money.hpp"

namespace smartlb::cost {
namespace {

// `text` as a whole number of 10^-decimals units, within `max`.
std::optional<PicoUnits> parse_fixed(std::string_view text, int decimals, PicoUnits max) {
  if (text.empty()) return std::nullopt;
  PicoUnits whole = 0;
  std::size_t i = 0;
  for (; i < text.size() && text[i] != '.'; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    if (whole > max) return std::nullopt;  // (long enough already: stop before it overflows)
    whole = whole * 10 + (text[i] - '0');
  }
  const bool point = i < text.size();
  if (i == 0 && (!point || i + 1 == text.size())) return std::nullopt;  // "", ".": no digits
  PicoUnits fraction = 0;
  int places = 0;
  for (std::size_t j = i + 1; point && j < text.size(); ++j, ++places) {
    if (text[j] < '0' || text[j] > '9' || places == decimals) return std::nullopt;
    fraction = fraction * 10 + (text[j] - '0');
  }
  if (point && places == 0) return std::nullopt;  // "2."
  PicoUnits scale = 1;
  for (int k = 0; k < decimals; ++k) scale *= 10;
  for (int k = places; k < decimals; ++k) fraction *= 10;
  if (whole > max / scale) return std::nullopt;
  const PicoUnits value = whole * scale + fraction;
  if (value > max) return std::nullopt;
  return value;
}

}  // namespace

std::optional<PicoUnits> parse_money(std::string_view text) { return parse_fixed(text, 12, kMaxMoney); }

std::optional<PicoUnits> parse_price_per_million(std::string_view text) {
  // Micro-units per million tokens are pico-units per token.
  return parse_fixed(text, 6, kMaxPricePerToken);
}

std::string format_money(PicoUnits amount) {
  std::string out;
  if (amount < 0) {
    out += '-';
    amount = amount == INT64_MIN ? INT64_MAX : -amount;
  }
  out += std::to_string(amount / kPicoPerUnit);
  if (PicoUnits fraction = amount % kPicoPerUnit) {
    std::string digits = std::to_string(fraction);
    digits.insert(0, 12 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    out += '.';
    out += digits;
  }
  return out;
}

}  // namespace smartlb::cost
