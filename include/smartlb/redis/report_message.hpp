#pragma once
// What replicas tell one another about the backends' rate-limit reports, as it travels on the
// reports channel (redis::SharedReports): a short report, and a probe taken or a 429's moment at
// a target whose reports are watched. JSON; every member of what arrives is checked.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "smartlb/routing/report_sharing.hpp"

namespace smartlb::redis {

// One shared report as it travels: who read it, for which target, from a request sent when.
struct ReportMessage {
  std::string backend, deployment, replica;
  std::int64_t sent_ms = 0;  // Unix ms
  routing::RateLimitReport report;
};
std::string encode(const ReportMessage& m);
std::optional<ReportMessage> decode_report(std::string_view text);

// A probe one replica took, or a moment a 429 named (routing::MomentNotice), as it travels.
struct MomentMessage {
  std::string backend, deployment, replica;
  routing::MomentNotice::Kind kind = routing::MomentNotice::Kind::Probe;
  std::int64_t at_ms = 0;  // Unix ms
};
std::string encode(const MomentMessage& m);
std::optional<MomentMessage> decode_moment(std::string_view text);

}  // namespace smartlb::redis
