#pragma once
// The smartlb binary started with a fixed ADMIN_PORT, for the tests that read its admin
// endpoints. A port found free can be taken by a test running in parallel before smartlb binds
// it: then smartlb refuses to start, and this tries another (five times at most).
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "child_process.hpp"

namespace smartlb::testing {

inline std::uint16_t free_port() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

struct AdminDaemon {
  std::unique_ptr<ChildProcess> child;
  std::uint16_t api_port = 0;  // 0: it did not start (see child->output())
  std::uint16_t admin_port = 0;
};

// `environment(admin_port)` is the whole environment smartlb runs with. Returns once both
// listeners are up (api_port 0 when smartlb never listened).
inline AdminDaemon start_with_admin_port(
    const std::function<std::vector<std::string>(std::uint16_t)>& environment) {
  AdminDaemon d;
  std::string api;
  for (int attempt = 0; attempt < 5 && api.empty(); ++attempt) {
    d.admin_port = free_port();
    d.child =
        std::make_unique<ChildProcess>(SMARTLB_BINARY, std::vector<std::string>{}, environment(d.admin_port));
    api = d.child->await_match(std::regex(R"(listening on 127\.0\.0\.1:(\d+))"));
    if (api.empty() && d.child->output().find("Address already in use") == std::string::npos) break;
  }
  if (api.empty()) return d;
  if (d.child->await_match(std::regex(R"(admin endpoints .* on 127\.0\.0\.1:(\d+))")) !=
      std::to_string(d.admin_port))
    return d;
  d.api_port = static_cast<std::uint16_t>(std::stoi(api));
  return d;
}

}  // namespace smartlb::testing
