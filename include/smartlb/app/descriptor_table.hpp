#pragma once
// The process's file-descriptor table, sized once at start.
//
// Linux grows a process's descriptor table by doubling it when a new descriptor does not fit,
// and in a process with more than one thread each growth waits for an RCU grace period
// (expand_fdtable calls synchronize_rcu): 9-25 ms measured on the bench machine, during which
// the accept() or socket() that needed the slot, and so the whole worker thread, stands still.
// A burst of new connections crosses 256, 512, 1,024, 2,048... descriptors: a stall at each,
// felt by every stream the worker relays. Growing the table once, while the process still has
// one thread, takes no grace period, and nothing waits later.
#include <cstddef>

namespace smartlb::app {

// Raises the soft RLIMIT_NOFILE to the hard one; returns the soft limit now in force.
std::size_t raise_descriptor_limit();

// How many descriptors to make room for: two per connection (the client's and an upstream)
// and 1,024 for pooled connections, listeners and files, within `limit`.
std::size_t descriptors_to_reserve(std::size_t max_connections, std::size_t limit);

// Makes the table hold `count` descriptors (a descriptor duplicated to count - 1, then
// closed); false when that failed.
bool reserve_descriptor_table(std::size_t count);

// How many descriptors the table holds now (FDSize in /proc/self/status); 0 when unknown.
std::size_t descriptor_table_size();

}  // namespace smartlb::app
