#pragma once
// Private to the I/O layer and net: a TLS client connection whose OpenSSL object reads and
// writes the TimedSocket itself (a BIO of our own over recv/send), driven by readiness waits,
// as nginx and haproxy drive theirs.
//
// Why not asio::ssl::stream: it keeps OpenSSL behind a memory-BIO pair and two buffers of its
// own, 70 KiB per connection whether or not a byte moves (bench/upstream_memory.sh: 82-85 KiB
// per pooled https:// connection against 16 for http://). Here OpenSSL's own record buffers
// are the only ones, and SSL_MODE_RELEASE_BUFFERS gives them back while the connection is idle
// (pooled, or a stream waiting for its next event). Reading the socket through io::recv_now also
// keeps the draining mark (io/draining_read.hpp) true for TLS: a quiet connection is known
// quiet without a syscall, and may wait for its next bytes holding no buffer.
//
// One read and one write may be under way at once (as with any socket), on the socket's own
// thread. Closing the socket (TimedSocket's deadline, the pool) ends both.
#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "smartlb/io/beast.hpp"
#include "smartlb/io/timed_socket.hpp"

struct ssl_st;
struct ssl_session_st;

namespace smartlb::io {

// The session one backend's TLS connections were last given (one per backend and worker): the
// next connection's handshake resumes it, as nginx's proxy_ssl_session_reuse and haproxy do,
// which spares the certificate chain and its verification (and, with TLS 1.2, a round trip).
class TlsResumption {
 public:
  TlsResumption() = default;
  ~TlsResumption();
  TlsResumption(const TlsResumption&) = delete;
  TlsResumption& operator=(const TlsResumption&) = delete;

 private:
  friend class TlsSocket;
  void keep(ssl_session_st* session);  // takes its reference

  ssl_session_st* session_ = nullptr;
};

class TlsSocket {
 public:
  using executor_type = Executor;

  // A connection not yet open, whose handshake will use `ctx` (its CAs, versions, ALPN).
  TlsSocket(DeadlineSweeper& sweeper, ssl::context& ctx);
  ~TlsSocket();
  TlsSocket(const TlsSocket&) = delete;
  TlsSocket& operator=(const TlsSocket&) = delete;

  executor_type get_executor() noexcept { return socket_.get_executor(); }
  TimedSocket& next_layer() { return socket_; }
  ssl_st* native_handle() { return ssl_; }

  // The server's name: sent as SNI (not for an IP literal) and required of its certificate
  // (an IP literal must be one of its addresses). False when OpenSSL refused it.
  bool expect_peer(const std::string& host);
  // The client handshake. An error from the certificate's check names why (its verify result).
  Task<error_code> handshake();
  // Before the handshake: offers `slot`'s session, if any, and keeps in it each session the
  // server gives this connection (make_upstream_tls_context enables it: enable_resumption).
  void resume_from(std::shared_ptr<TlsResumption> slot);
  // Lets the sessions of `ctx`'s connections reach their TlsResumption (OpenSSL's client
  // session callback; no internal cache).
  static void enable_resumption(ssl::context& ctx);

  // Asio's AsyncReadStream and AsyncWriteStream: void(error_code, std::size_t). A read reaches
  // the end as asio::error::eof after the server's close_notify, ssl::error::stream_truncated
  // when the TCP connection ended without one (as asio::ssl::stream reports them).
  template <class MutableBuffers, class Token>
  auto async_read_some(const MutableBuffers& buffers, Token&& token);
  template <class ConstBuffers, class Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token);

  // What the connection holds now, decrypted into `b` without waiting (as much as fits): for a
  // socket a wait has just found readable. `ec` as a read's, or would_block when no whole record
  // is there yet.
  std::size_t read_now(asio::mutable_buffer b, error_code& ec);
  // Whether OpenSSL holds bytes taken off the socket (a record, or part of one), or a record it
  // could not finish writing, or the connection's end was already read: then the socket alone
  // does not say what the connection holds.
  bool holds_bytes() const;

  // What an operation's step needs before it can go on.
  enum class Want { nothing, read, write };

