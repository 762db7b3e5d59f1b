#!/usr/bin/env bash
# smartlb with a large upload (docs/stateful-apis.md, "Large uploads"): a SIZE_MB file sent as
# files.create does it (multipart/form-data, POST /v1/files) to smartlb-sim, straight and
# through smartlb, the body streamed (above STREAM_REQUEST_BODY_BYTES, the default 4 MiB) and,
# for comparison, buffered (the threshold raised above the file). smartlb's memory from
# /proc/PID/status: VmRSS before (after one small request), VmHWM (the peak) and VmRSS after;
# throughput is curl's upload speed (no Expect: 100-continue: the sim does not answer it, and curl
# would wait a second). REPS uploads each; the table shows the last.
#
# Usage: bench/upload.sh   (SIZE_MB=200  REPS=3  THREADS=1)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl
SIZE_MB=${SIZE_MB:-200}
REPS=${REPS:-3}
THREADS=${THREADS:-1}
STAMP=$(date +%Y%m%d-%H%M%S)
TSV="$RESULTS/upload-$STAMP.tsv"

FILE="$TMP/upload.jsonl"
head -c $((SIZE_MB * 750 * 1000)) /dev/urandom | base64 -w 200 >"$FILE"  # SIZE_MB MB of text lines
BYTES=$(stat -c %s "$FILE")
# The sim keeps every file it is given: room for all of them.
start_sim --threads 1 --max-body-bytes $((4 * BYTES)) --store-max-bytes $((16 * BYTES))

status_kb() { awk -v k="$2:" '$1 == k {print $2}' /proc/"$1"/status; }
upload() {  # upload PORT -> "http_code seconds bytes_per_second"
  curl -s -o /dev/null -H 'Expect:' -w '%{http_code} %{time_total} %{speed_upload}\n' -F purpose=batch -F "file=@$FILE" \
    "http://127.0.0.1:$1/v1/files"
}

echo "# upload $STAMP $BYTES bytes, load $(loadavg)" | tee "$TSV"
printf 'path\tstatus\tseconds\tMB_per_s\trss_before_kb\tpeak_hwm_kb\trss_after_kb\n' | tee -a "$TSV"
for ((i = 0; i < REPS; i++)); do read -r code secs speed < <(upload "$SIM_PORT"); done
printf 'straight to the sim\t%s\t%s\t%.0f\t-\t-\t-\n' "$code" "$secs" "$(awk -v s="$speed" 'BEGIN{print s/1e6}')" |
  tee -a "$TSV"

run_through() {  # run_through NAME STREAM_REQUEST_BODY_BYTES MAX_REQUEST_BODY_BYTES
  local port; port=$(free_port)
  env -i PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS="$THREADS" ACCESS_LOG=off \
    LOG_LEVEL=warn STREAM_REQUEST_BODY_BYTES="$2" MAX_REQUEST_BODY_BYTES="$3" \
    MAX_STREAMED_BODY_BYTES=$((4 * BYTES)) BACKEND_1_URL="http://127.0.0.1:$SIM_PORT" "$SMARTLB" \
    2>"$TMP/smartlb.log" &
  SL_PID=$!; PIDS+=("$SL_PID")
  wait_port "$port"
  curl -s -o /dev/null "http://127.0.0.1:$port/v1/models"
  sleep 0.5
  local before; before=$(status_kb "$SL_PID" VmRSS)
  for ((i = 0; i < REPS; i++)); do read -r code secs speed < <(upload "$port"); done
  sleep 0.5
  printf '%s\t%s\t%s\t%.0f\t%s\t%s\t%s\n' "$1" "$code" "$secs" "$(awk -v s="$speed" 'BEGIN{print s/1e6}')" \
    "$before" "$(status_kb "$SL_PID" VmHWM)" "$(status_kb "$SL_PID" VmRSS)" | tee -a "$TSV"
  kill "$SL_PID"; wait "$SL_PID" 2>/dev/null || true
}
run_through "through smartlb, streamed" 4194304 33554432
run_through "through smartlb, buffered" $((2 * BYTES)) $((2 * BYTES))
echo
column -t -s$'\t' <(tail -n +2 "$TSV")
echo "raw: $TSV"
