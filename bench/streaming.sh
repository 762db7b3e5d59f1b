#!/usr/bin/env bash
# Streaming: N concurrent SSE streams (default 1,000), each event stamped with its send time
# by the backend (CLOCK_MONOTONIC); the client records arrival - send for every event.
# TOOLS=cpp (default): backend and client are build-bench/bench/sse_load (C++, single thread);
# TOOLS=node: tools/sse_backend.js and tools/sse_client.js (same protocol, ~7x the CPU per
# event, so on 2 cores the proxy's events also wait for a core the Node processes hold). Interleaved runs: straight to the backend, then
# through smartlb (THREADS=1, ACCESS_LOG=off). Added delay per event = through-proxy
# percentile - direct percentile (both include the Node client's and backend's own delays).
# The first event of each stream is also measured apart (first_p50_ms, first_p99_ms; TOOLS=cpp
# only): smartlb holds a stream's start back until its first event (STREAM_HOLDBACK_BYTES).
# Memory per stream = (smartlb RSS with all N streams open - RSS before) / N. PROMPT_BYTES=32768
# sends each stream's request with a prompt that long (TOOLS=cpp; default a short one). RSS is
# sampled again RSS_LATER_S (3) s after all are open: rss_later_per_stream_kb (past smartlb's
# periodic malloc_trim with RSS_LATER_S=12, what its streams hold once their memory is reused).
#
# PROXIES="smartlb haproxy nginx" adds the peers on the same path (haproxy one thread with
# http-no-delay, else it corks SSE events for up to 200 ms; nginx one worker with proxy_buffering
# off; both plain reverse proxies): the same added delay, memory and
# CPU per relayed event (proxy_cpu_s / events; proxy_user_s its user-space part).
# These machines cap open files at 20,000 per process: a proxy holds two per stream, so
# STREAMS tops out near 9,900.
#
# UPSTREAM=https: smartlb's backend is https:// (Azure OpenAI always is): nginx terminates TLS in
# front of the same backend (lib.sh start_tls_front), certificate verified. The direct path and
# the peers stay plain, so the added delay then includes nginx's hop; memory and CPU are
# smartlb's own.
#
# Usage: bench/streaming.sh   (STREAMS=1000  EVENTS=100  INTERVAL_MS=100  REPS=2  THREADS=1
#                              UPSTREAM=http|https
#                              PROXIES=smartlb  TOOLS=cpp|node
#                              PIN=1: smartlb alone on core 1, the backend and client on core 0,
#                              so the proxy does not wait for a CPU the load tools hold)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
TOOLS=${TOOLS:-cpp}
SSE_LOAD=${SSE_LOAD:-$BUILD/bench/sse_load}
if [ "$TOOLS" = node ]; then
  need node
  SSE_BACKEND=(node "$BENCH_DIR/tools/sse_backend.js"); SSE_CLIENT=(node "$BENCH_DIR/tools/sse_client.js")
else
  [ -x "$SSE_LOAD" ] || { echo "missing $SSE_LOAD: cmake --build $BUILD --target sse_load" >&2; exit 2; }
  SSE_BACKEND=("$SSE_LOAD" backend); SSE_CLIENT=("$SSE_LOAD" client)
fi
STREAMS=${STREAMS:-1000}
EVENTS=${EVENTS:-100}
INTERVAL_MS=${INTERVAL_MS:-100}
REPS=${REPS:-2}
SL_THREADS=${THREADS:-1}
LOAD_PIN=(); PROXY_PIN=()
if [ "${PIN:-0}" = 1 ]; then need taskset; LOAD_PIN=(taskset -c 0); PROXY_PIN=(taskset -c 1); fi
STAMP=$(date +%Y%m%d-%H%M%S)
TSV="$RESULTS/streaming-$STAMP.tsv"
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"

