#include "smartlb/cost/money.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace money_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(PricePerMillion, IsExactlyPicoUnitsPerToken) {
  EXPECT_EQ(cost::parse_price_per_million("2.50"), 2'500'000);  // $2.50 / 1M tokens = 2.5e-6 $ a token
  EXPECT_EQ(cost::parse_price_per_million("0.075"), 75'000);
  EXPECT_EQ(cost::parse_price_per_million("10"), 10'000'000);
  EXPECT_EQ(cost::parse_price_per_million("0.000001"), 1);
  EXPECT_EQ(cost::parse_price_per_million("0"), 0);
  EXPECT_EQ(cost::parse_price_per_million(".5"), 500'000);
  EXPECT_EQ(cost::parse_price_per_million("10000"), 10'000'000'000);
}

TEST(PricePerMillion, RefusesWhatIsNotAPlainDecimalWithinRange) {
  for (const char* bad : {"", ".", "2.", "-1", "+1", "1e3", "0x10", "1,5", " 1", "1 ", "0.0000001",
                          "10000.000001", "99999999999999999999999"})
    EXPECT_EQ(cost::parse_price_per_million(bad), std::nullopt) << bad;
}

TEST(Money, ParsesUpToTwelveDecimals) {
  EXPECT_EQ(cost::parse_money("0.5"), cost::kPicoPerUnit / 2);
  EXPECT_EQ(cost::parse_money("25"), 25 * cost::kPicoPerUnit);
  EXPECT_EQ(cost::parse_money("0.000000000001"), 1);
  EXPECT_EQ(cost::parse_money("0.0000000000001"), std::nullopt);
  EXPECT_EQ(cost::parse_money("1000000"), cost::kMaxMoney);
  EXPECT_EQ(cost::parse_money("1000000.000000000001"), std::nullopt);
}

TEST(Money, FormatsAsShortAsExact) {
  EXPECT_EQ(cost::format_money(0), "0");
  EXPECT_EQ(cost::format_money(1'500'000'000'000), "1.5");
  EXPECT_EQ(cost::format_money(5'615'000'000), "0.005615");
  EXPECT_EQ(cost::format_money(35), "0.000000000035");
  EXPECT_EQ(cost::format_money(12 * cost::kPicoPerUnit), "12");
  EXPECT_EQ(cost::format_money(-cost::kPicoPerUnit / 4), "-0.25");
}

}  // namespace money_test
}  // namespace smartlb
