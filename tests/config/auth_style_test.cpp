#include <gtest/gtest.h>

#include "smartlb/config/config.hpp"

namespace smartlb {
namespace {

TEST(AuthStyle, EveryStyleIsFoundByItsName) {
  for (AuthStyle a : {AuthStyle::Auto, AuthStyle::ApiKey, AuthStyle::Bearer, AuthStyle::XApiKey,
                      AuthStyle::Apim, AuthStyle::Entra})
    EXPECT_EQ(auth_style_named(to_string(a)), a);
  EXPECT_EQ(auth_style_named("x-api-key"), AuthStyle::XApiKey);
  EXPECT_EQ(auth_style_named("apim"), AuthStyle::Apim);
  EXPECT_FALSE(auth_style_named("basic"));
  EXPECT_FALSE(auth_style_named("API-KEY"));
}

}  // namespace
}  // namespace smartlb
