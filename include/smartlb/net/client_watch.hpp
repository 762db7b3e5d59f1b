#pragma once
// Notices a client that leaves while its response waits on the backend -- a stream's silent
// stretch, a reasoning model thinking -- and closes the upstream connection at once, instead of
// when the backend next writes or HTTP_TIMEOUT_SECONDS passes. One async_wait on the client
// socket (no read, no extra syscall while the client stays), armed only when a relay is about
// to wait on the backend, or a request waits for capacity.
#include <memory>

#include "smartlb/io/beast.hpp"
#include "smartlb/net/io_vocabulary.hpp"
#include "smartlb/net/upstream.hpp"

namespace smartlb::net {

// A steady timer on a worker's executor: what net's own waits use.
using WaitTimer = asio::basic_waitable_timer<std::chrono::steady_clock,
                                             asio::wait_traits<std::chrono::steady_clock>, Executor>;

class ClientWatch {
 public:
  ClientWatch() = default;
  ClientWatch(const ClientWatch&) = delete;
  ClientWatch& operator=(const ClientWatch&) = delete;
  // The wait may complete after the relay is gone: it then finds the watch inactive.
  ~ClientWatch() {
    if (state_) state_->active = false;
  }

  // Starts watching `client` (once; later calls do nothing). When the client closes or resets
  // its connection, `upstream` is closed, so a pending read on it ends at once.
  void arm(Socket& client, UpstreamConnection& upstream);
  // The same for a request that waits on `timer` (for capacity): its leaving cancels the timer.
  void arm(Socket& client, WaitTimer& timer);
  // True once the client was seen leaving: the upstream failure that follows is not the
  // backend's.
  bool client_left() const { return state_ && state_->left; }
  // Stops watching a client that stays (its connection carries the next request).
  void disarm(Socket& client);

 private:
  struct State {
    Socket* client;
    UpstreamConnection* upstream = nullptr;  // closed when the client leaves, or
    WaitTimer* timer = nullptr;              // cancelled
    bool active = true;
    bool left = false;
  };
  static void wait(const std::shared_ptr<State>& s);

  std::shared_ptr<State> state_;
};

}  // namespace smartlb::net
