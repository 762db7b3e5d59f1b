#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, -fsanitize=fuzzer,address,undefined) and
# runs each for a bounded time on a copy of its seed corpus (tests/fuzz/corpus/<target>/).
#
#   tests/fuzz/run.sh                     # 30 s per target
#   FUZZ_SECONDS=600 FUZZ_SEED=0 tests/fuzz/run.sh    # a longer campaign, random seed
#   tests/fuzz/run.sh fuzz_http1_request  # only the named targets
#
# Environment: FUZZ_SECONDS (30, per target), FUZZ_BUILD_DIR (build-fuzz), JOBS (2, compile
# jobs), CXX (clang++), FUZZ_ARGS (extra libFuzzer flags, e.g. "-max_len=8192"), FUZZ_SEED
# (1: CI's runs are repeatable, so a red fuzz stage is a finding for that code, not luck; set
# it to 0 for libFuzzer's random seed in a campaign).
# The corpus grows in $FUZZ_BUILD_DIR/corpus/<target>/, never in the repository; a crash is
# written to $FUZZ_BUILD_DIR/crashes/<target>/ and its path printed. Exits non-zero when any
# target crashes (or fails to build).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
seconds="${FUZZ_SECONDS:-30}"
jobs="${JOBS:-2}"
targets=(fuzz_http1_request fuzz_http1_response fuzz_throttle_headers fuzz_token_estimate fuzz_config_env
         fuzz_json_body fuzz_config_file fuzz_token_answer fuzz_redis_input fuzz_stream_start fuzz_id_tagger
         fuzz_event_stream_tagger fuzz_request_target_ids fuzz_trace_context fuzz_websocket_frames
         fuzz_websocket_rewrite)
if (($# > 0)); then targets=("$@"); fi
read -r -a extra <<< "${FUZZ_ARGS:-}"

cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="${CXX:-clang++}"
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

failed=()
results=()
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  crashes="$build/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  # A copy: libFuzzer adds the inputs it finds to the first corpus directory.
  cp -R "$root/tests/fuzz/corpus/$t/." "$corpus/"
  log="$build/$t.log"
  printf '\n=== %s (%s s)\n' "$t" "$seconds"
  set +e
  "$build/$t" "$corpus" -seed="${FUZZ_SEED:-1}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$crashes/" -print_final_stats=1 "${extra[@]}" > "$log" 2>&1
  rc=$?
  set -e
  runs="$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{print $2}' || true)"
  speed="$(grep -E '^stat::average_exec_per_sec:' "$log" | awk '{print $2}' || true)"
  if ((rc != 0)); then
    tail -n 60 "$log"
    inputs="$(grep -oE "Test unit written to [^ ]+" "$log" | sed 's/Test unit written to //' || true)"
    echo "$t: CRASHED (exit $rc); input: ${inputs:-none written}; log: $log"
    failed+=("$t")
    results+=("$t: CRASHED ${inputs:-}")
  else
    grep -E '^#[0-9]+ +DONE' "$log" | tail -n 1 || true
    echo "$t: OK, ${runs:-?} runs, ${speed:-?} exec/s"
    results+=("$t: OK, ${runs:-?} runs, ${speed:-?} exec/s")
  fi
done

echo
printf '%s\n' "${results[@]}"
if ((${#failed[@]} > 0)); then
  echo "fuzz: FAILED: ${failed[*]}"
  exit 1
fi
echo "fuzz: OK (${#targets[@]} targets, ${seconds} s each)"
