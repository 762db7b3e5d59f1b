#include "smartlb/io/draining_read.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>

#include <cerrno>

#include <cstdint>

#include <boost/asio/detail/op_queue.hpp>

namespace smartlb::io {

#if SMARTLB_DRAINING_READS
namespace {
using draining::Reactor;

// The reactor's per-descriptor flag is private; an explicit instantiation may name it (the one
// place C++ waives access checks), and the friend function it defines hands the member out.
struct SpeculativeFlags {
  friend constexpr auto member(SpeculativeFlags);
};
template <auto Member, class Tag>
struct Expose {
  friend constexpr auto member(Tag) { return Member; }
};
template struct Expose<&Reactor::descriptor_state::try_speculative_, SpeculativeFlags>;
struct RegisteredEvents {
  friend constexpr auto member(RegisteredEvents);
};
template struct Expose<&Reactor::descriptor_state::registered_events_, RegisteredEvents>;
struct ReactorOfDescriptor {
  friend constexpr auto member(ReactorOfDescriptor);
};
template struct Expose<&Reactor::descriptor_state::reactor_, ReactorOfDescriptor>;
struct EpollFd {
  friend constexpr auto member(EpollFd);
};
template struct Expose<&Reactor::epoll_fd_, EpollFd>;
// The events of the descriptor's last epoll report (Asio keeps them until the next one).
struct ReadyEvents {
  friend constexpr auto member(ReadyEvents);
};
template struct Expose<&asio::detail::scheduler_operation::task_result_, ReadyEvents>;

// The descriptor as the scheduler's operation (a private base: a C-style cast may name it).
asio::detail::operation* as_operation(Reactor::per_descriptor_data state) {
  return (asio::detail::operation*)state;  // NOLINT(google-readability-casting)
}
}  // namespace

namespace draining {
void rearm_speculative_reads(Reactor::per_descriptor_data state) {
  if (state) (state->*member(SpeculativeFlags{}))[Reactor::read_op] = true;
}
}  // namespace draining

void report_peer_close(Socket& s) {
  auto& impl = draining::SocketImpl::of(s).get_implementation();
  const Reactor::per_descriptor_data state = impl.reactor_data_;
  if (!state) return;
  std::uint32_t& registered = state->*member(RegisteredEvents{});
  if (registered == 0 || (registered & EPOLLRDHUP)) return;
  epoll_event ev{};
  ev.events = registered | EPOLLRDHUP;
  ev.data.ptr = state;
  // Asio's own later changes (EPOLLOUT) start from `registered`, so they keep it.
  if (::epoll_ctl((state->*member(ReactorOfDescriptor{}))->*member(EpollFd{}), EPOLL_CTL_MOD, impl.socket_,
                  &ev) == 0)
    registered = ev.events;
}

std::size_t recv_now(Socket& s, asio::mutable_buffer b, error_code& ec) { return read_now(s, b, ec); }

std::size_t read_now(Socket& s, asio::mutable_buffer b, error_code& ec) {
  auto& impl = draining::SocketImpl::of(s).get_implementation();
  ssize_t n;
  do {
    n = ::recv(impl.socket_, b.data(), b.size(), MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    const bool empty = errno == EAGAIN || errno == EWOULDBLOCK;
    ec = empty ? error_code(asio::error::would_block) : error_code(errno, asio::error::get_system_category());
    // Known empty, as after a short read: a wait then goes to epoll rather than completing at
    // once on an event whose bytes were already read (which would make a wait-and-read loop spin).
    if (empty && impl.reactor_data_)
      (impl.reactor_data_->*member(SpeculativeFlags{}))[Reactor::read_op] = false;
    return 0;
  }
  if (n == 0) {
    ec = asio::error::eof;
    return 0;
  }
  ec = {};
  // A short read emptied the socket: the mark says so, as a draining read's would (the worker's
  // one thread runs both this and the reactor, so no event falls between the recv and the mark).
  if (static_cast<std::size_t>(n) < b.size() && impl.reactor_data_)
    (impl.reactor_data_->*member(SpeculativeFlags{}))[Reactor::read_op] = false;
  return static_cast<std::size_t>(n);
}

bool bytes_may_have_arrived(Socket& s) {
  const Reactor::per_descriptor_data state = draining::SocketImpl::of(s).get_implementation().reactor_data_;
  if (!state || (state->*member(SpeculativeFlags{}))[Reactor::read_op]) return true;
  // The peer's close, reported with the last bytes read (one event for both, which the read's
  // mark cannot tell from the bytes alone).
  if (as_operation(state)->*member(ReadyEvents{}) & EPOLLRDHUP) return true;
  // An event epoll has reported that the worker has not processed yet: the descriptor then waits
  // in the scheduler's queue, ahead of at least the reactor's own task, so it has a successor.
  // (A C-style cast may name a private base; op_queue_access is Asio's public door to `next_`.)
  return asio::detail::op_queue_access::next(as_operation(state)) != nullptr;
}
#else
void report_peer_close(Socket&) {}
bool bytes_may_have_arrived(Socket&) { return true; }
std::size_t read_now(Socket&, asio::mutable_buffer, error_code& ec) {
  ec = asio::error::would_block;
  return 0;
}
std::size_t recv_now(Socket& s, asio::mutable_buffer b, error_code& ec) {
  ssize_t n;
  do {
    n = ::recv(s.native_handle(), b.data(), b.size(), MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    ec = errno == EAGAIN || errno == EWOULDBLOCK ? error_code(asio::error::would_block)
                                                 : error_code(errno, asio::error::get_system_category());
    return 0;
  }
  ec = n == 0 ? error_code(asio::error::eof) : error_code();
  return static_cast<std::size_t>(n);
}
#endif

}  // namespace smartlb::io
