#!/usr/bin/env bash
# Priority classes over a scarce quota (docs/client-budgets.md, "Priority classes"). Two
# smartlb-sim backends (TPM 120k and 60k, one priority group, weights = TPM/1000), open-loop
# load of 200-token requests at LOADS % of their capacity; BATCH_SHARE of the requests (evenly
# spread) carry `x-smartlb-priority: batch`, the rest are interactive. Each LIMITER (sims'
# --limiter) and SYSTEM:
#   smartlb-quota     declared BACKEND_X_TPM and QUOTA_WINDOW_SECONDS = the window
#   smartlb-reactive  no declared quota: the sims' x-ratelimit-remaining-* reports
# plus, at the highest load, the same demand without any batch header ("off": today's
# behaviour, first come first served).
# Reported per run: interactive and batch requests and how many got 200; served_pct = the
# sims' tokens served / their capacity over the run; upstream 429s (the sims'); the p99 latency of
# the requests answered 200.
#
#   bench/priority_classes.sh                       (~7 min: 2 limiters x 2 systems x 3 runs of 30 s)
#   LIMITERS=sliding SYSTEMS=smartlb-quota bench/priority_classes.sh
# Knobs: LIMITERS ("sliding fixed"), SYSTEMS, LOADS ("80 120"), BATCH_SHARE (0.5), WINDOW (10),
# DURATION (30, at least 3 windows), RESERVE (the batch class's reserve_percent; default: the
# built-in default), QUEUE (the interactive class's max_queue_seconds: its requests wait for
# capacity instead of a 429; default: none), GRACE (CAPACITY_GRACE_MS; default: the built-in
# 100), REPLICAS (1; 2: two replicas sharing a redis-server
# this script starts, the interactive requests sent to the first and the batch ones to the
# second, so that what the batch requests leave room for is the other replica's demand; the
# "off" run splits its load the same way). Output: bench/results/priority-classes-STAMP/summary.tsv.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
LIMITERS=${LIMITERS:-sliding fixed}
SYSTEMS=${SYSTEMS:-smartlb-quota smartlb-reactive}
LOADS=${LOADS:-80 120}
BATCH_SHARE=${BATCH_SHARE:-0.5}
WINDOW=${WINDOW:-10}
DURATION=${DURATION:-30}
RESERVE=${RESERVE:-}
QUEUE=${QUEUE:-}
GRACE=${GRACE:-}
REPLICAS=${REPLICAS:-1}
case $REPLICAS in 1|2) ;; *) echo "REPLICAS: 1 or 2" >&2; exit 2 ;; esac
need node curl jq awk
TPMS=(120000 60000)
REQ_TOKENS=200
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
STAMP=$(date +%Y%m%d-%H%M%S)
OUT="$RESULTS/priority-classes-$STAMP"; mkdir -p "$OUT"
CAP_TPM=$((TPMS[0] + TPMS[1]))
CAP_RPS=$(awk -v t=$CAP_TPM -v c=$REQ_TOKENS 'BEGIN{print t/60/c}')
TOP_LOAD=$(tr ' ' '\n' <<<"$LOADS" | sort -n | tail -1)
echo "# priority classes $STAMP ($(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo '?')):" \
  "capacity $CAP_TPM TPM = $CAP_RPS req/s; window ${WINDOW}s; ${DURATION}s runs; batch share $BATCH_SHARE;" \
  "reserve ${RESERVE:-default}; interactive queue ${QUEUE:-none}; grace ${GRACE:-default}; $REPLICAS replica(s); load $(loadavg)"
if [ "$REPLICAS" = 2 ]; then
  need redis-server
  REDIS_PORT=$(free_port)
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no >"$OUT/redis.log" 2>&1 &
  REDIS_PID=$!; PIDS+=("$REDIS_PID")
  wait_port "$REDIS_PORT"
fi

