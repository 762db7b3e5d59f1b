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
# capacity instead of a 429; default: none). Output: bench/results/priority-classes-STAMP/summary.tsv.
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
  "reserve ${RESERVE:-default}; interactive queue ${QUEUE:-none}; load $(loadavg)"

start_smartlb() {  # start_smartlb SYSTEM
  SYS_PORT=$(free_port)
  local envs=(PATH="$PATH" PORT="$SYS_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 ACCESS_LOG=off LOG_LEVEL=error)
  for i in 0 1; do
    local x=$((i+1))
    envs+=("BACKEND_${x}_URL=http://127.0.0.1:${SIM_PORTS[$i]}" "BACKEND_${x}_NAME=sim$x"
           "BACKEND_${x}_WEIGHT=$((TPMS[i] / 1000))")
    [ "$1" = smartlb-quota ] && envs+=("BACKEND_${x}_TPM=${TPMS[$i]}" QUOTA_WINDOW_SECONDS="$WINDOW")
  done
  if [ -n "$RESERVE$QUEUE" ]; then
    {
      printf 'priority_classes:\n  - name: interactive\n'
      [ -n "$QUEUE" ] && printf '    max_queue_seconds: %s\n' "$QUEUE"
      printf '  - name: batch\n'
      [ -n "$RESERVE" ] && printf '    reserve_percent: %s\n' "$RESERVE"
    } >"$TMP/classes.yaml"
    envs+=(CONFIG_FILE="$TMP/classes.yaml")
  fi
  env -i "${envs[@]}" "$SMARTLB" 2>"$OUT/$1.log" &
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
      start_smartlb "$sys"
      for p in "${SIM_PORTS[@]}"; do curl -s -m 5 -X POST "http://127.0.0.1:$p/_sim/reset" >/dev/null; done
      rate=$(awk -v r="$CAP_RPS" -v l="$load" 'BEGIN{printf "%.3f", r*l/100}')
      base="$OUT/$limiter-$sys-$load-$share"
      node "$BENCH_DIR/tools/openloop.js" --url "http://127.0.0.1:$SYS_PORT$PATH_Q" --rate "$rate" \
        --duration "$DURATION" --conns 256 --batch-share "$share" --out "$base.tsv" >"$base.json"
      served=0; up429=0
      for p in "${SIM_PORTS[@]}"; do
        stats=$(curl -s -m 5 "http://127.0.0.1:$p/_sim/stats")
        served=$((served + $(jq '.tokens_served' <<<"$stats")))
        up429=$((up429 + $(jq '.by_status["429"] // 0' <<<"$stats")))
      done
      kill "$SYS_PID"; wait "$SYS_PID" 2>/dev/null || true
      cap=$((CAP_TPM * DURATION / 60))
      # Without a batch share every request is interactive (the summary has no by_class).
      jq -r --arg limiter "$limiter" --arg sys "$sys" --arg load "$load" --arg share "$share" \
        --argjson served "$served" --argjson cap "$cap" --argjson up429 "$up429" \
        '(.by_class // {interactive: {sent: .completed, ok: .ok}}) as $c |
         [$limiter, $sys, $load, $share, ($c.interactive.sent // 0), ($c.interactive.ok // 0),
          ($c.batch.sent // 0), ($c.batch.ok // 0), (100*$served/$cap*100|round/100), $up429, (.latency_ok_ms.p99 // 0)] | @tsv' \
        "$base.json" | tee -a "$OUT/summary.tsv"
    done
  done
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  PIDS=()
done
echo "# $OUT/summary.tsv"
