// A write that never waits (io/send_now.hpp): what the socket takes now, and the rest kept in
// order for a write that waits. Real sockets on 127.0.0.1.
#include "smartlb/io/send_now.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <array>
#include <string>

namespace smartlb::io {
namespace {

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
  // The rest goes out as room comes back; what arrives is the chunk, in order.
  std::string got;
  std::size_t at = 0;
  std::array<char, 65536> room;
  while (at < rest.size()) {
    const std::array<asio::const_buffer, 1> left{asio::const_buffer(rest.data() + at, rest.size() - at)};
    const std::size_t n = send_now(a, left, ec);
    ASSERT_TRUE(!ec || ec == asio::error::would_block) << ec.message();
    at += n;
    got.append(room.data(), b.read_some(asio::buffer(room)));
  }
  while (got.size() < c.all().size()) got.append(room.data(), b.read_some(asio::buffer(room)));
  EXPECT_EQ(got, c.all());
}

}  // namespace
}  // namespace smartlb::io
