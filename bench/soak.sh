#!/usr/bin/env bash
# Soak: does smartlb leak memory, file descriptors or in-flight counts under hours of messy
# traffic? A steady open-loop RATE (default 500 requests/s) for DURATION (default 3600 s)
# through three smartlb-sim backends:
#   sim-429   answers 20 % of requests with 429 (--error-rate 0.2 --error-status 429)
#   sim-reset resets 5 % of connections (--reset-rate 0.05: mid-stream for streams, before the
#             headers otherwise)
#   sim-ok    healthy
# all with ample declared quota (the point is leaks, not quota). Half of the requests stream
# (10 events, 20 ms apart); 10 % of the streamed ones disconnect after the first body bytes
# (tools/soak_load.js). smartlb runs with its defaults (THREADS=0, admin on) but the access log
# off and DEFAULT_COOLDOWN_SECONDS=0.1 (COOLDOWN_S): the sims' 429s carry no Retry-After and a
# reset carries no hint, so with the default 10 s cooldown the faulty backends would sit out
# nearly the whole run; at 0.1 s they keep getting traffic and failing.
#
# Every 10 s the script samples smartlb's VmRSS, its open fds (/proc/PID/fd), its threads, and
# from the admin /status: in_flight, requests, client_aborted -> samples.tsv.
#
# Verdict (after the first 5 minutes of warm-up: pools, buffers and the allocator's arenas
# settle there, and the /status history ring of 90 samples fills within 15 min):
#   fds:  min over the last 5 minutes of load - min over minutes 5-10 <= 2. The minimum over 5
#         minutes, because the number of open connections (client and backend) moves with the
#         load from one sample to the next, and a minute's minimum by a few (an hour at 500/s:
#         5-minute minima 137-143 throughout, minute minima up to 146); the minimum is the floor
#         that a leak would lift. (Shorter runs: half of what follows the warm-up, if less.)
#   RSS:  mean over the last minute of load <= 1.05 x mean over minute 5-6.
#   in-flight: back to 0 within 30 s after the load stopped (a leaked in-flight count would
#         stay above 0).
# Also printed, not judged: the RSS trend over the second half (KiB/min, bytes per request), which
# tells a leak that grows with the traffic from a one-off step (a burst that raised the
# allocator's high-water mark).
# Exits 1 if one of them fails. Writes samples.tsv, verdict.txt, load.json and a small
# rss_fds.svg (RSS and fds over time) into bench/results/soak-<stamp>/.
#
# Usage: bench/soak.sh   (DURATION=3600  RATE=500  STREAM_FRACTION=0.5  ABORT_FRACTION=0.1
#                         SAMPLE_S=10  WARMUP_S=300  COOLDOWN_S=0.1; DURATION >= WARMUP_S + 120)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DURATION=${DURATION:-3600}
RATE=${RATE:-500}
STREAM_FRACTION=${STREAM_FRACTION:-0.5}
ABORT_FRACTION=${ABORT_FRACTION:-0.1}
SAMPLE_S=${SAMPLE_S:-10}
WARMUP_S=${WARMUP_S:-300}
COOLDOWN_S=${COOLDOWN_S:-0.1}
need node curl jq awk
[ "$DURATION" -ge $((WARMUP_S + 120)) ] || { echo "DURATION must be >= WARMUP_S + 120 ($((WARMUP_S + 120)))" >&2; exit 2; }
[ -x "$SMARTLB" ] && [ -x "$SIM" ] || { echo "missing $SMARTLB or $SIM (build the Release targets smartlb smartlb-sim)" >&2; exit 2; }
STAMP=$(date +%Y%m%d-%H%M%S)
OUT="$RESULTS/soak-$STAMP"; mkdir -p "$OUT"
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
DEPLOY="gpt-4o:1000000000:100000000"  # TPM:RPM far above the load
SIM_COMMON=(--deployment "$DEPLOY" --stream-chunks 10 --chunk-interval-ms 20 --latency-ms 10)

start_sim --name sim-429 "${SIM_COMMON[@]}" --error-rate 0.2 --error-status 429; P429=$SIM_PORT
start_sim --name sim-reset "${SIM_COMMON[@]}" --reset-rate 0.05; PRESET=$SIM_PORT
start_sim --name sim-ok "${SIM_COMMON[@]}"; POK=$SIM_PORT

