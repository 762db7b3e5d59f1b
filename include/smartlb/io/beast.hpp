#pragma once
// Private to the I/O layer: Asio/Beast aliases. Never included from include/smartlb.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace smartlb::io {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;

// Every worker runs one io_context; naming its executor type (instead of the type-erased
// any_io_executor) takes a copy of a polymorphic executor out of every asynchronous operation.
using Executor = asio::io_context::executor_type;
using Socket = asio::basic_stream_socket<tcp, Executor>;
using Acceptor = asio::basic_socket_acceptor<tcp, Executor>;
template <class T = void>
using Task = asio::awaitable<T, Executor>;

// Completion token for coroutines: errors come back as values, never as exceptions.
inline constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable_t<Executor>{});

// An HTTP parse error (as opposed to a transport error).
inline bool is_parse_error(const error_code& ec) {
  return std::string_view(ec.category().name()) == "beast.http";
}

}  // namespace smartlb::io
