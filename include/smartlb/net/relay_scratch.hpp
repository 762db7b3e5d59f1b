#pragma once
// The relay's per-write arrays and its readers of the body (usage, stateful ids). Not in its
// coroutine frame: Asio recycles frames of up to 1020 bytes only, and a larger one costs an
// aligned_alloc and a free per response. Not on the connection either: only a response being
// relayed needs them, so the worker lends them out (SpareLease) and an idle keep-alive
// connection holds none; the per-write arrays only for one write.
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

// The arrays of one write: the runs of body bytes one read brought (chunks, mostly) and the
// buffers that go out with them. Lent for one round only, from the read's end to the write's:
// a stream waiting for its next event holds none.
struct RelayRound {
  // At most this many runs of body bytes already buffered go out in one write.
  static constexpr std::size_t kMaxRunsPerWrite = 16;
  std::array<std::string_view, kMaxRunsPerWrite> runs;           // body bytes of one write
  std::array<io::asio::const_buffer, kMaxRunsPerWrite + 4> out;  // [head] [size line] runs [CRLF] [last]
  // This round's runs, their body bytes, the buffers of its write in `out` (0: nothing to write),
  // and whether the body ends with it. Set by each round (UpstreamExchange::gather_round).
  std::size_t run_count = 0, chunk = 0, k = 0;
  bool last = false;
  char size_line[20];  // a chunk's size line, one of `out`
};

// The relay's readers of the body, kept for the whole relay.
struct RelayScratch {
  std::string held;                              // an event stream's start, held back until its first content
  std::optional<telemetry::UsageSniffer> usage;  // this response's token usage
  // An event stream's ids, tagged: made only for a stateful API's stream (a pointer, not an
  // optional: every stream holds its scratch for as long as it lasts).
  std::unique_ptr<stateful::EventStreamTagger> tagger;
  // A spare holds no response's state (nor its buffered body).
  void forget() {
    usage.reset();
    tagger.reset();
  }
};

// A T borrowed from a worker's spares (Worker::spare_scratch, spare_rounds) for as long as this
// lives. At most kMaxSpare are kept after a burst of concurrent relays (streams).
template <class T>
class SpareLease {
 public:
  using Spares = std::vector<std::unique_ptr<T>>;
  static constexpr std::size_t kMaxSpare = 256;

  explicit SpareLease(Spares& spares) : spares_(spares) {
    if (spares_.empty()) {
      lent_ = std::make_unique<T>();
    } else {
      lent_ = std::move(spares_.back());
      spares_.pop_back();
    }
  }
  ~SpareLease() {
    if (spares_.size() >= kMaxSpare) return;
    if constexpr (requires(T & t) { t.forget(); }) lent_->forget();
    try {
      spares_.push_back(std::move(lent_));
    } catch (...) {  // no room to keep it: it is freed instead
    }
  }
  SpareLease(const SpareLease&) = delete;
  SpareLease& operator=(const SpareLease&) = delete;
  T* operator->() { return lent_.get(); }
  T* get() { return lent_.get(); }

 private:
  Spares& spares_;
  std::unique_ptr<T> lent_;
};

using RelayScratchLease = SpareLease<RelayScratch>;
using RelayRoundLease = SpareLease<RelayRound>;

}  // namespace smartlb::net
