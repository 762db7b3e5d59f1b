#pragma once
// The log line of each failed attempt, as routing's tickets describe them (routing keeps no log).
#include "smartlb/routing/attempt_ticket.hpp"

namespace smartlb::net {

class FailureLogLines final : public routing::FailureLog {
 public:
  void failed(const routing::FailedAttempt& f) override;
};

}  // namespace smartlb::net
