#include "smartlb/routing/first_token.hpp"

#include <algorithm>

namespace smartlb::routing {
namespace {

double scale(std::int64_t prompt_tokens) {
  return static_cast<double>(std::max<std::int64_t>(prompt_tokens, 0) + FirstTokenStats::kBaseTokens);
}

}  // namespace

std::string FirstTokenStats::key(BackendId backend, std::string_view deployment, std::string_view shape) {
  std::string k = std::to_string(backend.value);
  k.push_back('\n');
  k.append(deployment);
  k.push_back('\n');
  k.append(shape);
  return k;
}

void FirstTokenStats::observe(BackendId backend, std::string_view deployment, std::string_view shape,
                              std::int64_t prompt_tokens, base::Nanos took, base::MonoNanos now) {
  const double rate = std::chrono::duration<double>(took).count() / scale(prompt_tokens);
  const std::string k = key(backend, deployment, shape);
  std::lock_guard lock(mutex_);
  auto it = samples_.find(k);
  if (it == samples_.end()) {
    if (samples_.size() >= kMaxKeys) return;
    it = samples_.emplace(k, Samples{}).first;
  }
  Samples& s = it->second;
  s.rate[s.next] = rate;
  s.at[s.next] = now;
  s.next = (s.next + 1) % kSamples;
  s.count = std::min(s.count + 1, kSamples);
}

std::optional<base::Nanos> FirstTokenStats::learned(BackendId backend, std::string_view deployment,
                                                    std::string_view shape, std::int64_t prompt_tokens,
                                                    base::MonoNanos now) const {
  const std::string k = key(backend, deployment, shape);
  std::lock_guard lock(mutex_);
  const auto it = samples_.find(k);
  if (it == samples_.end()) return std::nullopt;
  const Samples& s = it->second;
  std::size_t recent = 0;
  double highest = 0;
  for (std::size_t i = 0; i < s.count; ++i) {
    if (now - s.at[i] > kKeep.count()) continue;
    ++recent;
    highest = std::max(highest, s.rate[i]);
  }
  if (recent < kEnough) return std::nullopt;
  const base::Nanos deadline = std::chrono::round<std::chrono::milliseconds>(
      std::chrono::duration<double>(kMargin * highest * scale(prompt_tokens)));
  return std::max(deadline, kFloor);
}

std::optional<base::Nanos> first_token_deadline(const FirstTokenSetting& setting,
                                                const FirstTokenStats& stats, BackendId backend,
                                                std::string_view deployment, std::string_view shape,
                                                std::int64_t prompt_tokens, base::Nanos ceiling, bool last,
                                                base::MonoNanos now) {
  if (last) return std::nullopt;
  std::optional<base::Nanos> d;
  switch (setting.mode) {
    case FirstTokenSetting::Mode::Off:
      return std::nullopt;
    case FirstTokenSetting::Mode::Fixed:
      d = setting.fixed;
      break;
    case FirstTokenSetting::Mode::Learned:
      d = stats.learned(backend, deployment, shape, prompt_tokens, now);
      break;
  }
  if (!d || *d >= ceiling) return std::nullopt;
  return d;
}

}  // namespace smartlb::routing
