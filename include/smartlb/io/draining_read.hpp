#pragma once
// Private to the I/O layer. A socket read that leaves a mark in Asio's epoll reactor when it
// empties the socket, and a look at that mark: whether anything has reached the socket since,
// known without a syscall.
//
// Why: the pool looks at an idle connection before it reuses it (net/upstream: a stray byte or
// a close retires it). A recv(MSG_PEEK) for that costs a syscall on every reuse, though nearly
// always nothing has happened on the connection since its response was read. The reactor knows:
// Asio 1.26 (Boost 1.81) keeps a per-descriptor flag, `try_speculative_[read_op]`, that every
// epoll event on the descriptor turns on and that a read which Asio calls "exhausted" turns off
// (under the descriptor's lock, atomically with its recv()). Asio's own read is exhausted only
// at the end of the stream; this one, Asio's receive operation otherwise, also when it returned
// fewer bytes than the buffer holds: the socket's receive queue was empty. Bytes (or a close)
// that arrive after that recv() raise an epoll event (edge-triggered epoll reports every
// arrival), which turns the flag on. So after a short read, the flag off means: nothing has
// reached the socket, as of the worker's last epoll_wait (an event it has fetched but not yet
// processed counts: the descriptor then waits in Asio's queue of operations).
//
// A short read does not prove that no close is pending (a FIN that came with the last bytes
// raises no later event), so a read puts the flag back on first and tries at once, as Asio's
// own reads do, unless its caller knows better: the answer to a request just written to a
// pooled connection that the mark said was quiet is waited for without a recv() that would find
// EAGAIN, and its own event leaves no stale "maybe" for the connection's next reuse.
//
// Both reach into Asio's internals, so they are compiled only for the version they were
// written against, on its epoll reactor; anywhere else the read is Asio's ordinary one and
// every look says "maybe".
#include <boost/asio/version.hpp>

#include "smartlb/io/beast.hpp"

#if BOOST_ASIO_VERSION == 102600 && defined(BOOST_ASIO_HAS_EPOLL) && \
    !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT)
#define SMARTLB_DRAINING_READS 1
#include <boost/asio/detail/bind_handler.hpp>
#include <boost/asio/detail/buffer_sequence_adapter.hpp>
#include <boost/asio/detail/fenced_block.hpp>
#include <boost/asio/detail/handler_alloc_helpers.hpp>
#include <boost/asio/detail/handler_cont_helpers.hpp>
#include <boost/asio/detail/handler_work.hpp>
#include <boost/asio/detail/reactive_wait_op.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/detail/socket_ops.hpp>
#else
#define SMARTLB_DRAINING_READS 0
#endif

namespace smartlb::io {

#if SMARTLB_DRAINING_READS
namespace draining {
namespace ad = asio::detail;
using Reactor = ad::epoll_reactor;

// basic_socket's implementation (protected): a pointer to member formed through a derived
// class may be applied to any socket.
struct SocketImpl : Socket {
  static auto& of(Socket& s) { return s.*(&SocketImpl::impl_); }
};

// Asio's reactive_socket_recv_op (Boost 1.81), but for the one status that differs (above).
template <class Buffers, class Handler, class IoExecutor>
class RecvOp : public ad::reactor_op {
 public:
  BOOST_ASIO_DEFINE_HANDLER_PTR(RecvOp);

  RecvOp(ad::socket_type socket, const Buffers& buffers, Handler& handler, const IoExecutor& io_ex)
      : ad::reactor_op(error_code(), &RecvOp::do_perform, &RecvOp::do_complete),
        socket_(socket),
        buffers_(buffers),
        handler_(std::move(handler)),
        work_(handler_, io_ex) {}

