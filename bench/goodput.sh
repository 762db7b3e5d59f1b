#!/usr/bin/env bash
# Quota goodput over the family of real rate limiters. Five smartlb-sim backends with TPM
# 300k:240k:150k:100k:50k, two priority groups (first three priority 1, last two priority 2,
# weights = TPM/1000), open-loop load at LOADS % of the aggregate capacity, each request 200
# tokens (400 characters of content + max_tokens 100; sims run with --stream-chunks 0 so a 200
# serves exactly what it was charged).
#
# The matrix: one CELL per limiter model x window x whether smartlb knows the window:
#   LIMITERS      sims' --limiter: fixed (windows), sliding (window), bucket (continuous refill,
#                 BURST seconds of capacity)                         default "fixed sliding bucket"
#   WINDOWS       sims' --window-seconds (the TPM/RPM are scaled to it)        default "1 10 60"
#   WINDOW_KNOWN  configured: smartlb gets QUOTA_WINDOW_SECONDS = the window (nginx: fail_timeout
#                 = the window, whole seconds); unknown: smartlb's default (nginx: fail_timeout=1s)
#                                                                   default "unknown configured"
# and in each cell, for each of LOADS and SYSTEMS:
#   smartlb-reactive      no declared quota: routes by the sims' x-ratelimit-remaining-* reports
#   smartlb-reactive-off  the same with ROUTE_ON_REMAINING=off (reports not routed on; a smartlb
#                         without that switch ignores it and is smartlb-reactive again)
#   smartlb-quota         declared BACKEND_X_TPM; configured cells only
#   nginx                 weighted upstreams + backup, proxy_next_upstream ... http_429 ...
#                         non_idempotent, tries 5 (bench/conf/nginx-goodput.conf.in)
# A cell has its own five sims (reset before each run) and starts each system afresh; PARALLEL
# cells run at once. Each run lasts DURATION seconds, but at least 3 windows and a whole
# number of them (a 60 s window runs 180 s), so a fixed window's capacity is exact.
#
# Defaults: LOADS="80 120", SYSTEMS="smartlb-reactive smartlb-reactive-off smartlb-quota",
# DURATION=20, PARALLEL=2. Other knobs: RPM_INTERVAL (sims' --rpm-interval-seconds; empty =
# requests limited like tokens), JITTER (sims' --report-jitter, default 0), BURST (sims'
# --burst-seconds, default 1), LIMIT_HEADER (sims' --limit-header: capacity, default, or window:
# a bucket's x-ratelimit-limit-* then states the limit per window, not what the bucket holds),
# UNKNOWN_RATE (sims' --report-unknown-rate: 1 = every report says -1, default 0).
#
# Reported per cell, system and load: served_pct = sum of sims' tokens_served / capacity, the
# capacity being what the sims could admit over the run (sum of tokens_per_second x duration,
# + burst_tokens for a bucket, from their /_sim/stats); client 200 / 429 (and how many carried
# Retry-After) / 5xx / transport errors; upstream 429s (sum of the sims') and per client 200;
# p99 latency of 200s; 200s per sim. Then, per system, the worst cell at the highest load (120 %:
# lowest served_pct) and the cell with the most upstream 429s per success, then the whole table.
#
# Time: the default matrix is 18 cells, 90 runs of 20 s (1 s windows), 30 s (10 s) or 180 s
# (60 s windows): about 2 hours of runs, so about 1 hour with PARALLEL=2 and 30 minutes with
# PARALLEL=4 (a cell is light: 84 req/s at 120 %). A quick look:
#   LIMITERS=sliding WINDOWS=1 DURATION=10 bench/goodput.sh                          (~1 min)
# Output: bench/results/goodput-STAMP/summary.tsv (and each run's raw files by cell);
# node bench/plots.js --goodput-matrix .../summary.tsv draws plot-goodput-matrix.svg.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
LIMITERS=${LIMITERS:-fixed sliding bucket}
WINDOWS=${WINDOWS:-1 10 60}
WINDOW_KNOWN=${WINDOW_KNOWN:-unknown configured}
LOADS=${LOADS:-80 120}
SYSTEMS=${SYSTEMS:-smartlb-reactive smartlb-reactive-off smartlb-quota}
DURATION=${DURATION:-20}
PARALLEL=${PARALLEL:-2}
RPM_INTERVAL=${RPM_INTERVAL:-}
JITTER=${JITTER:-0}
BURST=${BURST:-1}
LIMIT_HEADER=${LIMIT_HEADER:-capacity}
UNKNOWN_RATE=${UNKNOWN_RATE:-0}
need node curl jq awk
case " $SYSTEMS " in *" nginx "*) need nginx ;; esac
for l in $LIMITERS; do case $l in fixed|sliding|bucket) ;; *) echo "LIMITERS: unknown limiter $l" >&2; exit 2 ;; esac; done
for k in $WINDOW_KNOWN; do case $k in unknown|configured) ;; *) echo "WINDOW_KNOWN: unknown value $k" >&2; exit 2 ;; esac; done
for s in $SYSTEMS; do
  case $s in smartlb-reactive|smartlb-reactive-off|smartlb-quota|nginx) ;; *) echo "SYSTEMS: unknown system $s" >&2; exit 2 ;; esac
