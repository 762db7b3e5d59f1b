#pragma once
// For the admin integration tests: a tiny scripted backend on 127.0.0.1 (its own thread),
// a blocking HTTP client, and an observer that lets a test await finished requests.
#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>

#include "net/beast.hpp"
#include "smartlb/metrics.hpp"

namespace smartlb::test {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

struct MockReply {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  // One entry: a Content-Length body. Several: a chunked body, one write per entry.
  std::vector<std::string> chunks;
};

struct SeenRequest {
  std::string target;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

// Answers every request with handler(request). Keep-alive; one coroutine per connection.
class MockBackend {
 public:
  using Handler = std::function<MockReply(const SeenRequest&)>;

  explicit MockBackend(Handler h) : handler_(std::move(h)), acceptor_(ioc_) {
    const tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(ep.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(ep);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    asio::co_spawn(ioc_, accept_loop(), asio::detached);
    thread_ = std::thread([this] { ioc_.run(); });
  }
  ~MockBackend() {
    asio::post(ioc_, [this] {
      beast::error_code ignored;
      acceptor_.close(ignored);
      ioc_.stop();
    });
    thread_.join();
  }

  std::uint16_t port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<SeenRequest> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      asio::co_spawn(ioc_, session(std::move(socket)), asio::detached);
    }
  }

  asio::awaitable<void> session(tcp::socket socket) {
    constexpr auto tuple = asio::as_tuple(asio::use_awaitable);
    beast::flat_buffer buffer;
    for (;;) {
      http::request<http::string_body> req;
      auto [ec, n] = co_await http::async_read(socket, buffer, req, tuple);
      if (ec) co_return;
      SeenRequest seen;
      seen.target = std::string(req.target());
      for (const auto& f : req) {
        std::string name(f.name_string());
        for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        seen.headers[name] = std::string(f.value());
      }
      seen.body = req.body();
      {
        std::lock_guard lock(mutex_);
        seen_.push_back(seen);
      }
      const MockReply r = handler_(seen);
      std::string head = "HTTP/1.1 " + std::to_string(r.status) + " " +
                         std::string(http::obsolete_reason(static_cast<http::status>(r.status))) + "\r\n";
      head += "Content-Type: " + r.content_type + "\r\n";
      for (const auto& [k, v] : r.headers) head += k + ": " + v + "\r\n";
      if (r.chunks.size() == 1) {
        head += "Content-Length: " + std::to_string(r.chunks[0].size()) + "\r\n\r\n" + r.chunks[0];
        auto [wec, wn] = co_await asio::async_write(socket, asio::buffer(head), tuple);
        if (wec) co_return;
        continue;
      }
      head += "Transfer-Encoding: chunked\r\n\r\n";
      auto [wec, wn] = co_await asio::async_write(socket, asio::buffer(head), tuple);
      if (wec) co_return;
      for (const auto& c : r.chunks) {
        char size[32];
        std::snprintf(size, sizeof size, "%zx\r\n", c.size());
        const std::string piece = std::string(size) + c + "\r\n";
        auto [cec, cn] = co_await asio::async_write(socket, asio::buffer(piece), tuple);
        if (cec) co_return;
      }
      auto [eec, en] = co_await asio::async_write(socket, asio::buffer(std::string_view("0\r\n\r\n")), tuple);
      if (eec) co_return;
    }
  }

  Handler handler_;
  asio::io_context ioc_;
  tcp::acceptor acceptor_;
  std::uint16_t port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<SeenRequest> seen_;
};

struct HttpReply {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string error;  // set when the exchange failed
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string("<absent>") : it->second;
  }
};

inline HttpReply http_request(std::uint16_t port, const std::string& method, const std::string& target,
                              const std::string& body = "",
                              const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  HttpReply out;
  try {
    asio::io_context ioc;
    tcp::socket socket(ioc);
    socket.connect({asio::ip::make_address("127.0.0.1"), port});
    http::request<http::string_body> req{http::string_to_verb(method), target, 11};
    req.set(http::field::host, "127.0.0.1");
    if (!body.empty()) req.set(http::field::content_type, "application/json");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    http::write(socket, req);
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    if (method == "HEAD") parser.skip(true);
    http::read(socket, buffer, parser);
    const auto& res = parser.get();
    out.status = res.result_int();
    for (const auto& f : res) {
      std::string name(f.name_string());
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[name] = std::string(f.value());
    }
    out.body = res.body();
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

// Forwards to Metrics and lets a test wait until a number of requests have finished.
class AwaitableObserver final : public RequestObserver {
 public:
  explicit AwaitableObserver(Metrics& m) : metrics_(m) {}
  void on_request_start() override { metrics_.on_request_start(); }
  void on_request(const RequestRecord& rec) override {
    metrics_.on_request(rec);
    std::lock_guard lock(mutex_);
    ++finished_;
    cv_.notify_all();
  }
  // True once `n` requests have finished; false after a generous safety deadline (a hang,
  // not a timing assertion).
  bool wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return finished_ >= n; });
  }

 private:
  Metrics& metrics_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::size_t finished_ = 0;
};

}  // namespace smartlb::test