  static status do_perform(ad::reactor_op* base) {
    auto* o = static_cast<RecvOp*>(base);
    using Adapter = ad::buffer_sequence_adapter<asio::mutable_buffer, Buffers>;
    std::size_t asked = 0;
    bool finished = false;
    if constexpr (Adapter::is_single_buffer) {  // recv(), as Asio does, not recvmsg()
      const asio::mutable_buffer b = Adapter::first(o->buffers_);
      asked = b.size();
      finished = ad::socket_ops::non_blocking_recv1(o->socket_, b.data(), b.size(), 0, true, o->ec_,
                                                    o->bytes_transferred_);
    } else {
      Adapter bufs(o->buffers_);
      asked = bufs.total_size();
      finished = ad::socket_ops::non_blocking_recv(o->socket_, bufs.buffers(), bufs.count(), 0, true, o->ec_,
                                                   o->bytes_transferred_);
    }
    if (!finished) return not_done;  // EAGAIN: wait for the next event
    // 0 bytes is the end of the stream (Asio's own "exhausted"); fewer than asked, an empty queue.
    if (o->bytes_transferred_ == 0 || (!o->ec_ && o->bytes_transferred_ < asked)) return done_and_exhausted;
    return done;
  }

  static void do_complete(void* owner, ad::operation* base, const error_code&, std::size_t) {
    auto* o = static_cast<RecvOp*>(base);
    ptr p = {std::addressof(o->handler_), o, o};
    ad::handler_work<Handler, IoExecutor> w(std::move(o->work_));
    // The handler is moved out before the operation's memory is freed: it may own that memory.
    ad::binder2<Handler, error_code, std::size_t> handler(o->handler_, o->ec_, o->bytes_transferred_);
    p.h = std::addressof(handler.handler_);
    p.reset();
    if (owner) {
      ad::fenced_block b(ad::fenced_block::half);
      w.complete(handler, handler.handler_);
    }
  }

 private:
  ad::socket_type socket_;
  Buffers buffers_;
  Handler handler_;
  ad::handler_work<Handler, IoExecutor> work_;
};

// Turns the flag back on (a read tries at once, like Asio's own; the mark was only to look at).
void rearm_speculative_reads(Reactor::per_descriptor_data state);

struct Initiate {
  Socket* socket;
  Reactor* reactor;
  bool try_first;

  template <class Handler, class Buffers>
  void operator()(Handler&& handler, const Buffers& buffers) const {
    auto& impl = SocketImpl::of(*socket);
    auto& data = impl.get_implementation();
    using Adapter = ad::buffer_sequence_adapter<asio::mutable_buffer, Buffers>;
    // Per-operation cancellation, an empty buffer, a socket that fails to go non-blocking (as
    // Asio's start_op makes it): Asio's way.
    error_code ec;
    if (asio::get_associated_cancellation_slot(handler).is_connected() || Adapter::all_empty(buffers) ||
        (!(data.state_ & ad::socket_ops::non_blocking) &&
         !ad::socket_ops::set_internal_non_blocking(data.socket_, data.state_, true, ec))) {
      socket->async_read_some(buffers, std::forward<Handler>(handler));
      return;
    }
    if (try_first) rearm_speculative_reads(data.reactor_data_);
    auto h = std::forward<Handler>(handler);
    using Op = RecvOp<Buffers, std::decay_t<Handler>, Executor>;
    const bool is_continuation = boost_asio_handler_cont_helpers::is_continuation(h);
    typename Op::ptr p = {std::addressof(h), Op::ptr::allocate(h), nullptr};
    p.p = new (p.v) Op(data.socket_, buffers, h, impl.get_executor());
    reactor->start_op(Reactor::read_op, data.socket_, data.reactor_data_, p.p, is_continuation, true);
    p.v = p.p = nullptr;
  }
};

// Asio's wait for readability, started as a read that found the socket empty: queued for the
// descriptor's next event. (Asio's own async_wait re-registers the descriptor with epoll_ctl()
// each time, so that an event already consumed is reported again: one syscall per wait that a
// socket known to be quiet does not need.)
struct InitiateWait {
  Socket* socket;
  Reactor* reactor;

