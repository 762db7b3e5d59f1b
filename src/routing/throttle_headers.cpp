#include "smartlb/routing/throttle_headers.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <ctime>
#include <vector>

#include "smartlb/base/text.hpp"

namespace smartlb::routing {
namespace {

using std::chrono::milliseconds;

// A non-negative decimal ("12", "1.5", ".5"); nullopt for anything else.
std::optional<double> parse_decimal(std::string_view v) {
  if (v.empty() || v.size() > 32) return std::nullopt;
  double d = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc{} || p != v.data() + v.size()) return std::nullopt;
  if (!std::isfinite(d) || d < 0) return std::nullopt;
  // Reject forms from_chars takes but no server means ("1e3" is fine, "inf"/"nan" are gone).
  return d;
}

// A huge value must not overflow the chrono arithmetic; anything past a day is "a long time"
// and the pool clamps it anyway.
constexpr double kMaxMs = 86'400'000.0;

milliseconds to_ms(double ms) {
  return milliseconds(static_cast<long long>(std::ceil(std::min(ms, kMaxMs))));
}

int month_index(std::string_view m) {
  static constexpr std::array<std::string_view, 12> names = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                             "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  for (int i = 0; i < 12; ++i)
    if (names[i] == m) return i;
  return -1;
}

bool parse_int(std::string_view v, int& out) {
  if (v.empty()) return false;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  return ec == std::errc{} && p == v.data() + v.size();
}

bool parse_hms(std::string_view v, std::tm& tm) {
  if (v.size() != 8 || v[2] != ':' || v[5] != ':') return false;
  return parse_int(v.substr(0, 2), tm.tm_hour) && parse_int(v.substr(3, 2), tm.tm_min) &&
         parse_int(v.substr(6, 2), tm.tm_sec) && tm.tm_hour < 24 && tm.tm_min < 60 && tm.tm_sec <= 60;
}

std::vector<std::string_view> split_spaces(std::string_view v) {
  std::vector<std::string_view> out;
  while (!v.empty()) {
    const auto start = v.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    v.remove_prefix(start);
    const auto end = v.find(' ');
    out.push_back(v.substr(0, end));
    if (end == std::string_view::npos) break;
    v.remove_prefix(end);
  }
  return out;
}

}  // namespace

std::optional<milliseconds> parse_number_delay(std::string_view v, bool unit_ms) {
  const auto d = parse_decimal(base::trim_ows(v));
  if (!d) return std::nullopt;
  return to_ms(unit_ms ? *d : *d * 1000.0);
}

std::optional<std::int64_t> parse_remaining(std::string_view v) {
  v = base::trim_ows(v);
  // The usual form, digits, without the cost of a floating-point parse (read on every answer).
  if (!v.empty() && v.size() <= 15) {
    std::int64_t n = 0;
    std::size_t i = 0;
    for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) n = n * 10 + (v[i] - '0');
    if (i == v.size()) return n;
  }
  const auto d = parse_decimal(v);
  // Past 2^53 a double is no longer exact; no quota is that large.
  if (!d || *d > 9'007'199'254'740'992.0) return std::nullopt;
  return static_cast<std::int64_t>(*d);
}

namespace {

// How long until an RFC 3339 time, from `wall_now` (unknown when either is).
std::optional<milliseconds> until_time(std::string_view v, std::chrono::system_clock::time_point wall_now) {
  if (v.empty() || wall_now.time_since_epoch().count() == 0) return std::nullopt;
  const auto at = parse_rfc3339(v);
  if (!at) return std::nullopt;
  const auto ms = std::chrono::ceil<milliseconds>(*at - wall_now);
  return ms.count() < 0 ? milliseconds(0) : to_ms(static_cast<double>(ms.count()));
}

RateLimitReport anthropic_report(const http::ThrottleHeaders& h,
                                 std::chrono::system_clock::time_point wall_now) {
  RateLimitReport r;
  const bool combined = !h.anthropic_tokens_remaining.empty();
  r.remaining_tokens =
      parse_remaining(combined ? h.anthropic_tokens_remaining : h.anthropic_input_tokens_remaining);
  r.remaining_requests = parse_remaining(h.anthropic_requests_remaining);
  if (r.empty()) return r;
  r.reset_tokens = until_time(combined ? h.anthropic_tokens_reset : h.anthropic_input_tokens_reset, wall_now);
  r.reset_requests = until_time(h.anthropic_requests_reset, wall_now);
  return r;
}

}  // namespace

