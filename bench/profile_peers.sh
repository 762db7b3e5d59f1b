#!/usr/bin/env bash
# User-space instructions per proxied request for smartlb, nginx and haproxy, under callgrind,
# in the same setup as bench/overhead.sh (fixed nginx backend, bench/conf/chat.lua, access
# logs off, one worker/thread each). callgrind counts instructions, so unlike requests/s this
# comparison does not move with the machine's load. It says nothing about the kernel's share
# (TCP, epoll: about 12 µs per request for all three in bench/overhead.sh) or about cache
# misses; it is the deterministic half of the overhead comparison.
#
# A second pass (skipped when `perf` is missing, or with SYSCALLS=0) runs each proxy natively,
# pinned to core 1, and counts its syscalls per request with perf's syscall tracepoints (cheap,
# unlike strace, so the proxies run at their normal speed and batch events as they normally do).
#
# CACHE_SIM=1 adds callgrind's cache and branch simulation (user space only, a model of the
# caches, not this CPU's) and prints simulated L1 misses and mispredictions per request.
#
# Usage: bench/profile_peers.sh   (DURATION=10 CONNS=16 PROXIES="smartlb nginx haproxy" SYSCALLS=1 CALLGRIND=1 CACHE_SIM=0;
#                                  proxy smartlb_rules: smartlb through a 20-rule policy, the last rule matching;
#                                  proxy smartlb_budgets: every caller with a budget of each kind;
#                                  proxies smartlb_trace100 and smartlb_trace1: OpenTelemetry traces at 100 % and
#                                  1 % sampling, exported to the backend nginx (a 200 for every POST /v1/traces))
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need wrk nginx haproxy valgrind callgrind_annotate
DURATION=${DURATION:-10}
CONNS=${CONNS:-16}
PROXIES=${PROXIES:-smartlb nginx haproxy}
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
OUT="$RESULTS/profile-peers-$(date +%Y%m%d-%H%M%S)"; mkdir -p "$OUT"
subst() { sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$2|g" -e "s|@BACKEND_PORT@|${3:-}|g" -e "s|@CT@|application/json|g" "$1"; }

BPORT=$(free_port)
subst "$BENCH_DIR/conf/nginx-backend.conf.in" "$BPORT" >"$TMP/nb.conf"
nginx -c "$TMP/nb.conf" -p "$TMP" -e "$TMP/nb.err" & PIDS+=($!)
wait_port "$BPORT"

[ "${CALLGRIND:-1}" = 1 ] && printf '%-8s %10s %14s %14s\n' proxy requests instructions instr/request
for proxy in $PROXIES; do
  [ "${CALLGRIND:-1}" = 1 ] || break
  port=$(free_port)
  cg=(valgrind --tool=callgrind --callgrind-out-file="$OUT/$proxy.out" --dump-instr=no)
  [ "${CACHE_SIM:-0}" = 1 ] && cg+=(--cache-sim=yes --branch-sim=yes)
  case $proxy in
    smartlb)
      env -i PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
        LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" "${cg[@]}" "$SMARTLB" 2>"$OUT/$proxy.log" >/dev/null & ;;
    smartlb_rules)  # the same backend through a 20-rule policy whose last rule matches
      write_rules20 "$TMP/rules20.yaml" "$BPORT"
      env -i PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
        LOG_LEVEL=warn "${cg[@]}" "$SMARTLB" --config "$TMP/rules20.yaml" 2>"$OUT/$proxy.log" >/dev/null & ;;
    smartlb_budgets)  # every caller with a budget of each kind (never reached): admission and settlement
      env -i PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
        LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" CLIENT_TOKENS_PER_MINUTE=1000000000000 \
        CLIENT_REQUESTS_PER_MINUTE=1000000000 CLIENT_TOKENS_PER_DAY=1000000000000000 \
        CLIENT_TOKENS_PER_MONTH=1000000000000000 "${cg[@]}" "$SMARTLB" 2>"$OUT/$proxy.log" >/dev/null & ;;
    smartlb_trace100|smartlb_trace1)  # traces exported (the exporter's thread is counted too)
      ratio=1.0; [ "$proxy" = smartlb_trace1 ] && ratio=0.01
      env -i PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
        LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$BPORT" \
        OTEL_TRACES_SAMPLER=traceidratio OTEL_TRACES_SAMPLER_ARG="$ratio" \
        "${cg[@]}" "$SMARTLB" 2>"$OUT/$proxy.log" >/dev/null & ;;
    nginx)  # no master process: the worker is the process callgrind runs
      subst "$BENCH_DIR/conf/nginx-proxy.conf.in" "$port" "$BPORT" >"$TMP/np.conf"
      "${cg[@]}" nginx -c "$TMP/np.conf" -p "$TMP" -e "$TMP/np.err" -g "master_process off;" 2>"$OUT/$proxy.log" & ;;
    haproxy)
      subst "$BENCH_DIR/conf/haproxy.cfg.in" "$port" "$BPORT" >"$TMP/ha.cfg"
      "${cg[@]}" haproxy -db -f "$TMP/ha.cfg" 2>"$OUT/$proxy.log" & ;;
    *) echo "unknown proxy $proxy" >&2; exit 2 ;;
  esac
  pid=$!; PIDS+=("$pid")
  wait_port "$port" 60
  drive() { wrk -t1 -c"$CONNS" -d"$1s" -s "$BENCH_DIR/conf/chat.lua" "http://127.0.0.1:$port$PATH_Q"; }
  drive 3 >/dev/null
  callgrind_control -z "$pid" >/dev/null
  drive "$DURATION" >"$OUT/$proxy-wrk.txt"
  callgrind_control -d "$pid" >/dev/null
  reqs=$(awk '/requests in/{print $1}' "$OUT/$proxy-wrk.txt")
  kill "$pid"; wait "$pid" 2>/dev/null || true
  dump=$(ls -t "$OUT/$proxy".out.* | head -1)
  total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(/,/,"",$1); print $1}')
  callgrind_annotate --threshold=100 --inclusive=no "$dump" >"$OUT/$proxy-self.txt" 2>/dev/null
  printf '%-8s %10s %14s %14s\n' "$proxy" "$reqs" "$total" "$((total / reqs))"
  if [ "${CACHE_SIM:-0}" = 1 ]; then  # columns: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim
    callgrind_annotate "$dump" 2>/dev/null | grep "PROGRAM TOTALS" | sed 's/([0-9.]*%)//g' | tr -d ',' |
      awk -v n="$reqs" '{printf "         per request: L1i misses %.0f, L1d read misses %.0f, L1d write misses %.0f, mispredicted branches %.0f\n",
                         $4/n, $5/n, $6/n, ($11+$13)/n}'
  fi
