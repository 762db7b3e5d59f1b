#pragma once
// Blocking HTTP helpers for integration tests. Every read is bounded (30 s), so a proxy bug
// fails a test instead of hanging it.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace smartlb::testing {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpResponse {
  unsigned status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
  bool has_header(const std::string& lower_name) const { return headers.count(lower_name) > 0; }
};

// One request on a new connection.
HttpResponse http_call(std::uint16_t port, const std::string& method, const std::string& target,
                       const Headers& headers = {}, const std::string& body = {});

// A raw TCP connection for byte-level tests (streams, malformed requests).
class RawConnection {
 public:
  // `receive_buffer`: the socket's SO_RCVBUF, set before it connects (0: the system's), for a
  // client that takes what it is sent slower than it comes.
  explicit RawConnection(std::uint16_t port, int receive_buffer = 0);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  void send(const std::string& bytes);
  // Sends `bytes` and ends the sending side, corked so that the FIN leaves in the same segment as
  // the last bytes (one event for both at the peer).
  void send_and_close_sending(const std::string& bytes);
  // Reads until `needle` is in what was received so far (returns all of it), or the peer
  // closes / 30 s pass (returns what came; the caller's expectation then fails).
  std::string read_until(const std::string& needle, std::size_t occurrences = 1);
  // Reads until the peer closes (or 30 s).
  std::string read_until_close();
  bool peer_closed() const { return closed_; }
  // The descriptor of the proxy's end of this connection, for a proxy that runs in this process
  // (ProxyHarness): found among its sockets by the two ports. -1 when there is none.
  int proxy_end() const;
  void close();

 private:
  int fd_ = -1;
  std::string received_;
  bool closed_ = false;
};

}  // namespace smartlb::testing
