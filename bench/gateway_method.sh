#!/usr/bin/env bash
# smartlb, nginx and haproxy measured by the public method of LLM gateways (Busbar's "On the
# Bench", 2026-07): the gateway on a fixed number of cores, an LLM-shaped request, and two figures
# per gateway and variant:
#
#   added latency = the gateway's p99 - the direct p99 (client straight to the backend), at
#                   concurrency 1 (wrk -t1 -c1, closed loop), paired within each repetition
#                   (the median of the LAT_REPS differences); LAT_ON=placed: the gateway on its
#                   cores, load: moved (taskset -a -p) onto the load's cores for these runs,
#                   both (default): each. On a VM, a request handed to an idle vCPU waits for
#                   it to wake (a plain nginx backend moved from wrk's vCPU to the other: p99
#                   0.12 -> 3.5 ms), so "placed" can measure the VM; "load" leaves that out;
#   ceiling       = the highest sustained rate with p99 < 1 s and < 0.1 % errors: an open-loop
#                   rate sweep, the rate stepped up until a step fails, then REFINE bisections
#                   between the last rate that passed and the one that failed; every target is
#                   offered the same rates, STEPS % of BASE (the direct closed-loop peak with
#                   CONNS connections, ANCHOR_DURATION s); per core = ceiling / cores.
#
# The request (bench/conf/gateway.lua): a chat completion of about 1 KiB (model, a system and a
# user message, max_tokens, temperature), POSTed to /openai/deployments/gpt-4o/chat/completions
# ?api-version=2024-10-21 (nginx and haproxy just proxy it). Variants:
#   json: answered by nginx `return 200` with a fixed chat completion of about 2 KiB;
#   sse:  "stream": true, answered by smartlb-sim (--latency-ms 0, --stream-chunks SSE_CHUNKS):
#         an event stream of about 2 KiB, timed to its last byte. nginx with proxy_buffering
#         off and haproxy with http-no-delay, as they are configured for SSE.
# Plain reverse proxies, keep-alive to the upstream, access logs off; smartlb ADMIN_PORT=0.
#
# Placement: "N cores" gives the gateway N threads or workers (smartlb THREADS, nginx
# worker_processes, haproxy nbthread) pinned to cores 1..N, and wrk and the backend the cores
# left (core 0 and any above N); wrk with WRK_THREADS threads, the backend with BACKEND_THREADS
# (1 each; 2 of each sustained less on 2 cores). When N is every core of the machine (N = 2 on
# a 2-core machine) nothing is left to the load:
# the gateway may use all cores but shares them with wrk and the backend (marked "shared"); its
# ceiling is then the whole machine's, and per core is ceiling / N all the same. A CORES entry
# above the machine's cores is skipped.
#
# The load generator: wrk with bench/conf/gateway.lua, which paces requests on a fixed schedule
# (GM_RATE) over CONNS keep-alive connections; the schedule never resets, so a gateway that
# falls behind leaves requests behind their slots (their lag is measured). A step passes when
#   errors (non-2xx, socket errors, timeouts) < ERR_PCT % of the requests,
#   lag p99.5 + wrk's latency p99.5 < P99_MS (a bound on the open-loop p99: lag + latency), and
#   at the end of the step at most MAX_BEHIND_PCT % of the requests due had not left;
# a failed step is run once more (RETRY=1) and the sweep stops at the first step that fails twice.
# The direct target's ceiling is the load side's own limit in that placement. What stopped a
# sweep: the busy share of the gateway's cores and of the load's cores (from /proc/stat, steal
# included) at the lowest rate that failed: "gateway" (its cores >= 90 % busy), "load side"
# (the load's cores >= 90 % busy, the gateway's not: the gateway was not saturated), "latency"
# (neither), "machine" (shared placement: everything on the same cores).
# cpu_us is the gateway's CPU (utime + stime of its processes) per request at its highest
# passing rate, and 1 s / cpu_us what one core fully busy with the gateway would serve at that
# cost (an underestimate where the gateway was not saturated: per request CPU falls with load).
#
# Usage: BUILD=build-release bench/gateway_method.sh
#   CORES="1 2"  VARIANTS="json sse"  SYSTEMS="smartlb nginx haproxy"
#   LAT_CORES=1  LAT_ON=both  LAT_DURATION=3  LAT_REPS=2   (the placements where concurrency 1
#                                  is measured; where the gateway runs; seconds per run; rounds)
#   STEP_DURATION=3  STEPS="30 45 60 75 90 100"  REFINE=2  ANCHOR_DURATION=3  CONNS=64
#   P99_MS=1000  ERR_PCT=0.1  MAX_BEHIND_PCT=1  RETRY=1  SSE_CHUNKS=8
#   WRK_THREADS=1  BACKEND_THREADS=1   (the concurrency-1 runs: always wrk -t1)
# Needs: wrk (LuaJIT), nginx, haproxy, taskset, curl; smartlb and smartlb-sim in $BUILD.
# Output: bench/results/gateway-method-STAMP/: summary.tsv, summary.md (the table), steps.tsv
# (every sweep step), latency.tsv (every concurrency-1 run), the raw wrk outputs under raw/.
# Defaults: about 10 minutes on 2 cores.
set -euo pipefail
# shellcheck source=/dev/null
source "$(dirname "$0")/lib.sh"
need wrk nginx haproxy taskset curl
CORES=${CORES:-1 2}
VARIANTS=${VARIANTS:-json sse}
SYSTEMS=${SYSTEMS:-smartlb nginx haproxy}
LAT_CORES=${LAT_CORES:-1}
LAT_ON=${LAT_ON:-both}
LAT_DURATION=${LAT_DURATION:-3}
LAT_REPS=${LAT_REPS:-2}
STEP_DURATION=${STEP_DURATION:-3}
STEPS=${STEPS:-30 45 60 75 90 100}
REFINE=${REFINE:-2}
ANCHOR_DURATION=${ANCHOR_DURATION:-3}
CONNS=${CONNS:-64}
P99_MS=${P99_MS:-1000}
ERR_PCT=${ERR_PCT:-0.1}
MAX_BEHIND_PCT=${MAX_BEHIND_PCT:-1}
RETRY=${RETRY:-1}
SSE_CHUNKS=${SSE_CHUNKS:-8}
LUA="$BENCH_DIR/conf/gateway.lua"
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"
NPROC=$(nproc)
WRK_THREADS=${WRK_THREADS:-1}
BACKEND_THREADS=${BACKEND_THREADS:-1}
[ -x "$SMARTLB" ] || { echo "missing $SMARTLB (BUILD=build-release?)" >&2; exit 2; }
[ -x "$SIM" ] || { echo "missing $SIM" >&2; exit 2; }
STAMP=$(date +%Y%m%d-%H%M%S)
OUT="$RESULTS/gateway-method-$STAMP"
mkdir -p "$OUT/raw"
COMMIT=$(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)

