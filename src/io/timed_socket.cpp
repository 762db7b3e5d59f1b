#include "smartlb/io/timed_socket.hpp"

namespace smartlb::net {

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
}

void TimedSocket::expires_after(Clock::duration d) {
  if (deadline_ == Clock::time_point::max()) sweeper_.arm();
  deadline_ = Clock::now() + d;
}

void TimedSocket::expires_never() {
  if (deadline_ == Clock::time_point::max()) return;
  deadline_ = Clock::time_point::max();
  sweeper_.disarm();
}

DeadlineSweeper::DeadlineSweeper(asio::io_context& ioc) : executor_(ioc.get_executor()), timer_(executor_) {}

DeadlineSweeper::~DeadlineSweeper() = default;

void DeadlineSweeper::add(TimedSocket& s) {
  s.prev_ = nullptr;
  s.next_ = head_;
  if (head_) head_->prev_ = &s;
  head_ = &s;
  ++count_;
}

void DeadlineSweeper::remove(TimedSocket& s) {
  if (s.prev_)
    s.prev_->next_ = s.next_;
  else
    head_ = s.next_;
  if (s.next_) s.next_->prev_ = s.prev_;
  s.prev_ = s.next_ = nullptr;
  --count_;
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
  // Closing posts the pending operations' completions; nothing runs (or unlinks) in here.
  for (TimedSocket* s = head_; s; s = s->next_) {
    if (s->deadline_ > now) continue;
    s->timed_out_ = true;
    error_code ignored;
    s->socket_.close(ignored);
  }
}

}  // namespace smartlb::net
