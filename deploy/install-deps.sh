#!/usr/bin/env bash
# Installs what building smartlb needs on Debian 12 (bookworm); with --test, also what the
# test suites need (GoogleTest, Google Benchmark, Node.js for the OpenAI SDK end-to-end test,
# promtool for the metrics test, Chromium for the status-page test, clang and clang-format for
# the fuzz targets and the format check, redis-server for the scale-out tests, gdb for the stacks
# of a test that hangs).
#
#   deploy/install-deps.sh           # build dependencies
#   deploy/install-deps.sh --test    # build + test dependencies
#
# Idempotent: packages already installed are skipped, and when nothing is missing apt is not
# touched at all (no `apt-get update`, no root needed). Uses sudo when not run as root.
set -euo pipefail

usage() {
  sed -n '2,10s/^# \{0,1\}//p' "$0"
}

with_tests=false
for arg in "$@"; do
  case "$arg" in
    --test) with_tests=true ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install-deps.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

if ! command -v apt-get > /dev/null 2>&1 || ! command -v dpkg-query > /dev/null 2>&1; then
  echo "install-deps.sh: this script needs Debian 12 (apt-get, dpkg-query)" >&2
  exit 1
fi
if [[ -r /etc/os-release ]]; then
  # shellcheck disable=SC1091
  . /etc/os-release
  if [[ "${VERSION_CODENAME:-}" != "bookworm" ]]; then
    echo "install-deps.sh: warning: written for Debian 12 (bookworm), this is ${PRETTY_NAME:-unknown}" >&2
  fi
fi

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libssl-dev nlohmann-json3-dev libspdlog-dev libyaml-cpp-dev libhiredis-dev
  ca-certificates curl
)
if $with_tests; then
  packages+=(googletest libgtest-dev libgmock-dev libbenchmark-dev prometheus chromium clang clang-format redis-server gdb)
  # A Node.js installed outside Debian's packages (nodesource, nvm, a tarball) ships its own
  # npm, and Debian's nodejs/npm packages conflict with it: only install them when there is
  # no node at all.
  if ! command -v node > /dev/null 2>&1; then
    packages+=(nodejs npm)
  elif ! command -v npm > /dev/null 2>&1; then
    echo "install-deps.sh: node is installed ($(command -v node)) but npm is not;" \
      "install npm the way node was installed" >&2
    exit 1
  fi
fi

installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2> /dev/null || true)" == "install ok installed" ]]
}

missing=()
for p in "${packages[@]}"; do
  installed "$p" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps.sh: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo > /dev/null 2>&1; then
    echo "install-deps.sh: not root and sudo is not installed; run as root:" >&2
    echo "  apt-get install ${missing[*]}" >&2
    exit 1
  fi
  sudo=(sudo)
fi

prometheus_was_installed=false
installed prometheus && prometheus_was_installed=true

echo "install-deps.sh: installing ${missing[*]}"
log="$(mktemp -t smartlb-apt.XXXXXX)"
trap 'rm -f "$log"' EXIT
apt_opts=(-q -y --no-install-recommends -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0)

run_logged() {
  # apt's progress goes to the log; on failure the log is shown so the error is visible.
  if ! "$@" > "$log" 2>&1; then
    echo "install-deps.sh: command failed: $*" >&2
    tail -n 40 "$log" >&2
    exit 1
  fi
}

run_logged "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 -q update
run_logged "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_opts[@]}" install "${missing[@]}"

# Debian's prometheus package enables and starts a Prometheus server on :9090 -- the port
# smartlb's admin listener uses by default. We only want promtool from it, so stop the
# service we just caused to be started (a Prometheus that was there before is left alone).
if $with_tests && ! $prometheus_was_installed && [[ -d /run/systemd/system ]] &&
  command -v systemctl > /dev/null 2>&1; then
  "${sudo[@]}" systemctl disable --now prometheus.service > /dev/null 2>&1 || true
  echo "install-deps.sh: installed prometheus for promtool; disabled its service (it listens on :9090)"
fi

still_missing=()
for p in "${missing[@]}"; do
  installed "$p" || still_missing+=("$p")
done
if ((${#still_missing[@]} > 0)); then
  echo "install-deps.sh: still not installed: ${still_missing[*]}" >&2
  exit 1
fi
echo "install-deps.sh: done"
