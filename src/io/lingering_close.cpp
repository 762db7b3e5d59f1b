#include "smartlb/io/lingering_close.hpp"

#include <tuple>

namespace smartlb::io {

Task<> close_lingering(TimedSocket& stream, beast::flat_buffer& scratch, std::chrono::seconds limit) {
  constexpr std::size_t kReadBytes = 16 * 1024;
  error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  if (!ec) {
    scratch.clear();
    stream.expires_after(limit);
    // Until the client closes, resets, or the deadline closes the socket: every byte is dropped.
    while (!ec)
      std::tie(ec, std::ignore) = co_await stream.async_read_some(scratch.prepare(kReadBytes), use_tuple);
    stream.done(ec);
  }
  stream.socket().close(ec);
}

}  // namespace smartlb::io