done

if [ "${SYSCALLS:-1}" = 1 ] && command -v perf >/dev/null && command -v taskset >/dev/null; then
  echo
  echo "syscalls per request (perf stat, natively, proxy on core 1, wrk and backend on core 0):"
  EV=syscalls:sys_enter_recvfrom,syscalls:sys_enter_sendto,syscalls:sys_enter_writev,syscalls:sys_enter_epoll_wait,raw_syscalls:sys_enter
  printf '%-8s %10s %9s %9s %9s %11s %9s\n' proxy requests recvfrom sendto writev epoll_wait all
  for proxy in $PROXIES; do
    port=$(free_port)
    case $proxy in
      smartlb)
        env -i PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
          LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" taskset -c 1 "$SMARTLB" 2>>"$OUT/$proxy.log" >/dev/null & ;;
      nginx)
        subst "$BENCH_DIR/conf/nginx-proxy.conf.in" "$port" "$BPORT" >"$TMP/np.conf"
        taskset -c 1 nginx -c "$TMP/np.conf" -p "$TMP" -e "$TMP/np.err" -g "master_process off;" & ;;
      haproxy)
        subst "$BENCH_DIR/conf/haproxy.cfg.in" "$port" "$BPORT" >"$TMP/ha.cfg"
        taskset -c 1 haproxy -db -f "$TMP/ha.cfg" 2>>"$OUT/$proxy.log" & ;;
    esac
    pid=$!; PIDS+=("$pid")
    wait_port "$port"
    url="http://127.0.0.1:$port$PATH_Q"
    taskset -c 0 wrk -t1 -c"$CONNS" -d2s -s "$BENCH_DIR/conf/chat.lua" "$url" >/dev/null
    perf stat -x, -e "$EV" -p "$pid" -o "$OUT/$proxy-syscalls.csv" & sp=$!
    sleep 0.3
    taskset -c 0 wrk -t1 -c"$CONNS" -d"$DURATION"s -s "$BENCH_DIR/conf/chat.lua" "$url" >"$OUT/$proxy-wrk-native.txt"
    kill -INT "$sp"; wait "$sp" 2>/dev/null || true
    kill "$pid"; wait "$pid" 2>/dev/null || true
    reqs=$(awk '/requests in/{print $1}' "$OUT/$proxy-wrk-native.txt")
    # Requests outside wrk's run (none: nothing else talks to the proxy) would only add calls.
    awk -F, -v n="$reqs" -v p="$proxy" '$3 ~ /sys_enter/ { split($3, a, ":"); v[a[2]] = $1 / n }
      END { printf "%-8s %10d %9.3f %9.3f %9.3f %11.3f %9.3f\n", p, n, v["sys_enter_recvfrom"], v["sys_enter_sendto"],
            v["sys_enter_writev"], v["sys_enter_epoll_wait"], v["sys_enter"] }' "$OUT/$proxy-syscalls.csv"
  done
fi
echo "raw: $OUT"
