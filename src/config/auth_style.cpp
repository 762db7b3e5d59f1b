// BACKEND_X_AUTH's and `auth:`'s names of the credential styles.
#include <array>
#include <utility>

#include "smartlb/config/config.hpp"

namespace smartlb::config {
namespace {
constexpr std::array<std::pair<AuthStyle, std::string_view>, 6> kNames{{
    {AuthStyle::Auto, "auto"},
    {AuthStyle::ApiKey, "api-key"},
    {AuthStyle::Bearer, "bearer"},
    {AuthStyle::XApiKey, "x-api-key"},
    {AuthStyle::Apim, "apim"},
    {AuthStyle::Entra, "entra"},
}};
}  // namespace

std::string_view to_string(AuthStyle a) {
  for (const auto& [style, name] : kNames)
    if (style == a) return name;
  return "auto";
}

std::optional<AuthStyle> auth_style_named(std::string_view name) {
  for (const auto& [style, n] : kNames)
    if (n == name) return style;
  return std::nullopt;
}

}  // namespace smartlb::config