done
[ "$PARALLEL" -ge 1 ] 2>/dev/null || { echo "PARALLEL must be a positive integer" >&2; exit 2; }
TPMS=(300000 240000 150000 100000 50000)
PRIOS=(1 1 1 2 2)
REQ_TOKENS=200
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
STAMP=$(date +%Y%m%d-%H%M%S)
OUT="$RESULTS/goodput-$STAMP"; mkdir -p "$OUT"
CAP_TPM=0; for t in "${TPMS[@]}"; do CAP_TPM=$((CAP_TPM + t)); done
CAP_RPS=$(awk -v t=$CAP_TPM -v c=$REQ_TOKENS 'BEGIN{print t/60/c}')
REV=$(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo '?')
SIM_FLAGS=(--stream-chunks 0 --burst-seconds "$BURST" --report-jitter "$JITTER" --limit-header "$LIMIT_HEADER"
           --report-unknown-rate "$UNKNOWN_RATE")
[ -n "$RPM_INTERVAL" ] && SIM_FLAGS+=(--rpm-interval-seconds "$RPM_INTERVAL")
HEADLINE="goodput matrix $STAMP ($REV): capacity $CAP_TPM TPM = $CAP_RPS req/s of $REQ_TOKENS tokens;"
HEADLINE+=" DURATION=$DURATION (at least 3 windows) RPM_INTERVAL=${RPM_INTERVAL:-none} JITTER=$JITTER BURST=$BURST"
HEADLINE+=" LIMIT_HEADER=$LIMIT_HEADER UNKNOWN_RATE=$UNKNOWN_RATE"
echo "# $HEADLINE; PARALLEL=$PARALLEL; load $(loadavg)"

# A run lasts DURATION seconds, at least 3 windows, rounded up to a whole number of windows.
cell_duration() {
  awk -v d="$DURATION" -v w="$1" 'BEGIN{ if (d < 3*w) d = 3*w; n = d/w; n = (n - int(n) > 1e-9) ? int(n) + 1 : int(n); print n*w }'
}

# Starts one system in front of the cell's sims; sets SYS_PORT and SYS_PID.
start_system() {  # start_system SYSTEM WINDOW KNOWN
  local sys=$1 window=$2 known=$3
  SYS_PORT=$(free_port)
  case $sys in
    smartlb-*)
      local envs=(PATH="$PATH" PORT="$SYS_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 ACCESS_LOG=off LOG_LEVEL=error)
      [ "$known" = configured ] && envs+=(QUOTA_WINDOW_SECONDS="$window")
      [ "$sys" = smartlb-reactive-off ] && envs+=(ROUTE_ON_REMAINING=off)
      for i in 0 1 2 3 4; do
        local x=$((i+1))
        envs+=("BACKEND_${x}_URL=http://127.0.0.1:${SIM_PORTS[$i]}" "BACKEND_${x}_NAME=sim$x"
               "BACKEND_${x}_PRIORITY=${PRIOS[$i]}" "BACKEND_${x}_WEIGHT=$((TPMS[i] / 1000))")
        [ "$sys" = smartlb-quota ] && envs+=("BACKEND_${x}_TPM=${TPMS[$i]}")
      done
      env -i "${envs[@]}" "$SMARTLB" 2>"$CELL_OUT/$sys.log" &
      SYS_PID=$! ;;
    nginx)
      # nginx takes whole seconds here: the window rounded up.
      local fail_timeout=1s
      [ "$known" = configured ] && fail_timeout="$(awk -v w="$window" 'BEGIN{s = int(w); if (s < w) s++; if (s < 1) s = 1; print s}')s"
      sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$SYS_PORT|g" -e "s|@FAIL_TIMEOUT@|$fail_timeout|g" \
          -e "s|@P1@|${SIM_PORTS[0]}|" -e "s|@P2@|${SIM_PORTS[1]}|" -e "s|@P3@|${SIM_PORTS[2]}|" \
          -e "s|@P4@|${SIM_PORTS[3]}|" -e "s|@P5@|${SIM_PORTS[4]}|" \
          "$BENCH_DIR/conf/nginx-goodput.conf.in" >"$TMP/nginx-goodput.conf"
      nginx -c "$TMP/nginx-goodput.conf" -p "$TMP" -e "$TMP/nginx-goodput.err" &
      SYS_PID=$! ;;
  esac
  PIDS+=("$SYS_PID")
  wait_port "$SYS_PORT"
}

