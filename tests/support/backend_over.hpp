#pragma once
// A mock backend over http:// or over https:// (its certificate from a CA made for the test,
// trusted through UPSTREAM_CA_FILE), for tests that must hold for both transports.
#include <cstdio>
#include <optional>
#include <string>

#include "mock_backend.hpp"
#include "proxy_harness.hpp"

namespace smartlb::testing {

class BackendOver {
 public:
  explicit BackendOver(
      bool tls, MockBackend::Handler handler = [](const SeenRequest&) { return MockReply{}; })
      : identity_(tls ? std::optional(ca_.issue("localhost")) : std::nullopt),
        backend(std::move(handler), identity_ ? &*identity_ : nullptr) {}
  ~BackendOver() {
    if (!ca_file_.empty()) std::remove(ca_file_.c_str());
  }
  BackendOver(const BackendOver&) = delete;
  BackendOver& operator=(const BackendOver&) = delete;

  // Adds the backend to `p` (and, over https://, the CA it must trust).
  void add_to(ProxyHarness& p, const std::string& name = "backend") {
    if (identity_) p.cfg.upstream_ca_file = ca_file_ = ca_.write_cert_file();
    p.add_backend(name, backend.url());
  }

 private:
  TestCa ca_;
  std::optional<MockBackend::TlsIdentity> identity_;

 public:
  MockBackend backend;

 private:
  std::string ca_file_;
};

}  // namespace smartlb::testing
