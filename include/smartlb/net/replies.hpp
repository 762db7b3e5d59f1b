#pragma once
// Answers the proxy writes itself, in OpenAI's JSON error shape.
#include <chrono>
#include <optional>
#include <string_view>

#include "smartlb/io/beast.hpp"
#include "smartlb/io/timed_socket.hpp"
#include "smartlb/net/io_vocabulary.hpp"

namespace smartlb::net {

struct ErrorReply {
  beast::http::status status = beast::http::status::bad_request;
  std::string_view message;
  std::string_view type = "invalid_request_error";
  std::string_view code;
  unsigned version = 11;
  bool keep_alive = false;
  std::optional<std::chrono::milliseconds> retry_after;  // sets Retry-After and retry-after-ms
  std::string_view allow;                                // sets Allow (a 405)
  std::string_view www_authenticate;                     // sets WWW-Authenticate (a 401 for a token)
  std::string_view request_id;
  std::string_view extra_fields;  // "Name: value\r\n" lines (the caller's x-ratelimit-* budget)
  std::string_view body;          // a JSON body of smartlb's own that is no error (a model list)
};

// Writes the reply; returns the write's error (the caller closes on error).
Task<error_code> write_error_reply(io::TimedSocket& stream, const ErrorReply& r,
                                   std::chrono::seconds timeout);

}  // namespace smartlb::net
