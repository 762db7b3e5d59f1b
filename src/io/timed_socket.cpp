#include "smartlb/io/timed_socket.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace smartlb::io {

TimedSocket::TimedSocket(DeadlineSweeper& sweeper) : sweeper_(sweeper), socket_(sweeper.executor()) {
  sweeper_.add(*this);
}

TimedSocket::TimedSocket(DeadlineSweeper& sweeper, Socket socket)
    : sweeper_(sweeper), socket_(std::move(socket)) {
  sweeper_.add(*this);
}

TimedSocket::~TimedSocket() {
  expires_never();
  sweeper_.remove(*this);
  if (watch_) watch_->owner = nullptr;  // its wait ends (aborted) once the socket closes
  QuietWatch::release(watch_);
}

std::size_t TimedSocket::receive(asio::mutable_buffer b, error_code& ec) {
  const ssize_t n = ::recv(socket_.native_handle(), b.data(), b.size(), MSG_DONTWAIT);
  if (n > 0) {
    ec = {};
    if (static_cast<std::size_t>(n) < b.size()) arm_watch();  // it drained the socket
    return static_cast<std::size_t>(n);
  }
  if (n == 0) {
    ec = asio::error::eof;
  } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
    ec = asio::error::would_block;
    arm_watch();
  } else {
    ec = error_code(errno, asio::error::get_system_category());
  }
  return 0;
}

void TimedSocket::cancel(error_code& ec) {
  if (watch_ && watch_->armed) {
    // The wait about to be aborted stops being the watch's own: its handler, whenever it runs,
    // touches nothing, and the next read tries the socket (and queues a new wait) at once.
    watch_->armed = false;
    ++watch_->generation;
    if (QuietWatch::Reader* r = std::exchange(watch_->reader, nullptr)) r->abort(socket_.get_executor());
  }
  socket_.cancel(ec);
}

void TimedSocket::arm_watch() {
  if (!watch_) {
    watch_ = new QuietWatch;
    watch_->owner = this;
  }
  if (watch_->armed) return;  // the queued wait still covers it
  watch_->armed = true;
  socket_.async_wait(Socket::wait_read, QuietWatchEnd(watch_, ++watch_->generation));
}

void TimedSocket::expires_after(Clock::duration d) {
  Clock::time_point& at = deadline();
  if (at == Clock::time_point::max()) sweeper_.arm();
  at = Clock::now() + d;
}

void TimedSocket::expires_never() {
  Clock::time_point& at = deadline();
  if (at == Clock::time_point::max()) return;
  at = Clock::time_point::max();
  sweeper_.disarm();
}

DeadlineSweeper::DeadlineSweeper(asio::io_context& ioc) : executor_(ioc.get_executor()), timer_(executor_) {}

DeadlineSweeper::~DeadlineSweeper() = default;

void DeadlineSweeper::add(TimedSocket& s) {
  s.slot_ = table_.size();
  table_.push_back({TimedSocket::Clock::time_point::max(), &s});
}

void DeadlineSweeper::remove(TimedSocket& s) {
  // The last entry moves into the freed slot.
  Entry& freed = table_[s.slot_];
  freed = table_.back();
  freed.socket->slot_ = s.slot_;
  table_.pop_back();
}

void DeadlineSweeper::schedule() {
  if (scheduled_ || armed_ == 0) return;
  scheduled_ = true;
  timer_.expires_after(kPeriod);
  timer_.async_wait([this](error_code ec) {
    scheduled_ = false;
    if (ec) return;
    sweep();
    schedule();
  });
}

void DeadlineSweeper::sweep() {
  const auto now = TimedSocket::Clock::now();
  // Closing posts the pending operations' completions; nothing runs (or leaves the table) in here.
  for (const Entry& e : table_) {
    if (e.deadline > now) continue;
    e.socket->timed_out_ = true;
    error_code ignored;
    e.socket->socket_.close(ignored);
  }
}

}  // namespace smartlb::io
