#!/usr/bin/env bash
# Instruction profile of smartlb's request path under callgrind (deterministic: counts
# instructions, so it is meaningful on a loaded machine), plus syscalls per request (strace -c).
# smartlb (THREADS=1, ACCESS_LOG=off) proxies to the fixed nginx backend; wrk drives it.
# Counters are zeroed after a warm-up and dumped after the measured run, so start-up is
# excluded; the totals are divided by the requests wrk completed.
#
# MODE=sse profiles the streaming relay instead: tools/sse_backend.js (200 events 10 ms apart),
# 50 streams from tools/sse_client.js; instructions (and then syscalls, the same streams under
# strace) are divided by the events relayed.
#
# Usage: bench/profile.sh   (MODE=http|sse  DURATION=20 CONNS=16 ; BACKEND_CT=text/plain makes the backend answer
#                            a non-JSON type, which turns the usage sniffer off (A/B of its cost); EXTRA_ENV="ACCESS_LOG=on" to profile with
#                            the access log; SMARTLB=path to profile another build)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need wrk nginx valgrind callgrind_annotate strace
DURATION=${DURATION:-20}
CONNS=${CONNS:-16}
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
STAMP=$(date +%Y%m%d-%H%M%S)
OUT="$RESULTS/profile-$STAMP"; mkdir -p "$OUT"

if [ "${MODE:-http}" = sse ]; then
  need node
  node "$BENCH_DIR/tools/sse_backend.js" --port 0 --events 200 --interval-ms 10 >"$TMP/sse.out" & PIDS+=($!)
  until grep -q listening "$TMP/sse.out" 2>/dev/null; do sleep 0.05; done
  SSE_PORT=$(sed -E 's/.*:([0-9]+)$/\1/' "$TMP/sse.out")
  SL_PORT=$(free_port)
  env -i PATH="$PATH" PORT="$SL_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off LOG_LEVEL=warn \
    BACKEND_1_URL="http://127.0.0.1:$SSE_PORT" valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" \
    "$SMARTLB" 2>>"$OUT/smartlb.log" >/dev/null &
  SL_PID=$!; PIDS+=("$SL_PID")
  wait_port "$SL_PORT" 60
  U="http://127.0.0.1:$SL_PORT/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
  node "$BENCH_DIR/tools/sse_client.js" --url "$U" --streams 20 --timeout-s 60 >/dev/null
  callgrind_control -z "$SL_PID" >/dev/null
  node "$BENCH_DIR/tools/sse_client.js" --url "$U" --streams 50 --timeout-s 90 >"$OUT/sse-client.json"
  callgrind_control -d "$SL_PID" >/dev/null
  EVENTS=$(jq '.events + 2 * .streams' "$OUT/sse-client.json")  # + the 2 skipped per stream
  DUMP=$(ls -t "$OUT"/callgrind.out.* | head -1)
  callgrind_annotate --threshold=100 --inclusive=no "$DUMP" >"$OUT/self.txt" 2>/dev/null
  echo "SSE relay: $EVENTS events (50 streams); self instructions per event by category:"
  awk -v reqs="$EVENTS" -f "$BENCH_DIR/tools/callgrind_categories.awk" "$OUT/self.txt" | sed 's/per request/per event/'
  kill -INT "$SL_PID" 2>/dev/null; wait "$SL_PID" 2>/dev/null || true
  # The same 50 streams through smartlb under strace -c: syscalls per relayed event.
  SL_PORT=$(free_port)
  env -i PATH="$PATH" PORT="$SL_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off LOG_LEVEL=warn \
    BACKEND_1_URL="http://127.0.0.1:$SSE_PORT" strace -c -f -o "$OUT/strace.txt" "$SMARTLB" 2>>"$OUT/smartlb.log" >/dev/null &
  SL_PID=$!; PIDS+=("$SL_PID")
  wait_port "$SL_PORT" 60
  U="http://127.0.0.1:$SL_PORT/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
  node "$BENCH_DIR/tools/sse_client.js" --url "$U" --streams 50 --timeout-s 90 >"$OUT/sse-strace.json"
  kill -INT $(pgrep -P "$SL_PID") 2>/dev/null || kill -INT "$SL_PID"; wait "$SL_PID" 2>/dev/null || true; sleep 0.5
  SEVENTS=$(jq '.events + 2 * .streams' "$OUT/sse-strace.json")
  echo "syscalls per relayed event (strace -c, $SEVENTS events, 50 streams):"
  awk -v n="$SEVENTS" '$1 ~ /^[0-9.]+$/ && NF>=5 {name=$NF; calls=$4; printf "  %-16s %6.2f\n", name, calls/n}' "$OUT/strace.txt" | sort -k2 -nr | head -8 || true
  echo "raw: $OUT"
  exit 0
