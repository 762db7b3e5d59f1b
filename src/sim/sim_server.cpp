#include "smartlb/sim/sim_server.hpp"

#include "realtime_connection.hpp"
#include "responses_connection.hpp"
#include "smartlb/sim/error_bodies.hpp"
#include "smartlb/sim/route.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>

#include <csignal>
#include <exception>
#include <optional>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

namespace smartlb::sim {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using std::chrono::milliseconds;

constexpr auto kNoThrow = net::as_tuple(net::use_awaitable);
constexpr auto kIdleTimeout = std::chrono::seconds(120);  // waiting for / reading a request
constexpr auto kWriteTimeout = std::chrono::seconds(60);  // each write

// Moves the body out of `request` (an upload may be hundreds of MiB: never copied).
SimRequest to_sim_request(http::request<http::string_body>& request) {
  SimRequest out;
  out.method = std::string(request.method_string());
  out.target = std::string(request.target());
  out.headers.reserve(8);
  for (const auto& field : request) {
    out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  }
  out.body = std::move(request.body());
  return out;
}

template <class Fields>
void apply_headers(Fields& fields, const SimResponse& plan) {
  fields.set(http::field::content_type, plan.content_type);
  for (const auto& [name, value] : plan.headers) fields.set(name, value);
}

net::awaitable<void> pause(milliseconds duration) {
  if (duration.count() <= 0) co_return;
  net::steady_timer timer(co_await net::this_coro::executor, duration);
  co_await timer.async_wait(kNoThrow);
}

// Abortive close: SO_LINGER 0 makes close() send a TCP RST.
void reset_connection(beast::tcp_stream& stream) {
  beast::error_code ignored;
  stream.socket().set_option(net::socket_base::linger(true, 0), ignored);
  stream.socket().close(ignored);
}

// Returns false when the connection can not be reused (error, reset).
net::awaitable<bool> write_stream(beast::tcp_stream& stream, const SimResponse& plan, unsigned version,
                                  bool keep_alive) {
  http::response<http::empty_body> response{static_cast<http::status>(plan.status), version};
  apply_headers(response, plan);
  response.set(http::field::cache_control, "no-cache");
  response.keep_alive(keep_alive);
  response.chunked(true);
  http::response_serializer<http::empty_body> serializer{response};
  stream.expires_after(kWriteTimeout);
  if (auto [ec, n] = co_await http::async_write_header(stream, serializer, kNoThrow); ec) {
    co_return false;
  }

  const bool stall_in_stream = plan.stall.count() > 0 && !plan.stall_before_headers;
  const int event_count = static_cast<int>(plan.events.size());
  bool content_started = false;
  for (int i = 0; i <= event_count; ++i) {
    if (plan.reset_after_events && *plan.reset_after_events == i) {
      reset_connection(stream);
      co_return false;
    }
    if (stall_in_stream && plan.stall_after_events == i) co_await pause(plan.stall);
    if (i == event_count) break;
    const auto& event = plan.events[static_cast<std::size_t>(i)];
    if (event.is_content) {
      // The head and opening events went out at once; the first content waits like a model
      // reading its prompt (or reasoning). A timer: other connections carry on meanwhile.
      if (!content_started) co_await pause(plan.first_token);
      content_started = true;
      co_await pause(plan.chunk_interval);
    }
    stream.expires_after(kWriteTimeout);
    // One write per SSE event (TCP_NODELAY is set): a proxy sees events one at a time.
    if (auto [ec, n] = co_await net::async_write(stream, http::make_chunk(net::buffer(event.data)), kNoThrow);
        ec) {
      co_return false;
    }
  }
  stream.expires_after(kWriteTimeout);
  auto [ec, n] = co_await net::async_write(stream, http::make_chunk_last(), kNoThrow);
  co_return !ec;
}

net::awaitable<bool> write_plain(beast::tcp_stream& stream, const SimResponse& plan, unsigned version,
                                 bool keep_alive) {
  http::response<http::string_body> response{static_cast<http::status>(plan.status), version};
  apply_headers(response, plan);
  response.keep_alive(keep_alive);
  response.body() = plan.body;
  response.prepare_payload();

  const bool stall_after_headers = plan.stall.count() > 0 && !plan.stall_before_headers;
  if (!stall_after_headers && !plan.reset_after_events) {
    stream.expires_after(kWriteTimeout);
    auto [ec, n] = co_await http::async_write(stream, response, kNoThrow);
    co_return !ec;
  }
  http::response_serializer<http::string_body> serializer{response};
  stream.expires_after(kWriteTimeout);
  if (auto [ec, n] = co_await http::async_write_header(stream, serializer, kNoThrow); ec) {
    co_return false;
  }
  if (stall_after_headers) co_await pause(plan.stall);
  if (plan.reset_after_events) {
    reset_connection(stream);
    co_return false;
  }
  stream.expires_after(kWriteTimeout);
  auto [ec, n] = co_await http::async_write(stream, serializer, kNoThrow);
  co_return !ec;
}

net::awaitable<bool> write_response(beast::tcp_stream& stream, const SimResponse& plan, unsigned version,
                                    bool keep_alive) {
  co_await pause(plan.latency);
  if (plan.stall_before_headers) co_await pause(plan.stall);
  if (!plan.stream) co_await pause(plan.first_token);  // the whole answer waits for its first token
  if (plan.reset_before_headers) {
    reset_connection(stream);
    co_return false;
  }
  if (plan.stream) co_return co_await write_stream(stream, plan, version, keep_alive);
  co_return co_await write_plain(stream, plan, version, keep_alive);
}

net::awaitable<void> serve_connection(SimEngine& engine, tcp::socket socket, std::size_t body_limit) {
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(body_limit);
    stream.expires_after(kIdleTimeout);
    if (auto [ec, n] = co_await http::async_read(stream, buffer, parser, kNoThrow); ec) {
      if (ec == http::error::body_limit) {
        SimResponse too_large = json_response(
            413, openai_error_body("413", "The request body is larger than smartlb-sim's --max-body-bytes (" +
                                              std::to_string(body_limit) + ")."));
        too_large.headers.emplace_back("x-sim-name", engine.settings().name);
        co_await write_response(stream, too_large, parser.get().version(), /*keep_alive=*/false);
      } else if (ec != http::error::end_of_stream && ec != net::error::eof && ec != beast::error::timeout &&
                 ec != net::error::connection_reset && ec != net::error::operation_aborted) {
        spdlog::debug("sim {}: dropping connection: {}", engine.settings().name, ec.message());
      }
      break;
    }
    auto& request = parser.get();
    const std::string method(request.method_string());
    const std::string target(request.target());
    if (parse_route(target).endpoint == Endpoint::Realtime) {
      RealtimeAdmission admission = engine.admit_realtime(to_sim_request(request));
      if (!admission.refusal) {
        // The connection is the session's from here on.
        co_await serve_realtime(engine, std::move(stream), parser.release(), std::move(admission));
        co_return;
      }
      spdlog::debug("sim {}: {} {} -> {}", engine.settings().name, method, target, admission.refusal->status);
      const bool keep_alive = request.keep_alive();
      if (!co_await write_response(stream, *admission.refusal, request.version(), keep_alive)) co_return;
      if (!keep_alive) break;
      continue;
    }
    if (const Route route = parse_route(target);
        is_responses_socket_route(route) && beast::websocket::is_upgrade(request)) {
      SimRequest handshake = to_sim_request(request);
      std::optional<SimResponse> refusal = engine.admit_responses_socket(handshake);
      if (!refusal) {
        co_await serve_responses_socket(engine, std::move(stream), parser.release(), std::move(handshake));
        co_return;
      }
      spdlog::debug("sim {}: {} {} -> {}", engine.settings().name, method, target, refusal->status);
      const bool keep_alive = request.keep_alive();
      if (!co_await write_response(stream, *refusal, request.version(), keep_alive)) co_return;
      if (!keep_alive) break;
      continue;
    }
    // The control endpoints are not answers in flight.
    const Endpoint endpoint = parse_route(target).endpoint;
    const bool api =
        endpoint != Endpoint::SimFaults && endpoint != Endpoint::SimStats && endpoint != Endpoint::SimReset;
    if (api) engine.answer_began();
    const SimResponse plan = engine.handle(to_sim_request(request));
    spdlog::debug("sim {}: {} {} -> {}", engine.settings().name, method, target, plan.status);
    const bool keep_alive = request.keep_alive();
    const bool written = co_await write_response(stream, plan, request.version(), keep_alive);
    if (api) engine.answer_ended();
    if (!written) co_return;
    if (!keep_alive) break;
  }
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

void log_coroutine_failure(std::exception_ptr failure) {
  if (!failure) return;
  try {
    std::rethrow_exception(failure);
  } catch (const std::exception& error) {
    spdlog::error("smartlb-sim connection failed: {}", error.what());
  }
}

}  // namespace

