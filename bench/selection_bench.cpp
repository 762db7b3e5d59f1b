// Google Benchmark of the selection hot path: PrioritySelector::pick + BackendStates::reserve,
// as ForwardJob::choose_target calls them once per request (src/net/forwarder.cpp).
//
//   cmake --build build-bench --target smartlb_selection_bench
//   build-bench/bench/smartlb_selection_bench --benchmark_repetitions=5
//   --benchmark_report_aggregates_only=true
//
// Arguments: /backends/cooling_percent/quota(0|1). Pools look like the goodput setup: two
// priority groups (the first 60 % of backends at priority 1), weights 1..5. "cooling" puts
// that percentage of the priority-1 backends in a long deployment cooldown (as after a 429),
// so pick skips them. "quota" declares a (never exhausted) TPM on every backend so the
// sliding-window budgets are consulted and charged on every request.
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <vector>

#include "smartlb/base/clock.hpp"
#include "smartlb/base/random.hpp"
#include "smartlb/routing/backend_states.hpp"
#include "smartlb/routing/routing_table.hpp"
#include "smartlb/routing/selectors/priority_selector.hpp"

using namespace smartlb;

namespace {

std::vector<routing::PoolMember> make_members(int n, bool quota) {
  std::vector<routing::PoolMember> m(static_cast<std::size_t>(n));
  const int first_group = std::max(1, n * 3 / 5);
  for (int i = 0; i < n; ++i) {
    auto& p = m[static_cast<std::size_t>(i)];
    p.name = "backend-" + std::to_string(i + 1);
    p.priority = i < first_group ? 1 : 2;
    p.weight = static_cast<std::uint32_t>(1 + i % 5);
    if (quota) {
      p.tokens_per_window = 1'000'000'000'000'000;  // never fills: measures the bookkeeping
      p.quota_window = std::chrono::seconds(1);
    }
  }
  return m;
}

void BM_PickReserve(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const int cooling_pct = static_cast<int>(state.range(1));
  const bool quota = state.range(2) != 0;
  static base::SystemClock clock;  // the real clock: its cost is part of the hot path
  const routing::RoutingTable table(make_members(n, quota));
  routing::BackendStates states(clock, routing::CooldownPolicy{});
  states.track(table);
  const routing::PrioritySelector selector;
  const std::string deployment = "gpt-4o";
  const int first_group = std::max(1, n * 3 / 5);
  const int cool = first_group * cooling_pct / 100;
  routing::Verdict v;
  v.fail_over = true;
  v.cause = routing::FailureCause::Throttled;
  for (int i = 0; i < cool; ++i)
    states.record_failure(table.member(static_cast<std::size_t>(i)), deployment, v,
                          std::chrono::milliseconds(3'600'000));
  base::FastRandom rng(42);
  std::int64_t picked = 0;
  for (auto _ : state) {
    routing::TriedSet tried;
    auto p = selector.pick(table, states, {deployment, tried, 200}, rng);
    if (p && states.reserve(table.member(*p), deployment, 200)) ++picked;
    benchmark::DoNotOptimize(p);
  }
  if (picked != static_cast<std::int64_t>(state.iterations())) state.SkipWithError("a pick failed");
  state.SetItemsProcessed(state.iterations());
}

// The pick alone, and a failover round (pick, tried.add, pick again) at 100 backends.
void BM_PickOnly(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  static base::SystemClock clock;
  const routing::RoutingTable table(make_members(n, false));
  routing::BackendStates states(clock, routing::CooldownPolicy{});
  states.track(table);
  const routing::PrioritySelector selector;
  base::FastRandom rng(7);
  for (auto _ : state) {
    routing::TriedSet tried;
    auto p = selector.pick(table, states, {"gpt-4o", tried, 0}, rng);
    tried.add(*p);
    auto q = selector.pick(table, states, {"gpt-4o", tried, 0}, rng);
    benchmark::DoNotOptimize(q);
  }
  state.SetItemsProcessed(state.iterations() * 2);
}

// Both worker threads hammering one shared pool (THREADS=2): shows the cost of the shared
// per-backend locks (shared_mutex in find_deployment, the quota mutex in reserve).
void BM_PickReserveShared(benchmark::State& state) {
  static base::SystemClock clock;
  static routing::RoutingTable* table = nullptr;
  static routing::BackendStates* states = nullptr;
  const routing::PrioritySelector selector;
  if (state.thread_index() == 0) {
    table = new routing::RoutingTable(make_members(static_cast<int>(state.range(0)), state.range(1) != 0));
    states = new routing::BackendStates(clock, routing::CooldownPolicy{});
    states->track(*table);
  }
  base::FastRandom rng(100 + static_cast<std::uint64_t>(state.thread_index()));
  for (auto _ : state) {
    routing::TriedSet tried;
    auto p = selector.pick(*table, *states, {"gpt-4o", tried, 200}, rng);
    if (p) states->reserve(table->member(*p), "gpt-4o", 200);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    delete states;
    delete table;
    states = nullptr;
    table = nullptr;
  }
}

}  // namespace

BENCHMARK(BM_PickReserve)
    ->ArgNames({"backends", "cooling_pct", "quota"})
    ->Args({5, 0, 0})
    ->Args({5, 0, 1})
    ->Args({5, 66, 0})
    ->Args({5, 66, 1})
    ->Args({100, 0, 0})
    ->Args({100, 0, 1})
    ->Args({100, 50, 0})
    ->Args({100, 50, 1})
    ->Args({100, 100, 1});
BENCHMARK(BM_PickOnly)->ArgName("backends")->Arg(5)->Arg(100);
BENCHMARK(BM_PickReserveShared)
    ->ArgNames({"backends", "quota"})
    ->Args({5, 1})
    ->Args({100, 1})
    ->Threads(1)
    ->Threads(2);

BENCHMARK_MAIN();
