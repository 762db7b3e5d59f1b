// W3C Trace Context: every validity rule of traceparent, tracestate's grammar and limits, and
// the fields written upstream.
#include "smartlb/tracing/trace_context.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace smartlb::tracing {
namespace trace_context_test {  // named, not anonymous: tests/CMakeLists.txt

constexpr std::string_view kValid = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

std::string with(std::string_view base, std::size_t at, std::string_view replacement) {
  std::string s(base);
  s.replace(at, replacement.size(), replacement);
  return s;
}

TEST(TraceParent, ReadsTheSpecsExample) {
  const auto p = parse_traceparent(kValid);
  ASSERT_TRUE(p);
  EXPECT_EQ(to_hex(p->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(to_hex(p->parent_id), "00f067aa0ba902b7");
  EXPECT_EQ(p->flags, 1);
  EXPECT_TRUE(p->sampled());
  const auto unsampled = parse_traceparent(with(kValid, 53, "00"));
  ASSERT_TRUE(unsampled);
  EXPECT_FALSE(unsampled->sampled());
}

TEST(TraceParent, FlagsOtherThanSampledAreKeptButOnlyBitZeroSamples) {
  const auto p = parse_traceparent(with(kValid, 53, "02"));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->flags, 2);
  EXPECT_FALSE(p->sampled());
}

TEST(TraceParent, VersionFfIsInvalid) { EXPECT_FALSE(parse_traceparent(with(kValid, 0, "ff"))); }

TEST(TraceParent, AllZeroIdsAreInvalid) {
  EXPECT_FALSE(parse_traceparent(with(kValid, 3, "00000000000000000000000000000000")));
  EXPECT_FALSE(parse_traceparent(with(kValid, 36, "0000000000000000")));
}

TEST(TraceParent, UpperCaseOrNonHexIsInvalid) {
  EXPECT_FALSE(parse_traceparent(with(kValid, 3, "4B")));     // trace id
  EXPECT_FALSE(parse_traceparent(with(kValid, 36, "00F0")));  // parent id
  EXPECT_FALSE(parse_traceparent(with(kValid, 53, "0A")));    // flags
  EXPECT_FALSE(parse_traceparent(with(kValid, 0, "0A")));     // version
  EXPECT_FALSE(parse_traceparent(with(kValid, 10, "g")));     // not hex
  EXPECT_FALSE(parse_traceparent(with(kValid, 40, "-")));     // not hex
}

TEST(TraceParent, DashesMustBeWhereTheyBelong) {
  EXPECT_FALSE(parse_traceparent(with(kValid, 2, "_")));
  EXPECT_FALSE(parse_traceparent(with(kValid, 35, "_")));
  EXPECT_FALSE(parse_traceparent(with(kValid, 52, "_")));
}

TEST(TraceParent, VersionZeroIsExactly55Characters) {
  EXPECT_FALSE(parse_traceparent(kValid.substr(0, 54)));
  EXPECT_FALSE(parse_traceparent(std::string(kValid) + "-"));
  EXPECT_FALSE(parse_traceparent(std::string(kValid) + "-00"));
  EXPECT_FALSE(parse_traceparent(std::string(kValid) + " "));
  EXPECT_FALSE(parse_traceparent(""));
}

TEST(TraceParent, AFutureVersionIsReadLeniently) {
  const std::string v1 = with(kValid, 0, "01");
  ASSERT_TRUE(parse_traceparent(v1));                              // 55 characters
  const auto longer = parse_traceparent(v1 + "-what-comes-next");  // a '-' after them
  ASSERT_TRUE(longer);
  EXPECT_EQ(to_hex(longer->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_TRUE(longer->sampled());
  EXPECT_FALSE(parse_traceparent(v1 + "x"));          // anything else after them
  EXPECT_FALSE(parse_traceparent(v1.substr(0, 54)));  // shorter than 55
  EXPECT_FALSE(parse_traceparent(with(v1, 3, "00000000000000000000000000000000")));  // the same id rules
  EXPECT_TRUE(parse_traceparent(with(kValid, 0, "fe")));
}

std::string state(std::vector<std::string_view> fields) { return checked_tracestate(fields); }

TEST(TraceState, AValidListPassesUnchanged) {
  EXPECT_EQ(state({"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"}), "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE");
  EXPECT_EQ(state({"rojo=1 , congo=2"}), "rojo=1 , congo=2");  // spaces around commas kept as sent
  EXPECT_EQ(state({"tenant@vendor=x", "a*/_-b=y z"}), "tenant@vendor=x,a*/_-b=y z");  // fields joined
  EXPECT_EQ(state({"a=1,,b=2"}), "a=1,,b=2");            // empty members are allowed
  EXPECT_EQ(state({"3tenant@sys=1"}), "3tenant@sys=1");  // a tenant id may start with a digit
}

TEST(TraceState, AnInvalidListIsDropped) {
  EXPECT_EQ(state({"Rojo=1"}), "");                      // upper case key
  EXPECT_EQ(state({"1abc=1"}), "");                      // a simple key starts with a letter
  EXPECT_EQ(state({"rojo"}), "");                        // no '='
  EXPECT_EQ(state({"rojo="}), "");                       // empty value
  EXPECT_EQ(state({"rojo=a,b"}), "");                    // "b" is not a member
  EXPECT_EQ(state({"rojo=x=y"}), "");                    // '=' in a value
  EXPECT_EQ(state({"rojo=x "}), "rojo=x ");              // (a trailing space is OWS, trimmed as such)
  EXPECT_EQ(state({"rojo=a\tb"}), "");                   // a control character in a value
  EXPECT_EQ(state({"a=1,a=2"}), "");                     // a key twice
  EXPECT_EQ(state({"t@Sys=1"}), "");                     // system id in lower case
  EXPECT_EQ(state({"t@abcdefghijklmno=1"}), "");         // system id over 14 characters
  EXPECT_EQ(state({std::string(257, 'a') + "=1"}), "");  // key over 256
  EXPECT_EQ(state({"a=" + std::string(257, 'v')}), "");  // value over 256
  EXPECT_EQ(state({"", " "}), "");                       // nothing but empty members
}

TEST(TraceState, AtMost32Members) {
  std::string list;
  for (int i = 0; i < 32; ++i) list += (i ? "," : "") + std::string("k") + std::to_string(i) + "=v";
  EXPECT_EQ(state({list}), list);
  EXPECT_EQ(state({list + ",k32=v"}), "");
}

TEST(TraceState, OverLimitLosesLongMembersFirstThenFromTheRight) {
  const std::string long_member = "big=" + std::string(200, 'x');  // over 128 characters
  std::string small;
  for (int i = 0; i < 20; ++i) small += ",m" + std::to_string(i) + "=" + std::string(20, 'y');  // 24-25 each
  const std::string list = "first=1," + long_member + small;
  ASSERT_GT(list.size(), kTraceStateMaxBytes);
  const std::string out = state({list});
  EXPECT_LE(out.size(), kTraceStateMaxBytes);
  EXPECT_EQ(out.find("big="), std::string::npos);
  EXPECT_EQ(out.substr(0, 8), "first=1,");
  EXPECT_NE(out.find("m19="), std::string::npos);  // without the long one, the rest fits
  // Without a long member, the right-most go.
  std::string many = "first=1";
  for (int i = 0; i < 30; ++i) many += ",m" + std::to_string(i) + "=" + std::string(20, 'y');
  const std::string cut = state({many});
  EXPECT_LE(cut.size(), kTraceStateMaxBytes);
  EXPECT_EQ(cut.substr(0, 8), "first=1,");
  EXPECT_EQ(cut.find("m29="), std::string::npos);
  EXPECT_EQ(many.substr(0, cut.size()), cut);  // a prefix: members from the right went
}

TEST(TraceIds, NewIdsComeFromTheRandomSourceAndAreNeverZero) {
  base::ScriptedRandom rng({0, 0, 0x0102030405060708, 0x090a0b0c0d0e0f10, 0, 0x1112131415161718});
  EXPECT_EQ(to_hex(new_trace_id(rng)), "0102030405060708090a0b0c0d0e0f10");  // (0, 0) drawn again
  EXPECT_EQ(to_hex(new_span_id(rng)), "1112131415161718");                   // 0 drawn again
}

TEST(TraceFields, TheUpstreamFields) {
  const auto p = parse_traceparent(kValid);
  std::string out;
  append_trace_fields(out, p->trace_id, p->parent_id, true, "");
  EXPECT_EQ(out, "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\r\n");
  out.clear();
  append_trace_fields(out, p->trace_id, p->parent_id, false, "rojo=1");
  EXPECT_EQ(out,
            "traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00\r\ntracestate: rojo=1\r\n");
}

}  // namespace trace_context_test
}  // namespace smartlb::tracing
