#include "smartlb/net/client_watch.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace smartlb::net {

void ClientWatch::arm(Socket& client, UpstreamConnection& upstream) {
  if (state_) return;
  state_ = std::make_shared<State>(State{&client, &upstream});
  wait(state_);
}

void ClientWatch::arm(Socket& client, WaitTimer& timer) {
  if (state_) return;
  state_ = std::make_shared<State>(State{&client, nullptr, &timer});
  wait(state_);
}

void ClientWatch::wait(const std::shared_ptr<State>& s) {
  s->client->async_wait(Socket::wait_read, [s](error_code ec) {
    if (!s->active || ec) return;  // the relay is over, or the wait was cancelled
    char byte;
    const ssize_t n = ::recv(s->client->native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n > 0) return;  // the client sent more (its next request): it stays
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
      wait(s);  // nothing after all: watch on
      return;
    }
    s->left = true;  // end of stream, or a reset
    if (s->upstream) s->upstream->close();
    if (s->timer) s->timer->cancel();
  });
}

void ClientWatch::disarm(Socket& client) {
  if (!state_ || !state_->active) return;
  state_->active = false;
  error_code ignored;
  client.cancel(ignored);  // the relay has no other operation pending on it
}

}  // namespace smartlb::net
