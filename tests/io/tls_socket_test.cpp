// A TLS client connection whose OpenSSL reads and writes the socket itself (io/tls_socket.hpp),
// against Asio's TLS server on 127.0.0.1 on a thread of its own: the handshake and the
// certificate's name, bytes both ways through a full socket, how a stream ends, and a connection
// known quiet once a read has emptied it (what lets an https:// stream wait holding no buffer).
#include "smartlb/io/tls_socket.hpp"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <openssl/x509_vfy.h>
#include <sys/socket.h>
#include <boost/asio/read.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/asio/write.hpp>

#include <functional>
#include <future>
#include <string>
#include <thread>

#include "mock_backend.hpp"

namespace smartlb::io {
namespace tls_socket_test {  // named, not anonymous: tests/CMakeLists.txt

using testing::TestCa;
using ServerStream = ssl::stream<tcp::socket>;

// One TLS connection served on a thread of its own by `serve`, which gets the stream after its
// handshake (or is not called when the handshake failed); an exception there (the client gone
// after a failed expectation) ends it quietly. serve_raw: OpenSSL on the socket itself, whose
// SSL_shutdown sends close_notify at once without waiting for the client's.
class TlsServer {
 public:
  TlsServer(const TestCa& ca, const std::string& name, int receive_buffer = 0) {
    const auto identity = ca.issue(name);
    ctx_.use_certificate_chain(asio::buffer(identity.cert_pem));
    ctx_.use_private_key(asio::buffer(identity.key_pem), ssl::context::pem);
    if (receive_buffer > 0) acceptor_.set_option(asio::socket_base::receive_buffer_size(receive_buffer));
  }
  ~TlsServer() {
    if (thread_.joinable()) thread_.join();
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }
  void serve(std::function<void(ServerStream&)> serve) {
    thread_ = std::thread([this, serve = std::move(serve)] {
      ServerStream s(ioc_, ctx_);
      acceptor_.accept(s.next_layer());
      error_code ec;
      s.handshake(ssl::stream_base::server, ec);
      try {
        if (!ec) serve(s);
      } catch (const std::exception&) {
      }
    });
  }
  void serve_raw(std::function<void(SSL*)> serve) {
    thread_ = std::thread([this, serve = std::move(serve)] {
      tcp::socket socket(ioc_);
      acceptor_.accept(socket);
      SSL* ssl = SSL_new(ctx_.native_handle());
      SSL_set_fd(ssl, socket.native_handle());
      if (SSL_accept(ssl) == 1) serve(ssl);
      SSL_free(ssl);
    });
  }
  void join() { thread_.join(); }

 private:
  asio::io_context ioc_;
  ssl::context ctx_{ssl::context::tls_server};
  tcp::acceptor acceptor_{ioc_, {asio::ip::address_v4::loopback(), 0}};
  std::thread thread_;
};

struct Client {
  explicit Client(const TestCa& ca, int send_buffer = 0) {
    ctx.add_certificate_authority(asio::buffer(ca.cert_pem));  // verification: expect_peer's
    tls = std::make_unique<TlsSocket>(sweeper, ctx);
    Socket& s = tls->next_layer().socket();
    s.open(tcp::v4());
    if (send_buffer > 0) s.set_option(asio::socket_base::send_buffer_size(send_buffer));
  }
  // Runs `task` to its end on this thread, or to the socket's close 20 s on (a failure, not a hang).
  template <class T>
  T run(Task<T> task) {
    auto bounded = [](TimedSocket& socket, Task<T> t) -> Task<T> {
      socket.expires_after(std::chrono::seconds(20));
      T r = co_await std::move(t);
      socket.expires_never();
      co_return r;
    };
    auto result = asio::co_spawn(ioc, bounded(tls->next_layer(), std::move(task)), asio::use_future);
    ioc.restart();
    ioc.run();
    return result.get();
  }
  error_code connect(std::uint16_t port, const std::string& name) {
    tls->next_layer().socket().connect({asio::ip::address_v4::loopback(), port});
    EXPECT_TRUE(tls->expect_peer(name));
    return run(tls->handshake());
  }
  // Everything until the stream's end; `end` is how it ended.
  std::string read_to_end(error_code& end) {
    return run([&]() -> Task<std::string> {
      std::string got;
      std::array<char, 4096> room;
      for (;;) {
        auto [ec, n] = co_await tls->async_read_some(asio::buffer(room), use_tuple);
        got.append(room.data(), n);
        if (ec) {
          end = ec;
          co_return got;
        }
      }
    }());
  }
  // Waits until the socket is readable, then takes what the connection holds without waiting.
  error_code wait_readable() {
    return run([&]() -> Task<error_code> {
      co_return std::get<0>(co_await tls->next_layer().async_wait_readable(use_tuple));
    }());
  }
  std::string read_once_ready() {
    const error_code waited = wait_readable();
    EXPECT_FALSE(waited.failed()) << waited.message();
    std::string got;
    std::array<char, 4096> room;
    for (;;) {
      error_code ec;
      const std::size_t n = tls->read_now(asio::buffer(room), ec);
      got.append(room.data(), n);
      if (ec) {
        EXPECT_EQ(ec, asio::error::would_block) << ec.message();
        return got;
      }
    }
  }

