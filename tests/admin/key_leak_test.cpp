// A key given in configuration never appears in logs, /status, /metrics or the status page.
// Runs the real smartlb binary (debug logging, text and JSON formats) in front of a backend
// that checks the key and one that rejects its key (the error path that names the key's
// variable), then scrapes every admin endpoint and reads everything the process printed.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <regex>

#include <nlohmann/json.hpp>

#include "admin_promtool.hpp"
#include "admin_test_support.hpp"

extern char** environ;

namespace smartlb {
namespace {

using test::MockBackend;
using test::MockReply;
using test::SeenRequest;

// Distinctive so that any fragment of it is recognisable.
const std::string kKeyGood = "sk-leakcanary-good-5e1f0c93a7b24d68";
const std::string kKeyBad = "sk-leakcanary-bad-91d2b7e04c6fa835";

// Every 8-character window of the keys' random parts: a truncated or partly masked key
// would still be caught.
std::vector<std::string> key_fragments() {
  std::vector<std::string> out = {kKeyGood, kKeyBad, "leakcanary"};
  for (const std::string& k : {kKeyGood, kKeyBad}) {
    const std::string tail = k.substr(k.rfind('-') + 1);
    for (std::size_t i = 0; i + 8 <= tail.size(); ++i) out.push_back(tail.substr(i, 8));
  }
  return out;
}

void expect_no_key(const std::string& where, const std::string& text) {
  for (const auto& f : key_fragments())
    EXPECT_EQ(text.find(f), std::string::npos) << "key fragment '" << f << "' found in " << where;
}

std::uint16_t free_port() {
  test::asio::io_context ioc;
  test::tcp::acceptor a(ioc, {test::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

// A child process whose stdout and stderr are collected by a reader thread.
class Daemon {
 public:
  Daemon(const std::string& binary, const std::map<std::string, std::string>& env) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "BACKEND_", 8) != 0) env_strings.emplace_back(*e);
    for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& s : env_strings) envp.push_back(s.data());
    envp.push_back(nullptr);
    std::string arg0 = binary;
    char* argv[] = {arg0.data(), nullptr};
    const int rc = posix_spawn(&pid_, binary.c_str(), &fa, nullptr, argv, envp.data());
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    if (rc != 0) {
      ::close(fds[0]);
      throw std::runtime_error("cannot start " + binary);
    }
    fd_ = fds[0];
    reader_ = std::thread([this] {
      char buf[4096];
      for (;;) {
        const ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n <= 0) break;
        std::lock_guard lock(mutex_);
        output_.append(buf, static_cast<std::size_t>(n));
        cv_.notify_all();
      }
      std::lock_guard lock(mutex_);
      eof_ = true;
      cv_.notify_all();
    });
  }
  ~Daemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (reader_.joinable()) reader_.join();
    if (fd_ >= 0) ::close(fd_);
  }

  // The first match of `re` in the output, awaited (empty if the process ended first).
  std::string await_match(const std::regex& re) {
    std::unique_lock lock(mutex_);
    std::smatch m;
    cv_.wait_for(lock, std::chrono::seconds(60), [&] { return std::regex_search(output_, m, re) || eof_; });
    if (!std::regex_search(output_, m, re)) return {};
    return m.size() > 1 ? m[1].str() : m[0].str();
  }
  // Number of lines containing `needle`, once it reaches `n` (or the process ends).
  void await_count(const std::string& needle, std::size_t n) {
    std::unique_lock lock(mutex_);
    cv_.wait_for(lock, std::chrono::seconds(60), [&] { return count(needle) >= n || eof_; });
  }
  // SIGTERM, then everything it printed until it exited; the exit status.
  int terminate() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    reader_.join();
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string output() {
    std::lock_guard lock(mutex_);
    return output_;
  }

 private:
  std::size_t count(const std::string& needle) const {
    std::size_t c = 0;
    for (auto at = output_.find(needle); at != std::string::npos; at = output_.find(needle, at + 1)) ++c;
    return c;
  }

  pid_t pid_ = -1;
  int fd_ = -1;
  std::thread reader_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::string output_;
  bool eof_ = false;
};

class KeyLeakTest : public ::testing::TestWithParam<const char*> {};

