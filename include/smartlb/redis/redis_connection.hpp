#pragma once
// One connection to Redis over Asio: TCP, or TLS (rediss://) with SNI and host-name
// verification. Commands are pipelined: each is written as soon as it is sent and its callback
// waits in a FIFO for the reply in order. A command unanswered after the command timeout marks
// the connection lost (a slow Redis is a lost Redis): it closes, and every pending callback
// gets a failure. Pub/sub messages ("message" pushes) go to the push handler.
// Single-threaded: use it only on the executor it was opened on. Includes Asio: only the redis
// module's sources and its tests include this header.
#include <chrono>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "smartlb/config/redis_url.hpp"
#include "smartlb/io/beast.hpp"
#include "smartlb/redis/redis_value.hpp"
#include "smartlb/redis/resp.hpp"

namespace smartlb::redis {

struct RedisEndpoint {
  config::RedisUrl url;
  std::string client_name;                          // CLIENT SETNAME (empty: not set)
  std::chrono::milliseconds connect_timeout{2000};  // resolve + TCP + TLS + AUTH/SELECT
  std::chrono::milliseconds command_timeout{200};
};

class RedisConnection : public std::enable_shared_from_this<RedisConnection> {
 public:
  using Executor = io::Executor;
  template <class T = void>
  using Task = io::Task<T>;

  struct OpenResult {
    std::shared_ptr<RedisConnection> connection;  // null on failure
    std::string error;                            // why (never holds the password)
    bool auth_rejected = false;                   // Redis refused the credentials (a config error)
  };
  // Connects and sends AUTH (when the URL has a password), SELECT (database != 0) and CLIENT
  // SETNAME. `tls` is required for rediss:// and must outlive the connection.
  static Task<OpenResult> open(RedisEndpoint endpoint, io::ssl::context* tls);

  RedisConnection(Executor ex, RedisEndpoint endpoint, io::ssl::context* tls);
  ~RedisConnection();

  // Pipelined: queued for writing at once; `done` (may be empty) runs with the reply, or with a
  // failure when the connection is or becomes lost.
  void send(std::span<const std::string> args, RedisCallback done);
  void send(std::initializer_list<std::string> args, RedisCallback done) {
    send(std::span<const std::string>(args.begin(), args.size()), std::move(done));
  }
  // Sends and awaits the result.
  Task<RedisResult> call(std::vector<std::string> args);

  // Pub/sub messages: the value is ["message", channel, payload] (or "pmessage" ...).
  void on_push(std::function<void(const RedisValue&)> handler) { push_handler_ = std::move(handler); }
  // Told once when the connection is lost (not when close() is called).
  void on_lost(std::function<void(const std::string&)> handler) { lost_handler_ = std::move(handler); }

  void close() { fail("closed", false); }
  bool is_open() const { return open_; }
  std::size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    RedisCallback done;
    std::chrono::steady_clock::time_point sent;
  };
  using Stream = io::ssl::stream<io::Socket>;

  Task<std::string> connect();  // "" or why not
  void start();                 // the reader and the watchdog
  Task<> read_loop();
  Task<> write_loop();
  Task<> watchdog();
  void dispatch(RedisValue v);
  void fail(const std::string& why, bool tell);

  Executor ex_;
  RedisEndpoint endpoint_;
  bool tls_;
  Stream stream_;
  io::asio::steady_timer timer_;
  RespReader reader_;
  std::deque<Pending> pending_;
  std::string out_;       // formatted commands waiting for the writer
  bool writing_ = false;  // the write loop runs
  bool open_ = false;
  std::function<void(const RedisValue&)> push_handler_;
  std::function<void(const std::string&)> lost_handler_;
};

}  // namespace smartlb::redis