subst() { sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$2|g" -e "s|@BACKEND_PORT@|${3:-}|g" "$1"; }

# The fixed ~2 KiB chat completion of the json variant (no quote, backslash or dollar sign: it
# goes into an nginx string as it is).
ANSWER="I am sorry that the left shoe of your order 4471-2209 arrived with a torn seam. Here is how we can put it right (KB-112, KB-207). 1. Exchange: the trail running shoe is in stock in size 43, so we can send you a new pair as soon as the return is registered. An exchange usually takes 5 to 7 working days from the moment the parcel reaches our warehouse. 2. Return shipping: a damaged item is a warranty case, so the return is free of charge. You will receive a prepaid label by e-mail within the hour: print it and drop the parcel at any of our partner points. 3. Refund instead: if you prefer your money back, choose refund in the return form. The amount is credited to your original payment method within 3 to 5 working days after we receive the shoes. Please keep the original box if you still have it, and add a short note about the seam, with a photo if you can: it helps our quality team to follow up with the manufacturer. Is there anything else I can help you with today? Kind regards, Contoso Outdoor support."
FILTERS='{"hate":{"filtered":false,"severity":"safe"},"self_harm":{"filtered":false,"severity":"safe"},"sexual":{"filtered":false,"severity":"safe"},"violence":{"filtered":false,"severity":"safe"}}'
BODY_2K='{"id":"chatcmpl-AzBench7x2kQpL9mW3rT5vN8cY1dF","object":"chat.completion","created":1767225600,"model":"gpt-4o-2024-11-20","system_fingerprint":"fp_b705f0c291","prompt_filter_results":[{"prompt_index":0,"content_filter_results":'$FILTERS'}],"choices":[{"index":0,"message":{"role":"assistant","content":"'$ANSWER'","refusal":null},"logprobs":null,"finish_reason":"stop","content_filter_results":'$FILTERS'}],"usage":{"prompt_tokens":241,"completion_tokens":236,"total_tokens":477,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}'

# --- processes of one placement and variant (started, then stopped before the next)
RUN_PIDS=()
start_bg() {  # start_bg LOG CMD...: runs CMD in the background, recorded in PIDS and RUN_PIDS
  local log=$1; shift
  "$@" 2>"$log" &
  PIDS+=($!); RUN_PIDS+=($!)
}
stop_run() {  # TERM, up to 5 s, then KILL; and out of PIDS
  local p keep=() deadline
  for p in "${RUN_PIDS[@]:-}"; do
    if [ -n "$p" ]; then kill "$p" 2>/dev/null || true; fi
  done
  deadline=$((SECONDS + 5))
  for p in "${RUN_PIDS[@]:-}"; do
    [ -n "$p" ] || continue
    while kill -0 "$p" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  for p in "${PIDS[@]:-}"; do
    [[ " ${RUN_PIDS[*]:-} " == *" $p "* ]] || keep+=("$p")
  done
  PIDS=("${keep[@]:-}")
  RUN_PIDS=()
}

cpu_list() {  # cpu_list FROM TO -> "FROM-TO" or "FROM"
  if [ "$1" = "$2" ]; then echo "$1"; else echo "$1-$2"; fi
}
cpu_stat() { awk '/^cpu[0-9]/ { print substr($1, 4), $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat; }
busy_pct() {  # busy_pct "CPU LIST" BEFORE AFTER (cpu_stat outputs) -> % busy of those cpus
  awk -v list="$1" -v before="$2" -v after="$3" 'BEGIN {
    n = split(list, parts, ","); for (i = 1; i <= n; i++) { m = split(parts[i], r, "-"); hi = (m > 1) ? r[2] : r[1]
      for (c = r[1]; c <= hi; c++) want[c] = 1 }
    n = split(before, lb, "\n"); for (i = 1; i <= n; i++) { split(lb[i], f, " "); b[f[1]] = f[2]; id[f[1]] = f[3] }
    n = split(after, la, "\n"); for (i = 1; i <= n; i++) { split(la[i], f, " "); if (!(f[1] in want)) continue
      busy += f[2] - b[f[1]]; idle += f[3] - id[f[1]] }
    printf "%.0f", (busy + idle > 0) ? 100 * busy / (busy + idle) : 0 }'
}

declare -A PORT GWPID
start_run() {  # start_run CORES VARIANT: the backend on LOAD_CPUS, the gateways on GW_CPUS
  local n=$1 variant=$2 bport sl_port ng_port ha_port
  if [ "$variant" = json ]; then
    bport=$(free_port)
    subst "$BENCH_DIR/conf/nginx-backend.conf.in" "$bport" |
      sed -e "s|@CT@|application/json|" -e "s|^worker_processes 1;|worker_processes $BACKEND_THREADS;|" |
      awk -v b="$BODY_2K" '/return 200/ { print "      return 200 '"'"'" b "'"'"';"; next } { print }' >"$TMP/nginx-backend.conf"
    start_bg "$TMP/nginx-backend.log" taskset -c "$LOAD_CPUS" nginx -c "$TMP/nginx-backend.conf" -p "$TMP"
  else
    start_bg "$TMP/sim.log" taskset -c "$LOAD_CPUS" "$SIM" --port 0 --log-level warn --latency-ms 0 --threads "$BACKEND_THREADS" \
      --stream-chunks "$SSE_CHUNKS" --deployment gpt-4o:1000000000000:100000000 >"$TMP/sim.out"
    local deadline=$((SECONDS + 10))
    until grep -q listening "$TMP/sim.out" 2>/dev/null; do
      [ $SECONDS -lt $deadline ] || { echo "smartlb-sim did not start" >&2; cat "$TMP/sim.log" >&2; exit 1; }
      sleep 0.05
    done
    bport=$(sed -E 's/.*:([0-9]+)$/\1/' "$TMP/sim.out")
  fi
  wait_port "$bport"
  PORT[direct]=$bport

  sl_port=$(free_port)
  start_bg "$TMP/smartlb.log" env -i PATH="$PATH" PORT="$sl_port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 \
    THREADS="$n" ACCESS_LOG=off LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$bport" BACKEND_1_NAME=fast \
    taskset -c "$GW_CPUS" "$SMARTLB"
  PORT[smartlb]=$sl_port; GWPID[smartlb]=${RUN_PIDS[-1]}

  # For SSE, nginx without proxy_buffering and haproxy with http-no-delay (else it corks
  # events for up to 200 ms), as each is configured for streams.
  local ng_sse='s|^||' ha_sse='s|^||'
  if [ "$variant" = sse ]; then
    ng_sse='s|proxy_pass http://backend;|proxy_pass http://backend; proxy_buffering off;|'
    ha_sse='s|^  option http-keep-alive$|  option http-keep-alive\n  option http-no-delay|'
  fi
  ng_port=$(free_port)
  subst "$BENCH_DIR/conf/nginx-proxy.conf.in" "$ng_port" "$bport" |
    sed -e "s|^worker_processes 1;|worker_processes $n;|" -e "$ng_sse" >"$TMP/nginx-proxy.conf"
  start_bg "$TMP/nginx-proxy.log" taskset -c "$GW_CPUS" nginx -c "$TMP/nginx-proxy.conf" -p "$TMP"
  PORT[nginx]=$ng_port; GWPID[nginx]=${RUN_PIDS[-1]}

  ha_port=$(free_port)
  subst "$BENCH_DIR/conf/haproxy.cfg.in" "$ha_port" "$bport" |
    sed -e "s|^  nbthread 1$|  nbthread $n|" -e "$ha_sse" >"$TMP/haproxy.cfg"
  start_bg "$TMP/haproxy.log" taskset -c "$GW_CPUS" haproxy -db -f "$TMP/haproxy.cfg"
  PORT[haproxy]=$ha_port; GWPID[haproxy]=${RUN_PIDS[-1]}

  local t
  for t in $SYSTEMS; do wait_port "${PORT[$t]}"; done
  sleep 0.3
  # Sanity: one request through each target, 200 (and an event stream for sse).
  for t in direct $SYSTEMS; do
    local body='{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"max_tokens":64'
    [ "$variant" = sse ] && body+=',"stream":true'
    curl -s -o "$TMP/sanity.out" -w '%{http_code}' -X POST -H 'content-type: application/json' -d "$body}" \
      "http://127.0.0.1:${PORT[$t]}$PATH_Q" >"$TMP/sanity.code"
    [ "$(cat "$TMP/sanity.code")" = 200 ] || { echo "$t answered $(cat "$TMP/sanity.code")" >&2; exit 1; }
    if [ "$variant" = sse ]; then grep -q '^data: \[DONE\]' "$TMP/sanity.out" || { echo "$t: no event stream" >&2; exit 1; }; fi
  done
}

gw_pids() {  # the gateway's processes (nginx: master and workers)
  case $1 in direct) echo "" ;; *) tree_pids "${GWPID[$1]}" ;; esac
}
pin_gateways() {  # pin_gateways CPUS: every thread of every gateway onto CPUS
  local t p
  for t in $SYSTEMS; do
    for p in $(gw_pids "$t"); do taskset -a -pc "$1" "$p" >/dev/null; done
  done
}

