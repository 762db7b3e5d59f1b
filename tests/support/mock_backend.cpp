#include "mock_backend.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <thread>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace smartlb::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;
constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

class Gate {
 public:
  explicit Gate(asio::io_context& ioc) : timer_(ioc, asio::steady_timer::time_point::max()) {}
  asio::awaitable<void> wait() {
    if (!open_) co_await timer_.async_wait(use_tuple);
  }
  void open() {
    open_ = true;
    timer_.cancel();
  }

 private:
  asio::steady_timer timer_;
  bool open_ = false;
};

struct MockBackend::Impl {
  asio::io_context ioc;
  tcp::acceptor acceptor{ioc};
  std::optional<asio::ssl::context> tls;
  Handler handler;
  mutable std::mutex mutex;
  mutable std::condition_variable cv;
  std::vector<SeenRequest> seen;
  int connections = 0;
  std::size_t strays = 0;
  std::thread thread;

  // Writes reply.stray after reply.stray_after; false when the connection failed.
  template <class Stream>
  asio::awaitable<bool> send_stray(Stream& stream, const MockReply& reply) {
    if (reply.stray.empty()) co_return true;
    asio::steady_timer timer(co_await asio::this_coro::executor, reply.stray_after);
    co_await timer.async_wait(use_tuple);
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(reply.stray), use_tuple);
    if (ec) co_return false;
    {
      std::lock_guard lock(mutex);
      ++strays;
    }
    cv.notify_all();
    co_return true;
  }

  template <class Stream>
  asio::awaitable<void> serve(Stream& stream, int conn_index, bool tls_resumed = false) {
    beast::flat_buffer buffer;
    for (int n = 1;; ++n) {
      beast::http::request<beast::http::string_body> req;
      auto [ec, bytes] = co_await beast::http::async_read(stream, buffer, req, use_tuple);
      if (ec) co_return;
      SeenRequest s;
      s.method = std::string(req.method_string());
      s.target = std::string(req.target());
      for (const auto& f : req) {
        std::string name(f.name_string());
        std::transform(name.begin(), name.end(), name.begin(),
                       [](unsigned char c) { return std::tolower(c); });
        s.headers[name] = std::string(f.value());
      }
      s.body = req.body();
      s.connection_index = conn_index;
      s.request_on_connection = n;
      s.tls_resumed = tls_resumed;
      Handler h;
      {
        std::lock_guard lock(mutex);
        seen.push_back(s);
        h = handler;
      }
      cv.notify_all();
      MockReply reply = h(s);
      if (reply.hold_headers) co_await reply.hold_headers->wait();
      if (reply.close_without_reply) co_return;
      if (!reply.raw.empty()) {
        auto [rec, rn] = co_await asio::async_write(stream, asio::buffer(reply.raw), use_tuple);
        if (rec) co_return;
        continue;
      }
      if (!reply.interim.empty()) {
        auto [iec, in] = co_await asio::async_write(stream, asio::buffer(reply.interim), use_tuple);
        if (iec) co_return;
      }
      if (reply.events.empty()) {
        beast::http::response<beast::http::string_body> res{static_cast<beast::http::status>(reply.status),
                                                            11};
        for (auto& [k, v] : reply.headers) res.set(k, v);
        res.body() = reply.body;
        res.prepare_payload();
        // Half-closing: corked, so that the FIN leaves in the same segment as the last bytes.
        if (reply.half_close_after) set_cork(stream, true);
        auto [wec, wn] = co_await beast::http::async_write(stream, res, use_tuple);
        if (wec || !co_await send_stray(stream, reply)) co_return;
        if (reply.half_close_after) {
          beast::error_code ignored;
          beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ignored);
          set_cork(stream, false);
        }
        continue;
      }
      if (reply.close_delimited) {
        co_await write_close_delimited(stream, reply);
        co_return;
      }
      beast::http::response<beast::http::empty_body> res{static_cast<beast::http::status>(reply.status), 11};
      for (auto& [k, v] : reply.headers) res.set(k, v);
      res.chunked(true);
      beast::http::response_serializer<beast::http::empty_body> sr(res);
      auto [hec, hn] = co_await beast::http::async_write_header(stream, sr, use_tuple);
      if (hec) co_return;
      for (std::size_t i = 0; i < reply.events.size(); ++i) {
        if (auto it = reply.wait_before.find(i); it != reply.wait_before.end()) co_await it->second->wait();
        if (i > 0 && reply.pace.count() > 0) {
          asio::steady_timer pause(stream.get_executor(), reply.pace);
          co_await pause.async_wait(use_tuple);
        }
        auto [cec, cn] = co_await asio::async_write(
            stream, beast::http::make_chunk(asio::buffer(reply.events[i])), use_tuple);
        if (cec) co_return;
      }
      if (reply.after_events) reply.after_events();
      if (reply.reset_after_events) co_return;  // the caller closes the socket: no final chunk
      auto [lec, ln] = co_await asio::async_write(stream, beast::http::make_chunk_last(), use_tuple);
      if (lec) co_return;
    }
  }

  template <class Stream>
  static asio::awaitable<void> write_close_delimited(Stream& stream, const MockReply& reply) {
    std::string head = "HTTP/1.1 " + std::to_string(reply.status) + " OK\r\n";
    for (auto& [k, v] : reply.headers) head += k + ": " + v + "\r\n";
    head += "Connection: close\r\n\r\n";
    auto [hec, hn] = co_await asio::async_write(stream, asio::buffer(head), use_tuple);
    if (hec) co_return;
    for (std::size_t i = 0; i < reply.events.size(); ++i) {
      if (auto it = reply.wait_before.find(i); it != reply.wait_before.end()) co_await it->second->wait();
      const auto fin_gate = reply.wait_before.find(reply.events.size());
      const bool last = i + 1 == reply.events.size();
      if (last && fin_gate == reply.wait_before.end()) set_cork(stream, true);  // the FIN goes with it
      auto [eec, en] = co_await asio::async_write(stream, asio::buffer(reply.events[i]), use_tuple);
      if (eec) co_return;
    }
    if (auto it = reply.wait_before.find(reply.events.size()); it != reply.wait_before.end())
      co_await it->second->wait();  // the FIN alone, later
    beast::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ignored);
    set_cork(stream, false);
  }

  template <class Stream>
  static void set_cork(Stream& stream, bool on) {
    const int v = on ? 1 : 0;
    ::setsockopt(beast::get_lowest_layer(stream).socket().native_handle(), IPPROTO_TCP, TCP_CORK, &v,
                 sizeof v);
  }

  asio::awaitable<void> session(tcp::socket socket, int conn_index) {
    if (tls) {
      beast::ssl_stream<beast::tcp_stream> stream(std::move(socket), *tls);
      auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, use_tuple);
      if (ec) co_return;
      co_await serve(stream, conn_index, SSL_session_reused(stream.native_handle()) == 1);
      beast::get_lowest_layer(stream).close();
    } else {
      beast::tcp_stream stream(std::move(socket));
      co_await serve(stream, conn_index);
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
      stream.close();
    }
  }

  asio::awaitable<void> accept_loop() {
    for (;;) {
      auto [ec, socket] = co_await acceptor.async_accept(use_tuple);
      if (ec) co_return;
      int index;
      {
        std::lock_guard lock(mutex);
        index = ++connections;
      }
      asio::co_spawn(ioc, session(std::move(socket), index), asio::detached);
    }
  }
};

