// The answer of any Entra ID token source. The sources disagree on how they say when a token
// expires: the v2.0 endpoint sends `expires_in` as a number, IMDS sends `expires_in` and
// `expires_on` as strings, App Service `expires_on` only, as a string of epoch seconds.
#include <nlohmann/json.hpp>

#include <charconv>

#include "smartlb/credentials/entra/token_request.hpp"

namespace smartlb::credentials::entra {
namespace {

using json = nlohmann::json;

// A number of seconds given as a JSON integer or a string of digits.
std::optional<std::int64_t> seconds_of(const json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();  // NaN fails both comparisons
    if (!(d >= 0 && d < 1e15)) return std::nullopt;
    return static_cast<std::int64_t>(d);
  }
  if (!v.is_string()) return std::nullopt;
  const auto& s = v.get_ref<const std::string&>();
  std::int64_t n = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return n;
}

// Printable text of a server's message, shortened: safe for a log line.
std::string printable(std::string_view s, std::size_t limit = 300) {
  std::string out;
  for (char c : s.substr(0, limit)) out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
  if (s.size() > limit) out += "...";
  return out;
}

// What an error answer says: OAuth's `error` + `error_description`, or `{"error": {"code",
// "message"}}`, or App Service's `message`.
std::string error_text(const json& j) {
  std::string out;
  const auto add = [&](const json& v) {
    if (!v.is_string()) return;
    if (!out.empty()) out += ": ";
    out += v.get<std::string>();
  };
  if (auto e = j.find("error"); e != j.end()) {
    if (e->is_object()) {
      if (auto c = e->find("code"); c != e->end()) add(*c);
      if (auto m = e->find("message"); m != e->end()) add(*m);
    } else {
      add(*e);
    }
  }
  if (auto d = j.find("error_description"); d != j.end()) add(*d);
  if (out.empty())
    if (auto m = j.find("message"); m != j.end()) add(*m);
  if (out.empty())
    if (auto m = j.find("Message"); m != j.end()) add(*m);
  return printable(out);
}

bool header_safe(std::string_view token) {
  for (unsigned char c : token)
    if (c <= 0x20 || c >= 0x7f) return false;
  return !token.empty();
}

}  // namespace

TokenAnswer parse_token_answer(unsigned status, std::string_view body, WallTime now) {
  TokenAnswer a;
  json j = json::parse(body.begin(), body.end(), nullptr, false);
  if (status < 200 || status > 299) {
    a.error = "token endpoint answered HTTP " + std::to_string(status);
    if (j.is_object()) {
      if (std::string why = error_text(j); !why.empty()) a.error += " (" + why + ")";
    }
    return a;
  }
  if (!j.is_object()) {
    a.error = "token endpoint answered HTTP " + std::to_string(status) + " without a JSON object";
    return a;
  }
  const auto token = j.find("access_token");
  if (token == j.end() || !token->is_string() || token->get_ref<const std::string&>().empty()) {
    a.error = "the answer has no access_token";
    return a;
  }
  if (!header_safe(token->get_ref<const std::string&>())) {
    a.error = "the answer's access_token holds characters a header cannot carry";  // value not shown
    return a;
  }
  if (auto t = j.find("token_type"); t != j.end() && t->is_string()) {
    std::string type = t->get<std::string>();
    for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (type != "bearer") {
      a.error = "the answer's token_type is \"" + printable(t->get<std::string>(), 40) + "\", not Bearer";
      return a;
    }
  }
  WallTime expires;
  constexpr std::int64_t kTenYears = 10LL * 365 * 86400;  // more is a mistake (and would overflow)
  if (auto in = j.find("expires_in"); in != j.end()) {
    const auto s = seconds_of(*in);
    if (!s || *s <= 0 || *s > kTenYears) {
      a.error = "the answer's expires_in is not a positive number of seconds";
      return a;
    }
    expires = now + std::chrono::seconds(*s);
  } else if (auto on = j.find("expires_on"); on != j.end()) {
    const auto s = seconds_of(*on);
    const auto now_s = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    if (!s || *s <= 0 || *s > now_s + kTenYears) {
      a.error = "the answer's expires_on is not a number of seconds since 1970 within ten years";
      return a;
    }
    expires = WallTime(std::chrono::seconds(*s));
    if (expires <= now) {
      a.error = "the answer's expires_on is in the past (is this machine's clock right?)";
      return a;
    }
  } else {
    a.error = "the answer has neither expires_in nor expires_on";
    return a;
  }
  a.token = AccessToken{token->get<std::string>(), expires};
  return a;
}

}  // namespace smartlb::credentials::entra