  asio::io_context ioc;
  DeadlineSweeper sweeper{ioc};
  ssl::context ctx{ssl::context::tls_client};
  std::unique_ptr<TlsSocket> tls;
};

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + i * 7 % 251 % 26);
  return s;
}

TEST(TlsSocket, CarriesBytesBothWaysAndEndsWithTheServersCloseNotify) {
  TestCa ca;
  TlsServer server(ca, "localhost");
  const std::string head = "head:", body = pattern(40000), tail = ":tail", reply = pattern(100000);
  std::string received;
  server.serve([&](ServerStream& s) {
    received.resize(head.size() + body.size() + tail.size());
    asio::read(s, asio::buffer(received));
    asio::write(s, asio::buffer(reply));
    error_code ignored;
    s.shutdown(ignored);  // close_notify; its answer never comes (the client closes)
  });
  Client c(ca);
  ASSERT_FALSE(c.connect(server.port(), "localhost").failed());
  const std::array<asio::const_buffer, 3> request{asio::buffer(head), asio::buffer(body), asio::buffer(tail)};
  const auto [wec, wrote] = c.run([&]() -> Task<std::tuple<error_code, std::size_t>> {
    co_return co_await asio::async_write(*c.tls, request, use_tuple);
  }());
  ASSERT_FALSE(wec) << wec.message();
  EXPECT_EQ(wrote, head.size() + body.size() + tail.size());
  error_code end;
  EXPECT_EQ(c.read_to_end(end), reply);
  EXPECT_EQ(end, asio::error::eof) << end.message();
  c.tls->next_layer().socket().close();
  server.join();
  EXPECT_EQ(received, head + body + tail);
}

TEST(TlsSocket, AConnectionEndedWithoutCloseNotifyIsTruncated) {
  TestCa ca;
  TlsServer server(ca, "localhost");
  server.serve([](ServerStream& s) {
    asio::write(s, asio::buffer(std::string("partial")));
    s.next_layer().close();
  });
  Client c(ca);
  ASSERT_FALSE(c.connect(server.port(), "localhost").failed());
  error_code end;
  EXPECT_EQ(c.read_to_end(end), "partial");
  EXPECT_EQ(end, ssl::error::stream_truncated) << end.message();
}

// 2 MB through send and receive buffers of a few KiB: the writes find the socket full again and
// again, and a record OpenSSL could not send goes out first on the next try.
TEST(TlsSocket, AWriteLargerThanTheSocketTakesArrivesWholeAndInOrder) {
  TestCa ca;
  TlsServer server(ca, "localhost", 4096);
  const std::string head = "POST / HTTP/1.1\r\n\r\n", body = pattern(2'000'000);
  std::string received;
  server.serve([&](ServerStream& s) {
    received.resize(head.size() + body.size());
    asio::read(s, asio::buffer(received));
  });
  Client c(ca, 4096);
  ASSERT_FALSE(c.connect(server.port(), "localhost").failed());
  const std::array<asio::const_buffer, 2> request{asio::buffer(head), asio::buffer(body)};
  const auto [wec, wrote] = c.run([&]() -> Task<std::tuple<error_code, std::size_t>> {
    co_return co_await asio::async_write(*c.tls, request, use_tuple);
  }());
  ASSERT_FALSE(wec) << wec.message();
  EXPECT_EQ(wrote, head.size() + body.size());
  server.join();
  EXPECT_EQ(received, head + body);
}

