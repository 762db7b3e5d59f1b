// A write that never waits (io/send_now.hpp): what the socket takes now, and the rest kept in
// order for a write that waits. Real sockets on 127.0.0.1.
#include "smartlb/io/send_now.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <array>
#include <string>

namespace smartlb::io {
namespace send_now_test {  // named, not anonymous: tests/CMakeLists.txt

// A chunk as a round writes it: size line, body, CRLF.
struct Chunk {
  std::string size_line = "493e0\r\n", body = std::string(300000, 'b'), crlf = "\r\n";
  std::array<asio::const_buffer, 3> buffers() const {
    return {asio::buffer(size_line), asio::buffer(body), asio::buffer(crlf)};
  }
  std::string all() const { return size_line + body + crlf; }
};

TEST(SendNow, TheRestIsWhatFollowsTheBytesSentWhereverThatFalls) {
  const Chunk c;
  const auto b = c.buffers();
  const std::string all = c.all();
  for (const std::size_t sent : {std::size_t{0}, std::size_t{3}, std::size_t{7}, std::size_t{8},
                                 all.size() - 2, all.size() - 1, all.size()}) {
    std::string rest = "earlier";
    append_unsent(b, sent, rest);
    EXPECT_EQ(rest, "earlier" + all.substr(sent)) << "sent " << sent;
  }
}

TEST(SendNow, AFullSocketTakesPartAndTheRestFollowsInOrder) {
  asio::io_context ioc;
  Acceptor acceptor(ioc.get_executor(), {asio::ip::address_v4::loopback(), 0});
  Socket a(ioc.get_executor()), b(ioc.get_executor());
  const int small = 4096;
  a.open(asio::ip::tcp::v4());
  ASSERT_EQ(::setsockopt(a.native_handle(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
  a.connect(acceptor.local_endpoint());
  acceptor.accept(b);
  const Chunk c;
  const auto buffers = c.buffers();
  error_code ec;
  const std::size_t sent = send_now(a, buffers, ec);
  ASSERT_FALSE(ec);
  ASSERT_GT(sent, 0u);
  ASSERT_LT(sent, c.all().size()) << "a 300 KB write into a 4 KiB send buffer is taken in part";
  std::string rest;
  append_unsent(buffers, sent, rest);
  // The rest goes out as room comes back; what arrives is the chunk, in order. The reader never
  // blocks: once it has taken everything, `a`'s buffer may still be full of bytes `b` has read
  // but not yet acknowledged (a delayed ACK), and a read that waited then would wait for ever.
  b.non_blocking(true);
  std::string got;
  std::array<char, 65536> room;
  const auto take_what_arrived = [&] {
    for (;;) {
      error_code read_ec;
      const std::size_t n = b.read_some(asio::buffer(room), read_ec);
      got.append(room.data(), n);
      if (read_ec) return read_ec == asio::error::would_block;
    }
  };
  // Until `a` may write again or `b` has bytes: false after 10 s of neither (a failure).
  const auto await_progress = [&] {
    pollfd sides[2] = {{a.native_handle(), POLLOUT, 0}, {b.native_handle(), POLLIN, 0}};
    return ::poll(sides, 2, 10'000) > 0;
  };
  std::size_t at = 0;
  while (at < rest.size()) {
    const std::array<asio::const_buffer, 1> left{asio::const_buffer(rest.data() + at, rest.size() - at)};
    const std::size_t n = send_now(a, left, ec);
    ASSERT_TRUE(!ec || ec == asio::error::would_block) << ec.message();
    at += n;
    ASSERT_TRUE(take_what_arrived());
    if (n == 0) {
      ASSERT_TRUE(await_progress()) << "neither side moved for 10 s";
    }
  }
  while (got.size() < c.all().size()) {
    ASSERT_TRUE(await_progress()) << "the rest never arrived";
    ASSERT_TRUE(take_what_arrived());
  }
  EXPECT_EQ(got, c.all());
}

}  // namespace send_now_test
}  // namespace smartlb::io