to_us() {  # wrk latency token (512.00us, 1.23ms, 1.01s) -> µs
  awk -v v="$1" 'BEGIN { if (v ~ /us$/) { sub(/us$/, "", v); print v + 0 }
                         else if (v ~ /ms$/) { sub(/ms$/, "", v); print v * 1000 }
                         else if (v ~ /m$/) { sub(/m$/, "", v); print v * 60e6 }
                         else if (v ~ /s$/) { sub(/s$/, "", v); print v * 1e6 } else print "" }'
}
wrk_field() {  # wrk_field FILE NAME: requests rps p50_us p99_us errors; lag_p995 lag_max svc_p995 behind (gateway.lua)
  local f=$1
  case $2 in
    requests) awk '/requests in/ { print $1 }' "$f" ;;
    rps) awk '/^Requests\/sec/ { print $2 }' "$f" ;;
    p50_us) to_us "$(awk '$1 == "50%" { print $2 }' "$f")" ;;
    p99_us) to_us "$(awk '$1 == "99%" { print $2 }' "$f")" ;;
    errors) awk '/Non-2xx/ { n += $NF } /Socket errors/ { gsub(/,/, ""); n += $4 + $6 + $8 + $10 } END { print n + 0 }' "$f" ;;
    lag_p995) awk '/^gm_lag_ms/ { print $2 }' "$f" ;;
    lag_max) awk '/^gm_lag_ms/ { print $3 }' "$f" ;;
    svc_p995) awk '/^gm_svc_ms/ { print $3 }' "$f" ;;
    behind) awk '/^gm_behind_pct/ { print $2 }' "$f" ;;
  esac
}