  template <class Handler>
  void operator()(Handler&& handler) const {
    auto& impl = SocketImpl::of(*socket);
    auto& data = impl.get_implementation();
    error_code ec;
    if (asio::get_associated_cancellation_slot(handler).is_connected() || !data.reactor_data_ ||
        (!(data.state_ & ad::socket_ops::non_blocking) &&
         !ad::socket_ops::set_internal_non_blocking(data.socket_, data.state_, true, ec))) {
      socket->async_wait(Socket::wait_read, std::forward<Handler>(handler));
      return;
    }
    auto h = std::forward<Handler>(handler);
    using Op = ad::reactive_wait_op<std::decay_t<Handler>, Executor>;
    const bool is_continuation = boost_asio_handler_cont_helpers::is_continuation(h);
    typename Op::ptr p = {std::addressof(h), Op::ptr::allocate(h), nullptr};
    p.p = new (p.v) Op(error_code(), h, impl.get_executor());
    // Speculation allowed, as for a read: a socket the mark says may have bytes completes the
    // wait at once (and the read after it tries); a quiet one waits without a syscall.
    reactor->start_op(Reactor::read_op, data.socket_, data.reactor_data_, p.p, is_continuation, true);
    p.v = p.p = nullptr;
  }
};

}  // namespace draining

// Waits until `s` is readable (bytes, its close, an error), for a caller that then reads at once
// (read_now): no buffer is held meanwhile. Meant for a socket bytes_may_have_arrived says is
// quiet; on one that may have bytes it completes at once.
template <class Token>
auto draining_wait(Socket& s, draining::Reactor* reactor, Token&& token) {
  return asio::async_initiate<Token, void(error_code)>(draining::InitiateWait{&s, reactor}, token);
}

// The reactor of `ioc`, for draining_read_some.
inline draining::Reactor* reactor_of(asio::io_context& ioc) {
  return &asio::use_service<draining::Reactor>(ioc);
}

// Reads some bytes from `s` (an open socket of `reactor`'s io_context) like async_read_some.
// With `try_first` false, a read on a socket that the mark says is empty waits for epoll's next
// event without a recv() first: only for a read whose bytes the peer sends after it starts
// (an answer to what was just written), since a close already pending would never wake it.
template <class Buffers, class Token>
auto draining_read_some(Socket& s, draining::Reactor* reactor, const Buffers& buffers, Token&& token,
                        bool try_first = true) {
  return asio::async_initiate<Token, void(error_code, std::size_t)>(
      draining::Initiate{&s, reactor, try_first}, token, buffers);
}

#else

struct NoReactor {};
inline NoReactor* reactor_of(asio::io_context&) { return nullptr; }
template <class Token>
auto draining_wait(Socket& s, NoReactor*, Token&& token) {
  return s.async_wait(Socket::wait_read, std::forward<Token>(token));
}
template <class Buffers, class Token>
auto draining_read_some(Socket& s, NoReactor*, const Buffers& buffers, Token&& token, bool = true) {
  return s.async_read_some(buffers, std::forward<Token>(token));
}

#endif

// Asks epoll to report the peer's close as such (EPOLLRDHUP) in `s`'s events: a close that
// comes with the last bytes is then known without a read (bytes_may_have_arrived says "maybe").
// One epoll_ctl; for connections that are reused (upstream ones).
void report_peer_close(Socket& s);

// What `s` holds now, read into `b` without waiting: for a socket a wait has just found
// readable, whose bytes then need no second operation (net/upstream_exchange, read_body_bytes;
// net/websocket_relay). A short read or none leaves the socket known empty. Returns the bytes read;
// `ec`: eof at the end of the stream, would_block when nothing was there after all (or where
// draining reads are not compiled: then read it the usual way), else the socket's error.
std::size_t read_now(Socket& s, asio::mutable_buffer b, error_code& ec);
// read_now, for a reader that cannot read the usual way (io/tls_socket.hpp: OpenSSL reads the
// socket through it): without draining reads compiled, a plain recv() that leaves no mark.
std::size_t recv_now(Socket& s, asio::mutable_buffer b, error_code& ec);

// False only when nothing has happened on `s` (no byte, no close, no error) since a read of
// draining_read_some emptied it, as of its io_context's last epoll_wait (and, without
// report_peer_close, but for a close that came with that read's bytes). Called on the socket's
// own thread (each worker runs its io_context on one thread).
bool bytes_may_have_arrived(Socket& s);

}  // namespace smartlb::io
