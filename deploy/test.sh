#!/usr/bin/env bash
# Install, build and run every test.
#
#   ./deploy/test.sh
#
# Installs the build and test dependencies (Debian 12), installs the Node packages of the
# end-to-end test (tests/e2e, from its package-lock.json), builds everything into build-test/
# with AddressSanitizer and UndefinedBehaviorSanitizer, and runs every test with ctest.
# Exits non-zero when anything fails.
#
# Environment: JOBS (2, parallel compile and test jobs), SKIP_DEPS=1 (do not run
# deploy/install-deps.sh), BUILD_DIR (build-test), CMAKE_ARGS (extra cmake arguments, e.g.
# "-DSMARTLB_SANITIZE=OFF"), CTEST_ARGS (extra ctest arguments, e.g. "-R Backend").
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
jobs="${JOBS:-2}"
build="${BUILD_DIR:-$root/build-test}"

step() { printf '\n=== %s\n' "$*"; }

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
echo
if [[ -z "$summary" ]]; then
  echo "test.sh: ctest printed no summary (exit status $status)"
  ((status != 0)) || status=1
elif ((status != 0)); then
  echo "test.sh: FAILED: $summary"
else
  echo "test.sh: OK: $summary"
fi
exit "$status"