"${LOAD_PIN[@]}" "${SSE_BACKEND[@]}" --port 0 --events "$EVENTS" --interval-ms "$INTERVAL_MS" >"$TMP/sse.out" &
PIDS+=($!)
until grep -q listening "$TMP/sse.out" 2>/dev/null; do sleep 0.05; done
BPORT=$(sed -E 's/.*:([0-9]+)$/\1/' "$TMP/sse.out")
UPSTREAM=${UPSTREAM:-http}
UPSTREAM_ENV=(BACKEND_1_URL="http://127.0.0.1:$BPORT")
if [ "$UPSTREAM" = https ]; then
  need nginx openssl
  start_tls_front "$BPORT"
  UPSTREAM_ENV=(BACKEND_1_URL="https://localhost:$TPORT" UPSTREAM_CA_FILE="$TMP/ca.pem")
fi
SL_PORT=$(free_port)
env -i PATH="$PATH" PORT="$SL_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS="$SL_THREADS" ACCESS_LOG=off LOG_LEVEL=warn \
  "${UPSTREAM_ENV[@]}" "${PROXY_PIN[@]}" "$SMARTLB" 2>"$TMP/smartlb.log" &
SL_PID=$!; PIDS+=("$SL_PID")
wait_port "$SL_PORT"
PROXIES=${PROXIES:-smartlb}
declare -A PORT=([direct]=$BPORT [smartlb]=$SL_PORT) PROCS=([direct]="" [smartlb]=$SL_PID) RSS_PID=([smartlb]=$SL_PID)
subst() { sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$2|g" -e "s|@BACKEND_PORT@|${3:-}|g" "$1"; }
case " $PROXIES " in *" haproxy "*)
  need haproxy
  HA_PORT=$(free_port)
  subst "$BENCH_DIR/conf/haproxy.cfg.in" "$HA_PORT" "$BPORT" | sed -e 's/maxconn 9000/maxconn 9950/g' \
    -e 's/^  option http-keep-alive$/  option http-keep-alive\n  option http-no-delay/' >"$TMP/haproxy.cfg"
  "${PROXY_PIN[@]}" haproxy -db -f "$TMP/haproxy.cfg" 2>"$TMP/haproxy.log" &
  HA_PID=$!; PIDS+=("$HA_PID"); wait_port "$HA_PORT"
  PORT[haproxy]=$HA_PORT; PROCS[haproxy]=$HA_PID; RSS_PID[haproxy]=$HA_PID ;;
esac
case " $PROXIES " in *" nginx "*)
  need nginx
  NG_PORT=$(free_port)
  subst "$BENCH_DIR/conf/nginx-proxy.conf.in" "$NG_PORT" "$BPORT" |
    sed -e 's|^worker_processes 1;|worker_processes 1;\nworker_rlimit_nofile 20000;|' \
        -e 's|proxy_pass http://backend;|proxy_pass http://backend; proxy_buffering off;|' >"$TMP/nginx-proxy.conf"
  "${PROXY_PIN[@]}" nginx -c "$TMP/nginx-proxy.conf" -p "$TMP" &
  NG_PID=$!; PIDS+=("$NG_PID"); wait_port "$NG_PORT"; sleep 0.3
  PORT[nginx]=$NG_PORT; PROCS[nginx]=$(tree_pids "$NG_PID"); RSS_PID[nginx]=$(pgrep -P "$NG_PID" | head -1) ;;
esac

