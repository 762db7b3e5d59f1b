#!/usr/bin/env bash
# Scale-out (issue 16): 1 and 3 smartlb replicas in front of the same five smartlb-sim backends
# (declared TPM = the sims' real limits, as in bench/goodput.sh, windows of WINDOW seconds),
# one open-loop load at LOAD % of the aggregate quota, split over the replicas evenly or 3:1:1
# (one openloop.js per replica, at its share of the rate). With 3 replicas, REDIS_URL points at
# a redis-server this script starts: declared quotas are leased from it (docs/scale-out.md).
#
# Cases: 1 replica without Redis (the reference), 1 replica with Redis (what Redis costs
# in latency), 3 replicas with Redis spread evenly, 3 replicas with Redis spread 3:1:1.
# Reported per case: served share of capacity, goodput relative to the 1-replica case, client
# 200 / 429 / 5xx, upstream 429s per success (sims' 429s / client 200s), p99 of 200s (the worst
# replica's p99 when there are several).
#
# Usage: bench/scale_out.sh   (DURATION=60 LOAD=120 WINDOW=10 CASES="1 1-redis 3-even 3-311")
#   SCALE=N divides every TPM by N (a smoke run of the script on a debug build: SCALE=100).
#   MODE=reactive: no quota declared, the replicas route on the sims' x-ratelimit-remaining-*
#   reports (and share their cooldowns through Redis); MODE=declared (default): declared TPM.
#   LIMITER=fixed|sliding|bucket: the sims' limiter model (default fixed).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DURATION=${DURATION:-60}
LOAD=${LOAD:-120}
WINDOW=${WINDOW:-10}
CASES=${CASES:-1 1-redis 3-even 3-311}
MODE=${MODE:-declared}
LIMITER=${LIMITER:-fixed}
case $MODE in declared|reactive) ;; *) echo "MODE: declared or reactive" >&2; exit 2 ;; esac
need node curl jq redis-server
SCALE=${SCALE:-1}
TPMS=($((300000 / SCALE)) $((240000 / SCALE)) $((150000 / SCALE)) $((100000 / SCALE)) $((50000 / SCALE)))
PRIOS=(1 1 1 2 2)
REQ_TOKENS=200
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
STAMP=$(date +%Y%m%d-%H%M%S)
OUT="$RESULTS/scale-out-$STAMP"; mkdir -p "$OUT"

SIM_PORTS=(); SIM_PIDS=(); CAP_TPM=0
for i in 0 1 2 3 4; do
  start_sim --name "sim$((i+1))" --window-seconds "$WINDOW" --limiter "$LIMITER" --stream-chunks 0 \
    --deployment "gpt-4o:${TPMS[$i]}"
  SIM_PORTS+=("$SIM_PORT"); SIM_PIDS+=("$SIM_PID"); CAP_TPM=$((CAP_TPM + TPMS[i]))
done
CAP_TPS=$(awk -v t=$CAP_TPM 'BEGIN{print t/60}')
CAP_RPS=$(awk -v t=$CAP_TPS -v c=$REQ_TOKENS 'BEGIN{print t/c}')
RATE=$(awk -v r=$CAP_RPS -v l=$LOAD 'BEGIN{printf "%.3f", r*l/100}')
echo "# scale-out $STAMP: capacity $CAP_TPM TPM = $CAP_RPS req/s of $REQ_TOKENS tokens; load $LOAD % = $RATE req/s;" \
     "$LIMITER window ${WINDOW}s; $MODE; duration ${DURATION}s; loadavg $(loadavg)"

REDIS_PORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no >"$OUT/redis.log" 2>&1 &
PIDS+=("$!")
wait_port "$REDIS_PORT"

