#!/usr/bin/env bash
# Drain under load (docs/operations.md): two smartlb-sim backends, sim-a and sim-b, behind one
# smartlb; an open-loop RATE (default 500 requests/s, tools/openloop.js) and STREAMS (default
# 100) streams kept open at all times (tools/stream_keeper.js; each stream 2 s: 20 events
# 100 ms apart, longer under load) for DURATION seconds (default 30). At DRAIN_AT (default 10 s) sim-a is drained
# through the admin API with a write token, at ENABLE_AT (default 20 s) it is enabled again.
#
# Reports, and fails (exit 1) unless each holds:
#   lost requests   requests not answered 200 (any other status, a reset, a timeout): 0
#   lost streams    streams not answered 200, or ended without "data: [DONE]": 0
#   while drained   attempts smartlb sent to sim-a from "drained" to just before the enable
#                   (/status backends[].attempts): 0. What was in flight at the drain
#                   finishes there; a load generator's own queue makes its send times
#                   unreliable under overload, so the count is smartlb's.
#   drained         the admin API said "draining" then "drained" once sim-a's last request
#                   and stream ended (the time it took is printed)
#   back            smartlb sends to sim-a again after the enable (attempts after it > 0)
#
# Knobs: RATE, STREAMS, DURATION, DRAIN_AT, ENABLE_AT, THREADS (smartlb's, default 2),
# BUILD / SMARTLB / SIM (lib.sh; a Debug ASan build works at these rates).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need node curl jq

RATE=${RATE:-500}
STREAMS=${STREAMS:-100}
DURATION=${DURATION:-30}
DRAIN_AT=${DRAIN_AT:-10}
ENABLE_AT=${ENABLE_AT:-20}
THREADS=${THREADS:-2}
TOKEN="bench-drain-write-token-0123456789"
OUT="$RESULTS/drain-$(date +%Y%m%d-%H%M%S)"
mkdir -p "$OUT"
[ -x "$SMARTLB" ] && [ -x "$SIM" ] || { echo "missing $SMARTLB or $SIM (build the targets smartlb smartlb-sim)" >&2; exit 2; }

SIM_ARGS=(--stream-chunks 20 --chunk-interval-ms 100 --latency-ms 5)
start_sim "${SIM_ARGS[@]}"; PA=$SIM_PORT
start_sim "${SIM_ARGS[@]}"; PB=$SIM_PORT
SL_PORT=$(free_port); ADMIN=$(free_port)
env -i PATH="$PATH" PORT="$SL_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT="$ADMIN" ACCESS_LOG=off THREADS="$THREADS" \
  ADMIN_TOKENS="write:$TOKEN" \
  BACKEND_1_URL="http://127.0.0.1:$PA" BACKEND_1_NAME=sim-a \
  BACKEND_2_URL="http://127.0.0.1:$PB" BACKEND_2_NAME=sim-b \
  "$SMARTLB" >"$OUT/smartlb.log" 2>&1 &
PIDS+=("$!")
wait_port "$SL_PORT"; wait_port "$ADMIN"

URL="http://127.0.0.1:$SL_PORT/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"
admin() {  # admin METHOD PATH: the admin API's answer
  curl -sS -X "$1" -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$ADMIN$2"
}
ms_now() { date +%s%3N; }
attempts_a() { admin GET /status | jq '.backends[] | select(.name == "sim-a") | .attempts'; }

T0=$(ms_now)
node "$BENCH_DIR/tools/openloop.js" --url "$URL" --rate "$RATE" --duration "$DURATION" --conns 256 \
  --max-tokens 20 --out "$OUT/requests.tsv" >"$OUT/requests.json" &
LOAD_PID=$!; PIDS+=("$LOAD_PID")
node "$BENCH_DIR/tools/stream_keeper.js" --url "$URL" --streams "$STREAMS" --duration "$DURATION" \
  --out "$OUT/streams.tsv" >"$OUT/streams.json" &
STREAM_PID=$!; PIDS+=("$STREAM_PID")

