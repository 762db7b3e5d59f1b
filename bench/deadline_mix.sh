#!/usr/bin/env bash
# Healthy requests the learned first-token deadline cuts (docs/benchmarks.md, "Failure modes"):
# must be 0. Two healthy smartlb-sims, each with `gpt-4o` (first token after 100 ms + 100 ms per
# 1,000 prompt tokens, like a model's prefill) and `o3` (a reasoning deployment: its first token
# after REASONING_S seconds); smartlb with its defaults (the deadline learned, no
# FIRST_TOKEN_TIMEOUT_SECONDS). Streamed requests, in this order: SHORT short chats (which teach
# the deadline), then LONG chats with a ~100k-token prompt and REASONING requests to o3,
# interleaved with more short ones. Reports what the clients got and smartlb's stalled
# failovers (smartlb_failovers_total{cause="stalled"}).
#
# Usage: bench/deadline_mix.sh   (SHORT=40 LONG=4 REASONING=3 REASONING_S=20 BUILD=build-release;
#                                 FIXED=8: FIRST_TOKEN_TIMEOUT_SECONDS=8 instead, the control that shows
#                                 the count sees a cut)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need curl python3
SHORT=${SHORT:-40}
LONG=${LONG:-4}
REASONING=${REASONING:-3}
REASONING_S=${REASONING_S:-20}

sims=()
for _ in 1 2; do
  start_sim --deployment gpt-4o:1000000000:1000000 --deployment o3:1000000000:1000000 \
    --reasoning-deployment "o3:$REASONING_S" --first-token-ms 100 --first-token-ms-per-1k-prompt-tokens 100
  sims+=("$SIM_PORT")
done

LB_PORT=$(free_port)
ADMIN=$(free_port)
env -i PATH="$PATH" PORT="$LB_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT="$ADMIN" \
  ACCESS_LOG=off LOG_LEVEL=warn ${FIXED:+FIRST_TOKEN_TIMEOUT_SECONDS="$FIXED"} \
  BACKEND_1_URL="http://127.0.0.1:${sims[0]}" BACKEND_1_NAME=a \
  BACKEND_2_URL="http://127.0.0.1:${sims[1]}" BACKEND_2_NAME=b \
  "$SMARTLB" >>"$TMP/smartlb.log" 2>&1 &
PIDS+=($!)
wait_port "$LB_PORT"

body() {  # body PROMPT_CHARS
  python3 - "$1" <<'PY'
import json, sys
n = int(sys.argv[1])
text = ("The history of load balancing, told at length. " * (n // 48 + 1))[:n]
print(json.dumps({"messages": [{"role": "user", "content": text}], "max_tokens": 32, "stream": True}))
PY
}
body 200 >"$TMP/short.json"
body 400000 >"$TMP/long.json"  # about 100k tokens at 4 characters a token

served=0 cut=0 slowest_long=0 slowest_reasoning=0
ask() {  # ask DEPLOYMENT BODY_FILE; prints "seconds ok"
  local line
  line=$(curl -s -N -o "$TMP/answer" -w '%{time_total} %{http_code}' --max-time 600 \
    -H 'content-type: application/json' --data-binary @"$2" \
    "http://127.0.0.1:$LB_PORT/openai/deployments/$1/chat/completions?api-version=2024-02-01" || true)
  local ok=0
  [ "${line#* }" = 200 ] && grep -q 'data: \[DONE\]' "$TMP/answer" && ok=1
  echo "${line%% *} $ok"
}
count() {  # count "SECONDS OK"
  if [ "${1#* }" = 1 ]; then served=$((served + 1)); else cut=$((cut + 1)); fi
}
for _ in $(seq 1 "$SHORT"); do count "$(ask gpt-4o "$TMP/short.json")"; done
for i in $(seq 1 "$((LONG > REASONING ? LONG : REASONING))"); do
  if [ "$i" -le "$LONG" ]; then
    r=$(ask gpt-4o "$TMP/long.json"); count "$r"
    slowest_long=$(python3 -c "print(max($slowest_long, ${r%% *}))")
  fi
  if [ "$i" -le "$REASONING" ]; then
    r=$(ask o3 "$TMP/short.json"); count "$r"
    slowest_reasoning=$(python3 -c "print(max($slowest_reasoning, ${r%% *}))")
  fi
  for _ in 1 2 3 4 5; do count "$(ask gpt-4o "$TMP/short.json")"; done
done
stalled=$(curl -s "http://127.0.0.1:$ADMIN/metrics" |
  awk '/^smartlb_failovers_total\{/ && /cause="stalled"/ {n += $NF} END {print n + 0}')
total=$((served + cut))
echo "# deadline mix: $SHORT short first, then $LONG long (~100k tokens) and $REASONING o3 (${REASONING_S} s to the first token), 5 short after each"
echo "requests $total  served whole $served  not served whole $cut  stalled failovers $stalled"
echo "slowest 100k-token prompt ${slowest_long} s, slowest reasoning request ${slowest_reasoning} s"