TEST(TlsSocket, ACertificateForAnotherNameFailsTheHandshake) {
  TestCa ca;
  for (const std::string expected : {"other.example", "127.0.0.1"}) {
    TlsServer server(ca, "localhost");
    server.serve([](ServerStream&) {});
    Client c(ca);
    EXPECT_TRUE(c.connect(server.port(), expected).failed()) << expected;
    EXPECT_EQ(SSL_get_verify_result(c.tls->native_handle()),
              expected == "127.0.0.1" ? X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH);
    c.tls->next_layer().socket().close();
  }
}

// What the connection holds is read without waiting, record by record; once a read has emptied
// it, nothing is held and the socket is known quiet without a syscall (io/draining_read), until
// the server's next bytes.
TEST(TlsSocket, ReadsWhatHasArrivedAndThenKnowsTheConnectionQuiet) {
  TestCa ca;
  TlsServer server(ca, "localhost");
  std::promise<void> more, finished;  // set at the end whatever happens (the server waits on them)
  const auto release = [&] {
    for (auto* p : {&more, &finished}) try {
        p->set_value();
      } catch (const std::future_error&) {
      }
  };
  struct AtExit {
    std::function<void()> f;
    ~AtExit() { f(); }
  } at_exit{release};
  server.serve(
      [more_sent = more.get_future().share(), all_done = finished.get_future().share()](ServerStream& s) {
        for (const char* record : {"one", "two", "three"}) asio::write(s, asio::buffer(std::string(record)));
        more_sent.wait();
        asio::write(s, asio::buffer(std::string("four")));
        all_done.wait();
      });
  Client c(ca);
  ASSERT_FALSE(c.connect(server.port(), "localhost").failed());
  std::string got;
  while (got.size() < 11 && !HasFailure()) got += c.read_once_ready();  // a failed wait ends it
  EXPECT_EQ(got, "onetwothree");
  EXPECT_FALSE(c.tls->holds_bytes());
  if (SMARTLB_DRAINING_READS) {
    EXPECT_FALSE(c.tls->next_layer().bytes_may_have_arrived());
  }
  more.set_value();
  got.clear();
  while (got.size() < 4 && !HasFailure()) got += c.read_once_ready();
  EXPECT_EQ(got, "four");
}

// A close_notify that comes with the last bytes, the TCP connection left open: the read that
// returns the bytes keeps the end for the next, which finds it at once (holds_bytes meanwhile
// says the socket alone would not tell: a stream that waited for readability would wait forever).
TEST(TlsSocket, ACloseNotifyThatCameWithTheLastBytesIsTheNextReadsEnd) {
  TestCa ca;
  TlsServer server(ca, "localhost");
  std::promise<void> sent, finished;
  struct AtExit {
    std::promise<void>& p;
    ~AtExit() { p.set_value(); }
  } at_exit{finished};
  server.serve_raw([&sent, done = finished.get_future().share()](SSL* ssl) {
    SSL_write(ssl, "last", 4);
    SSL_shutdown(ssl);  // close_notify, not waiting for the client's
    sent.set_value();
    done.wait();
  });
  Client c(ca);
  ASSERT_FALSE(c.connect(server.port(), "localhost").failed());
  sent.get_future().wait();
  std::string got;
  std::array<char, 64> room;
  error_code ec;
  while (got.size() < 4) {  // the session tickets may come first
    ASSERT_FALSE(c.wait_readable().failed());
    got.append(room.data(), c.tls->read_now(asio::buffer(room), ec));  // one read: what is there
    ASSERT_TRUE(!ec || ec == asio::error::would_block) << ec.message();
  }
  EXPECT_EQ(got, "last");
  if (!c.tls->holds_bytes()) {  // the close_notify came apart: its own event wakes the wait
    ASSERT_FALSE(c.wait_readable().failed()) << "the end was read with the bytes, and lost";
  }
  EXPECT_EQ(c.tls->read_now(asio::buffer(room), ec), 0u);
  EXPECT_EQ(ec, asio::error::eof) << ec.message();
}

}  // namespace tls_socket_test
}  // namespace smartlb::io