TEST_P(KeyLeakTest, ConfiguredKeysNeverAppearInLogsStatusOrMetrics) {
  const std::string log_format = GetParam();
  // "bad" (priority 1) rejects its key; "good" (priority 2) accepts only its own.
  MockBackend bad([](const SeenRequest&) {
    MockReply r;
    r.status = 401;
    r.chunks = {R"({"error":{"code":"401","message":"Access denied due to invalid subscription key."}})"};
    return r;
  });
  MockBackend good([](const SeenRequest& req) {
    MockReply r;
    const auto header = [&](const char* name) {
      auto it = req.headers.find(name);
      return it == req.headers.end() ? std::string() : it->second;
    };
    if (header("api-key") != kKeyGood && header("authorization") != "Bearer " + kKeyGood) {
      r.status = 401;
      r.chunks = {R"({"error":{"code":"401"}})"};
      return r;
    }
    r.chunks = {R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4}})"};
    return r;
  });
  const std::uint16_t admin_port = free_port();
  Daemon d(SMARTLB_BINARY, {
                               {"BACKEND_1_URL", bad.url()},
                               {"BACKEND_1_NAME", "bad"},
                               {"BACKEND_1_APIKEY", kKeyBad},
                               {"BACKEND_2_URL", good.url()},
                               {"BACKEND_2_NAME", "good"},
                               {"BACKEND_2_PRIORITY", "2"},
                               {"BACKEND_2_APIKEY", kKeyGood},
                               {"LISTEN_ADDRESS", "127.0.0.1"},
                               {"PORT", "0"},
                               {"ADMIN_PORT", std::to_string(admin_port)},
                               {"THREADS", "1"},
                               {"LOG_LEVEL", "trace"},
                               {"LOG_FORMAT", log_format},
                           });
  const std::string api_port = d.await_match(std::regex(R"(listening on 127\.0\.0\.1:(\d+))"));
  ASSERT_FALSE(api_port.empty()) << d.output();
  ASSERT_EQ(d.await_match(std::regex(R"(admin endpoints .* on 127\.0\.0\.1:(\d+))")), std::to_string(admin_port))
      << d.output();
  const auto port = static_cast<std::uint16_t>(std::stoi(api_port));

  const std::string body = R"({"messages":[{"role":"user","content":"hi"}]})";
  const auto r1 = test::http_request(port, "POST", "/openai/deployments/gpt-4o/chat/completions?api-version=2024-06-01", body);
  EXPECT_EQ(r1.status, 200u) << r1.error << r1.body;
  const auto r2 = test::http_request(port, "POST", "/v1/chat/completions", R"({"model":"gpt-4o","messages":[]})",
                                     {{"authorization", "Bearer client-token"}});
  EXPECT_EQ(r2.status, 200u) << r2.error << r2.body;
  d.await_count("\"type\":\"access\"", log_format == "json" ? 2 : 0);
  if (log_format == "text") d.await_count(" id=", 2);

  // The daemon really used the keys.
  ASSERT_FALSE(good.seen().empty());
  EXPECT_EQ(good.seen().front().headers.at("api-key"), kKeyGood);
  EXPECT_EQ(good.seen().back().headers.at("authorization"), "Bearer " + kKeyGood)
      << "the client's own token was replaced by the configured key";
  ASSERT_FALSE(bad.seen().empty());
  EXPECT_EQ(bad.seen().front().headers.at("api-key"), kKeyBad);

  const auto status = test::http_request(admin_port, "GET", "/status");
  ASSERT_EQ(status.status, 200u) << status.error;
  expect_no_key("/status", status.body);
  const auto j = nlohmann::json::parse(status.body);
  EXPECT_EQ(j["backends"][0]["state"], "auth_failed") << status.body;

  const auto metrics = test::http_request(admin_port, "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200u);
  expect_no_key("/metrics", metrics.body);
  EXPECT_NE(metrics.body.find(R"(smartlb_backend_state{backend="bad",state="auth_failed"} 1)"), std::string::npos);
  const auto check = test::promtool_check_metrics(metrics.body);
  ASSERT_TRUE(check.ran) << check.output;
  EXPECT_EQ(check.exit_code, 0) << check.output;

  const auto page = test::http_request(admin_port, "GET", "/");
  expect_no_key("/", page.body);

  EXPECT_EQ(d.terminate(), 0);
  const std::string logs = d.output();
  EXPECT_NE(logs.find("rejected its credentials"), std::string::npos)
      << "the auth-failure path (which names the key's variable) was logged:\n" << logs;
  expect_no_key("the logs", logs);
}

INSTANTIATE_TEST_SUITE_P(LogFormats, KeyLeakTest, ::testing::Values("text", "json"));

}  // namespace
}  // namespace smartlb
