#!/usr/bin/env bash
# Memory per pooled upstream connection, plain and HTTPS: smartlb (THREADS=1) in front of the
# fixed nginx backend, over http:// and then https:// (a local CA, certificate verified). wrk opens
# CONNS client connections for 4 s, so that about as many upstream connections open and stay
# pooled (idle) after it; smartlb's RSS is read before, and SETTLE s after (past its 10 s
# malloc_trim). Reports KiB per pooled connection = ΔRSS / Δ(upstream connections), which also
# counts what the CONNS closed client connections left in the heap. HEAPTRACK=1 runs smartlb under
# heaptrack too and prints its live heap by site at the end (kill -9 while pooled).
#
#   bench/upstream_memory.sh          (CONNS=250 SETTLE=12 SCHEMES="http https" HEAPTRACK=)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need wrk nginx openssl ss
CONNS=${CONNS:-250}
SETTLE=${SETTLE:-12}
SCHEMES=${SCHEMES:-http https}
STAMP=$(date +%Y%m%d-%H%M%S)
TSV="$RESULTS/upstream-memory-$STAMP.tsv"
mkdir -p "$RESULTS"
BPORT=$(free_port)
sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$BPORT|g" -e "s|@CT@|application/json|" \
  "$BENCH_DIR/conf/nginx-backend.conf.in" >"$TMP/nginx-backend.conf"
nginx -c "$TMP/nginx-backend.conf" -p "$TMP" &
PIDS+=($!)
wait_port "$BPORT"
start_tls_backend
upstreams() { ss -tnH state established "( dport = :$1 )" | wc -l; }
load() { wrk -t1 -c"$1" -d"$2"s -s "$BENCH_DIR/conf/chat.lua" "http://127.0.0.1:$SL_PORT/" >/dev/null; }
printf 'scheme\tconns\tupstream_before\tupstream_after\trss_before_kb\trss_after_kb\tper_pooled_kb\n' | tee "$TSV"
for scheme in $SCHEMES; do
  port=$BPORT url="http://127.0.0.1:$BPORT"
  [ "$scheme" = https ] && port=$TPORT url="https://localhost:$TPORT"
  SL_PORT=$(free_port)
  run=("$SMARTLB")
  [ -n "${HEAPTRACK:-}" ] && run=(heaptrack -o "$TMP/heap-$scheme" "$SMARTLB")
  env -i PATH="$PATH" PORT="$SL_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
    LOG_LEVEL=warn BACKEND_1_URL="$url" UPSTREAM_CA_FILE="$TMP/ca.pem" "${run[@]}" 2>"$TMP/smartlb-$scheme.log" >/dev/null &
  pid=$!; PIDS+=("$pid")
  wait_port "$SL_PORT" 30
  [ -n "${HEAPTRACK:-}" ] && pid=$(pgrep -f "^$SMARTLB" | tail -1)
  load 10 1
  sleep 1
  r0=$(rss_kb "$pid") u0=$(upstreams "$port")
  load "$CONNS" 4
  sleep "$SETTLE"
  r1=$(rss_kb "$pid") u1=$(upstreams "$port")
  awk -v s="$scheme" -v c="$CONNS" -v u0="$u0" -v u1="$u1" -v r0="$r0" -v r1="$r1" \
    'BEGIN { printf "%s\t%d\t%d\t%d\t%d\t%d\t%.1f\n", s, c, u0, u1, r0, r1, (u1 > u0 ? (r1 - r0) / (u1 - u0) : 0) }' | tee -a "$TSV"
  if [ -n "${HEAPTRACK:-}" ]; then
    kill -9 "$pid"; sleep 2
    heaptrack_print -f "$TMP/heap-$scheme".*zst --print-leaks 1 --print-peaks 0 --print-allocators 0 \
      --print-temporary 0 2>/dev/null | grep -A2 -E "^[0-9.]+[KMG]?B? leaked over [0-9]+ calls from$" | head -24
  else
    kill "$pid"
  fi
done
echo "results: $TSV"
