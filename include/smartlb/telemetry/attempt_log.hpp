#pragma once
// One attempt of a request (what one backend was asked and answered), and a request's log of
// them. Plain data.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/outcome.hpp"
#include "smartlb/telemetry/trace_ids.hpp"

namespace smartlb::telemetry {

// Backends are named by their identity (BackendId::value), which outlives configurations.
struct AttemptRecord {
  std::size_t backend = 0;                                    // BackendId::value
  unsigned status = 0;                                        // 0 when no response header arrived
  routing::FailureCause cause = routing::FailureCause::None;  // None: the attempt served the client
  std::int64_t cooldown_ms = 0;
  std::int64_t ttfb_us = 0;      // request sent -> response header read
  bool breaker_tripped = false;  // this failure tripped the target's failure_tolerance breaker
  bool probe = false;            // sent to test a target its rate-limit reports held back
  // The deployment (or model) its backend was asked for: the name its cooldowns and quotas are
  // kept under (after a target's or BACKEND_X_DEPLOYMENT_NAME's rename). A view into the
  // request's path, its record (the model its body named: the body may be freed first) or its
  // configuration, all held until the request is accounted.
  std::string_view deployment{};
  base::MonoNanos sent = 0;  // when the request left (0: it never did, no credential)
  base::MonoNanos ended =
      0;  // when a failed attempt's outcome was known (the served one ends with the request)
  // Tracing only (RequestRecord::trace.on): its CLIENT span, and where it went. Views into
  // the request's configuration, like `deployment`.
  SpanId span_id{};
  std::string_view backend_name{};
  std::string_view server_address{};
  std::uint16_t server_port = 0;
  // Whose API it spoke: gen_ai.provider.name.
  enum class Provider : std::uint8_t { OpenAI, AzureOpenAI, Anthropic } provider = Provider::OpenAI;
};

// A request's attempts, in order, at most kMaxRecords of them. A request almost always makes
// one or two, so those are in place; the rest go to one block on the heap, made by the first
// attempt that needs it and freed by release_overflow(). A record's address never changes
// while its request lasts (the forwarder holds it across an attempt's waits).
class AttemptLog {
 public:
  static constexpr std::size_t kInlineRecords = 2;
  static constexpr std::size_t kMaxRecords = 16;

  AttemptLog() = default;
  AttemptLog(const AttemptLog& o) : in_place_(o.in_place_) {
    if (o.overflow_) overflow_ = std::make_unique<Overflow>(*o.overflow_);
  }
  AttemptLog& operator=(const AttemptLog& o) {
    if (this != &o) {
      in_place_ = o.in_place_;
      overflow_ = o.overflow_ ? std::make_unique<Overflow>(*o.overflow_) : nullptr;
    }
    return *this;
  }
  AttemptLog(AttemptLog&&) noexcept = default;
  AttemptLog& operator=(AttemptLog&&) noexcept = default;

  // Record i (< kMaxRecords), cleared, its room made if it has none yet.
  AttemptRecord& start(std::size_t i) {
    if (i >= kInlineRecords && !overflow_) overflow_ = std::make_unique<Overflow>();
    AttemptRecord& r = (*this)[i];
    r = AttemptRecord{};
    return r;
  }
  // Record i, which start(j) for some j >= i made room for (always so for i < kInlineRecords).
  AttemptRecord& operator[](std::size_t i) {
    return i < kInlineRecords ? in_place_[i] : (*overflow_)[i - kInlineRecords];
  }
  const AttemptRecord& operator[](std::size_t i) const {
    return i < kInlineRecords ? in_place_[i] : (*overflow_)[i - kInlineRecords];
  }
  void release_overflow() { overflow_.reset(); }

 private:
  using Overflow = std::array<AttemptRecord, kMaxRecords - kInlineRecords>;
  std::array<AttemptRecord, kInlineRecords> in_place_{};
  std::unique_ptr<Overflow> overflow_;
};

}  // namespace smartlb::telemetry
