#pragma once
// Minimal blocking HTTP/1.1 client for the simulator's integration tests. One keep-alive
// connection; records each chunk of a chunked body separately (to check event-per-write).

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace smartlb::sim::test {

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;        // lower-case names
  std::string body;                                  // whole body (chunks concatenated)
  std::vector<std::string> chunks;                   // chunked bodies: one entry per chunk
  boost::beast::error_code error;                    // set when the exchange failed
  std::chrono::steady_clock::time_point headers_at;  // when the header was parsed
  std::chrono::steady_clock::time_point done_at;     // when the exchange ended
  std::string header(const std::string& name) const {
    const auto found = headers.find(name);
    return found == headers.end() ? std::string("<absent>") : found->second;
  }
};

class HttpTestClient {
 public:
  explicit HttpTestClient(std::uint16_t port) : socket_(io_) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }

  /// `each_chunk`, when given, sees every chunk of a chunked body as it arrives (from this
  /// thread), e.g. to tell another thread how far a stream got.
  HttpResult request(const std::string& method, const std::string& target, const std::string& body = "",
                     const std::vector<std::pair<std::string, std::string>>& headers = {},
                     const std::function<void(const std::string&)>& each_chunk = {}) {
    namespace http = boost::beast::http;
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : headers) req.set(name, value);
    req.body() = body;
    req.prepare_payload();

    HttpResult result;
    http::write(socket_, req, result.error);
    if (result.error) return result;

    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    std::string current_chunk;
    auto on_chunk = [&](std::uint64_t remain, std::string_view data,
                        boost::beast::error_code&) -> std::size_t {
      current_chunk.append(data);
      result.body.append(data);
      if (remain == data.size()) {
        result.chunks.push_back(std::exchange(current_chunk, {}));
        if (each_chunk) each_chunk(result.chunks.back());
      }
      return data.size();
    };
    parser.on_chunk_body(on_chunk);

    http::read_header(socket_, buffer_, parser, result.error);
    result.headers_at = std::chrono::steady_clock::now();
    if (!result.error) http::read(socket_, buffer_, parser, result.error);
    result.done_at = std::chrono::steady_clock::now();

    const auto& response = parser.get();
    result.status = static_cast<int>(response.result_int());
    for (const auto& field : response) {
      std::string name(field.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      result.headers[name] = std::string(field.value());
    }
    if (!response.chunked()) result.body = response.body();
    return result;
  }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace smartlb::sim::test
