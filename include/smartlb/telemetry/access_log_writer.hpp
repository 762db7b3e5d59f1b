#pragma once
// The access log's writer: workers append whole lines to one buffer and never wait for stdout;
// a thread of its own writes the buffer out in large writes (nginx's `access_log buffer=`).
//
// A line reaches stdout within `flush_interval`, or sooner once `flush_bytes` are waiting. When
// stdout does not keep up (a full pipe, a stopped reader), the buffer grows to `max_pending_bytes`
// and further lines are dropped and counted: a worker never blocks on the log. stop() (SIGTERM's
// drain ends with it) writes every line appended before it.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace smartlb::telemetry {

struct AccessLogWriterOptions {
  std::size_t flush_bytes = 64 * 1024;
  std::chrono::milliseconds flush_interval{100};
  std::size_t max_pending_bytes = 8 * 1024 * 1024;
};

class AccessLogWriter {
 public:
  explicit AccessLogWriter(int fd, AccessLogWriterOptions options = {});
  ~AccessLogWriter();
  AccessLogWriter(const AccessLogWriter&) = delete;
  AccessLogWriter& operator=(const AccessLogWriter&) = delete;

  // Appends one line (with its newline); false when it was dropped (the buffer is full).
  bool append(std::string_view line);
  // Writes what is pending and ends the writer thread; later lines are dropped. Idempotent.
  void stop();
  std::uint64_t dropped_lines() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  void run();
  void report_dropped(bool last);

  const int fd_;
  const AccessLogWriterOptions options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string pending_;  // guarded by mutex_
  bool stopping_ = false;
  std::atomic<std::uint64_t> dropped_{0};
  std::uint64_t dropped_reported_ = 0;  // the writer thread's own, like reported_at_
  std::chrono::steady_clock::time_point reported_at_{};
  std::thread thread_;
};

}  // namespace smartlb::telemetry