start_replica() {  # start_replica N WITH_REDIS: sets REP_PORT and REP_PID
  local n=$1 redis=$2
  REP_PORT=$(free_port)
  local envs=(PATH="$PATH" PORT="$REP_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 ACCESS_LOG=off LOG_LEVEL=warn
              REPLICA_ID="replica-$n")
  [ "$MODE" = declared ] && envs+=(QUOTA_WINDOW_SECONDS="$WINDOW")
  [ "$redis" = 1 ] && envs+=(REDIS_URL="redis://127.0.0.1:$REDIS_PORT" REDIS_KEY_PREFIX="bench-$STAMP-$CASE:")
  for i in 0 1 2 3 4; do
    local x=$((i+1))
    envs+=("BACKEND_${x}_URL=http://127.0.0.1:${SIM_PORTS[$i]}" "BACKEND_${x}_NAME=sim$x"
           "BACKEND_${x}_PRIORITY=${PRIOS[$i]}" "BACKEND_${x}_WEIGHT=$((TPMS[i] * SCALE / 1000))")
    [ "$MODE" = declared ] && envs+=("BACKEND_${x}_TPM=${TPMS[$i]}")
  done
  env -i "${envs[@]}" "$SMARTLB" 2>"$OUT/$CASE-replica-$n.log" &
  REP_PID=$!; PIDS+=("$REP_PID")
  wait_port "$REP_PORT"
}

printf 'case\treplicas\tspread\tserved_pct\tgoodput_vs_1\tok\tclient_429\tclient_5xx\tupstream_429\tupstream_429_per_ok\tp99_ok_ms\n' >"$OUT/summary.tsv"
BASE_SERVED=""
for CASE in $CASES; do
  case $CASE in
    1) shares=(1); redis=0 ;;
    1-redis) shares=(1); redis=1 ;;
    3-even) shares=(1 1 1); redis=1 ;;
    3-311) shares=(3 1 1); redis=1 ;;
    *) echo "unknown case $CASE" >&2; exit 2 ;;
  esac
  total_share=0; for s in "${shares[@]}"; do total_share=$((total_share + s)); done
  ports=(); pids=()
  for n in "${!shares[@]}"; do start_replica "$n" "$redis"; ports+=("$REP_PORT"); pids+=("$REP_PID"); done
  sleep 1.5  # the replicas register (heartbeat) and learn how many they are
  for p in "${SIM_PORTS[@]}"; do curl -s -X POST "http://127.0.0.1:$p/_sim/reset" >/dev/null; done
  loaders=()
  for n in "${!shares[@]}"; do
    r=$(awk -v r=$RATE -v s=${shares[$n]} -v t=$total_share 'BEGIN{printf "%.3f", r*s/t}')
    node "$BENCH_DIR/tools/openloop.js" --url "http://127.0.0.1:${ports[$n]}$PATH_Q" --rate "$r" \
      --duration "$DURATION" --conns 256 --out "$OUT/$CASE-$n.tsv" >"$OUT/$CASE-$n.json" &
    loaders+=("$!")
  done
  for l in "${loaders[@]}"; do wait "$l"; done
  served=0; up429=0
  for i in 0 1 2 3 4; do
    curl -s "http://127.0.0.1:${SIM_PORTS[$i]}/_sim/stats" >"$OUT/$CASE-sim$((i+1)).json"
    served=$((served + $(jq '.tokens_served' "$OUT/$CASE-sim$((i+1)).json")))
    up429=$((up429 + $(jq '.by_status["429"] // 0' "$OUT/$CASE-sim$((i+1)).json")))
  done
  for p in "${pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
  [ -n "$BASE_SERVED" ] || BASE_SERVED=$served
  jq -s -r --arg c "$CASE" --arg n "${#shares[@]}" --arg spread "$(IFS=:; echo "${shares[*]}")" \
    --argjson served "$served" --argjson base "$BASE_SERVED" --argjson up429 "$up429" \
    --argjson cap "$(awk -v t=$CAP_TPS -v d=$DURATION 'BEGIN{print t*d}')" \
    '(map(.ok)|add) as $ok | [$c, $n, $spread, (100*$served/$cap*100|round/100), ($served/$base*1000|round/1000),
      $ok, (map(.r429)|add), (map(.r5xx)|add), $up429, (if $ok>0 then ($up429/$ok*1000|round/1000) else "-" end),
      (map(.latency_ok_ms.p99)|max)] | @tsv' "$OUT/$CASE"-[0-9].json | tee -a "$OUT/summary.tsv" | sed 's/^/  /'
done
echo
echo "Summary (capacity $CAP_TPM TPM, load $LOAD %; goodput_vs_1 = tokens served / the first case's)"
column -t -s$'\t' "$OUT/summary.tsv"
echo "raw: $OUT"