printf 'cores\tplacement\tvariant\tlat_on\trep\ttarget\trps\tp50_us\tp99_us\terrors\n' >"$OUT/latency.tsv"
printf 'cores\tplacement\tvariant\ttarget\tstep_pct\ttry\toffered_rps\tachieved_rps\tp99_ms\tp995_ms\tlag_p995_ms\tlag_max_ms\tbehind_pct\terrors\trequests\tcpu_us_per_req\tgw_cpus_busy_pct\tload_cpus_busy_pct\tpass\tload1\n' >"$OUT/steps.tsv"
printf 'cores\tplacement\tvariant\ttarget\tp99_c1_us\tadded_p50_us\tadded_p99_us\tp99_c1_load_us\tadded_p50_load_us\tadded_p99_load_us\tp50_c1_us\tbase_rps\tceiling_rps\tceiling_per_core\tcpu_us\tcpu_cap_per_core\tbusy_at_fail_gw_load\tlimit\n' >"$OUT/summary.tsv"
echo "# gateway-method $STAMP commit=$COMMIT cores=[$CORES] variants=[$VARIANTS] conns=$CONNS steps=[$STEPS] step=${STEP_DURATION}s lat=${LAT_REPS}x${LAT_DURATION}s load_before=$(loadavg) nproc=$NPROC"
echo "# gateway-method $STAMP commit=$COMMIT load_before=$(loadavg)" >"$OUT/run.txt"