SL_PORT=$(free_port); ADMIN=$(free_port)
env -i PATH="$PATH" PORT="$SL_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT="$ADMIN" ACCESS_LOG=off LOG_LEVEL=error \
  DEFAULT_COOLDOWN_SECONDS="$COOLDOWN_S" \
  BACKEND_1_URL="http://127.0.0.1:$P429" BACKEND_1_NAME=sim-429 \
  BACKEND_2_URL="http://127.0.0.1:$PRESET" BACKEND_2_NAME=sim-reset \
  BACKEND_3_URL="http://127.0.0.1:$POK" BACKEND_3_NAME=sim-ok \
  "$SMARTLB" >"$OUT/smartlb.log" 2>&1 &
SL_PID=$!; PIDS+=("$SL_PID")
wait_port "$SL_PORT"; wait_port "$ADMIN"

{
  echo "# soak $STAMP: ${DURATION}s at ${RATE}/s, stream ${STREAM_FRACTION}, abort ${ABORT_FRACTION} of streams, cooldown ${COOLDOWN_S}s"
  echo "# machine: $(nproc) CPUs, $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), $(uname -r), load $(loadavg)"
  echo "# smartlb $(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo '?') pid $SL_PID"
} | tee "$OUT/verdict.txt"

sample() {  # t_s rss_kb fds threads in_flight requests client_aborted
  local t=$1 st
  st=$(curl -s -m 5 "http://127.0.0.1:$ADMIN/status" | jq -r '[.in_flight, .requests, .client_aborted] | @tsv' 2>/dev/null) \
    || st=$'?\t?\t?'
  printf '%s\t%s\t%s\t%s\t%s\n' "$t" "$(awk '/^VmRSS/{print $2}' /proc/"$SL_PID"/status)" \
    "$(ls /proc/"$SL_PID"/fd | wc -l)" "$(awk '/^Threads/{print $2}' /proc/"$SL_PID"/status)" "$st"
}
printf 't_s\trss_kb\tfds\tthreads\tin_flight\trequests\tclient_aborted\n' >"$OUT/samples.tsv"
sample 0 >>"$OUT/samples.tsv"  # idle, before any load

node "$BENCH_DIR/tools/soak_load.js" --url "http://127.0.0.1:$SL_PORT$PATH_Q" --rate "$RATE" --duration "$DURATION" \
  --stream-fraction "$STREAM_FRACTION" --abort-fraction "$ABORT_FRACTION" --progress "$OUT/load-progress.json" \
  >"$OUT/load.json" &
LOAD_PID=$!; PIDS+=("$LOAD_PID")
start=$SECONDS
next=$SAMPLE_S
while [ $((SECONDS - start)) -lt "$DURATION" ]; do
  sleep 1
  kill -0 "$SL_PID" 2>/dev/null || { echo "smartlb died at $((SECONDS - start)) s" | tee -a "$OUT/verdict.txt"; exit 1; }
  if [ $((SECONDS - start)) -ge $next ]; then
    sample "$next" | tee -a "$OUT/samples.tsv" >/dev/null
    next=$((next + SAMPLE_S))
  fi
done
wait "$LOAD_PID" || true
# After the load: in-flight must drain to 0.
drained=no
for _ in $(seq 1 30); do
  inf=$(curl -s -m 5 "http://127.0.0.1:$ADMIN/status" | jq -r .in_flight 2>/dev/null || echo '?')
  [ "$inf" = 0 ] && { drained=yes; break; }
  sleep 1
done
sample "idle_after" >>"$OUT/samples.tsv"
curl -s "http://127.0.0.1:$ADMIN/status" >"$OUT/status-end.json" || true
curl -s "http://127.0.0.1:$ADMIN/metrics" >"$OUT/metrics-end.txt" || true
for port in "$P429" "$PRESET" "$POK"; do curl -s "http://127.0.0.1:$port/_sim/stats"; echo; done >"$OUT/sims.json"

