#pragma once
// A TCP socket with a coarse deadline, and the per-worker sweeper that enforces deadlines.
//
// Why not beast::tcp_stream: it arms an Asio timer around every read and write (a timer-queue
// insert and cancel per operation, a timerfd_settime now and then) and runs every operation
// through a type-erased executor. Proxy timeouts are whole seconds, so one sweep of the worker's
// sockets every 250 ms does the same job for a few instructions per operation.
//
// Use: `expires_after(t)` before an operation (or a composed one, like an HTTP read),
// `ec = done(ec)` after it. `done` disarms the deadline and turns the error of an operation the
// sweeper cut short into beast::error::timeout. A socket past its deadline is closed, so every
// pending and later operation on it fails; it stays armed until `done` (a range connect may
// reopen it for the next address, and the next sweep closes that too), so an `expires_after`
// must always be followed by an operation and its `done`.
#include <chrono>
#include <utility>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/io/beast.hpp"
#include "smartlb/io/draining_read.hpp"

namespace smartlb::io {

// steady_clock's timeline as of the last scheduler tick (1-10 ms late): deadlines are whole
// seconds, swept every 250 ms, and a socket's deadline is set for each of its operations, so
// the cheaper read matters (~5 ns instead of ~23 ns in a VM).
struct CoarseSteadyClock {
  using duration = std::chrono::nanoseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<CoarseSteadyClock>;
  static constexpr bool is_steady = true;
  static time_point now() noexcept { return time_point(duration(base::coarse_monotonic_now())); }
};

class DeadlineSweeper;

class TimedSocket {
 public:
  using executor_type = Executor;
  using lowest_layer_type = Socket;
  using Clock = CoarseSteadyClock;

  explicit TimedSocket(DeadlineSweeper& sweeper);  // not yet open (for connect)
  TimedSocket(DeadlineSweeper& sweeper, Socket socket);
  ~TimedSocket();
  TimedSocket(const TimedSocket&) = delete;
  TimedSocket& operator=(const TimedSocket&) = delete;

  executor_type get_executor() noexcept { return socket_.get_executor(); }
  Socket& socket() { return socket_; }
  Socket& lowest_layer() { return socket_; }

  void expires_after(Clock::duration d);
  void expires_never();
  // Ends the deadline of the operation that just completed; reports a cut-short one as a timeout.
  error_code done(error_code ec) {
    expires_never();
    if (ec && timed_out_) return beast::error::timeout;
    return ec;
  }
  bool timed_out() const { return timed_out_; }

  // Asio's read, which also marks when it emptied the socket (io/draining_read.hpp).
  template <class MutableBufferSequence, class Token>
  auto async_read_some(const MutableBufferSequence& buffers, Token&& token);
  // False when nothing (no byte, no close) has reached the socket since a read emptied it, as of
  // the worker's last epoll_wait (a close that came with that read's bytes counts only after
  // report_peer_close).
  bool bytes_may_have_arrived() { return io::bytes_may_have_arrived(socket_); }
  void report_peer_close() { io::report_peer_close(socket_); }
  // Waits until the socket is readable, holding no buffer (io/draining_read.hpp: draining_wait),
  // for a read at once after it (read_now).
  template <class Token>
  auto async_wait_readable(Token&& token);
  // The next read waits for epoll's event without trying first if the socket is known empty:
  // for the answer to what is about to be written (io/draining_read.hpp).
  void next_read_awaits_answer() { next_read_awaits_answer_ = true; }
  // Whether it was said so, for a read of a layer above this one (io/tls_socket.hpp); clears it.
  bool take_awaits_answer() { return std::exchange(next_read_awaits_answer_, false); }
  template <class ConstBufferSequence, class Token>
  auto async_write_some(const ConstBufferSequence& buffers, Token&& token) {
    return socket_.async_write_some(buffers, std::forward<Token>(token));
  }

 private:
  friend class DeadlineSweeper;

  Clock::time_point& deadline();

  DeadlineSweeper& sweeper_;
  Socket socket_;
  std::size_t slot_ = 0;  // this socket's entry in the sweeper's table
  bool timed_out_ = false;
  bool next_read_awaits_answer_ = false;
};

// Closes the sockets of one worker whose deadline has passed. Runs a 250 ms timer only while
// some socket has a deadline (so an idle worker, pooled connections and all, sleeps, and an
// io_context with nothing else to do returns); touched only from its worker's thread. The
// deadlines sit in one contiguous table, not in the sockets: a sweep of 20,000 sockets (10,000
// streams) reads 320 KB in order, where following a list through the sockets would stall the
// worker on cache misses four times a second.
class DeadlineSweeper {
 public:
  explicit DeadlineSweeper(asio::io_context& ioc);
  ~DeadlineSweeper();

  Executor executor() const { return executor_; }
  auto* reactor() const { return reactor_; }
  std::size_t size() const { return table_.size(); }

  static constexpr std::chrono::milliseconds kPeriod{250};

 private:
  friend class TimedSocket;
  void add(TimedSocket& s);
  void remove(TimedSocket& s);
  void arm() {
    if (armed_++ == 0) schedule();
  }
  void disarm() { --armed_; }
  void schedule();
  void sweep();

  Executor executor_;
  decltype(reactor_of(std::declval<asio::io_context&>())) reactor_;  // the sockets' epoll reactor
  asio::basic_waitable_timer<std::chrono::steady_clock, asio::wait_traits<std::chrono::steady_clock>,
                             Executor>
      timer_;
  struct Entry {
    TimedSocket::Clock::time_point deadline = TimedSocket::Clock::time_point::max();
    TimedSocket* socket = nullptr;
  };
  std::vector<Entry> table_;  // one per socket, in no order (a removal moves the last one in)
  std::size_t armed_ = 0;     // sockets with a deadline
  bool scheduled_ = false;
};

template <class Token>
auto TimedSocket::async_wait_readable(Token&& token) {
  return draining_wait(socket_, sweeper_.reactor(), std::forward<Token>(token));
}

template <class MutableBufferSequence, class Token>
auto TimedSocket::async_read_some(const MutableBufferSequence& buffers, Token&& token) {
  return draining_read_some(socket_, sweeper_.reactor(), buffers, std::forward<Token>(token),
                            !std::exchange(next_read_awaits_answer_, false));
}

inline TimedSocket::Clock::time_point& TimedSocket::deadline() { return sweeper_.table_[slot_].deadline; }

}  // namespace smartlb::io
