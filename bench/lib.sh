# Shared helpers for the bench/*.sh scripts (sourced, not run).
# Every process a script starts is recorded in PIDS and killed by the EXIT trap.

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO_DIR=$(cd "$BENCH_DIR/.." && pwd)
BUILD=${BUILD:-$REPO_DIR/build-bench}
SMARTLB=${SMARTLB:-$BUILD/src/smartlb}
SIM=${SIM:-$BUILD/src/sim/smartlb-sim}
RESULTS=${RESULTS:-$BENCH_DIR/results}
mkdir -p "$RESULTS"
TMP=$(mktemp -d /tmp/smartlb-bench.XXXXXX)
PIDS=()
CLK_TCK=$(getconf CLK_TCK)

cleanup() {
  local p
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
  sleep 0.3
  for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
  [ -n "${KEEP_TMP:-}" ] || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP PIPE
# Many connections: root may raise the hard limit; fall back to the current hard limit.
ulimit -Hn 200000 2>/dev/null || true
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

need() { for t in "$@"; do command -v "$t" >/dev/null || { echo "missing tool: $t" >&2; exit 2; }; done; }

# A free TCP port on 127.0.0.1 (asks the kernel; racy only in theory).
free_port() { python3 - <<'PY' 2>/dev/null || node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()
PY
}

wait_port() {  # wait_port PORT [seconds]
  local port=$1 deadline=$((SECONDS + ${2:-10}))
  until (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null; do
    [ $SECONDS -ge $deadline ] && { echo "port $port did not open" >&2; return 1; }
    sleep 0.05
  done
}

# A certificate for localhost signed by a CA made for the run, once: $TMP/tls.pem and
# $TMP/tls.key, the CA in $TMP/ca.pem (for smartlb's UPSTREAM_CA_FILE).
make_bench_certs() {
  [ -f "$TMP/tls.pem" ] && return 0
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=bench CA" -keyout "$TMP/ca.key" -out "$TMP/ca.pem" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$TMP/tls.key" -out "$TMP/tls.csr" 2>/dev/null
  openssl x509 -req -in "$TMP/tls.csr" -CA "$TMP/ca.pem" -CAkey "$TMP/ca.key" -CAcreateserial -days 2 \
    -extfile <(printf 'subjectAltName=DNS:localhost\nextendedKeyUsage=serverAuth\n') -out "$TMP/tls.pem" 2>/dev/null
}

# nginx terminating TLS in front of a plain backend on port $1, for an https:// upstream that
# streams (one worker, proxy_buffering off: events pass as they come; 9,900 streams at most):
# start_tls_front BACKEND_PORT [CONF] (default nginx-proxy.conf.in; nginx-websocket.conf.in for
# WebSocket sessions); sets TPORT (its certificate is make_bench_certs').
start_tls_front() {
  make_bench_certs
  TPORT=$(free_port)
  sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$TPORT|g" -e "s|@BACKEND_PORT@|$1|g" "$BENCH_DIR/conf/${2:-nginx-proxy.conf.in}" |
    sed -E -e "s|listen 127.0.0.1:$TPORT( backlog=4096)?;|listen 127.0.0.1:$TPORT ssl\1; ssl_certificate $TMP/tls.pem; ssl_certificate_key $TMP/tls.key;|" \
        -e 's|^worker_processes 1;|worker_processes 1;\nworker_rlimit_nofile 20000;|' \
        -e 's|worker_connections [0-9]+;|worker_connections 20000;|' \
        -e 's|proxy_pass http://backend;|proxy_pass http://backend; proxy_buffering off;|' \
        -e "s|/nginx-[a-z-]+\.pid;|/nginx-tls-front.pid;|; s|/nginx-[a-z-]+\.err |/nginx-tls-front.err |" >"$TMP/nginx-tls-front.conf"
  nginx -c "$TMP/nginx-tls-front.conf" -p "$TMP" &
  PIDS+=($!)
  wait_port "$TPORT"
}

# Starts bench/conf/nginx-backend.conf.in over HTTPS (a CA and a localhost certificate made here,
# in $TMP/ca.pem): start_tls_backend [CPUS] [CONTENT_TYPE]; sets TPORT.
start_tls_backend() {
  make_bench_certs
  TPORT=$(free_port)
  sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$TPORT|g" -e "s|@CT@|${2:-application/json}|" "$BENCH_DIR/conf/nginx-backend.conf.in" |
    sed -e "s|listen 127.0.0.1:$TPORT backlog=4096;|listen 127.0.0.1:$TPORT ssl backlog=4096; ssl_certificate $TMP/tls.pem; ssl_certificate_key $TMP/tls.key; ssl_session_cache shared:TLS:4m;|" \
        -e "s|nginx-backend.pid|nginx-backend-tls.pid|; s|nginx-backend.err|nginx-backend-tls.err|" >"$TMP/nginx-backend-tls.conf"
  taskset -c "${1:-0-$(($(nproc) - 1))}" nginx -c "$TMP/nginx-backend-tls.conf" -p "$TMP" &
  PIDS+=($!)
  wait_port "$TPORT"
}

# Starts smartlb-sim with the given args on an ephemeral port; sets SIM_PORT and SIM_PID.
start_sim() {
  local out="$TMP/sim.$RANDOM.out"
  "$SIM" --port 0 --log-level warn "$@" >"$out" 2>>"$TMP/sim.log" &
  SIM_PID=$!; PIDS+=("$SIM_PID")
  local deadline=$((SECONDS + 10))
  until grep -q listening "$out" 2>/dev/null; do
    [ $SECONDS -ge $deadline ] && { echo "smartlb-sim did not start" >&2; cat "$TMP/sim.log" >&2; return 1; }
    sleep 0.05
  done
  SIM_PORT=$(sed -E 's/.*:([0-9]+)$/\1/' "$out")
}

# stat_ticks AWK_EXPR PIDS...: an expression over /proc/PID/stat fields, in clock ticks,
# summed over the pids. Prints "?" if one of them is gone (e.g. an nginx worker was
# respawned): the delta is invalid.
stat_ticks() {
  local expr=$1 t=0 p v; shift
  for p in "$@"; do
    v=$(awk "{print $expr}" /proc/"$p"/stat 2>/dev/null) || { echo "?"; return 0; }
    [ -n "$v" ] || { echo "?"; return 0; }
    t=$((t + v))
  done
  echo $t
}
cpu_ticks() { stat_ticks '$14+$15' "$@"; }  # utime + stime
utime_ticks() { stat_ticks '$14' "$@"; }    # user time only (for the user/kernel split)
# VmRSS in KiB summed over the given pids.
rss_kb() { local t=0 p; for p in "$@"; do t=$((t + $(awk '/^VmRSS/{print $2}' /proc/"$p"/status))); done; echo $t; }
# All pids of a process tree (the process and its children), e.g. nginx master + workers.
tree_pids() { echo "$1" $(pgrep -P "$1" || true); }

# Time the hypervisor ran something else while this VM wanted its CPUs (all CPUs, in ticks).
# A vCPU that is stolen for 10 ms stalls whatever runs on it: the long tails of a run on a
# shared VM come from here, not from the process measured (perf shows no samples at all, not
# even the idle task's, on that CPU for the stall).
steal_ticks() { awk '/^cpu /{print $9}' /proc/stat; }

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# write_rules20 FILE BACKEND_PORT: a routing policy of 20 rules of which only the last matches a
# request for gpt-4o (each of the others checks a model and metadata), all to one backend.
write_rules20() {
  local aliases="" rules="" i
  for i in $(seq 1 19); do
    aliases+="model-$i, "
    rules+="  - {id: r$i, type: weight-based-routing, when: {models: [model-$i], metadata: {env: e$i}}, load_balance_targets: [{target: fast/any}]}"$'\n'
  done
  {
    printf 'backends: [{name: fast, url: "http://127.0.0.1:%s"}]\n' "$2"
    printf 'targets: [{id: fast/any, backend: fast, aliases: [%sgpt-4o]}]\n' "$aliases"
    printf 'rules:\n%s' "$rules"
    printf '  - {id: last, type: priority-based-routing, when: {models: [gpt-4o]}, load_balance_targets: [{target: fast/any}]}\n'
  } >"$1"
}
