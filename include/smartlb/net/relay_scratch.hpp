#pragma once
// The relay's per-write arrays and its readers of the body (usage, stateful ids). Not in its
// coroutine frame: Asio recycles frames of up to 1020
// bytes only, and a larger one costs an aligned_alloc and a free per response. Not on the
// connection either: only a response being relayed needs them, so the worker lends them out
// (RelayScratchLease) and an idle keep-alive connection holds none.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "smartlb/io/beast.hpp"
#include "smartlb/stateful/event_stream_tagger.hpp"
#include "smartlb/telemetry/usage_sniffer.hpp"

namespace smartlb::net {

struct RelayScratch {
  // At most this many runs of body bytes (chunks, mostly) already buffered go out in one write.
  static constexpr std::size_t kMaxRunsPerWrite = 16;
  std::array<std::string_view, kMaxRunsPerWrite> runs;           // body bytes of one write
  std::array<io::asio::const_buffer, kMaxRunsPerWrite + 4> out;  // [head] [size line] runs [CRLF] [last]
  std::string held;                   // an event stream's start, held back until its first content
  std::optional<UsageSniffer> usage;  // this response's token usage
  std::optional<stateful::EventStreamTagger> tagger;  // an event stream's ids, tagged
};

// A RelayScratch borrowed from a worker's spares (Worker::spare_scratch) for as long as this
// lives (a relay). At most kMaxSpare are kept after a burst of concurrent relays (streams).
class RelayScratchLease {
 public:
  using Spares = std::vector<std::unique_ptr<RelayScratch>>;
  static constexpr std::size_t kMaxSpare = 256;

  explicit RelayScratchLease(Spares& spares) : spares_(spares) {
    if (spares_.empty()) {
      scratch_ = std::make_unique<RelayScratch>();
    } else {
      scratch_ = std::move(spares_.back());
      spares_.pop_back();
    }
  }
  ~RelayScratchLease() {
    if (spares_.size() >= kMaxSpare) return;
    scratch_->usage.reset();  // a spare holds no response's state (nor its buffered body)
    scratch_->tagger.reset();
    try {
      spares_.push_back(std::move(scratch_));
    } catch (...) {  // no room to keep it: it is freed instead
    }
  }
  RelayScratchLease(const RelayScratchLease&) = delete;
  RelayScratchLease& operator=(const RelayScratchLease&) = delete;
  RelayScratch* operator->() { return scratch_.get(); }
  RelayScratch* get() { return scratch_.get(); }

 private:
  Spares& spares_;
  std::unique_ptr<RelayScratch> scratch_;
};

}  // namespace smartlb::net
