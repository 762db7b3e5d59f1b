#include "smartlb/clients/jwt/key_wait.hpp"

#include <memory>

namespace smartlb::jwt {

using namespace smartlb::net;

Task<void> wait_for_keys(std::shared_ptr<IssuerKeys> keys, Nanos timeout) {
  using Timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                           asio::wait_traits<std::chrono::steady_clock>, Executor>;
  const Executor ex = co_await asio::this_coro::executor;
  auto timer = std::make_shared<Timer>(ex, timeout);
  // The wake comes from the service's thread: the timer is cancelled on this executor's own.
  // No suspension between registering and waiting, so the posted cancel runs after the wait began.
  struct Registration {  // forgotten however the wait ends (the worker may shut down meanwhile)
    IssuerKeys& keys;
    std::uint64_t ticket;
    ~Registration() {
      if (ticket != 0) keys.forget_waiter(ticket);
    }
  } registration{*keys, keys->on_next_result([timer, ex] { asio::post(ex, [timer] { timer->cancel(); }); })};
  if (registration.ticket != 0) co_await timer->async_wait(use_tuple);
}

}  // namespace smartlb::jwt
