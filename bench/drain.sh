#!/usr/bin/env bash
# Drain under load (docs/operations.md): two smartlb-sim backends, sim-a and sim-b, behind one
# smartlb; an open-loop RATE (default 500 requests/s, tools/openloop.js) and STREAMS (default
# 100) streams kept open at all times (tools/stream_keeper.js; each stream 5 s: 50 events
# 100 ms apart) for DURATION seconds (default 30). At DRAIN_AT (default 10 s) sim-a is drained
# through the admin API with a write token, at ENABLE_AT (default 20 s) it is enabled again.
#
# Reports, and fails (exit 1) unless each holds:
#   lost requests   requests not answered 200 (any other status, a reset, a timeout): 0
#   lost streams    streams not answered 200, or ended without "data: [DONE]": 0
#   after the drain  requests and streams *started* on sim-a between the drain's answer and
#                   the enable: 0 (what was in flight at the drain finishes there)
#   drained          the admin API said "draining" then "drained" once sim-a's last stream
#                   ended (the time it took is printed)
#   back             sim-a serves again after the enable (its share of the last seconds)
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

SIM_ARGS=(--stream-chunks 50 --chunk-interval-ms 100 --latency-ms 5)
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
  if [ "$STATE" = drained ]; then DRAINED_MS=$(( $(ms_now) - T0 - DRAINED_AT_MS )); break; fi
  sleep 0.1
done
echo "state after the drain: $FIRST_STATE, then $STATE${DRAINED_MS:+ after $DRAINED_MS ms}" | tee -a "$OUT/admin.log"
sleep $(( deadline - SECONDS > 0 ? deadline - SECONDS : 0 ))
ENABLE_ANSWER=$(admin POST /admin/backends/sim-a/enable)
ENABLED_AT_MS=$(( $(ms_now) - T0 ))
echo "enable: $ENABLE_ANSWER" | tee -a "$OUT/admin.log"
wait "$LOAD_PID" "$STREAM_PID"

# The load tools' clocks start a few ms after T0: a margin of 200 ms around each change.
read -r LOST_REQ REQ_AFTER_DRAIN REQ_BACK REQ_TOTAL < <(awk -F'\t' -v d="$DRAINED_AT_MS" -v e="$ENABLED_AT_MS" '
  NR > 1 { n++; if ($3 != 200) lost++;
           if ($5 == "sim-a" && $2 > d + 200 && $2 < e - 200) after++;
           if ($5 == "sim-a" && $2 > e + 200) back++ }
  END { print lost + 0, after + 0, back + 0, n + 0 }' "$OUT/requests.tsv")
read -r LOST_STREAMS STREAMS_AFTER_DRAIN STREAMS_BACK STREAMS_TOTAL < <(awk -F'\t' -v d="$DRAINED_AT_MS" -v e="$ENABLED_AT_MS" '
  NR > 1 { n++; if ($3 != 200 || $5 != 1) lost++;
           if ($4 == "sim-a" && $1 > d + 200 && $1 < e - 200) after++;
           if ($4 == "sim-a" && $1 > e + 200) back++ }
  END { print lost + 0, after + 0, back + 0, n + 0 }' "$OUT/streams.tsv")

{
  echo "drain under load: RATE=$RATE req/s, STREAMS=$STREAMS, DURATION=$DURATION s, drain at ${DRAIN_AT} s, enable at ${ENABLE_AT} s"
  echo "smartlb $SMARTLB (THREADS=$THREADS), load average $(loadavg)"
  printf '%-34s %10s %10s\n' "" requests streams
  printf '%-34s %10s %10s\n' "total" "$REQ_TOTAL" "$STREAMS_TOTAL"
  printf '%-34s %10s %10s\n' "lost (must be 0)" "$LOST_REQ" "$LOST_STREAMS"
  printf '%-34s %10s %10s\n' "started on sim-a while drained" "$REQ_AFTER_DRAIN" "$STREAMS_AFTER_DRAIN"
  printf '%-34s %10s %10s\n' "started on sim-a after enable" "$REQ_BACK" "$STREAMS_BACK"
  echo "drain answered \"$FIRST_STATE\"; \"drained\" ${DRAINED_MS:+after $DRAINED_MS ms}${DRAINED_MS:-never}"
  echo "requests: $(cat "$OUT/requests.json")"
  echo "streams:  $(cat "$OUT/streams.json")"
} | tee "$OUT/summary.txt"

ok=1
[ "$LOST_REQ" -eq 0 ] && [ "$LOST_STREAMS" -eq 0 ] || ok=0
[ "$REQ_AFTER_DRAIN" -eq 0 ] && [ "$STREAMS_AFTER_DRAIN" -eq 0 ] || ok=0
[ -n "$DRAINED_MS" ] || ok=0
[ "$REQ_BACK" -gt 0 ] || ok=0
if [ $ok = 1 ]; then echo "PASS ($OUT)"; else echo "FAIL ($OUT)"; exit 1; fi