RateLimitReport parse_rate_limit_report(const http::ThrottleHeaders& h,
                                        std::chrono::system_clock::time_point wall_now) {
  RateLimitReport r;
  r.remaining_tokens = parse_remaining(h.remaining_tokens);
  r.remaining_requests = parse_remaining(h.remaining_requests);
  if (r.empty()) {
    if (!h.anthropic_tokens_remaining.empty() || !h.anthropic_input_tokens_remaining.empty() ||
        !h.anthropic_requests_remaining.empty())
      return anthropic_report(h, wall_now);
    return r;
  }
  if (!h.reset_tokens.empty()) r.reset_tokens = parse_duration_string(h.reset_tokens);
  if (!h.reset_requests.empty()) r.reset_requests = parse_duration_string(h.reset_requests);
  return r;
}

std::optional<std::chrono::system_clock::time_point> parse_rfc3339(std::string_view v) {
  v = base::trim_ows(v);
  // YYYY-MM-DDTHH:MM:SS, then fractional seconds, then Z or +HH:MM / -HH:MM.
  if (v.size() < 20 || v[4] != '-' || v[7] != '-' || (v[10] != 'T' && v[10] != 't' && v[10] != ' '))
    return std::nullopt;
  std::tm tm{};
  int year = 0, month = 0;
  if (!parse_int(v.substr(0, 4), year) || !parse_int(v.substr(5, 2), month) ||
      !parse_int(v.substr(8, 2), tm.tm_mday) || !parse_hms(v.substr(11, 8), tm) || month < 1 || month > 12 ||
      tm.tm_mday < 1 || tm.tm_mday > 31)
    return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  std::string_view rest = v.substr(19);
  double fraction = 0;
  if (!rest.empty() && rest.front() == '.') {
    std::size_t i = 1;
    while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
    if (i == 1) return std::nullopt;
    fraction = parse_decimal(std::string("0").append(rest.substr(0, i))).value_or(0);
    rest.remove_prefix(i);
  }
  int offset_minutes = 0;
  if (rest == "Z" || rest == "z") {
  } else if (rest.size() == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':') {
    int hh = 0, mm = 0;
    if (!parse_int(rest.substr(1, 2), hh) || !parse_int(rest.substr(4, 2), mm) || hh > 23 || mm > 59)
      return std::nullopt;
    offset_minutes = (hh * 60 + mm) * (rest[0] == '+' ? 1 : -1);
  } else {
    return std::nullopt;
  }
  const std::time_t t = timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t) - std::chrono::minutes(offset_minutes) +
         std::chrono::duration_cast<std::chrono::system_clock::duration>(
             std::chrono::duration<double>(fraction));
}

std::optional<milliseconds> parse_duration_string(std::string_view v) {
  v = base::trim_ows(v);
  if (v.empty()) return std::nullopt;
  if (auto plain = parse_decimal(v)) return to_ms(*plain * 1000.0);
  double total_ms = 0;
  bool any = false;
  while (!v.empty()) {
    std::size_t i = 0;
    while (i < v.size() && ((v[i] >= '0' && v[i] <= '9') || v[i] == '.')) ++i;
    if (i == 0) return std::nullopt;
    const auto number = parse_decimal(v.substr(0, i));
    if (!number) return std::nullopt;
    v.remove_prefix(i);
    std::size_t j = 0;
    while (j < v.size() && v[j] >= 'a' && v[j] <= 'z') ++j;
    const std::string_view unit = v.substr(0, j);
    v.remove_prefix(j);
    double scale;
    if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1000;
    else if (unit == "m")
      scale = 60'000;
    else if (unit == "h")
      scale = 3'600'000;
    else if (unit == "us" || unit == "µs")
      scale = 0.001;
    else if (unit == "ns")
      scale = 0.000001;
    else
      return std::nullopt;
    total_ms += *number * scale;
    any = true;
  }
  if (!any) return std::nullopt;
  return to_ms(total_ms);
}

