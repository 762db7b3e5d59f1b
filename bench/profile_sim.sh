#!/usr/bin/env bash
# Instructions per request of smartlb (THREADS=1, callgrind: deterministic on a loaded machine)
# proxying to one smartlb-sim, whose answers carry x-ratelimit-remaining-* like Azure's. The
# sim's flags choose what it reports: by default a huge quota (plentiful reports); e.g.
# `--window-seconds 1 --deployment gpt-4o:3000000` keeps 50,000 tokens a window, a low report
# that smartlb watches, yet never reached at this rate. openloop.js sends RATE req/s for
# DURATION s after a 3 s warm-up; counters are zeroed after the warm-up.
#
# Usage: bench/profile_sim.sh [SIM FLAGS...]   (RATE=150 DURATION=10 SMARTLB=path)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need node valgrind callgrind_control callgrind_annotate jq
RATE=${RATE:-150}
DURATION=${DURATION:-10}
start_sim --name profile "$@"
SL_PORT=$(free_port)
env -i PATH="$PATH" PORT="$SL_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off LOG_LEVEL=warn \
  BACKEND_1_URL="http://127.0.0.1:$SIM_PORT" valgrind --tool=callgrind --callgrind-out-file="$TMP/callgrind.out" \
  "$SMARTLB" 2>>"$TMP/smartlb.log" >/dev/null &
SL_PID=$!; PIDS+=("$SL_PID")
wait_port "$SL_PORT" 60
U="http://127.0.0.1:$SL_PORT/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
node "$BENCH_DIR/tools/openloop.js" --url "$U" --rate 100 --duration 3 --conns 8 >/dev/null
callgrind_control -z "$SL_PID" >/dev/null
node "$BENCH_DIR/tools/openloop.js" --url "$U" --rate "$RATE" --duration "$DURATION" --conns 8 >"$TMP/run.json"
callgrind_control -d "$SL_PID" >/dev/null
DUMP=$(ls -t "$TMP"/callgrind.out.* | head -1)
OK=$(jq '.ok' "$TMP/run.json")
IR=$(callgrind_annotate "$DUMP" 2>/dev/null | grep -m1 "PROGRAM TOTALS" | awk '{gsub(",", "", $1); print $1}')
mkdir -p "$RESULTS"; cp "$DUMP" "$RESULTS/profile_sim-$(date +%Y%m%d-%H%M%S).callgrind"
echo "requests ok: $OK (others: $(jq -c '{r429, r5xx, transport_errors}' "$TMP/run.json"))"
echo "instructions per request: $((IR / OK))"
