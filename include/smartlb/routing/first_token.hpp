#pragma once
// How long a streamed request may wait for its first content before its attempt fails over as
// stalled: a backend that accepts and hangs, or sends its head and then nothing, must not cost a
// client 100 s (Bifrost's ttft_timeout_ms, Envoy AI Gateway's streamIdleTimeout, TensorZero's
// ttft_ms). A fixed short deadline cuts healthy requests (a reasoning deployment thinks for a
// minute; a 100k-token prompt takes longer to its first token than a short one), so by default
// the deadline is learned per (backend, deployment) and request shape from the first-token times
// smartlb sees, scaled by the request's prompt, and none is set while too little is known.
//
// Learned: each first token seen gives a rate, its time over (prompt tokens + kBaseTokens); the
// deadline for a prompt of p tokens is kMargin x the highest of the last kSamples rates x
// (p + kBaseTokens), never under kFloor. The shape keeps apart what takes different times on one
// deployment: a reasoning effort ("high" thinks far longer than "low"). A shape never seen gets no
// deadline. The caller caps the deadline with its own (HTTP_TIMEOUT_SECONDS) and never applies
// one to the last candidate.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "smartlb/base/clock.hpp"
#include "smartlb/routing/backend_id.hpp"

namespace smartlb::routing {

// FIRST_TOKEN_TIMEOUT_SECONDS, or a model_configs entry's first_token_timeout_seconds.
struct FirstTokenSetting {
  enum class Mode : std::uint8_t { Learned, Off, Fixed };
  Mode mode = Mode::Learned;
  base::Nanos fixed{0};  // Fixed
};

class FirstTokenStats {
 public:
  static constexpr std::size_t kSamples = 32;                    // the latest first tokens of a key
  static constexpr std::size_t kEnough = 8;                      // before a deadline is learned
  static constexpr base::Nanos kKeep{std::chrono::minutes(30)};  // older samples say nothing now
  static constexpr double kMargin = 3.0;
  static constexpr std::int64_t kBaseTokens = 1000;  // a prompt's fixed cost, in tokens
  static constexpr base::Nanos kFloor{std::chrono::seconds(8)};
  static constexpr std::size_t kMaxKeys = 4096;  // deployments are clients' names: bounded

  // A first token `took` after its request was sent, for a prompt of `prompt_tokens`.
  void observe(BackendId backend, std::string_view deployment, std::string_view shape,
               std::int64_t prompt_tokens, base::Nanos took, base::MonoNanos now);
  // The learned deadline for a prompt of `prompt_tokens` of this shape; nullopt while fewer than
  // kEnough first tokens of the last kKeep are known.
  std::optional<base::Nanos> learned(BackendId backend, std::string_view deployment, std::string_view shape,
                                     std::int64_t prompt_tokens, base::MonoNanos now) const;

 private:
  struct Samples {
    std::array<double, kSamples> rate{};  // seconds per (prompt token + kBaseTokens)
    std::array<base::MonoNanos, kSamples> at{};
    std::size_t next = 0, count = 0;
  };
  static std::string key(BackendId backend, std::string_view deployment, std::string_view shape);
  mutable std::mutex mutex_;  // one observation per streamed request, one look per attempt
  std::unordered_map<std::string, Samples> samples_;
};

// The deadline an attempt of a streamed request gets, or none: the setting's (fixed, or learned
// from `stats`), when under `ceiling`; none when the setting is Off or `last` (the last candidate
// is given its whole ceiling).
std::optional<base::Nanos> first_token_deadline(const FirstTokenSetting& setting,
                                                const FirstTokenStats& stats, BackendId backend,
                                                std::string_view deployment, std::string_view shape,
                                                std::int64_t prompt_tokens, base::Nanos ceiling, bool last,
                                                base::MonoNanos now);

}  // namespace smartlb::routing
