#!/usr/bin/env bash
# Install, build and run every test.
#
#   ./deploy/test.sh
#
# Installs the build and test dependencies (Debian 12), installs the Node packages of the
# end-to-end test (tests/e2e, from its package-lock.json), checks the sources' format
# (.clang-format), builds everything into build-test/ with AddressSanitizer and
# UndefinedBehaviorSanitizer and runs every test with ctest, then builds the daemon with
# ThreadSanitizer into build-tsan/ and runs its integration tests and the unit tests that run
# threads again there, then builds the libFuzzer targets of tests/fuzz with clang into build-fuzz/ and runs each for
# FUZZ_SECONDS (tests/fuzz/run.sh), and checks that nothing the run wrote is left in the tree
# untracked and not ignored. Exits non-zero when anything fails.
#
# Environment: JOBS (2, parallel compile and test jobs), SKIP_DEPS=1 (do not run
# deploy/install-deps.sh), BUILD_DIR (build-test), CMAKE_ARGS (extra cmake arguments, e.g.
# "-DSMARTLB_SANITIZE=OFF"), CTEST_ARGS (extra ctest arguments, e.g. "-L unit" or "-R e2e"),
# SKIP_TSAN=1 (no ThreadSanitizer stage), TSAN_BUILD_DIR (build-tsan), SKIP_FUZZ=1 (no fuzz
# stage), FUZZ_SECONDS (30, per fuzz target), FUZZ_BUILD_DIR (build-fuzz).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${JOBS:-2}"
build="${BUILD_DIR:-$root/build-test}"

step() { printf '\n=== %s\n' "$*"; }

# The untracked files there were before the run: only what the run adds is its own.
untracked() {
  git -C "$root" rev-parse --is-inside-work-tree > /dev/null 2>&1 || return 0
  git -C "$root" status --porcelain --untracked-files=all | grep '^??' | sort || true
}
untracked_before="$(untracked)"

step "dependencies"
if [[ "${SKIP_DEPS:-0}" != 1 ]]; then
  deploy/install-deps.sh --test
fi

# Every Node test package (the OpenAI SDK end-to-end test, the status-page browser test).
while IFS= read -r lock; do
  dir=$(dirname "$lock")
  step "npm ci --prefix $dir"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error
done < <(find tests -name package-lock.json -not -path '*/node_modules/*' | sort)

step "format (clang-format --dry-run)"
deploy/format.sh --check

# Debug (-O0) with sanitizers: on two cores an unoptimised build of the Beast-heavy sources
# compiles much faster than an optimised one, and the tests are I/O-bound, so they still run
# quickly. -g1 keeps line numbers in sanitizer reports at a fraction of -g's size.
step "configure $build (Debug, ASan + UBSan)"
read -r -a extra_cmake <<< "${CMAKE_ARGS:-}"
cmake -S . -B "$build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Debug \
  -DCMAKE_CXX_FLAGS_DEBUG="-O0 -g1" \
  -DSMARTLB_SANITIZE=ON \
  -DSMARTLB_BUILD_TESTS=ON \
  "${extra_cmake[@]}"

step "build (-j$jobs)"
build_start=$SECONDS
cmake --build "$build" -j "$jobs"
echo "built in $((SECONDS - build_start)) s"

# A sanitizer report fails the test that triggers it (UBSan is built without recovery);
# ask UBSan for a stack trace too.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

step "ctest (-j$jobs)"
read -r -a extra_ctest <<< "${CTEST_ARGS:-}"
log="$build/ctest-output.log"
set +e
ctest --test-dir "$build" --output-on-failure --no-tests=error -j "$jobs" "${extra_ctest[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

summary="$(grep -E '[0-9]+% tests passed' "$log" | tail -n 1 || true)"
if [[ -z "$summary" ]] && ((status == 0)); then status=1; fi

# ThreadSanitizer: the lock-free shared state (backend states, metrics, snapshots) and the
# worker threads, under the integration suite and the threaded unit tests. -O1: TSan's own advice, and a
# faster build than -O0 here.
tsan_summary="skipped"
if [[ "${SKIP_TSAN:-0}" != 1 ]]; then
  tsan_build="${TSAN_BUILD_DIR:-$root/build-tsan}"
  step "configure $tsan_build (ThreadSanitizer)"
  cmake -S . -B "$tsan_build" -G Ninja \
    -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_CXX_FLAGS_DEBUG="-O1 -g1" \
    -DSMARTLB_TSAN=ON \
    -DSMARTLB_BUILD_BENCHMARKS=OFF
  step "build tsan (-j$jobs)"
  tsan_start=$SECONDS
  cmake --build "$tsan_build" -j "$jobs" --target smartlb smartlb_unit_tests smartlb_integration_tests
  echo "built in $((SECONDS - tsan_start)) s"
  step "ctest tsan (-j$jobs)"
  tsan_log="$tsan_build/ctest-output.log"
  set +e
  TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1}" \
    ctest --test-dir "$tsan_build" --output-on-failure --no-tests=error -j "$jobs" "${extra_ctest[@]}" 2>&1 |
    tee "$tsan_log"
  tsan_status=${PIPESTATUS[0]}
  set -e
  tsan_summary="$(grep -E '[0-9]+% tests passed' "$tsan_log" | tail -n 1 || true)"
  [[ -n "$tsan_summary" ]] || tsan_summary="ctest printed no summary"
  if ((tsan_status != 0)) || [[ "$tsan_summary" == "ctest printed no summary" ]]; then status=1; fi
fi

# libFuzzer (clang, ASan + UBSan): the parsers that read bytes from outside, each for a bounded
# time on a copy of its seed corpus (tests/fuzz/corpus); a crash fails the stage.
fuzz_summary="skipped"
if [[ "${SKIP_FUZZ:-0}" != 1 ]]; then
  step "fuzz (${FUZZ_SECONDS:-30} s per target)"
  set +e
  FUZZ_SECONDS="${FUZZ_SECONDS:-30}" JOBS="$jobs" tests/fuzz/run.sh
  fuzz_status=$?
  set -e
  if ((fuzz_status == 0)); then fuzz_summary="OK"; else fuzz_summary="FAILED"; status=1; fi
fi

# Nothing a build, a test or a fuzz run writes may land in the tree: build outputs go to the
# ignored build directories, and a test that leaves a file behind (a log, a pid file) fails here.
tree_summary="clean"
strays="$(comm -13 <(echo "$untracked_before") <(untracked) | grep . || true)"
if [[ -n "$strays" ]]; then
  step "files the run left in the tree (not ignored)"
  echo "$strays"
  tree_summary="files left behind"
  status=1
fi

echo
if [[ -z "$summary" ]]; then
  echo "test.sh: ctest printed no summary"
elif ((status != 0)); then
  echo "test.sh: FAILED: asan+ubsan: $summary; tsan: $tsan_summary; fuzz: $fuzz_summary; tree: $tree_summary"
else
  echo "test.sh: OK: asan+ubsan: $summary; tsan: $tsan_summary; fuzz: $fuzz_summary; tree: $tree_summary"
fi
exit "$status"
