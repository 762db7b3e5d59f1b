#include "smartlb/base/text.hpp"

#include <gtest/gtest.h>

#include <array>

namespace smartlb {
namespace text_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(HexDigitValue, EitherCaseAndNothingElse) {
  EXPECT_EQ(base::hex_digit_value('0'), 0);
  EXPECT_EQ(base::hex_digit_value('9'), 9);
  EXPECT_EQ(base::hex_digit_value('a'), 10);
  EXPECT_EQ(base::hex_digit_value('F'), 15);
  for (const char c : {'g', 'G', '/', ':', '@', '`', ' ', '\0', static_cast<char>(0xC1)})
    EXPECT_EQ(base::hex_digit_value(c), -1) << static_cast<int>(c);
}

TEST(LowerHexDigitValue, LowerCaseOnly) {
  EXPECT_EQ(base::lower_hex_digit_value('7'), 7);
  EXPECT_EQ(base::lower_hex_digit_value('f'), 15);
  EXPECT_EQ(base::lower_hex_digit_value('F'), -1);
  EXPECT_EQ(base::lower_hex_digit_value('A'), -1);
  EXPECT_EQ(base::lower_hex_digit_value('g'), -1);
}

TEST(HexDigit, LowerUnlessUpper) {
  EXPECT_EQ(base::hex_digit(0), '0');
  EXPECT_EQ(base::hex_digit(10), 'a');
  EXPECT_EQ(base::hex_digit(15, true), 'F');
  for (unsigned v = 0; v < 16; ++v) {
    EXPECT_EQ(base::hex_digit_value(base::hex_digit(v)), static_cast<int>(v));
    EXPECT_EQ(base::hex_digit_value(base::hex_digit(v, true)), static_cast<int>(v));
  }
}

TEST(AppendHex, TwoDigitsAByteAfterWhatIsThere) {
  std::string out = "sha:";
  const std::array<unsigned char, 4> bytes = {0x00, 0x0f, 0xa5, 0xff};
  base::append_hex(out, bytes);
  EXPECT_EQ(out, "sha:000fa5ff");
}

}  // namespace text_test
}  // namespace smartlb
