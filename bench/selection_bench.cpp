// Google Benchmark of the selection hot path: BackendPool::pick + BackendPool::reserve,
// as ForwardJob::run calls them once per request (src/net/forwarder.cpp, smartlb_routing).
//
//   cmake --build build-bench --target smartlb_selection_bench
//   build-bench/bench/smartlb_selection_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
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

#include "smartlb/routing/backend_pool.hpp"
#include "smartlb/base/clock.hpp"
#include "smartlb/base/random.hpp"

using namespace smartlb;

namespace {

std::vector<PoolMember> make_members(int n, bool quota) {
  std::vector<PoolMember> m(static_cast<std::size_t>(n));
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
  static SystemClock clock;  // the real clock: its cost is part of the hot path
  BackendPool pool(make_members(n, quota), clock, CooldownPolicy{});
  const std::string deployment = "gpt-4o";
  const int first_group = std::max(1, n * 3 / 5);
  const int cool = first_group * cooling_pct / 100;
  Verdict v;
  v.fail_over = true;
  v.cause = FailureCause::Throttled;
  for (int i = 0; i < cool; ++i)
    pool.record_failure(static_cast<std::size_t>(i), deployment, v, std::chrono::milliseconds(3'600'000));
  FastRandom rng(42);
  std::int64_t picked = 0;
  for (auto _ : state) {
    TriedSet tried;
    auto p = pool.pick(deployment, tried, rng, 200);
    if (p && pool.reserve(*p, deployment, 200)) ++picked;
    benchmark::DoNotOptimize(p);
  }
  if (picked != static_cast<std::int64_t>(state.iterations())) state.SkipWithError("a pick failed");
  state.SetItemsProcessed(state.iterations());
}

// The pick alone, and a failover round (pick, tried.add, pick again) at 100 backends.
void BM_PickOnly(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  static SystemClock clock;
  BackendPool pool(make_members(n, false), clock, CooldownPolicy{});
  FastRandom rng(7);
  for (auto _ : state) {
    TriedSet tried;
    auto p = pool.pick("gpt-4o", tried, rng, 0);
    tried.add(*p);
    auto q = pool.pick("gpt-4o", tried, rng, 0);
    benchmark::DoNotOptimize(q);
  }
  state.SetItemsProcessed(state.iterations() * 2);
}

// Both worker threads hammering one shared pool (THREADS=2): shows the cost of the shared
// per-backend locks (shared_mutex in find_deployment, the quota mutex in reserve).
void BM_PickReserveShared(benchmark::State& state) {
  static SystemClock clock;
  static BackendPool* pool = nullptr;
  if (state.thread_index() == 0) pool = new BackendPool(make_members(static_cast<int>(state.range(0)), state.range(1) != 0), clock, CooldownPolicy{});
  FastRandom rng(100 + static_cast<std::uint64_t>(state.thread_index()));
  for (auto _ : state) {
    TriedSet tried;
    auto p = pool->pick("gpt-4o", tried, rng, 200);
    if (p) pool->reserve(*p, "gpt-4o", 200);
    benchmark::DoNotOptimize(p);
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    delete pool;
    pool = nullptr;
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
BENCHMARK(BM_PickReserveShared)->ArgNames({"backends", "quota"})->Args({5, 1})->Args({100, 1})->Threads(1)->Threads(2);

BENCHMARK_MAIN();
