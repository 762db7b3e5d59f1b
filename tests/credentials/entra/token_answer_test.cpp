#include <gtest/gtest.h>

#include "smartlb/credentials/entra/token_request.hpp"

namespace smartlb::credentials::entra {
namespace token_answer_test {  // named, not anonymous: tests/CMakeLists.txt

using namespace std::chrono_literals;
const WallTime kNow{std::chrono::seconds(1'800'000'000)};

TEST(TokenAnswer, V2EndpointExpiresInAsNumber) {
  const auto a = parse_token_answer(
      200, R"({"token_type":"Bearer","expires_in":3599,"ext_expires_in":3599,"access_token":"eyJ0.abc"})",
      kNow);
  ASSERT_TRUE(a.token) << a.error;
  EXPECT_EQ(a.token->token, "eyJ0.abc");
  EXPECT_EQ(a.token->expires_at, kNow + 3599s);
}

TEST(TokenAnswer, ImdsStringsPreferExpiresIn) {
  const auto a =
      parse_token_answer(200,
                         R"({"access_token":"tok","refresh_token":"","expires_in":"86399",)"
                         R"("expires_on":"1","not_before":"1799999700",)"
                         R"("resource":"https://cognitiveservices.azure.com","token_type":"Bearer"})",
                         kNow);
  ASSERT_TRUE(a.token) << a.error;
  EXPECT_EQ(a.token->expires_at, kNow + 86399s);
}

TEST(TokenAnswer, AppServiceExpiresOnAsEpochString) {
  const auto a = parse_token_answer(
      200,
      R"({"access_token":"tok","expires_on":"1800003600","resource":"https://cognitiveservices.azure.com",)"
      R"("token_type":"Bearer","client_id":"abc"})",
      kNow);
  ASSERT_TRUE(a.token) << a.error;
  EXPECT_EQ(a.token->expires_at, WallTime(std::chrono::seconds(1'800'003'600)));
}

TEST(TokenAnswer, ExpiresOnAsNumber) {
  const auto a = parse_token_answer(200, R"({"access_token":"tok","expires_on":1800000060})", kNow);
  ASSERT_TRUE(a.token) << a.error;
  EXPECT_EQ(a.token->expires_at, kNow + 60s);
}

TEST(TokenAnswer, ErrorsNameWhatIsWrong) {
  EXPECT_EQ(parse_token_answer(200, R"({"expires_in":3600})", kNow).error, "the answer has no access_token");
  EXPECT_EQ(parse_token_answer(200, R"({"access_token":"t"})", kNow).error,
            "the answer has neither expires_in nor expires_on");
  EXPECT_EQ(parse_token_answer(200, R"({"access_token":"t","expires_in":"soon"})", kNow).error,
            "the answer's expires_in is not a positive number of seconds");
  EXPECT_EQ(parse_token_answer(200, R"({"access_token":"t","expires_in":0})", kNow).error,
            "the answer's expires_in is not a positive number of seconds");
  EXPECT_EQ(parse_token_answer(200, R"({"access_token":"t","expires_on":"1799999999"})", kNow).error,
            "the answer's expires_on is in the past (is this machine's clock right?)");
  EXPECT_EQ(parse_token_answer(200, R"({"access_token":"t","expires_on":"18000023600"})", kNow).error,
            "the answer's expires_on is not a number of seconds since 1970 within ten years");
  EXPECT_EQ(parse_token_answer(200, R"({"access_token":"t","expires_in":1e300})", kNow).error,
            "the answer's expires_in is not a positive number of seconds");
  EXPECT_EQ(parse_token_answer(200, "<html>", kNow).error,
            "token endpoint answered HTTP 200 without a JSON object");
  EXPECT_EQ(parse_token_answer(200, R"({"access_token":"t","token_type":"pop","expires_in":1})", kNow).error,
            "the answer's token_type is \"pop\", not Bearer");
}

TEST(TokenAnswer, ATokenThatCannotBeAHeaderIsRefusedWithoutShowingIt) {
  const auto a = parse_token_answer(200, R"({"access_token":"abc\r\nX-Evil: 1","expires_in":60})", kNow);
  EXPECT_FALSE(a.token);
  EXPECT_EQ(a.error.find("abc"), std::string::npos);
  EXPECT_EQ(a.error.find("Evil"), std::string::npos);
}

TEST(TokenAnswer, OAuthErrorAnswerIsQuoted) {
  const auto a = parse_token_answer(
      401,
      R"({"error":"invalid_client","error_description":"AADSTS7000215: Invalid client secret provided."})",
      kNow);
  EXPECT_FALSE(a.token);
  EXPECT_EQ(
      a.error,
      "token endpoint answered HTTP 401 (invalid_client: AADSTS7000215: Invalid client secret provided.)");
}

TEST(TokenAnswer, ManagedIdentityErrorShapesAreQuoted) {
  EXPECT_EQ(parse_token_answer(
                400, R"({"statusCode":400,"message":"Unable to load the proper Managed Identity."})", kNow)
                .error,
            "token endpoint answered HTTP 400 (Unable to load the proper Managed Identity.)");
  EXPECT_EQ(parse_token_answer(404, R"({"error":{"code":"NotFound","message":"no identity"}})", kNow).error,
            "token endpoint answered HTTP 404 (NotFound: no identity)");
  EXPECT_EQ(parse_token_answer(503, "busy", kNow).error, "token endpoint answered HTTP 503");
}

TEST(TokenAnswer, AnErrorAnswerNeverEchoesAToken) {
  const auto a = parse_token_answer(500, R"({"access_token":"leaked","error":"server_error"})", kNow);
  EXPECT_EQ(a.error.find("leaked"), std::string::npos);
}

TEST(FormEncode, KeepsUnreservedAndEscapesTheRest) {
  EXPECT_EQ(form_encode("aZ09-._~"), "aZ09-._~");
  EXPECT_EQ(form_encode("a b&c=d/e+f%"), "a%20b%26c%3Dd%2Fe%2Bf%25");
}

}  // namespace token_answer_test
}  // namespace smartlb::credentials::entra
