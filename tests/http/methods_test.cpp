#include "smartlb/http/methods.hpp"

#include <gtest/gtest.h>

namespace smartlb {
namespace methods_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(ApiMethods, TheApisMethodsAreAccepted) {
  for (auto m : {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"})
    EXPECT_TRUE(http::is_api_method(m)) << m;
}

TEST(ApiMethods, OtherTokensAreNot) {
  for (auto m : {"FOO", "TRACE", "CONNECT", "PROPFIND", "PURGE", "QUERY", "", "GETS", "POS", "OPTION"})
    EXPECT_FALSE(http::is_api_method(m)) << m;
}

TEST(ApiMethods, MethodsAreCaseSensitive) {
  for (auto m : {"get", "Get", "post", "pOST", "delete", "options", "Head"})
    EXPECT_FALSE(http::is_api_method(m)) << m;
}

TEST(ApiMethods, AllowListsExactlyTheAcceptedMethods) {
  std::string_view allow = http::kApiMethodsAllow;
  int listed = 0;
  while (!allow.empty()) {
    const auto comma = allow.find(", ");
    const auto m = allow.substr(0, comma);
    EXPECT_TRUE(http::is_api_method(m)) << m;
    ++listed;
    allow = comma == std::string_view::npos ? std::string_view() : allow.substr(comma + 2);
  }
  EXPECT_EQ(listed, 7);
}

}  // namespace methods_test
}  // namespace smartlb
