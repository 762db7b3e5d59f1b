#!/usr/bin/env bash
# Failure modes: what a client pays when the first backend misbehaves and a second one is
# healthy (docs/benchmarks.md, "Failure modes"). Two smartlb-sim backends: `bad` (priority 1,
# plays the mode) and `good` (priority 2). Every sample starts a fresh smartlb, so each request
# meets `bad` first (no cooldown learnt from an earlier sample), sends one request and measures
# its time against the same request to a healthy pair (the baseline).
#
# Modes: hang (accepts, never sends a head), head_stall (a head, then nothing), mid_stall (a
# stream stalls after two events), slow_first (its first token after 30 s, an overloaded
# backend), reset (RST before the head; a stream's right after its head), refused (nothing
# listens), http_429, large_429 (a 6 MiB chat with an image, answered 429), dark (the backend is stopped, SIGSTOP, after smartlb started: found by the health probe
# or by the request), trickle (a stream whose events come 0.5 s apart: alive, slowly, and never
# cut). Each mode streamed and not (a mid-stream mode only streamed).
#
# Usage: bench/failure_modes.sh      (SAMPLES=5 (streamed)  PLAIN_SAMPLES=2 (not streamed: a hang
#                                     there lasts HTTP_TIMEOUT_SECONDS, 100 s)  MODES="hang head_stall ..."
#                                     FIRST_TOKEN=5: FIRST_TOKEN_TIMEOUT_SECONDS of smartlb, "" for
#                                     its default; PROBE=2: HEALTH_PROBE_SECONDS)
# Needs: curl, python3; smartlb and smartlb-sim built in $BUILD (default build-bench).
# Output: a table on stdout (extra wait over the baseline, p50 and max, and the answers).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl python3
SAMPLES=${SAMPLES:-5}
PLAIN_SAMPLES=${PLAIN_SAMPLES:-2}
MODES=${MODES:-hang head_stall mid_stall slow_first reset refused http_429 large_429 dark trickle}
FIRST_TOKEN=${FIRST_TOKEN-5}
PROBE=${PROBE:-2}
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
STAMP=$(date +%Y%m%d-%H%M%S)
TSV="$RESULTS/failure_modes-$STAMP.tsv"

start_sim --deployment gpt-4o:1000000000:1000000 --first-token-ms 100
GOOD_PORT=$SIM_PORT
start_sim --deployment gpt-4o:1000000000:1000000 --first-token-ms 100
BAD_PORT=$SIM_PORT BAD_PID=$SIM_PID
REFUSED_PORT=$(free_port)  # nothing listens there

body() {  # body STREAM [image bytes]
  python3 - "$1" "${2:-0}" <<'PY'
import json, sys
stream, image = sys.argv[1] == "1", int(sys.argv[2])
content = "Summarise the history of load balancing in three sentences."
if image:
    content = [{"type": "text", "text": content},
               {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * image}}]
print(json.dumps({"messages": [{"role": "user", "content": content}], "max_tokens": 64, "stream": stream}))
PY
}
body 0 >"$TMP/plain.json"; body 1 >"$TMP/stream.json"
body 0 $((6 * 1024 * 1024)) >"$TMP/large.json"

faults() { curl -s -o /dev/null -X POST "http://127.0.0.1:$BAD_PORT/_sim/faults" -d "$1"; }
reset_bad() { kill -CONT "$BAD_PID" 2>/dev/null || true; curl -s -o /dev/null -X POST "http://127.0.0.1:$BAD_PORT/_sim/reset"; }

# Starts smartlb in front of BAD_URL (priority 1) and the good sim (priority 2); sets LB_PORT, LB_PID.
start_lb() {
  LB_PORT=$(free_port)
  env -i PATH="$PATH" PORT="$LB_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 ACCESS_LOG=off LOG_LEVEL=warn \
    BACKEND_1_URL="$1" BACKEND_1_NAME=bad BACKEND_1_PRIORITY=1 \
    BACKEND_2_URL="http://127.0.0.1:$GOOD_PORT" BACKEND_2_NAME=good BACKEND_2_PRIORITY=2 \
    HEALTH_PROBE_SECONDS="$PROBE" ${FIRST_TOKEN:+FIRST_TOKEN_TIMEOUT_SECONDS="$FIRST_TOKEN"} \
    "$SMARTLB" >>"$TMP/smartlb.log" 2>&1 &
  LB_PID=$!; PIDS+=("$LB_PID")
  wait_port "$LB_PORT"
}
stop_lb() { kill "$LB_PID" 2>/dev/null || true; wait "$LB_PID" 2>/dev/null || true; }

