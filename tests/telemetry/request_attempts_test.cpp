// A request's attempt records (RequestRecord::add_attempt, AttemptLog): the first ones in
// place, the rest on the heap, every one kept in order up to kMaxAttempts.
#include "smartlb/telemetry/request_record.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace smartlb {
namespace request_attempts_test {  // named, not anonymous: tests/CMakeLists.txt

// Attempt i names backend i and answered 500 + i, so order and content can be told apart.
void add_attempts(telemetry::RequestRecord& r, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    telemetry::AttemptRecord& a = r.add_attempt();
    a.backend = i;
    a.status = static_cast<unsigned>(500 + i);
  }
}

TEST(RequestAttempts, MoreThanTheInlineRoomKeepsEveryRecordInOrder) {
  constexpr std::size_t n = telemetry::AttemptLog::kInlineRecords + 3;
  telemetry::RequestRecord r;
  add_attempts(r, n);
  ASSERT_EQ(r.attempt_count, n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(r.attempts[i].backend, i);
    EXPECT_EQ(r.attempts[i].status, 500 + i);
  }
}

TEST(RequestAttempts, PastTheLimitTheLastPlaceHoldsTheLatestAttempt) {
  telemetry::RequestRecord r;
  add_attempts(r, telemetry::RequestRecord::kMaxAttempts + 4);
  EXPECT_EQ(r.attempt_count, telemetry::RequestRecord::kMaxAttempts + 4) << "every attempt is counted";
  for (std::size_t i = 0; i + 1 < telemetry::RequestRecord::kMaxAttempts; ++i)
    EXPECT_EQ(r.attempts[i].backend, i);
  EXPECT_EQ(r.attempts[telemetry::RequestRecord::kMaxAttempts - 1].backend,
            telemetry::RequestRecord::kMaxAttempts + 3);
}

TEST(RequestAttempts, ARecordStaysWhereItIsWhileLaterAttemptsAreAdded) {
  telemetry::RequestRecord r;
  std::vector<const telemetry::AttemptRecord*> where;
  for (std::size_t i = 0; i < telemetry::RequestRecord::kMaxAttempts; ++i) where.push_back(&r.add_attempt());
  for (std::size_t i = 0; i < where.size(); ++i) EXPECT_EQ(where[i], &r.attempts[i]);
}

TEST(RequestAttempts, ACopyHoldsItsOwnRecords) {
  telemetry::RequestRecord r;
  add_attempts(r, telemetry::AttemptLog::kInlineRecords + 2);
  telemetry::RequestRecord copy = r;
  r.attempts[telemetry::AttemptLog::kInlineRecords + 1].status = 1;
  EXPECT_EQ(copy.attempts[telemetry::AttemptLog::kInlineRecords + 1].status,
            500 + telemetry::AttemptLog::kInlineRecords + 1);
  telemetry::RequestRecord assigned;
  assigned = copy;
  EXPECT_EQ(assigned.attempts[telemetry::AttemptLog::kInlineRecords].backend,
            telemetry::AttemptLog::kInlineRecords);
}

TEST(RequestAttempts, TheNextRequestStartsFromCleanRecords) {
  telemetry::RequestRecord r;
  add_attempts(r, telemetry::AttemptLog::kInlineRecords + 2);
  r.reset();
  EXPECT_EQ(r.attempt_count, 0u);
  add_attempts(r, telemetry::AttemptLog::kInlineRecords + 1);
  const telemetry::AttemptRecord& a = r.attempts[telemetry::AttemptLog::kInlineRecords];
  EXPECT_EQ(a.backend, telemetry::AttemptLog::kInlineRecords);
  EXPECT_EQ(a.cause, routing::FailureCause::None);
  EXPECT_EQ(a.cooldown_ms, 0);
}

}  // namespace request_attempts_test
}  // namespace smartlb
