// A short rate-limit report, and a probe or a 429's moment at a target whose reports are
// watched, as replicas share them (redis/shared_reports): written and read back whole, and what another
// writer put on the channel is checked member by member.
#include <gtest/gtest.h>

#include "smartlb/redis/report_message.hpp"

namespace smartlb::redis {
namespace report_message_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

TEST(ReportMessage, ReadsBackWhatItWrote) {
  ReportMessage m{"eastus", "gpt-4o", "replica-2", 1'700'000'000'123, {}};
  m.report.remaining_tokens = 150;
  m.report.remaining_requests = 3;
  m.report.reset_tokens = 1'500ms;
  const auto back = decode_report(encode(m));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->backend, "eastus");
  EXPECT_EQ(back->deployment, "gpt-4o");
  EXPECT_EQ(back->replica, "replica-2");
  EXPECT_EQ(back->sent_ms, 1'700'000'000'123);
  EXPECT_EQ(back->report.remaining_tokens, 150);
  EXPECT_EQ(back->report.remaining_requests, 3);
  EXPECT_EQ(back->report.reset_tokens, 1'500ms);
  EXPECT_FALSE(back->report.reset_requests);
}

TEST(ReportMessage, AnythingElseIsNotOne) {
  for (const char* text :
       {"", "x", "[]", R"({"b":"a","d":"m","r":"x","t":1})" /* no remaining: says nothing */,
        R"({"d":"m","r":"x","t":1,"rt":5})", R"({"b":"a","d":"m","r":"x","rt":5})",
        R"({"b":"a","d":"m","r":"x","t":1,"rt":-1})", R"({"b":"a","d":"m","r":"x","t":1,"rt":"5"})",
        R"({"b":1,"d":"m","r":"x","t":1,"rt":5})", R"({"b":"a","d":"m","r":"x","t":1,"rt":5,"xt":-3})"})
    EXPECT_FALSE(decode_report(text)) << text;
  EXPECT_TRUE(decode_report(R"({"b":"a","d":"m","r":"x","t":1,"rr":0})"));
}

TEST(MomentMessage, ReadsBackWhatItWrote) {
  for (const auto kind : {routing::MomentNotice::Kind::Probe, routing::MomentNotice::Kind::Retry}) {
    const MomentMessage m{"eastus", "gpt-4o", "replica-2", kind, 1'700'000'000'350};
    const auto back = decode_moment(encode(m));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->backend, "eastus");
    EXPECT_EQ(back->deployment, "gpt-4o");
    EXPECT_EQ(back->replica, "replica-2");
    EXPECT_EQ(back->kind, kind);
    EXPECT_EQ(back->at_ms, 1'700'000'000'350);
    EXPECT_FALSE(decode_report(encode(m))) << "a replica that knows only reports ignores it";
  }
  EXPECT_FALSE(decode_moment(encode(ReportMessage{"a", "m", "x", 1, {150, {}, {}, {}}})));
}

TEST(MomentMessage, AnythingElseIsNotOne) {
  for (const char* text :
       {"", "x", "[]", R"({"b":"a","d":"m","r":"x","at":5})" /* no kind */,
        R"({"k":"later","b":"a","d":"m","r":"x","at":5})", R"({"k":"probe","d":"m","r":"x","at":5})",
        R"({"k":"probe","b":"a","d":"m","r":"x"})", R"({"k":"probe","b":"a","d":"m","r":"x","at":0})",
        R"({"k":"retry","b":"a","d":"m","r":"x","at":-5})",
        R"({"k":"retry","b":"a","d":"m","r":"x","at":"5"})",
        R"({"k":"retry","b":"a","d":"m","r":"x","at":1.5})", R"({"k":1,"b":"a","d":"m","r":"x","at":5})"})
    EXPECT_FALSE(decode_moment(text)) << text;
  EXPECT_TRUE(decode_moment(R"({"k":"retry","b":"a","d":"m","r":"x","at":5})"));
}

}  // namespace report_message_test
}  // namespace smartlb::redis