start_smartlb() {  # start_smartlb SYSTEM [N]: sets SYS_PORT and SYS_PID
  SYS_PORT=$(free_port)
  local envs=(PATH="$PATH" PORT="$SYS_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 ACCESS_LOG=off LOG_LEVEL=error)
  [ "$REPLICAS" = 2 ] && envs+=(REDIS_URL="redis://127.0.0.1:$REDIS_PORT" REPLICA_ID="replica-${2:-1}"
                                REDIS_KEY_PREFIX="bench-$STAMP-$RUN:")
  for i in 0 1; do
    local x=$((i+1))
    envs+=("BACKEND_${x}_URL=http://127.0.0.1:${SIM_PORTS[$i]}" "BACKEND_${x}_NAME=sim$x"
           "BACKEND_${x}_WEIGHT=$((TPMS[i] / 1000))")
    [ "$1" = smartlb-quota ] && envs+=("BACKEND_${x}_TPM=${TPMS[$i]}" QUOTA_WINDOW_SECONDS="$WINDOW")
  done
  [ -n "$GRACE" ] && envs+=(CAPACITY_GRACE_MS="$GRACE")
  if [ -n "$RESERVE$QUEUE" ]; then
    {
      printf 'priority_classes:\n  - name: interactive\n'
      [ -n "$QUEUE" ] && printf '    max_queue_seconds: %s\n' "$QUEUE"
      printf '  - name: batch\n'
      [ -n "$RESERVE" ] && printf '    reserve_percent: %s\n' "$RESERVE"
    } >"$TMP/classes.yaml"
    envs+=(CONFIG_FILE="$TMP/classes.yaml")
  fi
  env -i "${envs[@]}" "$SMARTLB" 2>"$OUT/$1-${2:-1}.log" &
  SYS_PID=$!; PIDS+=("$SYS_PID")
  wait_port "$SYS_PORT"
}

printf 'limiter\tsystem\tload\tbatch_share\tinteractive_sent\tinteractive_ok\tbatch_sent\tbatch_ok\tserved_pct\tupstream_429\tp99_ok_ms\n' \
  >"$OUT/summary.tsv"
for limiter in $LIMITERS; do
  SIM_PORTS=()
  for i in 0 1; do
    start_sim --name "sim$((i+1))" --limiter "$limiter" --window-seconds "$WINDOW" --stream-chunks 0 \
      --deployment "gpt-4o:${TPMS[$i]}"
    SIM_PORTS+=("$SIM_PORT")
  done
  for sys in $SYSTEMS; do
    runs=()
    for load in $LOADS; do runs+=("$load:$BATCH_SHARE"); done
    runs+=("$TOP_LOAD:0")
    for run in "${runs[@]}"; do
      load=${run%%:*}; share=${run##*:}
      RUN="$limiter-$sys-$load-$share"; base="$OUT/$RUN"
      rate=$(awk -v r="$CAP_RPS" -v l="$load" 'BEGIN{printf "%.3f", r*l/100}')
      sys_pids=()
      if [ "$REPLICAS" = 1 ]; then
        start_smartlb "$sys"; sys_pids+=("$SYS_PID")
        loads=("$SYS_PORT $rate $share")
      else  # interactive to replica 1, batch (or, in the "off" run, the same share unmarked) to replica 2
        start_smartlb "$sys" 1; sys_pids+=("$SYS_PID"); port1=$SYS_PORT
        start_smartlb "$sys" 2; sys_pids+=("$SYS_PID")
        sleep 1.5  # the replicas register (heartbeat) and learn how many they are
        loads=("$port1 $(awk -v r="$rate" -v s="$BATCH_SHARE" 'BEGIN{printf "%.3f", r*(1-s)}') 0"
               "$SYS_PORT $(awk -v r="$rate" -v s="$BATCH_SHARE" 'BEGIN{printf "%.3f", r*s}') $([ "$share" = 0 ] && echo 0 || echo 1)")
      fi
      for p in "${SIM_PORTS[@]}"; do curl -s -m 5 -X POST "http://127.0.0.1:$p/_sim/reset" >/dev/null; done
      loaders=()
      for n in "${!loads[@]}"; do
        read -r port r bs <<<"${loads[$n]}"
        node "$BENCH_DIR/tools/openloop.js" --url "http://127.0.0.1:$port$PATH_Q" --rate "$r" \
          --duration "$DURATION" --conns 256 --batch-share "$bs" --out "$base-$n.tsv" >"$base-$n.json" &
        loaders+=("$!")
      done
      for l in "${loaders[@]}"; do wait "$l"; done
      served=0; up429=0
      for p in "${SIM_PORTS[@]}"; do
        stats=$(curl -s -m 5 "http://127.0.0.1:$p/_sim/stats")
        served=$((served + $(jq '.tokens_served' <<<"$stats")))
        up429=$((up429 + $(jq '.by_status["429"] // 0' <<<"$stats")))
      done
      for p in "${sys_pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
      cap=$((CAP_TPM * DURATION / 60))
      # Without a batch share every request is interactive (the summary has no by_class).
      jq -s -r --arg limiter "$limiter" --arg sys "$sys" --arg load "$load" --arg share "$share" \
        --argjson served "$served" --argjson cap "$cap" --argjson up429 "$up429" \
        'map(.by_class // {interactive: {sent: .completed, ok: .ok}}) as $c |
         def sum(f): map(f // 0) | add;
         [$limiter, $sys, $load, $share, ($c|sum(.interactive.sent)), ($c|sum(.interactive.ok)),
          ($c|sum(.batch.sent)), ($c|sum(.batch.ok)), (100*$served/$cap*100|round/100), $up429,
          (map(.latency_ok_ms.p99 // 0)|max)] | @tsv' \
        "$base"-[0-9].json | tee -a "$OUT/summary.tsv"
    done
  done
  for p in "${PIDS[@]}"; do [ "$p" = "${REDIS_PID:-}" ] || kill "$p" 2>/dev/null || true; done
  PIDS=(${REDIS_PID:+"$REDIS_PID"})  # Redis serves every limiter's runs
done
echo "# $OUT/summary.tsv"
