#include "smartlb/tracing/span_queue.hpp"

#include <algorithm>
#include <iterator>

namespace smartlb::tracing {

bool SpanQueue::push(std::vector<Span>&& spans) {
  if (spans.size() > max_ - std::min(max_, spans_.size())) return false;
  std::move(spans.begin(), spans.end(), std::back_inserter(spans_));
  return true;
}

std::vector<Span> SpanQueue::take(std::size_t max) {
  const std::size_t n = std::min(max, spans_.size());
  std::vector<Span> out;
  out.reserve(n);
  const auto end = spans_.begin() + static_cast<std::ptrdiff_t>(n);
  std::move(spans_.begin(), end, std::back_inserter(out));
  spans_.erase(spans_.begin(), end);
  return out;
}

}  // namespace smartlb::tracing