MockBackend::MockBackend(Handler handler, const TlsIdentity* tls) : impl_(std::make_unique<Impl>()) {
  impl_->handler = std::move(handler);
  if (tls) {
    tls_ = true;
    impl_->tls.emplace(asio::ssl::context::tls_server);
    impl_->tls->use_certificate_chain(asio::buffer(tls->cert_pem));
    impl_->tls->use_private_key(asio::buffer(tls->key_pem), asio::ssl::context::pem);
  }
  const tcp::endpoint ep(asio::ip::make_address("127.0.0.1"), 0);
  impl_->acceptor.open(ep.protocol());
  impl_->acceptor.set_option(asio::socket_base::reuse_address(true));
  impl_->acceptor.bind(ep);
  impl_->acceptor.listen();
  port_ = impl_->acceptor.local_endpoint().port();
  asio::co_spawn(impl_->ioc, impl_->accept_loop(), asio::detached);
  impl_->thread = std::thread([this] { impl_->ioc.run(); });
}

MockBackend::~MockBackend() {
  impl_->ioc.stop();
  impl_->thread.join();
}

std::string MockBackend::url() const {
  return (tls_ ? "https://localhost:" : "http://127.0.0.1:") + std::to_string(port_);
}

GatePtr MockBackend::make_gate() { return std::make_shared<Gate>(impl_->ioc); }

