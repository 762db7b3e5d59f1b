#include "smartlb/net/upstream.hpp"

#include <sys/socket.h>

#include <openssl/ssl.h>

#include "smartlb/io/draining_read.hpp"

namespace smartlb::net {

UpstreamConnection::UpstreamConnection(io::DeadlineSweeper& sweeper, routing::BackendId id)
    : backend(id), stream_(std::in_place_type<Plain>, sweeper) {
  buffer.reserve(kBufferBytes);
}

UpstreamConnection::UpstreamConnection(io::DeadlineSweeper& sweeper, ssl::context& ctx, routing::BackendId id)
    : backend(id), stream_(std::in_place_type<Tls>, sweeper, ctx) {
  buffer.reserve(kBufferBytes);
}

io::TimedSocket& UpstreamConnection::tcp() {
  if (auto* p = std::get_if<Plain>(&stream_)) return *p;
  return std::get<Tls>(stream_).next_layer();
}

std::size_t UpstreamConnection::read_now(asio::mutable_buffer b, error_code& ec) {
  if (Tls* t = tls()) return t->read_now(b, ec);
  return io::read_now(tcp().socket(), b, ec);
}

bool UpstreamConnection::known_quiet() {
  if (Tls* t = tls(); t && t->holds_bytes()) return false;
  return !tcp().bytes_may_have_arrived();
}

void UpstreamConnection::close() {
  error_code ignored;
  tcp().socket().shutdown(tcp::socket::shutdown_both, ignored);
  tcp().socket().close(ignored);
}

UpstreamPool::UpstreamPool(io::DeadlineSweeper& sweeper, const config::Config& cfg, ssl::context& tls,
                           const base::Clock& clock, telemetry::RequestObserver* observer, LookupFn lookup)
    : sweeper_(sweeper),
      cfg_(cfg),
      tls_(tls),
      clock_(clock),
      observer_(observer),
      lookup_(std::move(lookup)),
      resolved_(0) {}

void UpstreamPool::ensure(routing::BackendId id) {
  if (id.value < idle_.size()) return;
  idle_.resize(id.value + 1);
  pending_.resize(id.value + 1);
  resumptions_.resize(id.value + 1);
  resolved_.ensure(id.value + 1);
}

bool UpstreamPool::still_alive(UpstreamConnection& c) const {
  // A pooled connection must have nothing to read. EOF means the server closed it; any byte
  // means the server sent something nobody asked for (a stray or late response, a TLS alert):
  // reused, it would answer the next request with it, and every later response would be one
  // behind -- clients would get each other's completions.
  auto& sock = c.tcp().socket();
  if (!sock.is_open()) return false;
  // Bytes the TLS layer already took off the socket (a record, whole or in part).
  if (auto* tls = c.tls(); tls && tls->holds_bytes()) return false;
  // Nothing has reached the socket since the response's last read emptied it (the worker has
  // seen no epoll event for it): a look would find EAGAIN, so spare the recv(); and the next
  // response's read, which would find EAGAIN too, waits for its event at once.
  if (!c.tcp().bytes_may_have_arrived()) {
    c.tcp().next_read_awaits_answer();
    return true;
  }
  char byte;
  const ssize_t n = ::recv(sock.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

void UpstreamPool::sync_origin(routing::BackendId id, const config::BackendUrl& url) {
  std::string origin = (url.tls ? "https://" : "http://") + url.host + ":" + std::to_string(url.port);
  if (origins_.size() <= id.value) origins_.resize(id.value + 1);
  if (origins_[id.value] == origin) return;
  const bool moved = !origins_[id.value].empty();
  origins_[id.value] = std::move(origin);
  if (!moved) return;
  if (id.value < resumptions_.size()) resumptions_[id.value].reset();  // a session of the old server
  if (id.value < idle_.size()) {
    for (auto& c : idle_[id.value]) c->close();
    idle_[id.value].clear();
  }
  resolved_.ensure(id.value + 1);
  resolved_.forget(id.value);
}

UpstreamPtr UpstreamPool::take_pooled(routing::BackendId id) {
  if (id.value >= idle_.size()) return nullptr;
  auto& idle = idle_[id.value];
  const base::MonoNanos now = clock_.coarse_now();  // idle times are seconds
  // Connections idle longer than this are likely closed by the server or a middlebox.
  constexpr base::MonoNanos kMaxIdleNanos = 55'000'000'000;
  while (!idle.empty()) {
    UpstreamPtr c = std::move(idle.back());
    idle.pop_back();
    // Every reuse looks (what the worker's epoll saw, then a non-blocking peek if it saw
    // anything): a stray response can arrive a millisecond after the exchange ended as well as
    // a minute later. What this cannot see is a stray that arrives after the look, while the
    // next request waits for its answer: on HTTP/1.1 nothing tells the two apart
    // (docs/architecture.md, "Upstream connections").
    if (now - c->idle_since < kMaxIdleNanos && still_alive(*c)) {
      c->reused = true;
      rooms_.take(c->buffer, UpstreamConnection::kBufferBytes);
      return c;
    }
    c->close();
  }
  return nullptr;
}

void UpstreamPool::release(UpstreamPtr conn) {
  if (conn->backend.value >= idle_.size()) ensure(conn->backend);  // connect() has, usually
  auto& idle = idle_[conn->backend.value];
  // A deadline that passed just as the last read completed has closed the socket.
  if (conn->tcp().timed_out() || !conn->tcp().socket().is_open()) {
    conn->close();
    return;
  }
  if (idle.size() >= kMaxIdlePerBackend) {
    conn->close();
    return;
  }
  conn->idle_since = clock_.coarse_now();
  conn->reused = false;
  // (The exchange pools only a connection read to its end.) A stream's room, cut to its events, is
  // freed rather than kept: a kept room is a whole response's, so that taking one never allocates.
  if (conn->buffer.size() == 0 && conn->buffer.capacity() >= UpstreamConnection::kBufferBytes)
    rooms_.give(conn->buffer);
  else if (conn->buffer.size() == 0)
    conn->buffer.shrink_to_fit();
  idle.push_back(std::move(conn));
}

void UpstreamPool::clear() {
  for (auto& list : idle_) {
    for (auto& c : list) c->close();
    list.clear();
  }
}

std::unique_ptr<ssl::context> make_upstream_tls_context(const config::Config& cfg) {
  auto ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  SSL_CTX_set_min_proto_version(ctx->native_handle(), TLS1_2_VERSION);
  ctx->set_default_verify_paths();
  if (!cfg.upstream_ca_file.empty()) ctx->load_verify_file(cfg.upstream_ca_file);
  ctx->set_verify_mode(ssl::verify_peer);
  // Offer only HTTP/1.1 so that no server switches to h2 under us.
  static const unsigned char alpn[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  SSL_CTX_set_alpn_protos(ctx->native_handle(), alpn, sizeof(alpn));
  io::TlsSocket::enable_resumption(*ctx);
  return ctx;
}

std::size_t UpstreamPool::idle_buffer_bytes() const {
  std::size_t n = 0;
  for (const auto& list : idle_)
    for (const auto& c : list) n += c->buffer.capacity();
  return n;
}

std::size_t UpstreamPool::idle_count() const {
  std::size_t n = 0;
  for (const auto& list : idle_) n += list.size();
  return n;
}

Task<UpstreamPool::Endpoints> UpstreamPool::endpoints_of(routing::BackendId id, const config::BackendUrl& url,
                                                         bool fresh, error_code& error) {
  ensure(id);
  const std::size_t backend = id.value;
  error_code literal_ec;
  const asio::ip::address literal = asio::ip::make_address(url.host, literal_ec);
  if (!literal_ec) co_return Endpoints{tcp::endpoint(literal, url.port)};
  if (!fresh)
    if (const Endpoints* cached = resolved_.find(backend, clock_.coarse_now())) co_return *cached;
  std::shared_ptr<PendingLookup> pending = pending_[backend];
  if (!pending) {
    // The lookup runs on its own, so that every connect waiting for it (this one too) can give
    // up at the deadline while the system resolver takes as long as it takes.
    pending = std::make_shared<PendingLookup>(sweeper_.executor());
    pending->done.expires_after(cfg_.connect_timeout);
    pending_[backend] = pending;
    asio::co_spawn(sweeper_.executor(), run_lookup(id, url.host, url.port, pending), asio::detached);
  }
  // Connects that start while a lookup is under way (a burst of new connections at start-up,
  // or as the cache expires) share its answer: Asio runs lookups one at a time on its resolver
  // thread, so a burst that did its own would queue behind each other.
  if (!pending->finished) co_await pending->done.async_wait(use_tuple);  // answer or deadline
  if (!pending->finished) {
    error = asio::error::timed_out;
    co_return Endpoints{};
  }
  error = pending->error;
  co_return pending->found;
}

Task<> UpstreamPool::run_lookup(routing::BackendId id, std::string host, std::uint16_t port,
                                std::shared_ptr<PendingLookup> lookup) {
  const std::size_t backend = id.value;
  // However this ends (an answer, an exception, the worker shutting down), the waiters wake
  // (with an error unless an answer was stored) and the next connect looks up again.
  struct EndPending {
    std::vector<std::shared_ptr<PendingLookup>>& slots;  // may grow meanwhile: not a reference to one
    std::size_t backend;
    PendingLookup& lookup;
    ~EndPending() {
      if (slots[backend].get() == &lookup) slots[backend].reset();
      lookup.finished = true;
      try {
        lookup.done.cancel();
      } catch (...) {  // a steady timer's cancel does not fail in practice
      }
    }
  } end_pending{pending_, backend, *lookup};

  error_code ec;
  Endpoints found;
  // (Not a conditional expression: GCC 12 miscompiles co_await inside one.)
  if (lookup_)
    found = co_await lookup_(host, port, ec);
  else
    found = co_await system_lookup(host, port, ec);
  if (!ec && found.empty()) ec = asio::error::host_not_found;
  if (ec) found.clear();
  if (observer_) observer_->on_dns_lookup(id.value, !ec);
  if (ec)
    resolved_.forget(backend);
  else
    resolved_.store(backend, found, clock_.coarse_now());
  lookup->found = std::move(found);
  lookup->error = ec;
}

Task<UpstreamPool::Endpoints> UpstreamPool::system_lookup(const std::string& host, std::uint16_t port,
                                                          error_code& error) {
  asio::ip::basic_resolver<tcp, Executor> resolver(sweeper_.executor());
  auto [ec, results] = co_await resolver.async_resolve(host, std::to_string(port), use_tuple);
  Endpoints found;
  for (const auto& entry : results) found.push_back(entry.endpoint());
  error = ec;
  co_return found;
}

Task<ConnectResult> UpstreamPool::connect(routing::BackendId backend, const config::BackendUrl& url) {
  ConnectResult r;
  error_code rec;
  Endpoints endpoints = co_await endpoints_of(backend, url, false, rec);
  if (rec) {
    r.failure = routing::TransportFailure::Connect;
    r.detail = "resolve: " + rec.message();
    co_return r;
  }
  auto conn = url.tls ? std::make_unique<UpstreamConnection>(sweeper_, tls_, backend)
                      : std::make_unique<UpstreamConnection>(sweeper_, backend);
  conn->tcp().expires_after(cfg_.connect_timeout);
  auto [cec, ep] = co_await asio::async_connect(conn->tcp().socket(), endpoints, use_tuple);
  cec = conn->tcp().done(cec);
  if (cec && cec != beast::error::timeout) {
    // Refused or unreachable on every address we had: if the name now points elsewhere,
    // try the new addresses once instead of cooling a backend down because it moved.
    Endpoints looked_up = co_await endpoints_of(backend, url, true, rec);
    if (!rec && looked_up != endpoints) {
      conn->close();
      conn->tcp().expires_after(cfg_.connect_timeout);
      auto [cec2, ep2] = co_await asio::async_connect(conn->tcp().socket(), looked_up, use_tuple);
      cec = conn->tcp().done(cec2);
    }
  }
  if (cec) {
    r.failure = routing::TransportFailure::Connect;
    r.detail = "connect: " + cec.message();
    co_return r;
  }
  error_code ignored;
  conn->tcp().socket().set_option(tcp::no_delay(true), ignored);
  // A close that comes with a response's last bytes must retire the connection: the pool's look
  // at it (still_alive) learns it from epoll, and the next answer's read does not wait on it.
  conn->tcp().report_peer_close();
  if (auto* tls = conn->tls()) {
    // SNI (not for IP literals) and certificate name verification, both from the URL host.
    if (!tls->expect_peer(url.host)) {
      r.failure = routing::TransportFailure::Tls;
      r.detail = "tls: cannot set the server's name";
      co_return r;
    }
    std::shared_ptr<io::TlsResumption>& resumption = resumptions_[backend.value];
    if (!resumption) resumption = std::make_shared<io::TlsResumption>();
    tls->resume_from(resumption);
    conn->tcp().expires_after(cfg_.connect_timeout);
    error_code hec = conn->tcp().done(co_await tls->handshake());
    if (hec) {
      r.failure =
          hec == beast::error::timeout ? routing::TransportFailure::Timeout : routing::TransportFailure::Tls;
      r.detail = "tls handshake: " + hec.message();
      if (const long verified = SSL_get_verify_result(tls->native_handle()); verified != X509_V_OK)
        r.detail += std::string(" (") + X509_verify_cert_error_string(verified) + ")";
      co_return r;
    }
  }
  r.conn = std::move(conn);
  co_return r;
}

}  // namespace smartlb::net
