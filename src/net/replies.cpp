#include "smartlb/net/replies.hpp"

#include "smartlb/http/error_body.hpp"

namespace smartlb::net {

Task<error_code> write_error_reply(io::TimedSocket& stream, const ErrorReply& r,
                                   std::chrono::seconds timeout) {
  beast::http::response<beast::http::string_body> res{r.status, r.version};
  res.set(beast::http::field::server, "smartlb");
  res.set(beast::http::field::content_type, "application/json");
  if (!r.request_id.empty()) res.set("x-request-id", r.request_id);
  if (r.retry_after) {
    const auto ms = std::max<long long>(r.retry_after->count(), 1);
    res.set(beast::http::field::retry_after, std::to_string((ms + 999) / 1000));
    res.set("retry-after-ms", std::to_string(ms));
  }
  if (!r.allow.empty()) res.set(beast::http::field::allow, r.allow);
  for (std::string_view rest = r.extra_fields; !rest.empty();) {
    const auto end = rest.find("\r\n");
    const std::string_view line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    if (const auto colon = line.find(": "); colon != std::string_view::npos)
      res.set(line.substr(0, colon), line.substr(colon + 2));
  }
  if (!r.www_authenticate.empty()) res.set(beast::http::field::www_authenticate, r.www_authenticate);
  res.body() = r.body.empty() ? http::openai_error_json(r.message, r.type, r.code) : std::string(r.body);
  res.keep_alive(r.keep_alive);
  res.prepare_payload();
  stream.expires_after(timeout);
  auto [ec, n] = co_await beast::http::async_write(stream, res, use_tuple);
  co_return stream.done(ec);
}

}  // namespace smartlb::net
