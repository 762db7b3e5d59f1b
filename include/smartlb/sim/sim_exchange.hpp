#pragma once
// Transport-free request and response of the simulator: the Beast server converts to and from
// these, the engine only sees these.

#include "smartlb/sim/response_bodies.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace smartlb::sim {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

struct SimRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path with query
  HeaderList headers;  // as received (names in any case)
  std::string body;
};

/// First value of header `name` (case-insensitive), or nullopt.
std::optional<std::string_view> find_header(const HeaderList& headers, std::string_view name);

struct SimResponse {
  int status = 200;
  std::string content_type = "application/json";
  HeaderList headers;  // besides Content-Type / Content-Length / Transfer-Encoding
  std::string body;    // non-stream answers

  bool stream = false;  // SSE: send `events`, one chunked write each
  std::vector<StreamEvent> events;

  std::chrono::milliseconds latency{0};         // before the headers
  std::chrono::milliseconds chunk_interval{0};  // before each content event
  std::chrono::milliseconds first_token{0};     // stream: before the first content event (and its
                                                // chunk_interval); else before the headers
  std::chrono::milliseconds stall{0};
  bool stall_before_headers = false;
  int stall_after_events = 0;             // stream: stall once this many events were written
  std::optional<int> reset_after_events;  // TCP reset once this many events were written
                                          // (non-stream: any value = reset after the headers)
  bool reset_before_headers = false;      // TCP reset instead of any answer
};

/// An answer of `status` with a JSON `body`.
SimResponse json_response(int status, std::string body);
/// A 400 in the error shape of the Files, Batches and Responses APIs (error_bodies.hpp).
SimResponse bad_request_response(std::string_view message, std::optional<std::string_view> code,
                                 std::optional<std::string_view> param);

}  // namespace smartlb::sim
