// What TrueFoundry's retry_config and fallback_status_codes make of an answer (move_for), and
// that without them smartlb's own judgement stands.
#include "smartlb/net/target_options.hpp"

#include <gtest/gtest.h>

namespace smartlb::net {
namespace target_options_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;

AnswerSeen seen(unsigned status, std::optional<std::chrono::milliseconds> hint = std::nullopt) {
  return {status, routing::judge_status(status, true), hint};
}

constexpr base::Nanos kPlenty = std::chrono::duration_cast<base::Nanos>(100s);

TEST(MoveFor, WithoutOptionsAFailureFailsOverAndAnythingElseIsRelayed) {
  EXPECT_EQ(move_for(seen(429), {}, 0, {}, kPlenty), AnswerMove::FailOver);
  EXPECT_EQ(move_for(seen(503), {}, 0, {}, kPlenty), AnswerMove::FailOver);
  EXPECT_EQ(move_for(seen(400), {}, 0, {}, kPlenty), AnswerMove::Relay);
  EXPECT_EQ(move_for(seen(200), {}, 0, {}, kPlenty), AnswerMove::Relay);
}

TEST(MoveFor, ARetryIsTakenForAListedStatusUntilItsAttemptsAreSpent) {
  const config::RetryConfig retry{2, 100ms, {503}};
  EXPECT_EQ(move_for(seen(503), retry, 0, {}, kPlenty), AnswerMove::Retry);
  EXPECT_EQ(move_for(seen(503), retry, 1, {}, kPlenty), AnswerMove::Retry);
  EXPECT_EQ(move_for(seen(503), retry, 2, {}, kPlenty), AnswerMove::FailOver);
  EXPECT_EQ(move_for(seen(500), retry, 0, {}, kPlenty), AnswerMove::FailOver) << "not listed";
  EXPECT_EQ(move_for(seen(200), retry, 0, {}, kPlenty), AnswerMove::Relay);
}

TEST(MoveFor, ARetryNeverComesSoonerThanTheBackendAskedNorPastTheDeadline) {
  const config::RetryConfig retry{2, 100ms, {429}};
  EXPECT_EQ(move_for(seen(429, 30s), retry, 0, {}, kPlenty), AnswerMove::FailOver);
  EXPECT_EQ(move_for(seen(429, 100ms), retry, 0, {}, kPlenty), AnswerMove::Retry);
  EXPECT_EQ(move_for(seen(429), retry, 0, {}, std::chrono::duration_cast<base::Nanos>(50ms)),
            AnswerMove::FailOver);
}

TEST(MoveFor, FallbackStatusesChooseWhatMovesOnAndWhatIsRelayed) {
  const std::vector<unsigned> codes{400, 429};
  EXPECT_EQ(move_for(seen(429), {}, 0, codes, kPlenty), AnswerMove::FailOver);
  EXPECT_EQ(move_for(seen(400), {}, 0, codes, kPlenty), AnswerMove::MoveOn) << "no failure of the backend";
  EXPECT_EQ(move_for(seen(503), {}, 0, codes, kPlenty), AnswerMove::Relay)
      << "not listed: the client sees it";
  EXPECT_EQ(move_for(seen(200), {}, 0, codes, kPlenty), AnswerMove::Relay);
}

}  // namespace target_options_test
}  // namespace smartlb::net
