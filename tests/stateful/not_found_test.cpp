#include "smartlb/stateful/not_found.hpp"

#include <gtest/gtest.h>

namespace smartlb::stateful {
namespace not_found_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(NotFound, A404IsNotFound) { EXPECT_TRUE(says_not_found(404, "")); }

TEST(NotFound, A400ThatSaysSoInOpenAIsErrorShape) {
  EXPECT_TRUE(says_not_found(
      400,
      R"({"error":{"message":"Previous response with id 'resp_1' not found.","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}})"));
  EXPECT_TRUE(says_not_found(400, R"({"error":{"message":"x","code":"file_not_found"}})"));
  EXPECT_TRUE(
      says_not_found(400, R"({"error":{"message":"No assistant found with id 'asst_1'.","code":null}})"));
  EXPECT_TRUE(says_not_found(400, R"({"error":{"message":"The file does not exist."}})"));
}

TEST(NotFound, OtherAnswersAreTheRequestsOwn) {
  EXPECT_FALSE(says_not_found(
      400, R"({"error":{"message":"Invalid value for 'temperature'.","code":"invalid_value"}})"));
  EXPECT_FALSE(says_not_found(400, R"({"message":"not found"})")) << "not in the error object";
  EXPECT_FALSE(says_not_found(400, R"({"error":{"param":"not found"}})"));
  EXPECT_FALSE(says_not_found(400, "not found"));
  EXPECT_FALSE(says_not_found(400, R"({"error":{"message":"not found")")) << "cut short";
  EXPECT_FALSE(says_not_found(200, R"({"error":{"code":"not_found"}})"));
  EXPECT_FALSE(says_not_found(429, ""));
  EXPECT_FALSE(says_not_found(500, ""));
}

}  // namespace not_found_test
}  // namespace smartlb::stateful
