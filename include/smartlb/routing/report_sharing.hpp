#pragma once
// What one replica tells the others about the backends' rate-limit reports
// (redis/shared_reports, docs/scale-out.md#rate-limit-reports). A backend's
// `x-ratelimit-remaining-*` counts every replica's sends, but each replica reads only its own
// answers: alone, three replicas saw room the others had taken, each tested the same short target
// in turn, and each learned a 429's Retry-After only where it came (so the next replica's test
// found nothing, and drew another 429). So BackendStates tells a listener the short reports it
// reads, the probes it takes and the moments its 429s name, and applies what other replicas tell
// it (BackendStates::apply_shared_report, apply_shared_moment). Called on worker threads: a
// listener must not block.
#include <cstdint>
#include <string_view>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/throttle_headers.hpp"

namespace smartlb::routing {

// A short report (ReportedBudget::is_low) read from an answer on this replica.
struct ReportNotice {
  std::string_view backend;     // the configured name
  std::string_view deployment;  // the state's deployment key
  const RateLimitReport& report;
  base::MonoNanos sent = 0;  // when the request it answers left
};

// A moment at a target whose reports are watched, which the other replicas act on as this one does.
struct MomentNotice {
  enum class Kind : std::uint8_t {
    Probe,  // this replica took the target's one probe (ReportedBudget::claim_probe), out until `at`
    Retry,  // a 429's Retry-After: the backend takes a request again at `at`
  };
  std::string_view backend;     // the configured name
  std::string_view deployment;  // the state's deployment key
  Kind kind = Kind::Probe;
  base::MonoNanos at = 0;
};

class ReportListener {
 public:
  virtual ~ReportListener() = default;
  virtual void on_report(const ReportNotice& notice) = 0;
  virtual void on_moment(const MomentNotice& notice) = 0;
};

}  // namespace smartlb::routing
