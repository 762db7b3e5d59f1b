// Who may use the admin port: the 401/403 matrix as a pure function, the constant-time digest
// comparison, and fingerprints.
#include "smartlb/admin/admin_access.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace admin_access_test {  // named, not anonymous: tests/CMakeLists.txt

using Verdict = admin::AdminDecision::Verdict;

const std::string kRead = "r3ad-t0ken-0123456789";
const std::string kWrite = "wr1te-t0ken-0123456789";

config::AdminConfig with_tokens(bool metrics_open = false) {
  config::AdminConfig c;
  c.tokens = {{"grafana", config::AdminRole::Read, kRead}, {"alice", config::AdminRole::Write, kWrite}};
  c.metrics_open = metrics_open;
  return c;
}

std::string bearer(const std::string& token) { return "Bearer " + token; }

TEST(AdminAccess, DigestsCompareEqualOnlyWhenEqual) {
  const admin::TokenDigest a = admin::token_digest(kRead);
  EXPECT_TRUE(admin::same_digest(a, admin::token_digest(kRead)));
  admin::TokenDigest last_byte = a;
  last_byte[31] ^= 1;
  EXPECT_FALSE(admin::same_digest(a, last_byte));
  admin::TokenDigest first_byte = a;
  first_byte[0] ^= 0x80;
  EXPECT_FALSE(admin::same_digest(a, first_byte));
  EXPECT_FALSE(admin::same_digest(a, admin::token_digest(kRead + "x")))
      << "a longer token is another digest, same length";
}

TEST(AdminAccess, AFingerprintIsAPrefixOfTheDigestNeverTheToken) {
  const std::string f = admin::token_fingerprint(kWrite);
  EXPECT_EQ(f.size(), std::string("sha256:").size() + 8);
  EXPECT_EQ(f.rfind("sha256:", 0), 0u);
  EXPECT_EQ(f, admin::token_fingerprint(kWrite)) << "stable";
  EXPECT_NE(f, admin::token_fingerprint(kRead));
  EXPECT_EQ(f.find(kWrite.substr(0, 4)), std::string::npos);
}

TEST(AdminAccess, WithoutTokensReadsAreOpenAndWritesAreRefusedSayingHowToEnableThem) {
  const admin::AdminAccess access;
  EXPECT_FALSE(access.tokens_set());
  EXPECT_EQ(access.decide(admin::AdminNeed::Open, "").verdict, Verdict::Allow);
  EXPECT_EQ(access.decide(admin::AdminNeed::Metrics, "").verdict, Verdict::Allow);
  EXPECT_EQ(access.decide(admin::AdminNeed::Read, "").verdict, Verdict::Allow);
  const admin::AdminDecision w = access.decide(admin::AdminNeed::Write, bearer(kWrite));
  EXPECT_EQ(w.verdict, Verdict::Forbidden);
  EXPECT_NE(w.message.find("ADMIN_TOKENS"), std::string::npos) << w.message;
}

TEST(AdminAccess, WithTokensEveryEndpointButTheOpenOnesNeedsOne) {
  const admin::AdminAccess access(with_tokens());
  EXPECT_EQ(access.decide(admin::AdminNeed::Open, "").verdict, Verdict::Allow) << "probes";
  for (admin::AdminNeed need : {admin::AdminNeed::Metrics, admin::AdminNeed::Read, admin::AdminNeed::Write}) {
    EXPECT_EQ(access.decide(need, "").verdict, Verdict::Unauthorized);
    EXPECT_EQ(access.decide(need, bearer("not-a-token-of-ours-0123")).verdict, Verdict::Unauthorized);
    EXPECT_EQ(access.decide(need, "Basic " + kWrite).verdict, Verdict::Unauthorized) << "another scheme";
    EXPECT_EQ(access.decide(need, kWrite).verdict, Verdict::Unauthorized) << "no scheme";
    EXPECT_EQ(access.decide(need, bearer(kWrite.substr(0, kWrite.size() - 1))).verdict, Verdict::Unauthorized)
        << "a prefix of a token";
    EXPECT_EQ(access.decide(need, bearer(kWrite + "0")).verdict, Verdict::Unauthorized) << "a token and more";
  }
}

TEST(AdminAccess, AReadTokenReadsAndIsForbiddenToWrite) {
  const admin::AdminAccess access(with_tokens());
  const admin::AdminDecision r = access.decide(admin::AdminNeed::Read, bearer(kRead));
  EXPECT_EQ(r.verdict, Verdict::Allow);
  ASSERT_TRUE(r.caller);
  EXPECT_EQ(r.caller->name, "grafana");
  EXPECT_EQ(access.decide(admin::AdminNeed::Metrics, bearer(kRead)).verdict, Verdict::Allow);
  const admin::AdminDecision w = access.decide(admin::AdminNeed::Write, bearer(kRead));
  EXPECT_EQ(w.verdict, Verdict::Forbidden);
  ASSERT_TRUE(w.caller) << "who was refused, for the log";
  EXPECT_EQ(w.message.find(kRead), std::string::npos);
}

TEST(AdminAccess, AWriteTokenDoesEverything) {
  const admin::AdminAccess access(with_tokens());
  for (admin::AdminNeed need : {admin::AdminNeed::Metrics, admin::AdminNeed::Read, admin::AdminNeed::Write})
    EXPECT_EQ(access.decide(need, bearer(kWrite)).verdict, Verdict::Allow);
  const admin::AdminDecision w = access.decide(admin::AdminNeed::Write, "bearer  " + kWrite + " ");
  EXPECT_EQ(w.verdict, Verdict::Allow)
      << "the scheme is case-insensitive, spaces around the token are not its";
  ASSERT_TRUE(w.caller);
  EXPECT_EQ(w.caller->describe(), "alice (write, " + admin::token_fingerprint(kWrite) + ")");
}

TEST(AdminAccess, MetricsMayStayOpenForScrapers) {
  const admin::AdminAccess access(with_tokens(/*metrics_open=*/true));
  EXPECT_EQ(access.decide(admin::AdminNeed::Metrics, "").verdict, Verdict::Allow);
  EXPECT_EQ(access.decide(admin::AdminNeed::Read, "").verdict, Verdict::Unauthorized)
      << "/status is not /metrics";
}

}  // namespace admin_access_test
}  // namespace smartlb
