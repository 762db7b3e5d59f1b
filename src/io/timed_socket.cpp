#include "smartlb/io/timed_socket.hpp"

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

DeadlineSweeper::DeadlineSweeper(asio::io_context& ioc)
    : executor_(ioc.get_executor()), reactor_(reactor_of(ioc)), timer_(executor_) {}

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
