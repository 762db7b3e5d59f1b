#include "smartlb/telemetry/access_log_writer.hpp"

#include <spdlog/spdlog.h>

#include "smartlb/telemetry/logging.hpp"

namespace smartlb::telemetry {

AccessLogWriter::AccessLogWriter(int fd, AccessLogWriterOptions options) : fd_(fd), options_(options) {
  pending_.reserve(options_.flush_bytes * 2);
  thread_ = std::thread([this] { run(); });
}

AccessLogWriter::~AccessLogWriter() { stop(); }

bool AccessLogWriter::append(std::string_view line) {
  bool wake = false;
  {
    const std::lock_guard lock(mutex_);
    if (stopping_ || pending_.size() + line.size() > options_.max_pending_bytes) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    pending_.append(line);
    wake = pending_.size() >= options_.flush_bytes;
  }
  if (wake) wake_.notify_one();
  return true;
}

void AccessLogWriter::stop() {
  {
    const std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void AccessLogWriter::run() {
  std::string writing;
  writing.reserve(options_.flush_bytes * 2);
  for (;;) {
    bool last = false;
    {
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, options_.flush_interval,
                     [&] { return stopping_ || pending_.size() >= options_.flush_bytes; });
      writing.swap(pending_);  // the workers go on appending while this thread writes
      last = stopping_;
    }
    // Blocks this thread (never a worker) while stdout is full.
    if (!writing.empty()) write_fully(fd_, writing);
    writing.clear();
    report_dropped(last);
    if (last) return;
  }
}

// Said where an operator reads it, at most every 10 s and once more at the end (a total).
void AccessLogWriter::report_dropped(bool last) {
  const std::uint64_t dropped = dropped_lines();
  const auto now = std::chrono::steady_clock::now();
  if (dropped == dropped_reported_ || (!last && now - reported_at_ < std::chrono::seconds(10))) return;
  spdlog::warn("access log: {} line(s) dropped so far: stdout did not keep up", dropped);
  dropped_reported_ = dropped;
  reported_at_ = now;
}

}  // namespace smartlb::telemetry