void MockBackend::open(const GatePtr& g) {
  asio::post(impl_->ioc, [g] { g->open(); });
}

std::size_t MockBackend::request_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->seen.size();
}

std::vector<SeenRequest> MockBackend::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->seen;
}

SeenRequest MockBackend::last_request() const {
  std::lock_guard lock(impl_->mutex);
  if (impl_->seen.empty()) throw std::runtime_error("the mock backend saw no request");
  return impl_->seen.back();
}

bool MockBackend::wait_for_requests(std::size_t n) const {
  std::unique_lock lock(impl_->mutex);
  return impl_->cv.wait_for(lock, std::chrono::seconds(30), [&] { return impl_->seen.size() >= n; });
}

bool MockBackend::wait_for_strays(std::size_t n) const {
  std::unique_lock lock(impl_->mutex);
  return impl_->cv.wait_for(lock, std::chrono::seconds(30), [&] { return impl_->strays >= n; });
}

void MockBackend::set_handler(Handler h) {
  std::lock_guard lock(impl_->mutex);
  impl_->handler = std::move(h);
}

// ---- Test CA ----

namespace {

EVP_PKEY* new_key() { return EVP_EC_gen("P-256"); }

std::string to_pem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

std::string key_to_pem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio, &data);
  std::string out(data, static_cast<std::size_t>(n));
  BIO_free(bio);
  return out;
}

void add_ext(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (!ext) throw std::runtime_error("bad certificate extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

X509* make_cert(EVP_PKEY* key, const std::string& cn, X509* issuer, EVP_PKEY* issuer_key, long serial) {
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), serial);
  X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600 * 24);
  X509_set_pubkey(cert, key);
  X509_NAME* name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(cn.c_str()), -1,
                             -1, 0);
  X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
  if (!issuer) {
    add_ext(cert, cert, NID_basic_constraints, "critical,CA:TRUE");
    add_ext(cert, cert, NID_key_usage, "critical,keyCertSign,cRLSign");
    add_ext(cert, cert, NID_subject_key_identifier, "hash");
  } else {
    add_ext(cert, issuer, NID_basic_constraints, "critical,CA:FALSE");
    add_ext(cert, issuer, NID_subject_alt_name, ("DNS:" + cn).c_str());
    add_ext(cert, issuer, NID_ext_key_usage, "serverAuth");
  }
  X509_sign(cert, issuer_key ? issuer_key : key, EVP_sha256());
  return cert;
}

}  // namespace

TestCa::TestCa() {
  EVP_PKEY* key = new_key();
  X509* cert = make_cert(key, "smartlb test CA", nullptr, nullptr, 1);
  cert_pem = to_pem(cert);
  key_ = std::shared_ptr<void>(key, [](void* p) { EVP_PKEY_free(static_cast<EVP_PKEY*>(p)); });
  cert_ = std::shared_ptr<void>(cert, [](void* p) { X509_free(static_cast<X509*>(p)); });
}

MockBackend::TlsIdentity TestCa::issue(const std::string& dns_name) const {
  static long serial = 100;
  EVP_PKEY* key = new_key();
  X509* cert =
      make_cert(key, dns_name, static_cast<X509*>(cert_.get()), static_cast<EVP_PKEY*>(key_.get()), ++serial);
  MockBackend::TlsIdentity id{to_pem(cert), key_to_pem(key)};
  X509_free(cert);
  EVP_PKEY_free(key);
  return id;
}

std::string TestCa::write_cert_file() const {
  char path[] = "/tmp/smartlb-test-ca-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  ::close(fd);
  std::ofstream(path) << cert_pem;
  return path;
}

}  // namespace smartlb::testing