alive() { kill -0 "$1" 2>/dev/null; }

# One cell, in a subshell: its own sims, processes and temporary folder; writes rows.tsv.
run_cell() {  # run_cell LIMITER WINDOW KNOWN
  local limiter=$1 window=$2 known=$3
  PIDS=()
  trap 'for p in "${PIDS[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done' EXIT
  trap 'exit 130' INT TERM HUP
  TMP=$(mktemp -d "$TMP/cell.XXXXXX")
  CELL_OUT="$OUT/$limiter-w$window-$known"; mkdir -p "$CELL_OUT"
  local duration cap_tps=0 burst=0 cap
  duration=$(cell_duration "$window")
  SIM_PORTS=(); SIM_PIDS=()
  for i in 0 1 2 3 4; do
    start_sim --name "sim$((i+1))" --limiter "$limiter" --window-seconds "$window" "${SIM_FLAGS[@]}" \
      --deployment "gpt-4o:${TPMS[$i]}"
    SIM_PORTS+=("$SIM_PORT"); SIM_PIDS+=("$SIM_PID")
  done
  for p in "${SIM_PORTS[@]}"; do
    read -r t b < <(curl -s -m 5 "http://127.0.0.1:$p/_sim/stats" |
                    jq -r '.capacity["gpt-4o"] | "\(.tokens_per_second) \(.burst_tokens)"')
    cap_tps=$(awk -v a="$cap_tps" -v b="$t" 'BEGIN{print a+b}'); burst=$((burst + b))
  done
  cap=$(awk -v r="$cap_tps" -v d="$duration" -v b="$burst" 'BEGIN{printf "%.0f", r*d+b}')
  : >"$CELL_OUT/rows.tsv"
  local load sys rate run served up429 per_sim s q o i sp
  for load in $LOADS; do
    for sys in $SYSTEMS; do
      [ "$sys" = smartlb-quota ] && [ "$known" != configured ] && continue
      start_system "$sys" "$window" "$known"
      for p in "${SIM_PORTS[@]}"; do curl -s -m 5 -X POST "http://127.0.0.1:$p/_sim/reset" >/dev/null; done
      rate=$(awk -v r="$CAP_RPS" -v l="$load" 'BEGIN{printf "%.3f", r*l/100}')
      run="$CELL_OUT/$sys-$load"
      # In the background and waited for, so that a TERM from the parent ends the cell at once.
      node "$BENCH_DIR/tools/openloop.js" --url "http://127.0.0.1:$SYS_PORT$PATH_Q" --rate "$rate" \
        --duration "$duration" --conns 512 --out "$run.tsv" >"$run.json" &
      PIDS+=("$!"); wait "$!"
      alive "$SYS_PID" || { echo "$sys died during the run (killed from outside?); aborting" >&2; exit 1; }
      for sp in "${SIM_PIDS[@]}"; do alive "$sp" || { echo "a sim died during the run; aborting" >&2; exit 1; }; done
      served=0; up429=0; per_sim=""
      for i in 0 1 2 3 4; do
        curl -s -m 5 "http://127.0.0.1:${SIM_PORTS[$i]}/_sim/stats" >"$run-sim$((i+1)).json"
        s=$(jq '.tokens_served' "$run-sim$((i+1)).json")
        q=$(jq '.by_status["429"] // 0' "$run-sim$((i+1)).json")
        o=$(jq '.by_status["200"] // 0' "$run-sim$((i+1)).json")
        served=$((served + s)); up429=$((up429 + q)); per_sim+="${per_sim:+/}$o"
      done
      kill "$SYS_PID"; wait "$SYS_PID" 2>/dev/null || true
      jq -r --arg limiter "$limiter" --arg window "$window" --arg known "$known" --arg sys "$sys" \
        --arg load "$load" --arg rate "$rate" --arg duration "$duration" --argjson served "$served" \
        --argjson up429 "$up429" --argjson cap "$cap" --arg per_sim "$per_sim" \
        '[$limiter, $window, $known, $sys, $load, (100*$served/$cap*100|round/100), .ok, .r429, .r5xx,
          .transport_errors, $up429, (if .ok>0 then ($up429/.ok*1000|round/1000) else "-" end),
          .latency_ok_ms.p99, $duration, $rate, .r429_with_retry_after, $per_sim] | @tsv' "$run.json" \
        >>"$CELL_OUT/rows.tsv"
      tail -n 1 "$CELL_OUT/rows.tsv" | sed 's/^/  /'
    done
  done
}

