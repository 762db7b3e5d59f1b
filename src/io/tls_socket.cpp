#include "smartlb/io/tls_socket.hpp"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "smartlb/io/draining_read.hpp"

namespace smartlb::io {
namespace {

// The BIO under each connection's SSL: recv and send on its socket, without waiting. A call that
// would block sets the BIO's retry flag, which OpenSSL reports as SSL_ERROR_WANT_READ or _WRITE.
TlsSocket& owner(BIO* bio) { return *static_cast<TlsSocket*>(BIO_get_data(bio)); }

int bio_read(BIO* bio, char* data, int size) {
  BIO_clear_retry_flags(bio);
  TlsSocket& s = owner(bio);
  error_code ec;
  // recv_now keeps the socket's draining mark: a short read leaves it known empty.
  const std::size_t n = recv_now(s.socket(), asio::buffer(data, static_cast<std::size_t>(size)), ec);
  if (!ec) return static_cast<int>(n);
  if (ec == asio::error::would_block) {
    BIO_set_retry_read(bio);
    return -1;
  }
  if (ec == asio::error::eof) {
    s.peer_ended = true;
    return 0;
  }
  s.sys_error = ec.value();
  return -1;
}

int bio_write(BIO* bio, const char* data, int size) {
  BIO_clear_retry_flags(bio);
  TlsSocket& s = owner(bio);
  ssize_t n;
  do {
    n = ::send(s.socket().native_handle(), data, static_cast<std::size_t>(size), MSG_DONTWAIT | MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n >= 0) return static_cast<int>(n);
  if (errno == EAGAIN || errno == EWOULDBLOCK)
    BIO_set_retry_write(bio);
  else
    s.sys_error = errno;
  return -1;
}

long bio_ctrl(BIO*, int cmd, long, void*) { return cmd == BIO_CTRL_FLUSH ? 1 : 0; }

BIO_METHOD* socket_bio_method() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "smartlb socket");
    if (!m || !BIO_meth_set_read(m, bio_read) || !BIO_meth_set_write(m, bio_write) ||
        !BIO_meth_set_ctrl(m, bio_ctrl))
      throw std::bad_alloc();
    return m;
  }();
  return method;
}

// Where each SSL keeps its TlsSocket for the session callback (not app data: Asio's own streams,
// which share the context, keep their verify callback there).
int socket_index() {
  static const int index = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

// OpenSSL's new-session callback: a resumable session goes to the connection's TlsResumption.
// Returns 1 when it took the session's reference.
int keep_new_session(SSL* ssl, SSL_SESSION* session) {
  auto* s = static_cast<TlsSocket*>(SSL_get_ex_data(ssl, socket_index()));
  if (!s || !SSL_SESSION_is_resumable(session)) return 0;
  return s->keep_session(session) ? 1 : 0;
}

// A TLS record's most plaintext: what one write gathers from a buffer sequence.
constexpr std::size_t kRecordBytes = 16 * 1024;

}  // namespace

TlsSocket::TlsSocket(DeadlineSweeper& sweeper, ssl::context& ctx)
    : socket_(sweeper), ssl_(SSL_new(ctx.native_handle())) {
  if (!ssl_) throw std::bad_alloc();
  BIO* bio = BIO_new(socket_bio_method());
  if (!bio) {
    SSL_free(ssl_);
    throw std::bad_alloc();
  }
  BIO_set_data(bio, this);
  BIO_set_init(bio, 1);
  SSL_set_bio(ssl_, bio, bio);
  SSL_set_ex_data(ssl_, socket_index(), this);
  // Partial writes and a moving buffer: a write step gathers its buffers anew each time it is
  // tried. Released buffers: an idle connection holds no record buffer. Read-ahead: one recv
  // takes all that has arrived (not a record's header, then its body).
  SSL_set_mode(
      ssl_, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
  SSL_set_read_ahead(ssl_, 1);
  SSL_set_connect_state(ssl_);
}

TlsSocket::~TlsSocket() {
  // Closed without close_notify on purpose (smartlb discards a connection at once, as nginx does
  // after an error): marked shut down, OpenSSL does not retire the session the connection shares
  // with its TlsResumption.
  SSL_set_shutdown(ssl_, SSL_SENT_SHUTDOWN | SSL_RECEIVED_SHUTDOWN);
  SSL_free(ssl_);
}

TlsResumption::~TlsResumption() { SSL_SESSION_free(session_); }

void TlsResumption::keep(SSL_SESSION* session) {
  SSL_SESSION_free(session_);
  session_ = session;
}

void TlsSocket::enable_resumption(ssl::context& ctx) {
  SSL_CTX_set_session_cache_mode(ctx.native_handle(),
                                 SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
  SSL_CTX_sess_set_new_cb(ctx.native_handle(), keep_new_session);
}

void TlsSocket::resume_from(std::shared_ptr<TlsResumption> slot) {
  resumption_ = std::move(slot);
  if (resumption_ && resumption_->session_) SSL_set_session(ssl_, resumption_->session_);
}

bool TlsSocket::keep_session(SSL_SESSION* session) {
  if (!resumption_) return false;
  resumption_->keep(session);
  return true;
}

bool TlsSocket::expect_peer(const std::string& host) {
  SSL_set_verify(ssl_, SSL_VERIFY_PEER, nullptr);
  error_code not_an_address;
  asio::ip::make_address(host, not_an_address);
  if (!not_an_address)  // without an IPv6 scope ("%eth0"), which a certificate cannot name
    return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl_), host.substr(0, host.find('%')).c_str()) == 1;
  return SSL_set_tlsext_host_name(ssl_, host.c_str()) == 1 && SSL_set1_host(ssl_, host.c_str()) == 1;
}

