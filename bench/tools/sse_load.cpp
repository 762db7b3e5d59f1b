// sse_load: the streaming benchmark's backend and client in C++ (the same protocol as
// sse_backend.js / sse_client.js, at a fraction of their CPU cost).
//
// On a 2-core machine the Node tools spend more CPU per event than the proxy they measure, so
// the proxy's events wait for a core the Node processes hold; that wait, not the relay, was most
// of the "added delay". These tools leave the proxy a core of its own.
//
//   sse_load backend [--port 0] [--events 100] [--interval-ms 100] [--pad 60]
//     Answers every POST with `events` SSE events, one every `interval-ms` from a random phase,
//     each stamped with its send time ("t": CLOCK_MONOTONIC ns, as Node's process.hrtime),
//     then `data: [DONE]`; chunked, keep-alive. Prints "sse-backend listening on 127.0.0.1:P".
//   sse_load client --url http://127.0.0.1:P/path [--streams 1000] [--watch-pid PID] [--timeout-s 120]
//                   [--prompt-bytes B] [--rss-later-s 3]
//     Opens N streams (50 every 5 ms), records arrival - send for every event after a stream's
//     first two (those overlap the opening of the others), and the delay of each stream's first
//     event apart (first_event_delay_ms: the one a proxy's hold-back of a stream's start could
//     delay), samples PID's RSS once all streams are open and 3 s later, and prints one JSON line
//     shaped like sse_client.js's.
//     --dump FILE also writes "send_ns seq delay_ms" for every recorded event (the first included).
//
// Single-threaded, plain Asio, no Beast: a benchmark tool, not part of smartlb.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

namespace {

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

struct Args {
  std::map<std::string, std::string> values;
  std::string get(const std::string& key, const std::string& fallback) const {
    auto it = values.find(key);
    return it == values.end() ? fallback : it->second;
  }
  long num(const std::string& key, long fallback) const {
    return std::stol(get(key, std::to_string(fallback)));
  }
};

bool iequals_prefix(std::string_view text, std::string_view lower_prefix) {
  if (text.size() < lower_prefix.size()) return false;
  for (std::size_t i = 0; i < lower_prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(text[i])) != lower_prefix[i]) return false;
  return true;
}

// The value of a header in a raw head (lower-case name), or empty.
std::string_view header_value(std::string_view head, std::string_view lower_name) {
  std::size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    std::string_view line = head.substr(pos + 2);
    std::size_t end = line.find("\r\n");
    line = line.substr(0, end);
    if (iequals_prefix(line, lower_name) && line.size() > lower_name.size() &&
        line[lower_name.size()] == ':') {
      std::string_view v = line.substr(lower_name.size() + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return v;
    }
    pos = end == std::string_view::npos ? end : pos + 2 + end;
  }
  return {};
}

// ---------------------------------------------------------------- backend
struct BackendOptions {
  long events = 100;
  std::chrono::milliseconds interval{100};
  std::string filler;
};

asio::awaitable<void> serve_connection(tcp::socket socket, const BackendOptions& opt, std::mt19937& rng) {
  socket.set_option(tcp::no_delay(true));
  std::string in;
  asio::steady_timer timer(socket.get_executor());
  for (;;) {
    auto [ec, head_len] =
        co_await asio::async_read_until(socket, asio::dynamic_buffer(in), "\r\n\r\n", kNoThrow);
    if (ec) co_return;
    std::size_t body_len = 0;
    std::string_view cl = header_value(std::string_view(in).substr(0, head_len), "content-length");
    std::from_chars(cl.data(), cl.data() + cl.size(), body_len);
    while (in.size() < head_len + body_len) {
      char tmp[4096];
      auto [rec, n] = co_await socket.async_read_some(asio::buffer(tmp), kNoThrow);
      if (rec) co_return;
      in.append(tmp, n);
    }
    in.erase(0, head_len + body_len);

    static constexpr std::string_view kHead =
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
        "transfer-encoding: chunked\r\n\r\n";
    if (auto [wec, wn] = co_await asio::async_write(socket, asio::buffer(kHead), kNoThrow); wec) co_return;

    std::uniform_int_distribution<long> phase_us(0, opt.interval.count() * 1000);
    auto next = std::chrono::steady_clock::now() + std::chrono::microseconds(phase_us(rng));
    std::string chunk;
    for (long k = 0; k <= opt.events; ++k) {
      timer.expires_at(next);
      if (auto [tec] = co_await timer.async_wait(kNoThrow); tec) co_return;
      next += opt.interval;
      std::string data;
      if (k < opt.events) {
        data = "data: {\"t\":" + std::to_string(monotonic_ns()) + ",\"seq\":" + std::to_string(k) +
               ",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + opt.filler + "\"}}]}\n\n";
      } else {
        data = "data: [DONE]\n\n";
      }
      char size_line[20];
      int n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", data.size());
      chunk.assign(size_line, static_cast<std::size_t>(n));
      chunk += data;
      chunk += "\r\n";
      if (k == opt.events) chunk += "0\r\n\r\n";
      if (auto [wec, wn] = co_await asio::async_write(socket, asio::buffer(chunk), kNoThrow); wec) co_return;
    }
  }
}

