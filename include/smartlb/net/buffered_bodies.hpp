#pragma once
// The request bodies buffered at once, all connections together, within MAX_BUFFERED_BODIES_BYTES:
// many concurrent 30 MiB chat requests with images must not exhaust the process's memory. Each
// request's BodyShare takes its body's size before the body is read (a Content-Length), or as it
// grows (chunked), and gives it back when the request ends. A body that does not fit is refused
// with 503 and Retry-After (smartlb is busy, not the client wrong). Bodies up to kUncountedBytes
// are not counted: most requests take no shared atomic, and MAX_CONNECTIONS bounds their total.
#include <atomic>
#include <cstdint>

namespace smartlb::net {

class BufferedBodies {
 public:
  static constexpr std::uint64_t kUncountedBytes = 64 * 1024;

  explicit BufferedBodies(std::uint64_t limit) : limit_(limit) {}
  // Takes `bytes` more when they fit under the limit.
  bool take(std::uint64_t bytes) {
    std::uint64_t held = held_.load(std::memory_order_relaxed);
    do {
      if (bytes > limit_ || held > limit_ - bytes) return false;
    } while (!held_.compare_exchange_weak(held, held + bytes, std::memory_order_relaxed));
    return true;
  }
  void give(std::uint64_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }
  std::uint64_t held() const { return held_.load(std::memory_order_relaxed); }
  std::uint64_t limit() const { return limit_; }

 private:
  const std::uint64_t limit_;
  std::atomic<std::uint64_t> held_{0};
};

// One request's share: grown to its body's size, given back at the request's end.
class BodyShare {
 public:
  explicit BodyShare(BufferedBodies& bodies) : bodies_(bodies) {}
  ~BodyShare() { release(); }
  BodyShare(const BodyShare&) = delete;
  BodyShare& operator=(const BodyShare&) = delete;

  // The body will hold `bytes`: false when they do not fit (nothing more is taken then).
  bool grow_to(std::uint64_t bytes) {
    if (bytes <= held_ || bytes <= BufferedBodies::kUncountedBytes) return true;
    if (!bodies_.take(bytes - held_)) return false;
    held_ = bytes;
    return true;
  }
  void release() {
    if (held_ != 0) bodies_.give(held_);
    held_ = 0;
  }

 private:
  BufferedBodies& bodies_;
  std::uint64_t held_ = 0;
};

}  // namespace smartlb::net
