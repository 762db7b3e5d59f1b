#pragma once
// A scriptable HTTP/1.1 backend for integration tests: runs on its own thread on
// 127.0.0.1, answers each request with what the test's handler returns, records every request
// it saw, and can hold an answer until the test opens a gate. Plain or TLS.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace smartlb::testing {

struct SeenRequest {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  int connection_index = 0;       // which accepted connection (1-based)
  int request_on_connection = 0;  // 1 for the first request on that connection
  bool tls_resumed = false;       // its TLS connection resumed an earlier session
  std::string header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
  bool has_header(const std::string& lower_name) const { return headers.count(lower_name) > 0; }
};

// Opened once by the test; every reply step waiting on it continues.
class Gate;
using GatePtr = std::shared_ptr<Gate>;

struct MockReply {
  MockReply() = default;
  MockReply(unsigned s, std::vector<std::pair<std::string, std::string>> h, std::string b)
      : status(s), headers(std::move(h)), body(std::move(b)) {}

  unsigned status = 200;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // sent with Content-Length unless `events` is set

  // Streaming: sent chunked, one chunk per event. `wait_before[i]`, when set, is awaited
  // before event i is written.
  std::vector<std::string> events;
  std::map<std::size_t, GatePtr> wait_before;
  // A model's pace: a pause before each event after the first (chunked events only), so that the
  // proxy has relayed one before the next comes; and what to call once every event was written.
  std::chrono::microseconds pace{0};
  std::function<void()> after_events;
  bool reset_after_events = false;  // abort the connection after the events (no final chunk)
  // The events as they are, without chunks: the body ends with the connection, whose FIN leaves
  // in the same segment as the last event, or alone after `wait_before[events.size()]` if set.
  bool close_delimited = false;

  GatePtr hold_headers;              // wait before sending anything
  std::string interim;               // raw bytes sent before the response (e.g. a 100 Continue)
  bool close_without_reply = false;  // drop the connection without a byte
  std::string raw;                   // when set: these bytes are the whole response, sent in one write

  // A misbehaving backend: once the response is sent, wait `stray_after`, then write these
  // bytes (say, a second response nobody asked for) before reading the next request.
  std::string stray;
  std::chrono::milliseconds stray_after{0};
  // A backend that ends its side with the response (its FIN right behind the last byte) but
  // keeps reading: it never answers on this connection again.
  bool half_close_after = false;
};

class MockBackend {
 public:
  using Handler = std::function<MockReply(const SeenRequest&)>;

  struct TlsIdentity {
    std::string cert_pem;
    std::string key_pem;
  };

  explicit MockBackend(Handler handler, const TlsIdentity* tls = nullptr);
  ~MockBackend();
  MockBackend(const MockBackend&) = delete;
  MockBackend& operator=(const MockBackend&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const;  // http(s)://127.0.0.1:port (https uses "localhost")

  GatePtr make_gate();
  void open(const GatePtr& g);

  std::size_t request_count() const;
  std::vector<SeenRequest> requests() const;
  SeenRequest last_request() const;
  // Blocks until at least `n` requests arrived (bounded by a generous limit; a test failure
  // rather than a hang if it never happens).
  bool wait_for_requests(std::size_t n) const;
  // Blocks until at least `n` stray writes (MockReply::stray) went out, bounded likewise.
  bool wait_for_strays(std::size_t n) const;
  void set_handler(Handler h);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  std::uint16_t port_ = 0;
  bool tls_ = false;
};

// A CA made for one test run and server certificates signed by it.
struct TestCa {
  TestCa();
  // A server identity for `dns_name` (as subjectAltName), signed by this CA.
  MockBackend::TlsIdentity issue(const std::string& dns_name) const;
  std::string cert_pem;                 // the CA certificate, for UPSTREAM_CA_FILE
  std::string write_cert_file() const;  // to a temporary file; returns its path

 private:
  std::shared_ptr<void> key_;   // EVP_PKEY
  std::shared_ptr<void> cert_;  // X509
};

}  // namespace smartlb::testing