int run_backend(const Args& args) {
  asio::io_context ioc{1};
  BackendOptions opt;
  opt.events = args.num("events", 100);
  opt.interval = std::chrono::milliseconds(args.num("interval-ms", 100));
  opt.filler.assign(static_cast<std::size_t>(args.num("pad", 60)), 'x');
  std::mt19937 rng(12345);
  tcp::acceptor acceptor(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                            static_cast<unsigned short>(args.num("port", 0))));
  acceptor.listen(4096);
  std::printf("sse-backend listening on 127.0.0.1:%u\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        for (;;) {
          auto [ec, socket] = co_await acceptor.async_accept(kNoThrow);
          if (ec) continue;
          asio::co_spawn(ioc, serve_connection(std::move(socket), opt, rng), asio::detached);
        }
      },
      asio::detached);
  ioc.run();
  return 0;
}

// ---------------------------------------------------------------- client
long rss_kb(const std::string& pid) {
  std::ifstream status("/proc/" + pid + "/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

struct ClientState {
  long streams = 0;
  long open = 0, done = 0, failed = 0;
  std::map<int, long> statuses;
  std::vector<double> delays_ms;
  std::vector<double> first_delays_ms;  // each stream's first event (seq 0) alone
  std::string watch_pid;
  long rss_before = -1, rss_all_open = -1, rss_mid = -1;
  std::chrono::seconds rss_later{3};  // when rss_mid is sampled, after all streams are open
  std::FILE* dump =
      nullptr;  // --dump FILE: "send_ns seq delay_ms" per event, for finding where a tail comes from
};

// Takes the decoded body bytes of one stream and records the delay of every complete event.
class EventScanner {
 public:
  explicit EventScanner(std::FILE* dump) : dump_(dump) {}
  void feed(std::string_view bytes, std::int64_t now_ns, std::vector<double>& delays,
            std::vector<double>& first_delays) {
    pending_.append(bytes);
    std::size_t start = 0, end;
    while ((end = pending_.find("\n\n", start)) != std::string::npos) {
      std::string_view event(pending_.data() + start, end - start);
      std::int64_t t = 0;
      long seq = -1;
      if (auto p = event.find("\"t\":"); p != std::string_view::npos)
        std::from_chars(event.data() + p + 4, event.data() + event.size(), t);
      if (auto p = event.find("\"seq\":"); p != std::string_view::npos)
        std::from_chars(event.data() + p + 6, event.data() + event.size(), seq);
      double delay_ms = static_cast<double>(now_ns - t) / 1e6;
      if (t > 0 && seq == 0) first_delays.push_back(delay_ms);
      if (t > 0 && seq >= 2) delays.push_back(delay_ms);
      if (t > 0 && dump_ && (seq == 0 || seq >= 2))
        std::fprintf(dump_, "%lld %ld %.3f\n", static_cast<long long>(t), seq, delay_ms);
      start = end + 2;
    }
    pending_.erase(0, start);
  }

 private:
  std::FILE* dump_;
  std::string pending_;
};

// Undoes chunked transfer coding incrementally; `finished()` once the last chunk is seen.
class ChunkDecoder {
 public:
  // Appends the decoded bytes of `in` to `out`; false on a malformed stream.
  bool feed(std::string_view in, std::string& out) {
    for (std::size_t i = 0; i < in.size();) {
      switch (state_) {
        case State::size_line: {
          char c = in[i++];
          if (c == '\n') {
            if (size_ == 0) {
              state_ = State::trailer;
              line_empty_ = true;
            } else
              state_ = State::data;
          } else if (c == ';') {
            in_extension_ = true;
          } else if (c != '\r' && !in_extension_) {
            int digit = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                        : (c | 0x20) >= 'a' && (c | 0x20) <= 'f'    ? (c | 0x20) - 'a' + 10
                                                                    : -1;
            if (digit < 0) return false;
            size_ = size_ * 16 + static_cast<std::size_t>(digit);
          }
          break;
        }
        case State::data: {
          std::size_t n = std::min(size_, in.size() - i);
          out.append(in.substr(i, n));
          i += n;
          size_ -= n;
          if (size_ == 0) state_ = State::data_crlf;
          break;
        }
        case State::data_crlf:
          if (in[i++] == '\n') {
            state_ = State::size_line;
            in_extension_ = false;
          }
          break;
        case State::trailer: {
          char c = in[i++];
          if (c == '\n') {
            if (line_empty_) {
              state_ = State::finished;
              return true;
            }
            line_empty_ = true;
          } else if (c != '\r') {
            line_empty_ = false;
          }
          break;
        }
        case State::finished:
          return true;
      }
    }
    return true;
  }
  bool finished() const { return state_ == State::finished; }

 private:
  enum class State { size_line, data, data_crlf, trailer, finished };
  State state_ = State::size_line;
  std::size_t size_ = 0;
  bool in_extension_ = false;
  bool line_empty_ = false;
};

asio::awaitable<void> run_stream(tcp::endpoint endpoint, const std::string& request, ClientState& st) {
  auto executor = co_await asio::this_coro::executor;
  tcp::socket socket(executor);
  bool ok = false;
  for (;;) {  // a one-pass loop: `break` is the way out with ok == false
    if (auto [ec] = co_await socket.async_connect(endpoint, kNoThrow); ec) break;
    socket.set_option(tcp::no_delay(true));
    if (auto [ec, n] = co_await asio::async_write(socket, asio::buffer(request), kNoThrow); ec) break;
    std::string in;
    auto [ec, head_len] =
        co_await asio::async_read_until(socket, asio::dynamic_buffer(in), "\r\n\r\n", kNoThrow);
    if (ec) break;
    std::string_view head(in.data(), head_len);
    int status = 0;
    if (head.size() > 12) std::from_chars(head.data() + 9, head.data() + 12, status);
    st.statuses[status]++;
    if (++st.open == st.streams && !st.watch_pid.empty()) {
      st.rss_all_open = rss_kb(st.watch_pid);
      auto t = std::make_shared<asio::steady_timer>(executor, st.rss_later);
      t->async_wait([t, &st](boost::system::error_code) { st.rss_mid = rss_kb(st.watch_pid); });
    }
    bool chunked = header_value(head, "transfer-encoding").find("chunked") != std::string_view::npos;
    ChunkDecoder decoder;
    EventScanner scanner(st.dump);
    std::string decoded;
    std::string body = in.substr(head_len);
    char buf[16384];
    for (;;) {
      decoded.clear();
      if (chunked) {
        if (!decoder.feed(body, decoded)) break;
      } else {
        decoded = body;
      }
      scanner.feed(decoded, monotonic_ns(), st.delays_ms, st.first_delays_ms);
      if (chunked && decoder.finished()) {
        ok = true;
        break;
      }
      auto [rec, n] = co_await socket.async_read_some(asio::buffer(buf), kNoThrow);
      if (rec) {
        ok = !chunked && rec == asio::error::eof;
        break;
      }
      body.assign(buf, n);
    }
    break;
  }
  if (ok)
    st.done++;
  else
    st.failed++;
}

std::string percentile_json(std::vector<double>& v) {
  if (v.empty()) return "{\"p50\":null,\"p90\":null,\"p99\":null,\"p999\":null,\"max\":null}";
  std::sort(v.begin(), v.end());
  auto p = [&](double q) {
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
  };
  char out[256];
  std::snprintf(out, sizeof out, "{\"p50\":%.3f,\"p90\":%.3f,\"p99\":%.3f,\"p999\":%.3f,\"max\":%.3f}",
                p(0.5), p(0.9), p(0.99), p(0.999), v.back());
  return out;
}

std::string json_or_null(long v) { return v < 0 ? "null" : std::to_string(v); }

int run_client(const Args& args) {
  std::string url = args.get("url", "");
  // http://HOST:PORT/path
  if (url.rfind("http://", 0) != 0) {
    std::fprintf(stderr, "--url must be http://HOST:PORT/path\n");
    return 2;
  }
  std::string rest = url.substr(7);
  std::size_t slash = rest.find('/');
  std::string hostport = rest.substr(0, slash), path = slash == std::string::npos ? "/" : rest.substr(slash);
  std::size_t colon = hostport.rfind(':');
  if (colon == std::string::npos) {
    std::fprintf(stderr, "--url needs a port\n");
    return 2;
  }
  tcp::endpoint endpoint(asio::ip::make_address(hostport.substr(0, colon)),
                         static_cast<unsigned short>(std::stoi(hostport.substr(colon + 1))));
  // --prompt-bytes B: a prompt of B bytes (a long one's memory per stream); else a short one.
  const long prompt_bytes = args.num("prompt-bytes", 0);
  const std::string prompt =
      prompt_bytes > 0 ? std::string(static_cast<std::size_t>(prompt_bytes), 'x') : "stream please";
  const std::string body =
      R"({"messages":[{"role":"user","content":")" + prompt + R"("}],"max_tokens":100,"stream":true})";
  const std::string request = "POST " + path + " HTTP/1.1\r\nhost: " + hostport +
                              "\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;

  ClientState st;
  st.streams = args.num("streams", 1000);
  st.watch_pid = args.get("watch-pid", "");
  st.rss_later = std::chrono::seconds(args.num("rss-later-s", 3));
  if (!st.watch_pid.empty()) st.rss_before = rss_kb(st.watch_pid);
  if (auto dump = args.get("dump", ""); !dump.empty() && !(st.dump = std::fopen(dump.c_str(), "w"))) {
    std::fprintf(stderr, "cannot write %s\n", dump.c_str());
    return 2;
  }
  st.delays_ms.reserve(static_cast<std::size_t>(st.streams) * 100);
  asio::io_context ioc{1};
  bool timed_out = false;
  asio::steady_timer deadline(ioc, std::chrono::seconds(args.num("timeout-s", 120)));
  deadline.async_wait([&](boost::system::error_code ec) {
    if (!ec) {
      timed_out = true;
      ioc.stop();
    }
  });
  asio::co_spawn(
      ioc,
      [&]() -> asio::awaitable<void> {
        asio::steady_timer pace(ioc);
        for (long i = 0; i < st.streams;) {  // 50 every 5 ms: a burst of 1000 SYNs overflows small backlogs
          for (int k = 0; k < 50 && i < st.streams; ++k, ++i)
            asio::co_spawn(ioc, run_stream(endpoint, request, st), [&](std::exception_ptr) {
              if (st.done + st.failed == st.streams) {
                deadline.cancel();
                ioc.stop();
              }
            });
          pace.expires_after(5ms);
          co_await pace.async_wait(asio::use_awaitable);
        }
      },
      asio::detached);
  ioc.run();

  if (st.dump) std::fclose(st.dump);
  std::string statuses;
  for (auto& [code, n] : st.statuses)
    statuses += (statuses.empty() ? "" : ",") + ("\"" + std::to_string(code) + "\":" + std::to_string(n));
  std::printf(
      "{\"streams\":%ld,\"statuses\":{%s},\"completed\":%ld,\"failed\":%ld,\"timed_out\":%s,\"events\":%zu,"
      "\"delay_ms\":%s,\"first_event_delay_ms\":%s,\"rss_kb\":{\"before\":%s,\"all_open\":%s,\"mid\":%s}}\n",
      st.streams, statuses.c_str(), st.done, st.failed, timed_out ? "true" : "false", st.delays_ms.size(),
      percentile_json(st.delays_ms).c_str(), percentile_json(st.first_delays_ms).c_str(),
      json_or_null(st.rss_before).c_str(), json_or_null(st.rss_all_open).c_str(),
      json_or_null(st.rss_mid).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: sse_load backend|client [--key value]...\n");
    return 2;
  }
  Args args;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string key = argv[i];
    if (key.rfind("--", 0) == 0) key.erase(0, 2);
    args.values[key] = argv[i + 1];
  }
  std::string mode = argv[1];
  try {
    if (mode == "backend") return run_backend(args);
    if (mode == "client") return run_client(args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sse_load: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "usage: sse_load backend|client [--key value]...\n");
  return 2;
}
