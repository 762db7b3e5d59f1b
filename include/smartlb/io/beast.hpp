#pragma once
// Private to the I/O layer: Asio/Beast aliases. Never included from include/smartlb.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
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

// Completion token for coroutines: errors come back as values, never as exceptions. A deferred
// operation, which a Task awaits directly (Asio 1.81's await_transform for async operations),
// rather than use_awaitable, which wraps each operation in a coroutine frame of its own: an
// allocation, and Asio's 8-frame recycling cache is often empty when a burst of requests starts.
inline constexpr auto use_tuple = asio::as_tuple(asio::deferred);
// The same as a Task, for where an operation must be one: Beast's ssl_stream's own operations
// (see use_tuple_for).
inline constexpr auto use_task = asio::as_tuple(asio::use_awaitable_t<Executor>{});
// The token for an operation of `Stream`: use_task for Beast's ssl_stream, whose operations
// (Boost 1.81) name their return type the way deferred does not support.
template <class Stream>
inline constexpr auto use_tuple_for = use_tuple;
template <class Next>
inline constexpr auto use_tuple_for<beast::ssl_stream<Next>> = use_task;

// An HTTP parse error (as opposed to a transport error).
inline bool is_parse_error(const error_code& ec) {
  return std::string_view(ec.category().name()) == "beast.http";
}

}  // namespace smartlb::io
