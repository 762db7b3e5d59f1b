#include "http_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include <boost/beast/http.hpp>

namespace smartlb::testing {

namespace beast = boost::beast;

namespace {
int connect_to(std::uint16_t port, int receive_buffer) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  if (receive_buffer > 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
  timeval tv{30, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw std::runtime_error(std::string("connect failed: ") + std::strerror(errno));
  }
  return fd;
}
}  // namespace

RawConnection::RawConnection(std::uint16_t port, int receive_buffer)
    : fd_(connect_to(port, receive_buffer)) {}
RawConnection::~RawConnection() { close(); }

int RawConnection::proxy_end() const {
  sockaddr_in mine{}, proxy{};
  socklen_t len = sizeof mine;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&mine), &len) != 0) return -1;
  len = sizeof proxy;
  if (::getpeername(fd_, reinterpret_cast<sockaddr*>(&proxy), &len) != 0) return -1;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::stoi(entry.path().filename().string());
    sockaddr_in local{}, peer{};
    socklen_t l = sizeof local, p = sizeof peer;
    if (fd != fd_ && ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &l) == 0 &&
        local.sin_family == AF_INET && local.sin_port == proxy.sin_port &&
        ::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &p) == 0 && peer.sin_port == mine.sin_port)
      return fd;
  }
  return -1;
}

void RawConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void RawConnection::send(const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) throw std::runtime_error("send failed");
    off += static_cast<std::size_t>(n);
  }
}

void RawConnection::send_and_close_sending(const std::string& bytes) {
  int on = 1;
  setsockopt(fd_, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
  send(bytes);
  ::shutdown(fd_, SHUT_WR);
  on = 0;
  setsockopt(fd_, IPPROTO_TCP, TCP_CORK, &on, sizeof on);
}

namespace {
std::size_t count_of(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto pos = hay.find(needle); pos != std::string::npos; pos = hay.find(needle, pos + needle.size()))
    ++n;
  return n;
}
}  // namespace

std::string RawConnection::read_until(const std::string& needle, std::size_t occurrences) {
  char buf[8192];
  while (count_of(received_, needle) < occurrences && !closed_) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n <= 0) {
      closed_ = n == 0 || errno == ECONNRESET;
      if (n < 0 && errno != ECONNRESET) break;  // timeout
      continue;
    }
    received_.append(buf, static_cast<std::size_t>(n));
  }
  return received_;
}

std::string RawConnection::read_until_close() {
  read_until(std::string("\0never\0", 7));
  return received_;
}

HttpResponse http_call(std::uint16_t port, const std::string& method, const std::string& target,
                       const Headers& headers, const std::string& body) {
  RawConnection conn(port);
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n";
  bool has_length = false;
  for (const auto& [k, v] : headers) {
    req += k + ": " + v + "\r\n";
    std::string lk = k;
    std::transform(lk.begin(), lk.end(), lk.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lk == "content-length" || lk == "transfer-encoding") has_length = true;
  }
  if (!has_length && (!body.empty() || method == "POST"))
    req += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  req += "Connection: close\r\n\r\n" + body;
  conn.send(req);
  const std::string raw = conn.read_until_close();

  beast::http::response_parser<beast::http::string_body> parser;
  parser.eager(true);
  parser.body_limit(64 * 1024 * 1024);
  if (method == "HEAD") parser.skip(true);  // the Content-Length describes a body never sent
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(raw), ec);
  if (!ec && !parser.is_done()) parser.put_eof(ec);
  HttpResponse out;
  if (!parser.is_header_done()) return out;  // status 0: nothing parseable came back
  const auto& res = parser.get();
  out.status = res.result_int();
  for (const auto& f : res) {
    std::string name(f.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    out.headers[name] = std::string(f.value());
  }
  out.body = res.body();
  return out;
}

}  // namespace smartlb::testing
