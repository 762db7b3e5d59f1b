// A request's attempt records (RequestRecord::add_attempt, AttemptLog): the first ones in
// place, the rest on the heap, every one kept in order up to kMaxAttempts.
#include "smartlb/telemetry/request_record.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace smartlb {
namespace {

// Attempt i names backend i and answered 500 + i, so order and content can be told apart.
void add_attempts(RequestRecord& r, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    AttemptRecord& a = r.add_attempt();
    a.backend = i;
    a.status = static_cast<unsigned>(500 + i);
  }
}

TEST(RequestAttempts, MoreThanTheInlineRoomKeepsEveryRecordInOrder) {
  constexpr std::size_t n = AttemptLog::kInlineRecords + 3;
  RequestRecord r;
  add_attempts(r, n);
  ASSERT_EQ(r.attempt_count, n);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(r.attempts[i].backend, i);
    EXPECT_EQ(r.attempts[i].status, 500 + i);
  }
}

TEST(RequestAttempts, PastTheLimitTheLastPlaceHoldsTheLatestAttempt) {
  RequestRecord r;
  add_attempts(r, RequestRecord::kMaxAttempts + 4);
  EXPECT_EQ(r.attempt_count, RequestRecord::kMaxAttempts + 4) << "every attempt is counted";
  for (std::size_t i = 0; i + 1 < RequestRecord::kMaxAttempts; ++i) EXPECT_EQ(r.attempts[i].backend, i);
  EXPECT_EQ(r.attempts[RequestRecord::kMaxAttempts - 1].backend, RequestRecord::kMaxAttempts + 3);
}

TEST(RequestAttempts, ARecordStaysWhereItIsWhileLaterAttemptsAreAdded) {
  RequestRecord r;
  std::vector<const AttemptRecord*> where;
  for (std::size_t i = 0; i < RequestRecord::kMaxAttempts; ++i) where.push_back(&r.add_attempt());
  for (std::size_t i = 0; i < where.size(); ++i) EXPECT_EQ(where[i], &r.attempts[i]);
}

TEST(RequestAttempts, ACopyHoldsItsOwnRecords) {
  RequestRecord r;
  add_attempts(r, AttemptLog::kInlineRecords + 2);
  RequestRecord copy = r;
  r.attempts[AttemptLog::kInlineRecords + 1].status = 1;
  EXPECT_EQ(copy.attempts[AttemptLog::kInlineRecords + 1].status, 500 + AttemptLog::kInlineRecords + 1);
  RequestRecord assigned;
  assigned = copy;
  EXPECT_EQ(assigned.attempts[AttemptLog::kInlineRecords].backend, AttemptLog::kInlineRecords);
}

TEST(RequestAttempts, TheNextRequestStartsFromCleanRecords) {
  RequestRecord r;
  add_attempts(r, AttemptLog::kInlineRecords + 2);
  r.reset();
  EXPECT_EQ(r.attempt_count, 0u);
  add_attempts(r, AttemptLog::kInlineRecords + 1);
  const AttemptRecord& a = r.attempts[AttemptLog::kInlineRecords];
  EXPECT_EQ(a.backend, AttemptLog::kInlineRecords);
  EXPECT_EQ(a.cause, FailureCause::None);
  EXPECT_EQ(a.cooldown_ms, 0);
}

}  // namespace
}  // namespace smartlb
