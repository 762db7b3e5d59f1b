#!/usr/bin/env bash
# Added latency per frame of a Realtime WebSocket session: one client (bench/tools/realtime_client.js)
# sends a text frame to smartlb-sim --realtime-echo and waits for its echo, 1,000 times (after
# 100 for warm-up): directly, through smartlb (one thread), and through nginx as a WebSocket
# proxy (one worker). Each round trip is one frame each way, so a proxy's added latency per
# round trip is its cost for two frames. RUNS sessions each; the median run's numbers. The
# client sends the sim's key everywhere (smartlb replaces it with its backend's anyway).
#
# Usage: bench/realtime.sh   (FRAMES=1000 RUNS=5; needs build-bench's smartlb and smartlb-sim,
#                             node with tests/e2e's node_modules, nginx)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need node nginx
FRAMES=${FRAMES:-1000}
RUNS=${RUNS:-5}
CLIENT="$BENCH_DIR/tools/realtime_client.js"
TARGET="/openai/v1/realtime?model=gpt-4o"

start_sim --realtime-echo --api-key sim-key --name echo

SPORT=$(free_port)
env -i PATH="$PATH" PORT="$SPORT" ADMIN_PORT=0 THREADS=1 LOG_LEVEL=warn ACCESS_LOG=off \
  BACKEND_1_URL="http://127.0.0.1:$SIM_PORT" BACKEND_1_APIKEY=sim-key "$SMARTLB" >"$TMP/smartlb.log" 2>&1 &
PIDS+=($!)
wait_port "$SPORT"

NPORT=$(free_port)
sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$NPORT|g" -e "s|@BACKEND_PORT@|$SIM_PORT|g" \
  "$BENCH_DIR/conf/nginx-websocket.conf.in" >"$TMP/nginx-ws.conf"
nginx -c "$TMP/nginx-ws.conf" -p "$TMP" -e "$TMP/nginx-ws.err" & PIDS+=($!)
wait_port "$NPORT"

# The median of RUNS sessions by p50, as "p50 p99".
measure() {
  local port=$1 i
  for ((i = 0; i < RUNS; i++)); do
    node "$CLIENT" --url "ws://127.0.0.1:$port$TARGET" --key sim-key --frames "$FRAMES" |
      node -e 'const j=JSON.parse(require("fs").readFileSync(0,"utf8"));console.log(j.p50_us.toFixed(1),j.p99_us.toFixed(1))'
  done | sort -n | sed -n "$(((RUNS + 1) / 2))p"
}

read -r d50 d99 <<<"$(measure "$SIM_PORT")"
read -r s50 s99 <<<"$(measure "$SPORT")"
read -r n50 n99 <<<"$(measure "$NPORT")"
printf '%-8s %14s %14s %18s %18s\n' path "rtt p50 (us)" "rtt p99 (us)" "added p50 (us)" "added p99 (us)"
printf '%-8s %14s %14s %18s %18s\n' direct "$d50" "$d99" - -
for row in "smartlb $s50 $s99" "nginx $n50 $n99"; do
  read -r name p50 p99 <<<"$row"
  printf '%-8s %14s %14s %18.1f %18.1f\n' "$name" "$p50" "$p99" "$(echo "$p50 - $d50" | bc -l)" "$(echo "$p99 - $d99" | bc -l)"
done
