#include "smartlb/credentials/entra/token_wait.hpp"

#include <memory>

namespace smartlb::entra {

using namespace smartlb::net;

Task<TokenCell::Lookup> wait_for_token(TokenCell& cell, const Clock& clock, Nanos timeout) {
  using Timer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                           asio::wait_traits<std::chrono::steady_clock>, Executor>;
  auto lookup = cell.look(clock.now());
  if (lookup.availability != TokenCell::Availability::Pending) co_return lookup;
  const Executor ex = co_await asio::this_coro::executor;
  auto timer = std::make_shared<Timer>(ex, timeout);
  // The wake comes from the service's thread: the timer is cancelled on this executor's own.
  // This coroutine does not yield between registering and waiting, so the posted cancel runs
  // after the wait began.
  struct Registration {  // forgotten however the wait ends (the worker may shut down meanwhile)
    TokenCell& cell;
    std::uint64_t ticket;
    ~Registration() {
      if (ticket != 0) cell.forget_waiter(ticket);
    }
  } registration{cell, cell.on_next_result([timer, ex] { asio::post(ex, [timer] { timer->cancel(); }); })};
  if (registration.ticket != 0) co_await timer->async_wait(use_tuple);
  co_return cell.look(clock.now());
}

}  // namespace smartlb::entra