fi

BPORT=$(free_port)
sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$BPORT|g" -e "s|@CT@|${BACKEND_CT:-application/json}|g" "$BENCH_DIR/conf/nginx-backend.conf.in" >"$TMP/nb.conf"
nginx -c "$TMP/nb.conf" -p "$TMP" -e "$TMP/nb.err" & PIDS+=($!)
wait_port "$BPORT"

run_smartlb() {  # run_smartlb WRAPPER... ; sets SL_PID SL_PORT
  SL_PORT=$(free_port)
  env -i PATH="$PATH" PORT="$SL_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
    LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" BACKEND_1_NAME=fast ${EXTRA_ENV:-} \
    "$@" "$SMARTLB" 2>>"$OUT/smartlb.log" >/dev/null &
  SL_PID=$!; PIDS+=("$SL_PID")
  wait_port "$SL_PORT" 60
}
drive() { wrk -t1 -c"$CONNS" -d"$1s" -s "$BENCH_DIR/conf/chat.lua" "http://127.0.0.1:$SL_PORT$PATH_Q"; }

# 1. callgrind
run_smartlb valgrind --tool=callgrind --callgrind-out-file="$OUT/callgrind.out" --dump-instr=no
drive 3 >/dev/null
callgrind_control -z "$SL_PID" >/dev/null
drive "$DURATION" >"$OUT/wrk-callgrind.txt"
callgrind_control -d "$SL_PID" >/dev/null
REQS=$(awk '/requests in/{print $1}' "$OUT/wrk-callgrind.txt")
kill "$SL_PID"; wait "$SL_PID" 2>/dev/null || true
DUMP=$(ls -t "$OUT"/callgrind.out.* | head -1)
TOTAL=$(callgrind_annotate "$DUMP" 2>/dev/null | awk '/PROGRAM TOTALS/{gsub(/,/,"",$1); print $1}')
echo "callgrind: $REQS requests, $TOTAL instructions, $((TOTAL / REQS)) instructions/request"
callgrind_annotate --threshold=100 --inclusive=no "$DUMP" >"$OUT/self.txt" 2>/dev/null
callgrind_annotate --inclusive=yes "$DUMP" >"$OUT/inclusive.txt" 2>/dev/null
echo "self instructions per request by category:"
awk -v reqs="$REQS" -f "$BENCH_DIR/tools/callgrind_categories.awk" "$OUT/self.txt" | tee "$OUT/categories.txt"
echo "top functions by self instructions (per request):"
awk -v n="$REQS" '/^ *[0-9,]+ +\( *[0-9.]+%\)/ && !/PROGRAM TOTALS/ {p=$2; gsub(/[(%)]/,"",p); if (p+0>=50) next; x=$1; gsub(/,/,"",x); $1=""; $2=""; printf "%8d  %s\n", x/n, substr($0,1,160); if (++c>=30) exit}' "$OUT/self.txt"

# 2. syscalls per request
run_smartlb strace -c -f -o "$OUT/strace.txt"
drive 2 >"$OUT/wrk-strace-warmup.txt"   # strace counts the warm-up too
drive "$DURATION" >"$OUT/wrk-strace.txt"
# SIGINT to smartlb itself (strace does not pass it on); strace writes its counts when it exits.
kill -INT $(pgrep -P "$SL_PID") 2>/dev/null || kill -INT "$SL_PID"; wait "$SL_PID" 2>/dev/null || true; sleep 0.5
SREQS=$(cat "$OUT"/wrk-strace-warmup.txt "$OUT"/wrk-strace.txt | awk '/requests in/{n+=$1} END{print n}')
echo "syscalls per request (strace -c, $SREQS requests):"
awk -v n="$SREQS" '$1 ~ /^[0-9.]+$/ && NF>=5 {name=$NF; calls=$4; printf "  %-16s %6.2f\n", name, calls/n}' "$OUT/strace.txt" | sort -k2 -nr | head -15 || true
echo "raw: $OUT"