CELLS=()
for limiter in $LIMITERS; do
  for window in $WINDOWS; do
    for known in $WINDOW_KNOWN; do CELLS+=("$limiter $window $known"); done
  done
done
TOP_LOAD=$(tr -s ' ' '\n' <<<"$LOADS" | sort -n | tail -n 1)
COLUMNS_TSV=$'limiter\twindow_s\tknown\tsystem\tload_pct\tserved_pct\tok\tclient_429\tclient_5xx\ttransport_err\tupstream_429\tupstream_429_per_ok\tp99_ok_ms\tduration_s\trate_rps\tclient_429_with_retry_after\tok_per_sim'
echo "# rows as the cells finish:"
echo "  $COLUMNS_TSV"

# Runs the cells, PARALLEL at a time; a failed cell stops the matrix (the EXIT trap ends the rest).
declare -A CELL_OF=()
running=0
for cell in "${CELLS[@]}"; do
  if [ "$running" -ge "$PARALLEL" ]; then
    wait -n -p done_pid || { echo "cell '${CELL_OF[$done_pid]}' failed; stopping" >&2; exit 1; }
    running=$((running - 1))
  fi
  # shellcheck disable=SC2086  # the cell's three words are run_cell's arguments
  ( run_cell $cell ) &
  PIDS+=("$!"); CELL_OF[$!]=$cell; running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n -p done_pid || { echo "cell '${CELL_OF[$done_pid]}' failed; stopping" >&2; exit 1; }
  running=$((running - 1))
done

{
  echo "# $HEADLINE"
  echo "$COLUMNS_TSV"
  for cell in "${CELLS[@]}"; do
    read -r limiter window known <<<"$cell"
    cat "$OUT/$limiter-w$window-$known/rows.tsv"
  done
} >"$OUT/summary.tsv"

echo
echo "Worst cell per system at $TOP_LOAD % (lowest served_pct), and the most upstream 429s per success:"
awk -F'\t' -v top="$TOP_LOAD" '!/^#/ && $5 == top {
    cell = $1 " " $2 "s " $3
    if (!($4 in worst) || $6 + 0 < worst_pct[$4]) { worst[$4] = cell; worst_pct[$4] = $6 + 0 }
    if ($12 != "-" && (!($4 in most) || $12 + 0 > most_per_ok[$4])) { most[$4] = cell; most_per_ok[$4] = $12 + 0 }
  }
  END {
    for (s in worst) printf "  %-22s served %6.2f %% in %-26s upstream 429/ok %s in %s\n", s, worst_pct[s], worst[s],
                            (s in most ? most_per_ok[s] : "-"), (s in most ? most[s] : "-")
  }' "$OUT/summary.tsv" | sort
echo
echo "Summary (capacity $CAP_TPM TPM; ok_per_sim = 200s served by sim1..sim5)"
grep -v '^#' "$OUT/summary.tsv" | column -t -s$'\t'
echo "raw: $OUT"
