#include "smartlb/stateful/resource_tag.hpp"

#include <gtest/gtest.h>

namespace smartlb::stateful {
namespace resource_tag_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(ResourceTag, Fnv1a64MatchesTheReferenceVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
}

TEST(ResourceTag, IsSlbAndEightBase32DigitsOfTheHashsHigh40Bits) {
  const ResourceTag a = resource_tag("https://res-a.openai.azure.com");
  EXPECT_EQ(a.view(), "-slb4bzqkc2s");
  EXPECT_EQ(a.bits, 964002384722ull);
  EXPECT_EQ(a.bits, fnv1a64("https://res-a.openai.azure.com") >> 24);
  EXPECT_EQ(resource_tag("https://res-b.openai.azure.com").view(), "-slbnh5q6hnb");
  EXPECT_EQ(resource_tag("http://127.0.0.1:8001").view(), "-slbovha5i5q");
}

TEST(ResourceTag, BitsAndDigitsRoundTrip) {
  for (const std::uint64_t bits : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{31}, std::uint64_t{32},
                                   std::uint64_t{0x123456789a}, kTagBitsMask}) {
    const ResourceTag t = tag_from_bits(bits);
    EXPECT_EQ(trailing_tag("x" + std::string(t.view())), bits);
  }
  EXPECT_EQ(tag_from_bits(0).view(), "-slbaaaaaaaa");
  EXPECT_EQ(tag_from_bits(kTagBitsMask).view(), "-slb77777777");
  EXPECT_EQ(tag_from_bits(kTagBitsMask + 1).bits, 0u) << "only 40 bits";
}

TEST(ResourceTag, DefaultResourceIsTheOriginAndBasePathWithoutTheApiPrefix) {
  EXPECT_EQ(default_resource(true, "Res-A.OpenAI.Azure.com", 443, ""), "https://res-a.openai.azure.com");
  EXPECT_EQ(default_resource(true, "res-a.openai.azure.com", 443, "/openai"),
            "https://res-a.openai.azure.com");
  EXPECT_EQ(default_resource(true, "res-a.openai.azure.com", 443, "/openai/v1"),
            "https://res-a.openai.azure.com");
  EXPECT_EQ(default_resource(true, "api.openai.com", 443, "/v1"), "https://api.openai.com");
  EXPECT_EQ(default_resource(true, "gw.example.com", 8443, "/team-a/v1"),
            "https://gw.example.com:8443/team-a");
  EXPECT_EQ(default_resource(false, "127.0.0.1", 80, ""), "http://127.0.0.1");
  EXPECT_EQ(default_resource(false, "127.0.0.1", 8001, ""), "http://127.0.0.1:8001");
  EXPECT_EQ(default_resource(false, "::1", 8001, "/x"), "http://[::1]:8001/x");
  EXPECT_NE(default_resource(true, "gw.example.com", 443, "/a"),
            default_resource(true, "gw.example.com", 443, "/b"));
}

TEST(ResourceTag, TrailingTagNeedsTheMarkEightDigitsAndAnIdBeforeThem) {
  EXPECT_EQ(trailing_tag("resp_1-slbaaaaaaab"), 1u);
  EXPECT_EQ(trailing_tag("-slbaaaaaaab"), std::nullopt) << "a bare tag is not an id";
  EXPECT_EQ(trailing_tag("resp_1-slbaaaaaaa"), std::nullopt) << "7 digits";
  EXPECT_EQ(trailing_tag("resp_1-slbaaaaaaa1"), std::nullopt) << "1 is not base32";
  EXPECT_EQ(trailing_tag("resp_1-slbAAAAAAAB"), std::nullopt) << "upper case";
  EXPECT_EQ(trailing_tag("resp_1_slbaaaaaaab"), std::nullopt);
  EXPECT_EQ(trailing_tag("resp_1-slbaaaaaaabx"), std::nullopt) << "not at the end";
  EXPECT_EQ(trailing_tag(""), std::nullopt);
}

TEST(ResourceTag, TaggableValuesAreShortPrintableAndNotTaggedYet) {
  EXPECT_TRUE(taggable("resp_abc"));
  EXPECT_TRUE(taggable("file-0123456789abcdef"));
  EXPECT_TRUE(taggable(std::string(256, 'x')));
  EXPECT_FALSE(taggable(std::string(257, 'x')));
  EXPECT_FALSE(taggable(""));
  EXPECT_FALSE(taggable("a b"));
  EXPECT_FALSE(taggable("a\tb"));
  EXPECT_FALSE(taggable("a\\nb")) << "a JSON escape";
  EXPECT_FALSE(taggable(std::string("a\x7f", 2)));
  EXPECT_FALSE(taggable("resp_1-slbaaaaaaab"));
}

}  // namespace resource_tag_test
}  // namespace smartlb::stateful
