#!/usr/bin/env bash
# smartlb's memory per idle Realtime WebSocket session: SESSIONS sessions through smartlb
# (THREADS=1) to smartlb-sim --realtime-echo, each after one frame and its echo, then idle.
# Per session = (smartlb's RSS with them held - its RSS after one session came and went) /
# SESSIONS, from /proc/PID/status VmRSS. Each session holds two descriptors in smartlb (client
# and backend): mind the descriptor limit (ulimit -n).
#
# UPSTREAM=https: smartlb's backend is https://, nginx terminating TLS in front of the sim (lib.sh
# start_tls_front), certificate verified.
#
# Usage: bench/realtime_memory.sh   (SESSIONS="1000 4000" UPSTREAM=http|https; needs smartlb,
#                                    smartlb-sim and node with tests/e2e's node_modules)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need node
SESSIONS=${SESSIONS:-1000 4000}
HOLDER="$BENCH_DIR/tools/ws_holder.js"
TARGET="/openai/v1/realtime?model=gpt-4o"

start_sim --realtime-echo --api-key sim-key --name echo
UPSTREAM_ENV=(BACKEND_1_URL="http://127.0.0.1:$SIM_PORT")
if [ "${UPSTREAM:-http}" = https ]; then
  need nginx openssl
  start_tls_front "$SIM_PORT" nginx-websocket.conf.in
  UPSTREAM_ENV=(BACKEND_1_URL="https://localhost:$TPORT" UPSTREAM_CA_FILE="$TMP/ca.pem")
fi
port=$(free_port)
env -i PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off LOG_LEVEL=warn \
  "${UPSTREAM_ENV[@]}" BACKEND_1_APIKEY=sim-key "$SMARTLB" 2>"$TMP/smartlb.log" &
SL_PID=$!; PIDS+=("$SL_PID")
wait_port "$port"
fds() { find "/proc/$SL_PID/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
BASE_FDS=$(($(fds) + 2))  # (a pooled connection to the sim may stay)

# Holds N sessions; prints "RSS_KB open/echoed/failed" once they are idle.
hold() {
  local n=$1 out="$TMP/holder.$1" hp deadline
  node "$HOLDER" --url "ws://127.0.0.1:$port$TARGET" --key sim-key --count "$n" >"$out" 2>&1 &
  hp=$!
  deadline=$((SECONDS + 120))
  until grep -q READY "$out" 2>/dev/null; do
    [ $SECONDS -ge $deadline ] && { echo "holder did not get ready" >&2; kill "$hp"; return 1; }
    sleep 0.2
  done
  sleep 1
  echo "$(rss_kb "$SL_PID") $(grep READY "$out" | cut -d' ' -f2- | tr ' ' '/')"
  kill "$hp"; wait "$hp" 2>/dev/null || true
  # The sessions end in smartlb: its descriptors back to what it held before them.
  deadline=$((SECONDS + 30))
  until [ "$(fds)" -le "$BASE_FDS" ] || [ $SECONDS -ge $deadline ]; do sleep 0.05; done
}

read -r _ warm_ok < <(hold 1)
warm=$(rss_kb "$SL_PID")
printf 'sessions\trss_warm_kb\trss_held_kb\tper_session_kib\topen/echoed/failed\n'
for n in $SESSIONS; do
  read -r held ok < <(hold "$n")
  printf '%s\t%s\t%s\t%.1f\t%s\n' "$n" "$warm" "$held" "$(awk -v a="$held" -v b="$warm" -v n="$n" 'BEGIN{print (a-b)/n}')" "$ok"
done
echo "(warm-up session: $warm_ok; smartlb $(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo '?'))"
