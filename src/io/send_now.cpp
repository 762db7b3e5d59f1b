#include "smartlb/io/send_now.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>

namespace smartlb::io {

std::size_t send_now(Socket& s, std::span<const asio::const_buffer> buffers, error_code& ec) {
  constexpr std::size_t kMaxBuffers = 64;  // a round's buffers are fewer (net/relay_scratch.hpp)
  std::array<iovec, kMaxBuffers> iov;
  std::size_t n = 0;
  for (const asio::const_buffer& b : buffers.first(std::min(buffers.size(), kMaxBuffers)))
    iov[n++] = iovec{const_cast<void*>(b.data()), b.size()};
  msghdr msg{};
  msg.msg_iov = iov.data();
  msg.msg_iovlen = n;
  ssize_t sent;
  do {
    sent = ::sendmsg(s.native_handle(), &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0) {
    const bool full = errno == EAGAIN || errno == EWOULDBLOCK;
    ec = full ? error_code(asio::error::would_block) : error_code(errno, asio::error::get_system_category());
    return 0;
  }
  ec = {};
  return static_cast<std::size_t>(sent);
}

void append_unsent(std::span<const asio::const_buffer> buffers, std::size_t sent, std::string& rest) {
  for (const asio::const_buffer& b : buffers) {
    if (sent >= b.size()) {
      sent -= b.size();
      continue;
    }
    rest.append(static_cast<const char*>(b.data()) + sent, b.size() - sent);
    sent = 0;
  }
}

}  // namespace smartlb::io