 private:
  template <class Buffers, bool Write>
  struct Op;

  Want read_step(asio::mutable_buffer b, std::size_t& n, error_code& ec);
  Want write_step(std::span<const asio::const_buffer> buffers, std::size_t& n, error_code& ec);
  Want handshake_step(error_code& ec);
  // The error of an OpenSSL call that returned `ret` (after ERR_clear_error before it).
  Want outcome(int ret, error_code& ec);
  // Waits for what `want` says, then calls `handler(error_code)`.
  template <class Handler>
  void await(Want want, Handler&& handler);

  TimedSocket socket_;
  ssl_st* ssl_ = nullptr;
  std::shared_ptr<TlsResumption> resumption_;
  error_code deferred_error_;  // read_now's: the next read returns it

 public:
  // For the BIO (tls_socket.cpp): the socket, and what its last call saw.
  Socket& socket() { return socket_.socket(); }
  int sys_error = 0;        // errno of the BIO's last failed recv or send
  bool peer_ended = false;  // a recv found the end of the stream
  // For the session callback: keeps `session` (its reference) in this connection's
  // TlsResumption; false when it has none.
  bool keep_session(ssl_session_st* session);
};

// A buffer sequence's buffers, at most `N` of them, as a span (a write gathers them).
template <std::size_t N>
struct FirstBuffers {
  template <class ConstBuffers>
  explicit FirstBuffers(const ConstBuffers& buffers) {
    for (auto it = asio::buffer_sequence_begin(buffers);
         it != asio::buffer_sequence_end(buffers) && count < N; ++it)
      if (asio::const_buffer b(*it); b.size() != 0) items[count++] = b;
  }
  std::span<const asio::const_buffer> span() const { return {items.data(), count}; }
  std::array<asio::const_buffer, N> items{};
  std::size_t count = 0;
};

template <class Handler>
void TlsSocket::await(Want want, Handler&& handler) {
  if (want == Want::read)
    socket_.async_wait_readable(std::forward<Handler>(handler));
  else
    socket_.socket().async_wait(Socket::wait_write, std::forward<Handler>(handler));
}

// Each step is tried at once; a step that completes on the first try is completed through a
// post, never inside the initiating call (Asio's rule for asynchronous operations).
template <class Buffers, bool Write>
struct TlsSocket::Op {
  Op(TlsSocket& socket, const Buffers& b) : s(socket), buffers(b) {}
  TlsSocket& s;
  Buffers buffers;
  error_code ec;
  std::size_t n = 0;
  enum { start, waited, finished } phase = start;

  template <class Self>
  void operator()(Self& self, error_code wait_error = {}) {
    if (phase == finished) return self.complete(ec, n);
    if (wait_error) return self.complete(wait_error, 0);
    const Want want = step();
    if (want != Want::nothing) {
      phase = waited;
      return s.await(want, std::move(self));
    }
    if (phase == waited) return self.complete(ec, n);
    phase = finished;
    asio::post(std::move(self));
  }
  Want step() {
    if constexpr (Write) {
      return s.write_step(FirstBuffers<8>(buffers).span(), n, ec);
    } else {
      // The answer to what was just written: nothing to read before its event.
      if (phase == start && s.socket_.take_awaits_answer() && !s.holds_bytes()) return Want::read;
      return s.read_step(*asio::buffer_sequence_begin(buffers), n, ec);
    }
  }
};

template <class MutableBuffers, class Token>
auto TlsSocket::async_read_some(const MutableBuffers& buffers, Token&& token) {
  return asio::async_compose<Token, void(error_code, std::size_t)>(Op<MutableBuffers, false>(*this, buffers),
                                                                   token, socket_.socket());
}

template <class ConstBuffers, class Token>
auto TlsSocket::async_write_some(const ConstBuffers& buffers, Token&& token) {
  return asio::async_compose<Token, void(error_code, std::size_t)>(Op<ConstBuffers, true>(*this, buffers),
                                                                   token, socket_.socket());
}

}  // namespace smartlb::io
