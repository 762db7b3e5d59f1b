#pragma once
// A real redis-server (Debian's) for tests: on 127.0.0.1 at a free port, no persistence,
// optionally with a password or TLS (a certificate from a TestCa). Started in the constructor,
// ready when it returns (its "Ready to accept connections" line was printed), SIGKILLed by
// the destructor. kill() and start() again on the same port simulate a crash and a restart;
// pause() and resume() (SIGSTOP/SIGCONT) a Redis that stopped answering.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_process.hpp"
#include "mock_backend.hpp"

namespace smartlb::testing {

struct RedisServerOptions {
  std::string password;         // --requirepass
  const TestCa* tls = nullptr;  // TLS only (port 0 for plain TCP), certificate for "localhost"
};

class RedisServer {
 public:
  explicit RedisServer(RedisServerOptions options = {}) : options_(std::move(options)), port_(free_port()) {
    if (options_.tls) {
      const auto identity = options_.tls->issue("localhost");
      cert_file_ = write_temp(identity.cert_pem);
      key_file_ = write_temp(identity.key_pem);
      ca_file_ = options_.tls->write_cert_file();
    }
    start();
  }
  ~RedisServer() {
    process_.reset();
    for (const auto* f : {&cert_file_, &key_file_, &ca_file_})
      if (!f->empty()) std::remove(f->c_str());
  }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  std::uint16_t port() const { return port_; }
  // redis://127.0.0.1:port, or rediss://localhost:port; `password` (default: the server's) in it.
  std::string url(const std::string& password) const {
    std::string u = options_.tls ? "rediss://" : "redis://";
    if (!password.empty()) u += ":" + password + "@";
    u += options_.tls ? "localhost" : "127.0.0.1";
    return u + ":" + std::to_string(port_);
  }
  std::string url() const { return url(options_.password); }
  const std::string& ca_file() const { return ca_file_; }

  // (Re)starts on the same port and waits until it accepts connections.
  void start() {
    std::vector<std::string> args = {"--bind",       "127.0.0.1", "--save",           "",
                                     "--appendonly", "no",        "--protected-mode", "no"};
    const std::string port = std::to_string(port_);
    if (options_.tls) {
      for (const std::string& a : {std::string("--port"), std::string("0"), std::string("--tls-port"), port,
                                   std::string("--tls-cert-file"), cert_file_, std::string("--tls-key-file"),
                                   key_file_, std::string("--tls-ca-cert-file"), ca_file_,
                                   std::string("--tls-auth-clients"), std::string("no")})
        args.push_back(a);
    } else {
      args.push_back("--port");
      args.push_back(port);
    }
    if (!options_.password.empty()) {
      args.push_back("--requirepass");
      args.push_back(options_.password);
    }
    process_.reset();
    process_ = std::make_unique<ChildProcess>("/usr/bin/redis-server", args, std::vector<std::string>{});
    const std::string out = process_->read_until("Ready to accept connections");
    if (out.find("Ready to accept connections") == std::string::npos)
      throw std::runtime_error("redis-server did not start:\n" + out);
  }
  // SIGKILL: connections drop at once, nothing is saved.
  void kill() {
    if (process_) {
      process_->signal(SIGKILL);
      process_->wait_exit();
      process_.reset();
    }
  }
  void pause() { process_->signal(SIGSTOP); }
  void resume() { process_->signal(SIGCONT); }

 private:
  static std::uint16_t free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      ::close(fd);
      throw std::runtime_error("no free port");
    }
    ::close(fd);
    return ntohs(a.sin_port);
  }
  static std::string write_temp(const std::string& text) {
    char path[] = "/tmp/smartlb-test-redis-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) throw std::runtime_error("mkstemp failed");
    ::close(fd);
    std::ofstream(path) << text;
    return path;
  }

  RedisServerOptions options_;
  std::uint16_t port_;
  std::string cert_file_, key_file_, ca_file_;
  std::unique_ptr<ChildProcess> process_;
};

}  // namespace smartlb::testing