struct SimServer::Impl {
  Impl(SimEngine& engine_ref, ServerOptions server_options)
      : engine(engine_ref), options(std::move(server_options)), io(options.threads), acceptor(io) {
    const tcp::endpoint endpoint(net::ip::make_address(options.listen), options.port);
    acceptor.open(endpoint.protocol());
    acceptor.set_option(net::socket_base::reuse_address(true));
    acceptor.bind(endpoint);
    acceptor.listen(net::socket_base::max_listen_connections);
    // Registered now, not in run(): a signal arriving as soon as the caller has announced
    // the port is queued instead of killing the process.
    if (options.stop_on_signals) signals.emplace(io, SIGINT, SIGTERM);
  }

  net::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
      if (ec) {
        if (ec == net::error::operation_aborted || !acceptor.is_open()) co_return;
        spdlog::warn("sim {}: accept failed: {}", engine.settings().name, ec.message());
        co_await pause(milliseconds(10));  // e.g. out of file descriptors: do not spin
        continue;
      }
      net::co_spawn(io, serve_connection(engine, std::move(socket), options.max_body_bytes),
                    log_coroutine_failure);
    }
  }

  SimEngine& engine;
  ServerOptions options;
  net::io_context io;  // declared before the sockets: destroyed after them
  tcp::acceptor acceptor;
  std::optional<net::signal_set> signals;
};

SimServer::SimServer(SimEngine& engine, ServerOptions options)
    : impl_(std::make_unique<Impl>(engine, std::move(options))) {}

SimServer::~SimServer() = default;

std::uint16_t SimServer::port() const { return impl_->acceptor.local_endpoint().port(); }

std::string SimServer::address() const { return impl_->acceptor.local_endpoint().address().to_string(); }

void SimServer::run() {
  Impl& impl = *impl_;
  if (impl.signals) {
    impl.signals->async_wait([&impl](const beast::error_code& ec, int signal) {
      if (ec) return;
      spdlog::info("sim {}: signal {}, stopping", impl.engine.settings().name, signal);
      impl.io.stop();
    });
  }
  net::co_spawn(impl.io, impl.accept_loop(), log_coroutine_failure);
  std::vector<std::thread> extra;
  for (int i = 1; i < impl.options.threads; ++i) extra.emplace_back([&impl] { impl.io.run(); });
  impl.io.run();
  for (auto& thread : extra) thread.join();
}

void SimServer::stop() { impl_->io.stop(); }

}  // namespace smartlb::sim
