#!/usr/bin/env bash
# A client's max_in_flight held by two replicas together (docs/scale-out.md#requests-in-flight).
# One smartlb-sim answers every request after LATENCY_MS; two smartlb replicas each know one
# client capped at CAP requests in flight, and each is offered an open-loop load of that client
# at LOAD % of what the cap lets through (CAP / latency), split evenly. Cases:
#   local  no Redis: each replica holds a cap of its own (the backend may see 2 x CAP at once)
#   redis  REDIS_URL set: the replicas hold the cap together through leases
# Reported per case: the sim's peak of answers in flight (what the backend saw at once), requests
# answered 200 per second, client 429s, p50 / p99 latency of the 200s (the Redis round trip a
# request short of its replica's lease waits shows here).
#
#   bench/in_flight_cap.sh            (~1 min: CAP=20 LATENCY_MS=200 LOAD=150 DURATION=20)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
CAP=${CAP:-20}
LATENCY_MS=${LATENCY_MS:-200}
LOAD=${LOAD:-150}
DURATION=${DURATION:-20}
CASES=${CASES:-local redis}
need node curl jq redis-server
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
KEY="bench-client-key-1"
STAMP=$(date +%Y%m%d-%H%M%S)
OUT="$RESULTS/in-flight-cap-$STAMP"; mkdir -p "$OUT"
CAP_RPS=$(awk -v c="$CAP" -v l="$LATENCY_MS" 'BEGIN{print c*1000/l}')
RATE=$(awk -v r="$CAP_RPS" -v l="$LOAD" 'BEGIN{printf "%.3f", r*l/100/2}')  # per replica
echo "# in-flight cap $STAMP ($(git -C "$REPO_DIR" rev-parse --short HEAD 2>/dev/null || echo '?')): cap $CAP," \
  "latency ${LATENCY_MS} ms = $CAP_RPS req/s; load $LOAD % = 2 x $RATE req/s; ${DURATION}s; load $(loadavg)"
start_sim --name sim --latency-ms "$LATENCY_MS" --stream-chunks 0 --deployment "gpt-4o:1000000000"
REDIS_PORT=$(free_port)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no >"$OUT/redis.log" 2>&1 &
PIDS+=("$!")
wait_port "$REDIS_PORT"
printf 'clients:\n  - name: batch\n    key: %s\n    limits: {max_in_flight: %s}\n' "$KEY" "$CAP" >"$TMP/clients.yaml"

printf 'case\tsim_peak_in_flight\tcap\tok_per_s\tclient_429\tp50_ok_ms\tp99_ok_ms\n' >"$OUT/summary.tsv"
for case in $CASES; do
  ports=(); pids=()
  for n in 1 2; do
    port=$(free_port)
    envs=(PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 ACCESS_LOG=off LOG_LEVEL=warn
          REPLICA_ID="replica-$n" CONFIG_FILE="$TMP/clients.yaml" BACKEND_1_NAME=sim
          BACKEND_1_URL="http://127.0.0.1:$SIM_PORT")
    [ "$case" = redis ] && envs+=(REDIS_URL="redis://127.0.0.1:$REDIS_PORT" REDIS_KEY_PREFIX="bench-$STAMP:")
    env -i "${envs[@]}" "$SMARTLB" 2>"$OUT/$case-replica-$n.log" &
    pids+=("$!"); PIDS+=("$!"); ports+=("$port")
    wait_port "$port"
  done
  sleep 1.5  # the replicas register (heartbeat) and learn how many they are
  curl -s -m 5 -X POST "http://127.0.0.1:$SIM_PORT/_sim/reset" >/dev/null
  loaders=()
  for n in 0 1; do
    node "$BENCH_DIR/tools/openloop.js" --url "http://127.0.0.1:${ports[$n]}$PATH_Q" --rate "$RATE" \
      --duration "$DURATION" --conns 256 --api-key "$KEY" --out "$OUT/$case-$n.tsv" >"$OUT/$case-$n.json" &
    loaders+=("$!")
  done
  for l in "${loaders[@]}"; do wait "$l"; done
  peak=$(curl -s -m 5 "http://127.0.0.1:$SIM_PORT/_sim/stats" | jq '.answers_in_flight_peak')
  for p in "${pids[@]}"; do kill "$p"; wait "$p" 2>/dev/null || true; done
  jq -s -r --arg c "$case" --argjson peak "$peak" --argjson cap "$CAP" --argjson d "$DURATION" \
    '[$c, $peak, $cap, ((map(.ok)|add)/$d*10|round/10), (map(.r429)|add),
      (map(.latency_ok_ms.p50)|max), (map(.latency_ok_ms.p99)|max)] | @tsv' "$OUT/$case"-[01].json |
    tee -a "$OUT/summary.tsv"
done
column -t -s$'\t' "$OUT/summary.tsv"
echo "raw: $OUT"
