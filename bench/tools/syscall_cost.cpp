// What the two ways to wait for a socket's next bytes cost on this machine, per call:
//   recv() that finds nothing (EAGAIN)   -- what Asio's speculative read costs when it misses;
//   epoll_ctl(EPOLL_CTL_MOD)             -- what Asio's async_wait(wait_read) costs instead
//                                           (it re-arms the edge-triggered registration);
// and an empty epoll_wait(timeout 0) for scale. Run it pinned: taskset -c 1 syscall_cost [N]
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace {

double ns_per_call(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b, long n) {
  return std::chrono::duration<double, std::nano>(b - a).count() / static_cast<double>(n);
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  // A connected loopback pair; the accepted end is non-blocking and registered like Asio does.
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listener, 1) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("listen");
    return 1;
  }
  const int client = ::socket(AF_INET, SOCK_STREAM, 0);
  if (client < 0 || ::connect(client, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    std::perror("connect");
    return 1;
  }
  const int s = ::accept(listener, nullptr, nullptr);
  ::fcntl(s, F_SETFL, O_NONBLOCK);
  const int ep = ::epoll_create1(0);
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLERR | EPOLLHUP | EPOLLPRI | EPOLLET;  // Asio's registration
  ev.data.fd = s;
  ::epoll_ctl(ep, EPOLL_CTL_ADD, s, &ev);

  char buf[4096];
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) (void)::recv(s, buf, sizeof buf, 0);
  const auto t1 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) ::epoll_ctl(ep, EPOLL_CTL_MOD, s, &ev);
  const auto t2 = std::chrono::steady_clock::now();
  epoll_event out[8];
  for (long i = 0; i < n; ++i) (void)::epoll_wait(ep, out, 8, 0);
  const auto t3 = std::chrono::steady_clock::now();

  std::printf("recv (EAGAIN)          %6.0f ns\n", ns_per_call(t0, t1, n));
  std::printf("epoll_ctl (MOD)        %6.0f ns\n", ns_per_call(t1, t2, n));
  std::printf("epoll_wait (empty, 0)  %6.0f ns\n", ns_per_call(t2, t3, n));
  ::close(ep);
  ::close(s);
  ::close(client);
  ::close(listener);
  return 0;
}
