#pragma once
// A coroutine's bounded wait for news that another thread brings (an Entra ID token fetched,
// an issuer's keys fetched). The source takes a callback it calls once, from its own thread;
// the callback cancels the waiter's timer on the waiter's own executor. There is no suspension
// between registering and waiting, so the posted cancel always runs after the wait began.
//
// `Source` has `std::uint64_t on_next_result(std::function<void()>)`, which returns 0 when there
// is nothing to wait for, and `void forget_waiter(std::uint64_t)`. The caller keeps `source`
// alive until the wait returns.
#include <cstdint>
#include <memory>

#include "smartlb/base/clock.hpp"
#include "smartlb/io/beast.hpp"

namespace smartlb::io {

template <class Source>
Task<void> wait_for_wake(Source& source, base::Nanos timeout) {
  using Timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                           asio::wait_traits<std::chrono::steady_clock>, Executor>;
  const Executor ex = co_await asio::this_coro::executor;
  auto timer = std::make_shared<Timer>(ex, timeout);
  struct Registration {  // forgotten however the wait ends (the worker may shut down meanwhile)
    Source& source;
    std::uint64_t ticket;
    ~Registration() {
      if (ticket != 0) source.forget_waiter(ticket);
    }
  } registration{source,
                 source.on_next_result([timer, ex] { asio::post(ex, [timer] { timer->cancel(); }); })};
  if (registration.ticket != 0) co_await timer->async_wait(use_tuple);
}

}  // namespace smartlb::io
