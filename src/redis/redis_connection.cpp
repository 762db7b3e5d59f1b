#include "smartlb/redis/redis_connection.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/write.hpp>

namespace smartlb::redis {

using namespace smartlb::io;

RedisConnection::RedisConnection(Executor ex, RedisEndpoint endpoint, ssl::context* tls)
    : ex_(ex),
      endpoint_(std::move(endpoint)),
      tls_(endpoint_.url.tls),
      stream_(Socket(ex), *tls),
      timer_(ex) {}

RedisConnection::~RedisConnection() = default;

namespace {

// What a refused AUTH looks like: WRONGPASS (Redis 6+ ACLs) or "invalid password" (older).
bool is_auth_refusal(const std::string& error) {
  return error.rfind("WRONGPASS", 0) == 0 || error.find("invalid password") != std::string::npos ||
         error.find("invalid username-password") != std::string::npos;
}

}  // namespace

Task<RedisConnection::OpenResult> RedisConnection::open(RedisEndpoint endpoint, ssl::context* tls) {
  auto ex = co_await asio::this_coro::executor;
  OpenResult result;
  if (endpoint.url.tls && tls == nullptr) {
    result.error = "rediss:// needs a TLS context";
    co_return result;
  }
  // A placeholder context for plain TCP: the stream type is the same either way.
  static ssl::context plain(ssl::context::tls_client);
  auto c = std::make_shared<RedisConnection>(ex, endpoint, tls ? tls : &plain);
  if (std::string why = co_await c->connect(); !why.empty()) {
    c->fail(why, false);
    result.error = std::move(why);
    co_return result;
  }
  c->open_ = true;
  c->start();
  // Bounded like the connect: a server that accepts but never answers is a lost one.
  const config::RedisUrl& url = c->endpoint_.url;
  std::vector<std::vector<std::string>> hello;
  if (!url.password.empty()) {
    if (url.user.empty())
      hello.push_back({"AUTH", url.password});
    else
      hello.push_back({"AUTH", url.user, url.password});
  }
  if (url.database != 0) hello.push_back({"SELECT", std::to_string(url.database)});
  if (!c->endpoint_.client_name.empty()) hello.push_back({"CLIENT", "SETNAME", c->endpoint_.client_name});
  hello.push_back({"PING"});
  for (auto& command : hello) {
    const std::string verb = command.front();
    RedisResult r = co_await c->call(std::move(command));
    if (r.ok()) continue;
    c->close();
    if (verb == "AUTH") {
      result.auth_rejected = r.value.has_value() && is_auth_refusal(r.failure);
      result.error = "AUTH refused: " + r.failure;  // Redis never echoes the password
    } else if (r.value && r.failure.rfind("NOAUTH", 0) == 0) {
      result.auth_rejected = true;
      result.error = "the server requires a password (REDIS_URL has none)";
    } else {
      result.error = verb + " failed: " + r.failure;
    }
    co_return result;
  }
  result.connection = std::move(c);
  co_return result;
}

Task<std::string> RedisConnection::connect() {
  // One deadline for resolve, connect and handshake: on expiry the socket is closed, which
  // ends whichever of them is under way.
  auto self = shared_from_this();
  // Shared with the timer's handler, which may run after this coroutine ended.
  struct Deadline {
    bool expired = false, finished = false;
  };
  auto deadline = std::make_shared<Deadline>();
  timer_.expires_after(endpoint_.connect_timeout);
  timer_.async_wait([self, deadline](error_code ec) {
    if (ec || deadline->finished) return;
    deadline->expired = true;
    error_code ignored;
    self->stream_.next_layer().close(ignored);
  });
  struct Finish {
    asio::steady_timer& t;
    Deadline& d;
    ~Finish() {
      d.finished = true;
      t.cancel();
    }
  } finish{timer_, *deadline};
  const bool& expired = deadline->expired;
  const std::string& host = endpoint_.url.host;
  const std::string where = host + ":" + std::to_string(endpoint_.url.port);
  asio::ip::basic_resolver<tcp, Executor> resolver(ex_);
  auto [rec, results] = co_await resolver.async_resolve(host, std::to_string(endpoint_.url.port), use_tuple);
  if (rec) co_return "cannot resolve " + host + ": " + rec.message();
  if (expired) co_return "connecting to " + where + " timed out";
  auto [cec, ep] = co_await asio::async_connect(stream_.next_layer(), results, use_tuple);
  if (expired) co_return "connecting to " + where + " timed out";
  if (cec) co_return "cannot connect to " + where + ": " + cec.message();
  error_code ignored;
  stream_.next_layer().set_option(tcp::no_delay(true), ignored);
  if (tls_) {
    error_code ip_ec;
    asio::ip::make_address(host, ip_ec);
    if (ip_ec) SSL_set_tlsext_host_name(stream_.native_handle(), host.c_str());  // SNI: names only
    stream_.set_verify_mode(ssl::verify_peer);
    stream_.set_verify_callback(ssl::host_name_verification(host));
    auto [hec] = co_await stream_.async_handshake(ssl::stream_base::client, use_tuple);
    if (expired) co_return "TLS handshake with " + where + " timed out";
    if (hec) co_return "TLS handshake with " + where + " failed: " + hec.message();
  }
  co_return "";
}

void RedisConnection::start() {
  auto self = shared_from_this();
  asio::co_spawn(
      ex_, [self]() -> Task<> { co_await self->read_loop(); }, asio::detached);
  asio::co_spawn(
      ex_, [self]() -> Task<> { co_await self->watchdog(); }, asio::detached);
}

void RedisConnection::send(std::span<const std::string> args, RedisCallback done) {
  if (!open_) {
    if (done) done(RedisResult::lost("not connected"));
    return;
  }
  out_ += format_command(args);
  pending_.push_back({std::move(done), std::chrono::steady_clock::now()});
  if (!writing_) {
    writing_ = true;
    auto self = shared_from_this();
    asio::co_spawn(
        ex_, [self]() -> Task<> { co_await self->write_loop(); }, asio::detached);
  }
}

Task<RedisResult> RedisConnection::call(std::vector<std::string> args) {
  // The reply arrives through a callback; a timer that never fires on its own is the signal.
  auto result = std::make_shared<std::optional<RedisResult>>();
  auto signal = std::make_shared<asio::steady_timer>(ex_, asio::steady_timer::time_point::max());
  send(std::span<const std::string>(args), [result, signal](RedisResult r) {
    *result = std::move(r);
    signal->cancel();
  });
  if (!result->has_value()) co_await signal->async_wait(use_tuple);
  co_return std::move(**result);
}

Task<> RedisConnection::write_loop() {
  std::string writing;
  while (open_ && !out_.empty()) {
    writing.clear();
    writing.swap(out_);  // what is sent meanwhile waits for the next round
    error_code ec;
    if (tls_)
      std::tie(ec, std::ignore) = co_await asio::async_write(stream_, asio::buffer(writing), use_tuple);
    else
      std::tie(ec, std::ignore) =
          co_await asio::async_write(stream_.next_layer(), asio::buffer(writing), use_tuple);
    if (ec) {
      fail("write failed: " + ec.message(), true);
      break;
    }
  }
  writing_ = false;
}

Task<> RedisConnection::read_loop() {
  char buf[16 * 1024];
  while (open_) {
    error_code ec;
    std::size_t n = 0;
    if (tls_)
      std::tie(ec, n) = co_await stream_.async_read_some(asio::buffer(buf), use_tuple);
    else
      std::tie(ec, n) = co_await stream_.next_layer().async_read_some(asio::buffer(buf), use_tuple);
    if (ec) {
      fail(ec == asio::error::eof ? "the server closed the connection" : "read failed: " + ec.message(),
           true);
      co_return;
    }
    if (!reader_.feed(std::string_view(buf, n))) {
      fail("cannot buffer a reply", true);
      co_return;
    }
    try {
      while (auto v = reader_.next()) {
        dispatch(std::move(*v));
        if (!open_) co_return;
      }
    } catch (const std::exception& e) {
      fail(e.what(), true);
      co_return;
    }
  }
}

void RedisConnection::dispatch(RedisValue v) {
  const bool message =
      v.is_array() && !v.elements.empty() && (v.elements[0].is("message") || v.elements[0].is("pmessage"));
  if (message || pending_.empty()) {
    if (push_handler_) push_handler_(v);
    return;
  }
  Pending p = std::move(pending_.front());
  pending_.pop_front();
  if (p.done) p.done(RedisResult::of(std::move(v)));
}

Task<> RedisConnection::watchdog() {
  // Looks at the oldest pending command a few times per timeout; one that waited past it
  // means Redis is too slow to be of use: lost.
  asio::steady_timer tick(ex_);
  const auto period =
      std::max<std::chrono::milliseconds>(endpoint_.command_timeout / 4, std::chrono::milliseconds(5));
  auto self = shared_from_this();
  while (open_) {
    tick.expires_after(period);
    co_await tick.async_wait(use_tuple);
    if (!open_) break;
    if (!pending_.empty() &&
        std::chrono::steady_clock::now() - pending_.front().sent > endpoint_.command_timeout)
      fail("no reply within " + std::to_string(endpoint_.command_timeout.count()) + " ms", true);
  }
}

void RedisConnection::fail(const std::string& why, bool tell) {
  const bool was_open = open_;
  open_ = false;
  error_code ignored;
  stream_.next_layer().close(ignored);
  // Callbacks may send again (they fail at once, as the connection is closed).
  std::deque<Pending> failed;
  failed.swap(pending_);
  out_.clear();
  for (Pending& p : failed)
    if (p.done) p.done(RedisResult::lost(why));
  if (tell && was_open && lost_handler_) {
    auto handler = std::move(lost_handler_);
    lost_handler_ = nullptr;
    handler(why);
  }
}

}  // namespace smartlb::redis