step() {  # step CORES VARIANT TARGET LABEL RATE TRY -> PASS, STEP_CPU, STEP_GW_BUSY, STEP_LOAD_BUSY
  local n=$1 variant=$2 t=$3 pct=$4 rate=$5 try=$6 f pids b a s0 s1 reqs errs p99 p995 lagp lagm behind
  f="$OUT/raw/c$n-$variant-$t-r$rate-t$try.txt"
  read -r -a pids <<<"$(gw_pids "$t")"
  b=0; [ ${#pids[@]} -gt 0 ] && b=$(cpu_ticks "${pids[@]}")
  s0=$(cpu_stat)
  GM_RATE=$rate GM_THREADS=$WRK_THREADS GM_STREAM=$([ "$variant" = sse ] && echo 1 || echo 0) taskset -c "$LOAD_CPUS" \
    wrk -t"$WRK_THREADS" -c"$CONNS" -d"${STEP_DURATION}s" --timeout 5s --latency -s "$LUA" \
    "http://127.0.0.1:${PORT[$t]}$PATH_Q" >"$f"
  s1=$(cpu_stat)
  a=0; [ ${#pids[@]} -gt 0 ] && a=$(cpu_ticks "${pids[@]}")
  STEP_GW_BUSY=$(busy_pct "$GW_CPUS" "$s0" "$s1"); STEP_LOAD_BUSY=$(busy_pct "$LOAD_CPUS" "$s0" "$s1")
  reqs=$(wrk_field "$f" requests); errs=$(wrk_field "$f" errors); p99=$(wrk_field "$f" p99_us)
  p995=$(wrk_field "$f" svc_p995); lagp=$(wrk_field "$f" lag_p995); lagm=$(wrk_field "$f" lag_max)
  behind=$(wrk_field "$f" behind)
  STEP_CPU="-"
  if [ ${#pids[@]} -gt 0 ] && [ "$b" != "?" ] && [ "$a" != "?" ]; then
    STEP_CPU=$(awk -v d=$((a - b)) -v tck="$CLK_TCK" -v n="$reqs" 'BEGIN { printf "%.1f", d * 1e6 / tck / n }')
  fi
  PASS=$(awk -v e="$errs" -v n="${reqs:-0}" -v p="${p995:-1e9}" -v l="${lagp:-1e9}" -v bh="${behind:-100}" \
    -v pl="$P99_MS" -v el="$ERR_PCT" -v mb="$MAX_BEHIND_PCT" \
    'BEGIN { print (n > 0 && e * 100 < el * n && p + l < pl && bh <= mb) ? "yes" : "no" }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$PLACEMENT" \
    "$variant" "$t" "$pct" "$try" "$rate" "$(wrk_field "$f" rps)" "$(awk -v p="$p99" 'BEGIN { printf "%.3f", p / 1000 }')" \
    "$p995" "$lagp" "$lagm" "$behind" "$errs" "$reqs" "$STEP_CPU" "$STEP_GW_BUSY" "$STEP_LOAD_BUSY" "$PASS" \
    "$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$OUT/steps.tsv"
}

rate_at() {  # rate_at PCT: PCT % of BASE, rounded to 100 req/s (to 1 below 1,000)
  awk -v p="$BASE" -v s="$1" 'BEGIN { r = p * s / 100; print (r >= 1000 ? int(r / 100 + 0.5) * 100 : int(r + 0.5)) }'
}
try_step() {  # try_step CORES VARIANT TARGET LABEL RATE: a step, once more if it fails (RETRY)
  local try
  for try in $(seq 1 $((RETRY + 1))); do
    step "$1" "$2" "$3" "$4" "$5" "$try"
    if [ "$PASS" = yes ]; then break; fi
  done
}
sweep() {  # sweep CORES VARIANT TARGET -> CEIL, CEIL_CPU, FAIL_BUSY: the grid, then REFINE bisections
  local n=$1 variant=$2 t=$3 pct rate lo=0 hi=0 i mid
  CEIL=0; CEIL_CPU="-"; FAIL_BUSY="-"
  for pct in $STEPS; do
    rate=$(rate_at "$pct")
    [ "$rate" -gt "$lo" ] || continue
    try_step "$n" "$variant" "$t" "$pct" "$rate"
    if [ "$PASS" = yes ]; then lo=$rate; CEIL=$rate; CEIL_CPU=$STEP_CPU
    else hi=$rate; FAIL_BUSY="$STEP_GW_BUSY $STEP_LOAD_BUSY"; break; fi
  done
  if [ "$hi" -eq 0 ] || [ "$lo" -eq 0 ]; then return 0; fi
  for i in $(seq 1 "$REFINE"); do
    mid=$(awk -v a="$lo" -v b="$hi" 'BEGIN { m = (a + b) / 2; print (m >= 1000 ? int(m / 100 + 0.5) * 100 : int(m + 0.5)) }')
    if [ "$mid" -le "$lo" ] || [ "$mid" -ge "$hi" ]; then break; fi
    try_step "$n" "$variant" "$t" "bisect$i" "$mid"
    if [ "$PASS" = yes ]; then lo=$mid; CEIL=$mid; CEIL_CPU=$STEP_CPU
    else hi=$mid; FAIL_BUSY="$STEP_GW_BUSY $STEP_LOAD_BUSY"; fi
  done
}

for n in $CORES; do
  if [ "$n" -gt "$NPROC" ]; then echo "skipped: $n cores (the machine has $NPROC)"; continue; fi
  if [ "$n" -lt "$NPROC" ]; then
    GW_CPUS=$(cpu_list 1 "$n"); LOAD_CPUS=0; [ $((n + 1)) -le $((NPROC - 1)) ] && LOAD_CPUS="0,$(cpu_list $((n + 1)) $((NPROC - 1)))"
    PLACEMENT=dedicated
  else
    GW_CPUS=$(cpu_list 0 $((NPROC - 1))); LOAD_CPUS=$GW_CPUS; PLACEMENT=shared
  fi
  for variant in $VARIANTS; do
    echo "== $n core(s) ($PLACEMENT: gateway on cpus $GW_CPUS, wrk ($WRK_THREADS threads) and backend ($BACKEND_THREADS) on $LOAD_CPUS), $variant"
    start_run "$n" "$variant"
    GM_STREAM=$([ "$variant" = sse ] && echo 1 || echo 0); export GM_STREAM
    # Concurrency 1 (the placements in LAT_CORES): for each LAT_ON mode, a 1 s warm-up per
    # target, then LAT_REPS interleaved rounds (the order rotates each round).
    read -r -a targets <<<"direct $SYSTEMS"
    if [[ " $LAT_CORES " == *" $n "* ]]; then
      case $LAT_ON in both) modes="placed load" ;; *) modes=$LAT_ON ;; esac
      for mode in $modes; do
        if [ "$mode" = load ]; then pin_gateways "$LOAD_CPUS"; fi
        for t in "${targets[@]}"; do
          taskset -c "$LOAD_CPUS" wrk -t1 -c1 -d1s -s "$LUA" "http://127.0.0.1:${PORT[$t]}$PATH_Q" >/dev/null
        done
        for rep in $(seq 1 "$LAT_REPS"); do
          nt=${#targets[@]}
          for ((j = 0; j < nt; j++)); do
            t=${targets[$(((j + rep - 1) % nt))]}
            f="$OUT/raw/c$n-$variant-$t-c1-$mode-rep$rep.txt"
            taskset -c "$LOAD_CPUS" wrk -t1 -c1 -d"${LAT_DURATION}s" --timeout 5s --latency -s "$LUA" \
              "http://127.0.0.1:${PORT[$t]}$PATH_Q" >"$f"
            printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$PLACEMENT" "$variant" "$mode" "$rep" "$t" \
              "$(wrk_field "$f" rps)" "$(wrk_field "$f" p50_us)" "$(wrk_field "$f" p99_us)" "$(wrk_field "$f" errors)" |
              tee -a "$OUT/latency.tsv"
          done
        done
        if [ "$mode" = load ]; then pin_gateways "$GW_CPUS"; fi
      done
    fi
    unset GM_STREAM
    # Ceilings: the same rates offered to every target, STEPS % of BASE, the direct closed-loop
    # peak with CONNS connections; direct first (the load side's own limit), then each gateway.
    f="$OUT/raw/c$n-$variant-direct-peak.txt"
    GM_STREAM=$([ "$variant" = sse ] && echo 1 || echo 0) taskset -c "$LOAD_CPUS" \
      wrk -t"$WRK_THREADS" -c"$CONNS" -d"${ANCHOR_DURATION}s" --timeout 5s -s "$LUA" "http://127.0.0.1:${PORT[direct]}$PATH_Q" >"$f"
    BASE=$(wrk_field "$f" rps)
    echo "base (direct, closed loop, $CONNS connections): $BASE req/s"
    declare -A CEILS=() CPUS=() BUSY=()
    for t in direct $SYSTEMS; do
      sweep "$n" "$variant" "$t"
      CEILS[$t]=$CEIL; CPUS[$t]=$CEIL_CPU; BUSY[$t]=$FAIL_BUSY
    done
    for t in direct $SYSTEMS; do
      awk -F'\t' -v n="$n" -v pl="$PLACEMENT" -v v="$variant" -v t="$t" -v peak="$BASE" -v ceil="${CEILS[$t]}" \
        -v busy="${BUSY[$t]}" -v cpu="${CPUS[$t]}" '
        function median(a, m,   i, j, x) { for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { x = a[i]; a[i] = a[j]; a[j] = x }
          return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2 }
        NR > 1 && $1 == n && $3 == v { k = $4 SUBSEP $5; p50[k, $6] = $8; p99[k, $6] = $9; reps[k] = $4 }
        function added(mode, what,   k, m, a, d) {  # median over the rounds of mode: what = "p50" "p99" "d50" "d99"
          m = 0; for (k in reps) { if (reps[k] != mode || !((k, t) in p99) || !((k, "direct") in p99)) continue; m++
            a[m] = (what == "p50") ? p50[k, t] : (what == "p99") ? p99[k, t] : (what == "d50") ? p50[k, t] - p50[k, "direct"] : p99[k, t] - p99[k, "direct"] }
          if (!m || (t == "direct" && what ~ /^d/)) return "-"
          return sprintf("%.0f", median(a, m)) }
        END {
          split(busy, bz, " "); lim = "-"; bs = "-"
          if (busy != "-") {
            bs = (pl == "shared") ? bz[1] "%" : bz[1] "% / " bz[2] "%"
            if (pl == "shared") lim = "machine"
            else if (t == "direct") lim = "load side"
            else if (bz[1] >= 90) lim = "gateway"
            else if (bz[2] >= 90) lim = "load side"
            else lim = "latency"
          } else if (ceil > 0) lim = "not reached"
          printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\n", n, pl, v, t,
            added("placed", "p99"), added("placed", "d50"), added("placed", "d99"),
            added("load", "p99"), added("load", "d50"), added("load", "d99"), added("placed", "p50"), peak, ceil, (t == "direct" ? "-" : sprintf("%.0f", ceil / n)), cpu,
            (cpu == "-" || cpu + 0 == 0 ? "-" : sprintf("%.0f", 1e6 / cpu)), bs, lim }' "$OUT/latency.tsv" >>"$OUT/summary.tsv"
    done
    stop_run
  done
done
echo "# load_after=$(loadavg)" >>"$OUT/run.txt"

{
  echo "Gateway method, $STAMP, commit $COMMIT, $NPROC cores, load before/after: $(sed -n 's/.*load_before=//p' "$OUT/run.txt") / $(loadavg)"
  echo
  echo "| cores | placement | variant | target | c=1 p99 µs | added p99 µs | added p50 µs | on the load core: c=1 p99 | added p99 | added p50 | ceiling req/s | per core | CPU µs/req at ceiling | 1 s / CPU per req | busy at the failed rate (gateway / load cores) | stopped by |"
  echo "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"
  awk -F'\t' 'NR > 1 { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $7, $6, $8, $10, $9, $13, $14, $15, $16, $17, $18 }' "$OUT/summary.tsv"
} >"$OUT/summary.md"
echo
cat "$OUT/summary.md"
echo
echo "ceiling: the highest offered rate (STEPS: $STEPS % of the direct closed-loop peak, then $REFINE bisection(s)) with lag p99.5 + latency p99.5 < $P99_MS ms,"
echo "errors < $ERR_PCT %, at most $MAX_BEHIND_PCT % of the requests due left behind at the end (a failed step is tried $((RETRY + 1)) times);"
echo "stopped by: gateway (its cores >= 90 % busy at the lowest failed rate), load side (wrk and backend's cores >= 90 %, the gateway's not),"
echo "latency (neither), machine (\"shared\": gateway, wrk and backend on the same cores)."
echo "raw: $OUT"