Task<error_code> TlsSocket::handshake() {
  for (;;) {
    error_code ec;
    const Want want = handshake_step(ec);
    if (want == Want::nothing) co_return ec;
    if (want == Want::read)
      std::tie(ec) = co_await socket_.async_wait_readable(use_tuple);
    else
      std::tie(ec) = co_await socket_.socket().async_wait(Socket::wait_write, use_tuple);
    if (ec) co_return ec;
  }
}

TlsSocket::Want TlsSocket::handshake_step(error_code& ec) {
  ERR_clear_error();
  const int r = SSL_do_handshake(ssl_);
  if (r == 1) {
    ec = {};
    return Want::nothing;
  }
  return outcome(r, ec);
}

TlsSocket::Want TlsSocket::read_step(asio::mutable_buffer b, std::size_t& n, error_code& ec) {
  n = 0;
  ec = std::exchange(deferred_error_, {});  // found by read_now after the bytes it returned
  if (ec || b.size() == 0) return Want::nothing;
  ERR_clear_error();
  if (SSL_read_ex(ssl_, b.data(), b.size(), &n) == 1) return Want::nothing;
  return outcome(0, ec);
}

// Writes what it can of the buffers (gathered into one record's worth when they are small):
// record after record until all is written or the socket is full. Bytes written before the
// socket filled complete the step; the record OpenSSL could not send then waits in it, and the
// caller's next write (the same bytes, from there on) sends it first.
TlsSocket::Want TlsSocket::write_step(std::span<const asio::const_buffer> buffers, std::size_t& n,
                                      error_code& ec) {
  n = 0;
  ec = {};
  if (buffers.empty()) return Want::nothing;
  const char* data = static_cast<const char*>(buffers[0].data());
  std::size_t size = buffers[0].size();
  if (buffers.size() > 1 && size < kRecordBytes) {
    thread_local std::array<char, kRecordBytes> gathered;
    size = 0;
    for (const asio::const_buffer& b : buffers) {
      const std::size_t take = std::min(b.size(), kRecordBytes - size);
      std::memcpy(gathered.data() + size, b.data(), take);
      size += take;
      if (size == kRecordBytes) break;
    }
    data = gathered.data();
  }
  while (n < size) {
    ERR_clear_error();
    std::size_t wrote = 0;
    if (SSL_write_ex(ssl_, data + n, size - n, &wrote) == 1) {
      n += wrote;
      continue;
    }
    error_code wec;
    const Want want = outcome(0, wec);
    if (n != 0) return Want::nothing;  // what went out, now (a failure shows on the next write)
    ec = wec;
    return want;
  }
  return Want::nothing;
}

TlsSocket::Want TlsSocket::outcome(int ret, error_code& ec) {
  const int error = SSL_get_error(ssl_, ret);
  if (error == SSL_ERROR_WANT_READ) return Want::read;
  if (error == SSL_ERROR_WANT_WRITE) return Want::write;
  const unsigned long reason = ERR_get_error();
  if (error == SSL_ERROR_ZERO_RETURN) {
    ec = asio::error::eof;  // the server's close_notify
  } else if (error == SSL_ERROR_SSL && reason != 0) {
    ec = error_code(static_cast<int>(reason), asio::error::get_ssl_category());  // what OpenSSL refused
  } else if (sys_error != 0) {
    ec = error_code(std::exchange(sys_error, 0), asio::error::get_system_category());
  } else if (peer_ended) {
    ec = ssl::error::stream_truncated;  // the TCP connection ended without close_notify
  } else if (reason != 0) {
    ec = error_code(static_cast<int>(reason), asio::error::get_ssl_category());
  } else {
    ec = ssl::error::unspecified_system_error;
  }
  ERR_clear_error();
  return Want::nothing;
}

// Record after record (one SSL_read gives one), until `b` is full or nothing whole is left. The
// end (a close_notify that came with the last bytes) or an error after some bytes is kept for the
// next read, which returns it at once (holds_bytes says so meanwhile).
std::size_t TlsSocket::read_now(asio::mutable_buffer b, error_code& ec) {
  std::size_t total = 0;
  for (;;) {
    std::size_t n = 0;
    const Want want = read_step(b + total, n, ec);
    total += n;
    if (want != Want::nothing) {
      ec = total != 0 ? error_code() : error_code(asio::error::would_block);
      return total;
    }
    if (ec) {
      if (total != 0) deferred_error_ = std::exchange(ec, {});
      return total;
    }
    if (total == b.size()) return total;
  }
}

// Also: a record whose header was read but not its body (read-ahead's buffer is then empty), and
// an end the socket may no longer show (read_now's deferred one, or a recv that found it).
bool TlsSocket::holds_bytes() const {
  return SSL_has_pending(ssl_) == 1 || SSL_want_write(ssl_) || deferred_error_ || peer_ended ||
         std::strcmp(SSL_rstate_string(ssl_), "RB") == 0;
}

}  // namespace smartlb::io