# The verdict from samples.tsv (numeric t_s rows only).
FD_WINDOW_S=$(( (DURATION - WARMUP_S) / 2 < 300 ? (DURATION - WARMUP_S) / 2 : 300 ))
awk -F'\t' -v w0="$WARMUP_S" -v w1=$((WARMUP_S + 60)) -v e0=$((DURATION - 60)) -v e1="$DURATION" -v drained="$drained" \
    -v f1=$((WARMUP_S + FD_WINDOW_S)) -v f0=$((DURATION - FD_WINDOW_S)) -v fw="$FD_WINDOW_S" '
  NR == 1 || $1 !~ /^[0-9]+$/ { next }
  $1 >= w0 && $1 < w1 { br += $2; bn++ }
  $1 >= e0 && $1 < e1 { er += $2; en++ }  # not the sample at the very end
  $1 >= w0 && $1 < f1 { if (bf == "" || $3 < bf) bf = $3 }
  $1 >= f0 && $1 < e1 { if (ef == "" || $3 < ef) ef = $3 }
  $1 >= e1 / 2 && $1 < e1 { n++; x = $6; y = $2 * 1024; sx += x; sy += y; sxx += x * x; sxy += x * y; t += $1; stt += $1 * $1; sty += $1 * $2 }
  END {
    if (!bn || !en) { print "verdict: FAIL (not enough samples)"; exit 1 }
    br /= bn; er /= en; growth = (er / br - 1) * 100
    fd_ok = (ef - bf <= 2); rss_ok = (growth <= 5); ok = fd_ok && rss_ok && drained == "yes"
    printf "fds (min over %d s): %d after the warm-up, %d at the end: drift %+d (limit 2) %s\n", fw, bf, ef, ef - bf, fd_ok ? "ok" : "FAIL"
    printf "RSS (mean over a minute): %.1f MiB at minute %d-%d, %.1f MiB in the last minute: %+.2f %% (limit +5 %%) %s\n", br/1024, w0/60, w1/60, er/1024, growth, rss_ok ? "ok" : "FAIL"
    printf "in-flight drained to 0 after the load: %s\n", drained
    if (n > 2) {  # informational: a leak that grows with the traffic shows as a slope; a one-off step does not
      bpr = (n * sxy - sx * sy) / (n * sxx - sx * sx); kpm = (n * sty - t * sy / 1024) / (n * stt - t * t) * 60
      printf "RSS trend over the second half (least squares, informational): %+.1f KiB/min, %+.3f bytes per request\n", kpm, bpr
    }
    printf "verdict: %s\n", ok ? "PASS" : "FAIL"
    exit ok ? 0 : 1
  }' "$OUT/samples.tsv" >"$OUT/verdict.body" && rc=0 || rc=$?
{
  echo "# load: $(jq -c '{scheduled, sent, done, streamed, aborted_by_client, by_status, truncated, transport_errors, timeouts, inflight_max, max_send_lateness_ms}' "$OUT/load.json" 2>/dev/null)"
  echo "# sims: $(jq -sc 'map({(.name): .by_status})' "$OUT/sims.json" 2>/dev/null)"
  echo "# smartlb: $(grep -E '^smartlb_(failovers|cooldowns_started)_total' "$OUT/metrics-end.txt" 2>/dev/null | tr '\n' ' ')"
  cat "$OUT/verdict.body"
} | tee -a "$OUT/verdict.txt"
rm -f "$OUT/verdict.body"

# A small dependency-free plot: RSS (MiB, left) and fds (right) over minutes.
awk -F'\t' -v dur="$DURATION" -v warm="$WARMUP_S" '
  BEGIN { n = 0 }
  NR == 1 || $1 !~ /^[0-9]+$/ { next }
  { t[n] = $1; r[n] = $2 / 1024; f[n] = $3; if (r[n] > rmax) rmax = r[n]; if (f[n] > fmax) fmax = f[n]; n++ }
  END {
    W = 640; H = 240; L = 50; R = 590; T = 20; B = 200
    rmax = rmax * 1.1 + 1; fmax = fmax * 1.1 + 1
    printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\">\n", W, H
    printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/><rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", L, T, R - L, B - T
    for (k = 0; k < 2; k++) {
      printf "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"", k ? "#c0392b" : "#2471a3"
      for (i = 0; i < n; i++) printf "%.1f,%.1f ", L + (R - L) * t[i] / dur, B - (B - T) * (k ? f[i] / fmax : r[i] / rmax)
      printf "\"/>\n"
    }
    printf "<text x=\"%d\" y=\"14\" fill=\"#2471a3\">RSS MiB (0-%.0f)</text><text x=\"%d\" y=\"14\" fill=\"#c0392b\" text-anchor=\"end\">open fds (0-%.0f)</text>\n", L, rmax, R, fmax
    printf "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%d min</text>\n", L, B + 15, R, B + 15, dur / 60
    printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#bbb\" stroke-dasharray=\"3,3\"/></svg>\n", L + (R - L) * warm / dur, T, L + (R - L) * warm / dur, B
  }' "$OUT/samples.tsv" >"$OUT/rss_fds.svg"
echo "raw: $OUT"
exit "$rc"