echo "# streaming $STAMP upstream=$UPSTREAM streams=$STREAMS prompt_bytes=${PROMPT_BYTES:-short} events=$EVENTS interval=${INTERVAL_MS}ms smartlb THREADS=$SL_THREADS pin=${PIN:-0} tools=$TOOLS load $(loadavg)" | tee "$TSV"
printf 'rep\tpath\tok_streams\tevents\tp50_ms\tp90_ms\tp99_ms\tp999_ms\tmax_ms\trss_before_kb\trss_all_open_kb\trss_per_stream_kb\tproxy_cpu_s\tload1\tsteal_ms\tfirst_p50_ms\tfirst_p99_ms\tproxy_user_s\trss_later_per_stream_kb\n' | tee -a "$TSV"
for rep in $(seq 1 "$REPS"); do
  for path in direct $PROXIES; do
    port=${PORT[$path]}; procs=${PROCS[$path]}; watch=""
    [ "$path" = direct ] || watch="--watch-pid ${RSS_PID[$path]}"
    c0=0; u0=0; [ -n "$procs" ] && c0=$(cpu_ticks $procs) && u0=$(utime_ticks $procs); s0=$(steal_ticks)
    "${LOAD_PIN[@]}" "${SSE_CLIENT[@]}" --url "http://127.0.0.1:$port$PATH_Q" --streams "$STREAMS" $watch \
      --timeout-s $((EVENTS * INTERVAL_MS / 1000 + 60)) ${PROMPT_BYTES:+--prompt-bytes "$PROMPT_BYTES"} \
      ${RSS_LATER_S:+--rss-later-s "$RSS_LATER_S"} >"$TMP/client.json"
    c1=0; u1=0; [ -n "$procs" ] && c1=$(cpu_ticks $procs) && u1=$(utime_ticks $procs); s1=$(steal_ticks)
    # "?" when a process changed meanwhile (lib.sh's stat_ticks)
    seconds() { awk -v a="$1" -v b="$2" -v t="$CLK_TCK" 'BEGIN{ if (a == "?" || b == "?") print "?"; else printf "%.2f", (b - a) / t }'; }
    jq -r --arg rep "$rep" --arg path "$path" --arg n "$STREAMS" --arg cpu "$(seconds "$c0" "$c1")" \
      --arg ucpu "$(seconds "$u0" "$u1")" \
      --arg load "$(cut -d' ' -f1 /proc/loadavg)" --arg steal $(((s1 - s0) * 1000 / CLK_TCK)) \
      '[$rep, $path, (.statuses["200"] // 0), .events, .delay_ms.p50, .delay_ms.p90, .delay_ms.p99, .delay_ms.p999, .delay_ms.max,
        (.rss_kb.before // "-"), (.rss_kb.all_open // "-"),
        (if .rss_kb.all_open then ((.rss_kb.all_open - .rss_kb.before) / ($n|tonumber) * 10 | round / 10) else "-" end),
        (if $path != "direct" then $cpu else "-" end), $load, $steal,
        (.first_event_delay_ms.p50 // "-"), (.first_event_delay_ms.p99 // "-"),
        (if $path != "direct" then $ucpu else "-" end),
        (if .rss_kb.mid then ((.rss_kb.mid - .rss_kb.before) / ($n|tonumber) * 10 | round / 10) else "-" end)] | @tsv' "$TMP/client.json" | tee -a "$TSV"
    sleep 2
  done
done
echo
echo "Summary: per-event delay (arrival - send, ms) and smartlb memory per open stream"
column -t -s$'\t' <(tail -n +2 "$TSV")
awk -F'\t' 'NR>2 { k=$2; n[k]++; p50[k]+=$5; p99[k]+=$7; mx[k]=($9>mx[k]?$9:mx[k]); f50[k]+=$16; f99[k]+=$17
                  if (k != "direct" && $13 != "?") { cpu[k]+=$13; usr[k]+=$18; ev[k]+=$4 } }
  END { if (!n["direct"]) exit
        for (k in n) { if (k == "direct") continue
          printf "added by %s (mean over reps): p50 %+.3f ms, p99 %+.3f ms; max %.1f ms; first event p50 %+.3f ms, p99 %+.3f ms;", k,
            p50[k]/n[k] - p50["direct"]/n["direct"], p99[k]/n[k] - p99["direct"]/n["direct"], mx[k],
            f50[k]/n[k] - f50["direct"]/n["direct"], f99[k]/n[k] - f99["direct"]/n["direct"]
          if (ev[k] > 0) printf " CPU per relayed event %.1f us (user %.1f)\n", cpu[k]*1e6/ev[k], usr[k]*1e6/ev[k]
          else printf " CPU per relayed event ?\n" } }' "$TSV"
echo "raw: $TSV"
