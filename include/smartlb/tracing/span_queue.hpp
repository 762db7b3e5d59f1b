#pragma once
// The spans waiting for export: bounded in spans, so a collector that is down or slow costs
// spans, never memory. A request's spans go in whole or not at all. Not synchronized: its owner
// (the Tracer) holds a lock around it.
#include <cstddef>
#include <deque>
#include <vector>

#include "smartlb/tracing/span_model.hpp"

namespace smartlb::tracing {

class SpanQueue {
 public:
  explicit SpanQueue(std::size_t max_spans) : max_(max_spans) {}

  // Queues `spans` when they all fit; false (nothing queued) when they do not.
  bool push(std::vector<Span>&& spans);
  // Up to `max` spans, the oldest first.
  std::vector<Span> take(std::size_t max);
  std::size_t size() const { return spans_.size(); }
  std::size_t capacity() const { return max_; }
  bool empty() const { return spans_.empty(); }

 private:
  std::size_t max_;
  std::deque<Span> spans_;
};

}  // namespace smartlb::tracing
