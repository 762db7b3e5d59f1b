#!/usr/bin/env bash
# Quota goodput: five smartlb-sim backends with TPM 300k:240k:150k:100k:50k (1 s windows),
# two priority groups (first three priority 1, last two priority 2, weights = TPM), open-loop
# load at 80 % and 120 % of the aggregate capacity, each request 200 tokens (400 characters of
# content + max_tokens 100; sims run with --stream-chunks 0 so a 200 serves exactly what it was
# charged). Compared: smartlb with declared TPM (QUOTA_WINDOW_SECONDS=1), smartlb without
# (reactive: routes by the sims' x-ratelimit-remaining-* reports, learns their windows from
# 429 + retry-after-ms), nginx (weighted upstreams + backup,
# proxy_next_upstream ... http_429 ... non_idempotent, tries 5).
#
# Reported per run: share of capacity served (sum of sims' tokens_served / (sum TPM/60 x
# duration)), client 200 / 429 (and how many carried Retry-After) / 5xx / transport errors,
# upstream 429 round trips per success (sum of sims' 429s / client 200s), p99 latency of 200s.
#
# Usage: bench/goodput.sh   (DURATION=60  LOADS="80 120"  SYSTEMS="smartlb-quota smartlb-reactive nginx")
set -euo pipefail
source "$(dirname "$0")/lib.sh"
DURATION=${DURATION:-60}
LOADS=${LOADS:-80 120}
SYSTEMS=${SYSTEMS:-smartlb-quota smartlb-reactive nginx}
need node curl jq
case " $SYSTEMS " in *" nginx "*) need nginx ;; esac
TPMS=(300000 240000 150000 100000 50000)
PRIOS=(1 1 1 2 2)
REQ_TOKENS=200
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
STAMP=$(date +%Y%m%d-%H%M%S)
OUT="$RESULTS/goodput-$STAMP"; mkdir -p "$OUT"

SIM_PORTS=(); SIM_PIDS=(); CAP_TPM=0
for i in 0 1 2 3 4; do
  start_sim --name "sim$((i+1))" --window-seconds 1 --stream-chunks 0 --deployment "gpt-4o:${TPMS[$i]}"
  SIM_PORTS+=("$SIM_PORT"); SIM_PIDS+=("$SIM_PID"); CAP_TPM=$((CAP_TPM + TPMS[i]))
done
CAP_TPS=$(awk -v t=$CAP_TPM 'BEGIN{print t/60}')
CAP_RPS=$(awk -v t=$CAP_TPS -v c=$REQ_TOKENS 'BEGIN{print t/c}')
echo "# goodput $STAMP: capacity $CAP_TPM TPM = $CAP_TPS tokens/s = $CAP_RPS req/s of $REQ_TOKENS tokens; duration ${DURATION}s; load $(loadavg)"

start_system() {  # sets SYS_PORT and SYS_PID
  local sys=$1
  SYS_PORT=$(free_port)
  case $sys in
    smartlb-quota|smartlb-reactive)
      local envs=(PATH="$PATH" PORT="$SYS_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 ACCESS_LOG=off LOG_LEVEL=error
                  QUOTA_WINDOW_SECONDS=1)
      for i in 0 1 2 3 4; do
        local x=$((i+1))
        envs+=("BACKEND_${x}_URL=http://127.0.0.1:${SIM_PORTS[$i]}" "BACKEND_${x}_NAME=sim$x"
               "BACKEND_${x}_PRIORITY=${PRIOS[$i]}" "BACKEND_${x}_WEIGHT=$((TPMS[i] / 1000))")
        [ "$sys" = smartlb-quota ] && envs+=("BACKEND_${x}_TPM=${TPMS[$i]}")
      done
      env -i "${envs[@]}" "$SMARTLB" 2>"$OUT/$sys.log" &
      SYS_PID=$! ;;
    nginx)
      sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$SYS_PORT|g" -e "s|@P1@|${SIM_PORTS[0]}|" -e "s|@P2@|${SIM_PORTS[1]}|" \
          -e "s|@P3@|${SIM_PORTS[2]}|" -e "s|@P4@|${SIM_PORTS[3]}|" -e "s|@P5@|${SIM_PORTS[4]}|" \
          "$BENCH_DIR/conf/nginx-goodput.conf.in" >"$TMP/nginx-goodput.conf"
      nginx -c "$TMP/nginx-goodput.conf" -p "$TMP" -e "$TMP/nginx-goodput.err" &
      SYS_PID=$! ;;
  esac
  PIDS+=("$SYS_PID")
  wait_port "$SYS_PORT"
}

printf 'system\tload_pct\trate_rps\tserved_pct\tok\tclient_429\t429_with_retry_after\tclient_5xx\ttransport_err\tupstream_429\tupstream_429_per_ok\tp99_ok_ms\tok_per_sim\n' >"$OUT/summary.tsv"
for load in $LOADS; do
  for sys in $SYSTEMS; do
    start_system "$sys"
    for p in "${SIM_PORTS[@]}"; do curl -s -X POST "http://127.0.0.1:$p/_sim/reset" >/dev/null; done
    rate=$(awk -v r=$CAP_RPS -v l=$load 'BEGIN{printf "%.3f", r*l/100}')
    node "$BENCH_DIR/tools/openloop.js" --url "http://127.0.0.1:$SYS_PORT$PATH_Q" --rate "$rate" \
      --duration "$DURATION" --conns 512 --out "$OUT/$sys-$load.tsv" >"$OUT/$sys-$load.json"
    alive() { kill -0 "$1" 2>/dev/null; }
    alive "$SYS_PID" || { echo "$sys died during the run (killed from outside?); aborting" >&2; exit 1; }
    for sp in "${SIM_PIDS[@]}"; do alive "$sp" || { echo "a sim died during the run; aborting" >&2; exit 1; }; done
    served=0; up429=0; per_sim=""
    for i in 0 1 2 3 4; do
      curl -s "http://127.0.0.1:${SIM_PORTS[$i]}/_sim/stats" >"$OUT/$sys-$load-sim$((i+1)).json"
      s=$(jq '.tokens_served' "$OUT/$sys-$load-sim$((i+1)).json")
      q=$(jq '.by_status["429"] // 0' "$OUT/$sys-$load-sim$((i+1)).json")
      o=$(jq '.by_status["200"] // 0' "$OUT/$sys-$load-sim$((i+1)).json")
      served=$((served + s)); up429=$((up429 + q)); per_sim+="${per_sim:+/}$o"
    done
    kill "$SYS_PID"; wait "$SYS_PID" 2>/dev/null || true
    j="$OUT/$sys-$load.json"
    jq -r --arg sys "$sys" --arg load "$load" --arg rate "$rate" --argjson served "$served" --argjson up429 "$up429" \
      --argjson cap "$(awk -v t=$CAP_TPS -v d=$DURATION 'BEGIN{print t*d}')" --arg per_sim "$per_sim" \
      '[$sys, $load, $rate, (100*$served/$cap*100|round/100), .ok, .r429, .r429_with_retry_after, .r5xx, .transport_errors,
        $up429, (if .ok>0 then ($up429/.ok*1000|round/1000) else "-" end), .latency_ok_ms.p99, $per_sim] | @tsv' "$j" \
      | tee -a "$OUT/summary.tsv" | sed 's/^/  /'
  done
done
echo
echo "Summary (capacity $CAP_TPM TPM; ok_per_sim = 200s served by sim1..sim5)"
column -t -s$'\t' "$OUT/summary.tsv"
echo "raw: $OUT"
