#pragma once
// Whether anything has arrived on a socket since a read drained it, known without a syscall.
//
// Asio tries every read at once. A read issued right after a request went upstream, or after a
// response went to a keep-alive client, finds nothing: that recv (EAGAIN) was a fifth of a
// proxied request's syscalls, and the upstream pool's look for stray bytes (a MSG_PEEK recv on
// every reuse) another. Like nginx's `ready` flag: a read that leaves fewer bytes than it had
// room for drained the socket, so the socket is *quiet*, and a wait is queued at once (no
// syscall). epoll is edge-triggered: any byte or end that arrives afterwards ends the wait.
//   - A read on a quiet socket does not recv: it is handed to the wait, which reads what came
//     when it ends (so no edge can be missed between the wait ending and the read starting).
//   - An idle pooled connection that is still quiet has received nothing, as of the worker's
//     last look at epoll (UpstreamPool::still_alive).
//   - Cancelling a socket's operations must go through TimedSocket::cancel: a plain
//     socket.cancel() aborts the wait, but until that handler runs the socket still looks
//     quiet, and a read started meanwhile would be handed to the aborted wait.
// One thread owns a socket and its watch: no atomics. The watch is shared with the queued
// wait's handler, which can outlive the socket (a closed socket's operations end later).
#include <cstdint>
#include <utility>

#include <boost/asio/append.hpp>
#include <boost/asio/post.hpp>

#include "smartlb/io/beast.hpp"

namespace smartlb::io {

struct QuietWatch {
  // A read handed to the wait: completed when the wait ends (reading first, unless it failed).
  struct Reader {
    virtual void complete(QuietWatch& watch, error_code ec) = 0;  // deletes itself
    virtual void abort(const Executor& ex) = 0;  // posts operation_aborted; deletes itself
    virtual void discard() = 0;                  // deletes itself, never invoked
   protected:
    ~Reader() = default;
  };
  // Reads into `b` without blocking: bytes, eof, an error, or would_block. A short read or
  // would_block arms the watch again. Set by the owning socket; null once it is gone.
  class Owner {
   public:
    virtual std::size_t receive(asio::mutable_buffer b, error_code& ec) = 0;

   protected:
    ~Owner() = default;
  };

  int refs = 1;
  bool armed = false;            // a wait is queued and has not ended (as far as handlers ran)
  std::uint32_t generation = 0;  // which wait `armed` and `reader` belong to
  Reader* reader = nullptr;
  Owner* owner = nullptr;

  static void release(QuietWatch* w) {
    if (w && --w->refs == 0) {
      if (Reader* r = std::exchange(w->reader, nullptr)) r->discard();
      delete w;
    }
  }
};

// The queued wait's handler: ends the watch it was queued for, and completes the read handed to
// it. Destroyed without being invoked (the io_context shut down), it discards that read: the
// coroutine waiting for it is reachable from nowhere else.
class QuietWatchEnd {
 public:
  QuietWatchEnd(QuietWatch* w, std::uint32_t generation) : watch_(w), generation_(generation) { ++w->refs; }
  QuietWatchEnd(QuietWatchEnd&& o) noexcept
      : watch_(std::exchange(o.watch_, nullptr)), generation_(o.generation_) {}
  QuietWatchEnd(const QuietWatchEnd&) = delete;
  QuietWatchEnd& operator=(const QuietWatchEnd&) = delete;
  QuietWatchEnd& operator=(QuietWatchEnd&&) = delete;
  ~QuietWatchEnd() {
    if (watch_ && current())
      if (QuietWatch::Reader* r = std::exchange(watch_->reader, nullptr)) r->discard();
    QuietWatch::release(watch_);
  }

  void operator()(error_code ec) {
    if (!current()) return;
    watch_->armed = false;
    if (QuietWatch::Reader* r = std::exchange(watch_->reader, nullptr)) {
      if (!watch_->owner && !ec) ec = asio::error::operation_aborted;  // the socket is gone
      r->complete(*watch_, ec);
    }
  }

 private:
  bool current() const { return watch_->armed && watch_->generation == generation_; }

  QuietWatch* watch_;
  std::uint32_t generation_;
};

// A read waiting on a quiet socket.
template <class Handler>
class QuietRead final : public QuietWatch::Reader {
 public:
  QuietRead(asio::mutable_buffer b, Handler h) : buffer_(b), handler_(std::move(h)) {}

  void complete(QuietWatch& watch, error_code ec) override {
    std::size_t n = 0;
    if (!ec) {
      n = watch.owner->receive(buffer_, ec);
      if (ec == asio::error::would_block) {  // woken by an event already read: wait on
        watch.reader = this;                 // receive() armed a new wait
        return;
      }
    }
    Handler h = std::move(handler_);
    delete this;
    std::move(h)(ec, n);
  }
  void abort(const Executor& ex) override {
    Handler h = std::move(handler_);
    delete this;
    asio::post(ex, asio::append(std::move(h), error_code(asio::error::operation_aborted), std::size_t{0}));
  }
  void discard() override { delete this; }

 private:
  asio::mutable_buffer buffer_;
  Handler handler_;
};

}  // namespace smartlb::io