std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view v) {
  const auto parts = split_spaces(base::trim_ows(v));
  std::tm tm{};
  if (parts.size() == 6 && parts[0].size() == 4 && parts[0].back() == ',' && parts[5] == "GMT") {
    // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
    int year = 0;
    if (!parse_int(parts[1], tm.tm_mday) || (tm.tm_mon = month_index(parts[2])) < 0 ||
        !parse_int(parts[3], year) || !parse_hms(parts[4], tm))
      return std::nullopt;
    tm.tm_year = year - 1900;
  } else if (parts.size() == 4 && parts[0].back() == ',' && parts[3] == "GMT") {
    // RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
    const std::string_view d = parts[1];
    if (d.size() != 9 || d[2] != '-' || d[6] != '-') return std::nullopt;
    int year = 0;
    if (!parse_int(d.substr(0, 2), tm.tm_mday) || (tm.tm_mon = month_index(d.substr(3, 3))) < 0 ||
        !parse_int(d.substr(7, 2), year) || !parse_hms(parts[2], tm))
      return std::nullopt;
    tm.tm_year = year < 70 ? year + 100 : year;
  } else if (parts.size() == 5) {
    // asctime: Sun Nov  6 08:49:37 1994
    int year = 0;
    if ((tm.tm_mon = month_index(parts[1])) < 0 || !parse_int(parts[2], tm.tm_mday) ||
        !parse_hms(parts[3], tm) || !parse_int(parts[4], year))
      return std::nullopt;
    tm.tm_year = year - 1900;
  } else {
    return std::nullopt;
  }
  if (tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_year < 70 || tm.tm_year > 1100) return std::nullopt;
  // system_clock counts nanoseconds in 64 bits, up to 2262: a later date is read as 2200-01-01
  // (still far past any cooldown, which the caller clamps), never converted past the range.
  if (tm.tm_year >= 300) {
    tm = std::tm{};
    tm.tm_mday = 1;
    tm.tm_year = 300;
  }
  const std::time_t t = timegm(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return std::chrono::system_clock::from_time_t(t);
}

std::optional<milliseconds> parse_retry_hint(const http::ThrottleHeaders& h,
                                             std::chrono::system_clock::time_point wall_now) {
  if (auto ms = parse_number_delay(h.retry_after_ms, true)) return ms;
  if (auto ms = parse_number_delay(h.x_ms_retry_after_ms, true)) return ms;
  if (auto s = parse_number_delay(h.retry_after, false)) return s;
  if (auto date = parse_http_date(h.retry_after)) {
    const auto delta = std::chrono::duration_cast<milliseconds>(*date - wall_now);
    return std::max(delta, milliseconds(0));  // a date in the past: come back now
  }
  // Reset headers: prefer the limit that is exhausted; with no remaining-* information, the
  // longer of the two is the safe answer.
  const auto requests = parse_duration_string(h.reset_requests);
  const auto tokens = parse_duration_string(h.reset_tokens);
  const bool requests_out = base::trim_ows(h.remaining_requests) == "0";
  const bool tokens_out = base::trim_ows(h.remaining_tokens) == "0";
  if (requests_out && tokens_out && requests && tokens) return std::max(*requests, *tokens);
  if (requests_out && requests) return requests;
  if (tokens_out && tokens) return tokens;
  if (requests && tokens) return std::max(*requests, *tokens);
  if (requests) return requests;
  if (tokens) return tokens;
  return std::nullopt;
}

}  // namespace smartlb::routing