# One request; prints "seconds status bytes" (a stream cut short still prints its line; curl's
# exit status says so and is not the measure).
request() {  # request BODY_FILE
  local line
  line=$(curl -s -o "$TMP/answer" -w '%{time_total} %{http_code} %{size_download}' --max-time 300 \
    -H 'content-type: application/json' --data-binary @"$1" "http://127.0.0.1:$LB_PORT$PATH_Q" || true)
  echo "${line:-300 000 0}"
}

# One sample of a mode: a fresh smartlb, the mode set, one request.
sample() {  # sample MODE STREAM
  local mode=$1 stream=$2 file="$TMP/plain.json" url="http://127.0.0.1:$BAD_PORT"
  [ "$stream" = 1 ] && file="$TMP/stream.json"
  reset_bad
  case $mode in
    baseline) ;;
    hang) faults '{"stall_ms":600000,"stall_before_headers":true}' ;;
    head_stall) faults '{"stall_ms":600000}' ;;
    mid_stall) faults '{"stall_ms":600000,"stall_after_chunks":2}' ;;
    slow_first) faults '{"first_token_ms":30000}' ;;
    trickle) faults '{"trickle_ms":500}' ;;
    reset) if [ "$stream" = 1 ]; then faults '{"reset_after_chunks":0}'; else faults '{"reset_rate":1}'; fi ;;
    refused) url="http://127.0.0.1:$REFUSED_PORT" ;;
    http_429) faults '{"force_status":429,"force_retry_after_ms":10000}' ;;
    large_429) faults '{"force_status":429,"force_retry_after_ms":10000}'; file="$TMP/large.json" ;;
  esac
  start_lb "$url"
  if [ "$mode" = dark ]; then
    kill -STOP "$BAD_PID"
    # A client arriving at once meets it (the probe has not run yet) ...
    request "$file"
    # ... one arriving after a probe interval does not.
    sleep "$((PROBE + 1))"
    request "$file"
    kill -CONT "$BAD_PID"
  else
    request "$file"
  fi
  stop_lb
}

printf 'mode\tstream\tsample\tseconds\tstatus\tbytes\n' >"$TSV"
for stream in 0 1; do
  n=$SAMPLES; [ "$stream" = 1 ] || n=$PLAIN_SAMPLES
  for i in $(seq 1 "$n"); do
    sample baseline "$stream" | sed "s/^/baseline\t$stream\t$i\t/; s/ /\t/g" >>"$TSV"
  done
  for mode in $MODES; do
    case $mode in mid_stall | trickle) [ "$stream" = 1 ] || continue ;; esac
    for i in $(seq 1 "$n"); do
      if [ "$mode" = dark ]; then
        sample dark "$stream" | awk -v s="$stream" -v i="$i" '{m = NR == 1 ? "dark_at_once" : "dark_after_probe";
          printf "%s\t%s\t%s\t%s\t%s\t%s\n", m, s, i, $1, $2, $3}' >>"$TSV"
      else
        sample "$mode" "$stream" | sed "s/^/$mode\t$stream\t$i\t/; s/ /\t/g" >>"$TSV"
      fi
    done
  done
done

echo "# failure modes $STAMP samples=$SAMPLES (streamed) $PLAIN_SAMPLES (not) first_token_timeout=${FIRST_TOKEN:-default} probe=${PROBE}s"
python3 - "$TSV" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
base = {s: statistics.median(float(r["seconds"]) for r in rows if r["mode"] == "baseline" and r["stream"] == s)
        for s in ("0", "1")}
print(f"{'mode':<18} {'stream':<6} {'extra p50 s':>11} {'extra max s':>11}  answers")
seen = []
for r in rows:
    k = (r["mode"], r["stream"])
    if k not in seen: seen.append(k)
for mode, s in seen:
    xs = [r for r in rows if r["mode"] == mode and r["stream"] == s]
    extra = sorted(float(r["seconds"]) - base[s] for r in xs)
    statuses = {}
    for r in xs: statuses[r["status"]] = statuses.get(r["status"], 0) + 1
    answers = ", ".join(f"{n}x {st}" for st, n in sorted(statuses.items()))
    label = "yes" if s == "1" else "no"
    if mode == "baseline":
        print(f"{mode:<18} {label:<6} {'(' + format(base[s], '.3f') + ' s)':>11} {'':>11}  {answers}")
    else:
        print(f"{mode:<18} {label:<6} {statistics.median(extra):>11.3f} {extra[-1]:>11.3f}  {answers}")
PY
echo "raw: $TSV"
