#include <gtest/gtest.h>

#include "smartlb/config/config.hpp"

namespace smartlb {
namespace auth_style_test {  // named, not anonymous: tests/CMakeLists.txt

TEST(AuthStyle, EveryStyleIsFoundByItsName) {
  for (config::AuthStyle a : {config::AuthStyle::Auto, config::AuthStyle::ApiKey, config::AuthStyle::Bearer,
                              config::AuthStyle::XApiKey, config::AuthStyle::Apim, config::AuthStyle::Entra})
    EXPECT_EQ(config::auth_style_named(to_string(a)), a);
  EXPECT_EQ(config::auth_style_named("x-api-key"), config::AuthStyle::XApiKey);
  EXPECT_EQ(config::auth_style_named("apim"), config::AuthStyle::Apim);
  EXPECT_FALSE(config::auth_style_named("basic"));
  EXPECT_FALSE(config::auth_style_named("API-KEY"));
}

}  // namespace auth_style_test
}  // namespace smartlb