sleep "$DRAIN_AT"
DRAIN_ANSWER=$(admin POST /admin/backends/sim-a/drain)
DRAINED_AT_MS=$(( $(ms_now) - T0 ))
echo "drain:  $DRAIN_ANSWER" | tee "$OUT/admin.log"
# Draining until the last request and stream on sim-a end: watch the state (bounded).
FIRST_STATE=$(jq -r .state <<<"$DRAIN_ANSWER"); STATE=$FIRST_STATE; DRAINED_MS=""
deadline=$((SECONDS + ENABLE_AT - DRAIN_AT))
while [ $SECONDS -lt $deadline ]; do
  STATE=$(admin GET /admin/backends/sim-a | jq -r .state)
  if [ "$STATE" = drained ]; then
    DRAINED_MS=$(( $(ms_now) - T0 - DRAINED_AT_MS )); ATTEMPTS_DRAINED=$(attempts_a); break
  fi
  sleep 0.1
done
echo "state after the drain: $FIRST_STATE, then $STATE${DRAINED_MS:+ after $DRAINED_MS ms}" | tee -a "$OUT/admin.log"
sleep $(( deadline - SECONDS > 0 ? deadline - SECONDS : 0 ))
ATTEMPTS_BEFORE_ENABLE=$(attempts_a)
ENABLE_ANSWER=$(admin POST /admin/backends/sim-a/enable)
echo "enable: $ENABLE_ANSWER" | tee -a "$OUT/admin.log"
wait "$LOAD_PID" "$STREAM_PID"
ATTEMPTS_END=$(attempts_a)
SENT_WHILE_DRAINED=$(( ATTEMPTS_BEFORE_ENABLE - ${ATTEMPTS_DRAINED:-0} ))
SENT_AFTER_ENABLE=$(( ATTEMPTS_END - ATTEMPTS_BEFORE_ENABLE ))

LOST_REQ=$(awk -F'\t' 'NR > 1 && $3 != 200 { n++ } END { print n + 0 }' "$OUT/requests.tsv")
LOST_STREAMS=$(awk -F'\t' 'NR > 1 && ($3 != 200 || $5 != 1) { n++ } END { print n + 0 }' "$OUT/streams.tsv")
REQ_TOTAL=$(($(wc -l <"$OUT/requests.tsv") - 1)); STREAMS_TOTAL=$(($(wc -l <"$OUT/streams.tsv") - 1))

{
  echo "drain under load: RATE=$RATE req/s, STREAMS=$STREAMS, DURATION=$DURATION s, drain at ${DRAIN_AT} s, enable at ${ENABLE_AT} s"
  echo "smartlb $SMARTLB (THREADS=$THREADS), load average $(loadavg)"
  printf '%-34s %10s %10s\n' "" requests streams
  printf '%-34s %10s %10s\n' "total" "$REQ_TOTAL" "$STREAMS_TOTAL"
  printf '%-34s %10s %10s\n' "lost (must be 0)" "$LOST_REQ" "$LOST_STREAMS"
  echo "attempts smartlb sent to sim-a while drained (must be 0): $SENT_WHILE_DRAINED; after the enable: $SENT_AFTER_ENABLE"
  echo "drain answered \"$FIRST_STATE\"; \"drained\" $([ -n "$DRAINED_MS" ] && echo "after $DRAINED_MS ms" || echo never)"
  echo "requests: $(cat "$OUT/requests.json")"
  echo "streams:  $(cat "$OUT/streams.json")"
} | tee "$OUT/summary.txt"

ok=1
[ "$LOST_REQ" -eq 0 ] && [ "$LOST_STREAMS" -eq 0 ] || ok=0
[ -n "$DRAINED_MS" ] && [ "$SENT_WHILE_DRAINED" -eq 0 ] || ok=0
[ "$SENT_AFTER_ENABLE" -gt 0 ] || ok=0
if [ $ok = 1 ]; then echo "PASS ($OUT)"; else echo "FAIL ($OUT)"; exit 1; fi
