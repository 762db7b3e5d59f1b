#include "smartlb/io/draining_read.hpp"

#include <boost/asio/detail/op_queue.hpp>

namespace smartlb::io {

#if SMARTLB_DRAINING_READS
namespace {
using draining::Reactor;

// The reactor's per-descriptor flag is private; an explicit instantiation may name it (the one
// place C++ waives access checks), and the friend function it defines hands the member out.
struct SpeculativeFlags {
  friend constexpr auto member(SpeculativeFlags);
};
template <auto Member, class Tag>
struct Expose {
  friend constexpr auto member(Tag) { return Member; }
};
template struct Expose<&Reactor::descriptor_state::try_speculative_, SpeculativeFlags>;
}  // namespace

namespace draining {
void rearm_speculative_reads(Reactor::per_descriptor_data state) {
  if (state) (state->*member(SpeculativeFlags{}))[Reactor::read_op] = true;
}
}  // namespace draining

bool bytes_may_have_arrived(Socket& s) {
  const Reactor::per_descriptor_data state = draining::SocketImpl::of(s).get_implementation().reactor_data_;
  if (!state || (state->*member(SpeculativeFlags{}))[Reactor::read_op]) return true;
  // An event epoll has reported that the worker has not processed yet: the descriptor then waits
  // in the scheduler's queue, ahead of at least the reactor's own task, so it has a successor.
  // (A C-style cast may name a private base; op_queue_access is Asio's public door to `next_`.)
  auto* queued = (asio::detail::operation*)state;  // NOLINT(google-readability-casting)
  return asio::detail::op_queue_access::next(queued) != nullptr;
}
#else
bool bytes_may_have_arrived(Socket&) { return true; }
#endif

}  // namespace smartlb::io
