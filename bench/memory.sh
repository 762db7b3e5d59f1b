#!/usr/bin/env bash
# smartlb memory: idle RSS, RSS per idle keep-alive client connection, RSS with 10,000 open
# connections. Backend: smartlb-sim. Each held connection has carried one request (so it is an
# idle keep-alive connection, with its read buffer grown) unless REQUEST=0; PROMPT_BYTES=65536
# makes that request a long prompt's (what a connection keeps of a large request between requests).
# RSS from /proc/PID/status VmRSS. Run for THREADS=1 and THREADS=2 (one worker per core here).
#
# Usage: bench/memory.sh   (THREAD_COUNTS="1 2"  SMALL=1000  LARGE=10000  REQUEST=1  PROMPT_BYTES=)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need node
THREAD_COUNTS=${THREAD_COUNTS:-1 2}
SMALL=${SMALL:-1000}
LARGE=${LARGE:-10000}
REQUEST=${REQUEST:-1}
PROMPT_BYTES=${PROMPT_BYTES:-}  # empty: hold_conns.js's short request
STAMP=$(date +%Y%m%d-%H%M%S)
TSV="$RESULTS/memory-$STAMP.tsv"
[ "$(ulimit -n)" -ge $((LARGE + 1000)) ] || { echo "ulimit -n $(ulimit -n) is too low for $LARGE connections" >&2; exit 2; }

start_sim --name mem --threads 1
echo "# memory $STAMP prompt_bytes=${PROMPT_BYTES:-short} load $(loadavg)" | tee "$TSV"
printf 'threads\tidle_kb\tafter_1_request_kb\tconns_small\trss_small_kb\tper_conn_small_kb\tconns_large\trss_large_kb\tper_conn_large_kb\topen_ok\n' | tee -a "$TSV"

hold() {  # hold PORT N -> prints the RSS (KiB) of $SL_PID while N connections are held
  local port=$1 n=$2 out="$TMP/hold.$RANDOM"
  node "$BENCH_DIR/tools/hold_conns.js" --port "$port" --conns "$n" --request "$REQUEST" ${PROMPT_BYTES:+--prompt-bytes "$PROMPT_BYTES"} --hold-s 120 >"$out" &
  local hp=$!; PIDS+=("$hp")
  local deadline=$((SECONDS + 90))
  until grep -q READY "$out" 2>/dev/null; do
    [ $SECONDS -ge $deadline ] && { echo "holder did not get ready" >&2; return 1; }
    sleep 0.2
  done
  sleep 1
  echo "$(rss_kb "$SL_PID") $(cut -d' ' -f2- "$out" | tr ' ' '/')"
  kill "$hp"; wait "$hp" 2>/dev/null || true
  sleep 1
}

for th in $THREAD_COUNTS; do
  port=$(free_port)
  env -i PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS="$th" ACCESS_LOG=off LOG_LEVEL=warn \
    BACKEND_1_URL="http://127.0.0.1:$SIM_PORT" "$SMARTLB" 2>"$TMP/smartlb.log" &
  SL_PID=$!; PIDS+=("$SL_PID")
  wait_port "$port"; sleep 1
  idle=$(rss_kb "$SL_PID")
  curl -s -o /dev/null -H 'content-type: application/json' -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":10}' \
    "http://127.0.0.1:$port/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
  sleep 0.5
  warm=$(rss_kb "$SL_PID")
  read -r small small_ok < <(hold "$port" "$SMALL")
  read -r large large_ok < <(hold "$port" "$LARGE")
  printf '%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%s\t%.1f\t%s\n' "$th" "$idle" "$warm" "$SMALL" "$small" \
    "$(awk -v a="$small" -v b="$warm" -v n="$SMALL" 'BEGIN{print (a-b)/n}')" "$LARGE" "$large" \
    "$(awk -v a="$large" -v b="$warm" -v n="$LARGE" 'BEGIN{print (a-b)/n}')" "$small_ok,$large_ok" | tee -a "$TSV"
  kill "$SL_PID"; wait "$SL_PID" 2>/dev/null || true
done
echo
echo "Summary (KiB; per_conn = (RSS with N held - RSS after one request) / N; open_ok = open/200-answers/failed)"
column -t -s$'\t' <(tail -n +2 "$TSV")
echo "raw: $TSV"
