#pragma once
// What starts a committed event stream's relay again when the stream has something to relay (its
// next event, its end, or a failure), after it waited holding no coroutine frame
// (net/exchange.hpp, Exchange::await_committed; net/client_session.cpp): called once, by the
// wait's handler. It owns what the relay needs (the client's connection) meanwhile: a waker
// dropped uncalled (its worker stopping) hands it to its drop instead. Not a std::function or
// Asio's any_completion_handler: those allocate, and every waiting stream holds one.
#include <memory>
#include <utility>

namespace smartlb::net {

class StreamWaker {
 public:
  // `Wake(owned)` is what waking does, `Drop(owned)` what dropping it uncalled does.
  template <class T, void (*Wake)(std::unique_ptr<T>), void (*Drop)(std::unique_ptr<T>)>
  static StreamWaker make(std::unique_ptr<T> owned) {
    StreamWaker w;
    w.owned_ = owned.release();
    w.run_ = [](void* p, bool wake) {
      std::unique_ptr<T> o(static_cast<T*>(p));
      if (wake)
        Wake(std::move(o));
      else
        Drop(std::move(o));
    };
    return w;
  }
  StreamWaker(StreamWaker&& o) noexcept : owned_(std::exchange(o.owned_, nullptr)), run_(o.run_) {}
  StreamWaker& operator=(StreamWaker&&) = delete;
  StreamWaker(const StreamWaker&) = delete;
  StreamWaker& operator=(const StreamWaker&) = delete;
  ~StreamWaker() {
    if (owned_) run_(owned_, false);  // (Drop must not throw: it runs in a destructor)
  }
  void operator()() && {
    if (owned_) run_(std::exchange(owned_, nullptr), true);
  }

 private:
  StreamWaker() = default;
  void* owned_ = nullptr;
  void (*run_)(void*, bool) = nullptr;
};

}  // namespace smartlb::net
