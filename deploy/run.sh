#!/usr/bin/env bash
# Install, build and start smartlb.
#
#   ./deploy/run.sh [--config FILE]
#
# Installs the build dependencies (Debian 12), builds a Release smartlb into build-release/,
# then:
#   * with a config file (--config FILE, --config=FILE, or CONFIG_FILE in the environment):
#     runs smartlb in the foreground with that file and the environment (docs/routing-policy.md);
#   * with BACKEND_1_URL (or any BACKEND_X_URL) in the environment: runs smartlb in the
#     foreground with that environment (see docs/configuration.md);
#   * with neither, demo mode: starts five simulated Azure OpenAI regions (smartlb-sim) on
#     127.0.0.1, puts smartlb in front of them, fails one region to show a failover, sends a
#     burst of traffic that runs the regions out of quota, shows where the requests went, and
#     keeps smartlb running until Ctrl-C.
#     The demo's smartlb takes no config file: yours is never mixed into it.
#
# Environment: PORT (8080), ADMIN_PORT (9090), LISTEN_ADDRESS (demo: 127.0.0.1), JOBS (2,
# parallel compile jobs), SKIP_DEPS=1 (do not run deploy/install-deps.sh), DEMO_BURST=0 (demo
# without the failover and the traffic burst).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build-release"

say() { printf '%s\n' "$*"; }
die() { printf 'run.sh: %s\n' "$*" >&2; exit 1; }

# --- your config file, if any -------------------------------------------------------------
# Read before anything else (a wrong argument should not cost a build), and made absolute
# before the script changes to the repository's root.
config_file="${CONFIG_FILE:-}"
while (($# > 0)); do
  case "$1" in
    --config)
      [[ -n "${2:-}" ]] || die "--config needs a file name"
      config_file="$2"
      shift 2
      ;;
    --config=*)
      config_file="${1#--config=}"
      [[ -n "$config_file" ]] || die "--config= needs a file name"
      shift
      ;;
    -h | --help)
      sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
      exit 0
      ;;
    *) die "unknown argument '$1' (usage: ./deploy/run.sh [--config FILE])" ;;
  esac
done
if [[ -n "$config_file" ]]; then
  [[ -r "$config_file" && -f "$config_file" ]] || die "cannot read the config file '$config_file'"
  config_file="$(cd "$(dirname "$config_file")" && pwd)/$(basename "$config_file")"
fi
cd "$root"

# --- install and build ------------------------------------------------------------------
if [[ "${SKIP_DEPS:-0}" != 1 ]]; then
  deploy/install-deps.sh
fi
say "run.sh: building Release into build-release/ (the first build takes a few minutes)"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSMARTLB_BUILD_TESTS=OFF -DSMARTLB_BUILD_BENCHMARKS=OFF > "$build.configure.log" 2>&1 ||
  { cat "$build.configure.log" >&2; die "cmake configure failed"; }
rm -f "$build.configure.log"
# Only ninja's progress lines are shown; the full output is in build-release/build.log.
set +e
cmake --build "$build" -j "${JOBS:-2}" --target smartlb smartlb-sim 2>&1 |
  tee "$build/build.log" | awk '/^\[[0-9]+\/[0-9]+\]/ { print "  " $0; fflush() }'
status=${PIPESTATUS[0]}
set -e
if ((status != 0)); then
  grep -E -B2 -A12 'error|FAILED' "$build/build.log" | head -n 60 >&2 || tail -n 40 "$build/build.log" >&2
  die "build failed (full output: build-release/build.log)"
fi
smartlb="$build/src/smartlb"
sim="$build/src/sim/smartlb-sim"
[[ -x "$smartlb" ]] || die "build did not produce $smartlb"

# --- your configuration: run in the foreground ---------------------------------------------
if [[ -n "$config_file" ]]; then
  say "run.sh: starting $("$smartlb" --version) with $config_file (and the environment)"
  exec "$smartlb" --config "$config_file"
fi
have_backend=false
for var in $(compgen -e); do
  [[ "$var" =~ ^BACKEND_[0-9]+_URL$ ]] && have_backend=true
done
if $have_backend; then
  say "run.sh: starting $("$smartlb" --version) with the backends from the environment"
  exec "$smartlb"
fi

# --- demo mode ----------------------------------------------------------------------------
[[ -x "$sim" ]] || die "build did not produce $sim"
port="${PORT:-8080}"
admin_port="${ADMIN_PORT:-9090}"
listen="${LISTEN_ADDRESS:-127.0.0.1}"
host="127.0.0.1"
[[ "$listen" != "0.0.0.0" && "$listen" != "::" ]] && host="$listen"
proxy="http://$host:$port"
demo="$build/demo"
mkdir -p "$demo"
rm -f "$demo"/*.out "$demo"/*.log "$demo"/results.txt

# The quota window: real Azure counts tokens per minute; the demo scales every quota to a
# 10-second window so that running out and recovering happen while you watch.
window=10
# name  TPM     priority  weight (proportional to TPM)
regions=(
  "eastus        300000  1  300"
  "swedencentral 240000  1  240"
  "westus        150000  1  150"
  "francecentral 100000  2  100"
  "japaneast      50000  2  50"
)
deployment="gpt-4o"
api_version="2024-10-21"

pids=()
cleanup() {
  trap - EXIT INT TERM
  local p
  for p in "${pids[@]}"; do kill -TERM "$p" 2> /dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2> /dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for p in "$port" "$admin_port"; do
  if [[ "$p" != 0 ]] && (echo > "/dev/tcp/$host/$p") 2> /dev/null; then
    die "port $p is already in use; set PORT=... and ADMIN_PORT=... to free ports"
  fi
done

# Waits until file $1 holds a line matching $2, or process $3 exits, for at most 10 s.
wait_for_line() {
  local i
  for ((i = 0; i < 100; i++)); do
    grep -q -- "$2" "$1" 2> /dev/null && return 0
    kill -0 "$3" 2> /dev/null || return 1
    sleep 0.1
  done
  return 1
}

say "run.sh: demo mode (no config file, no BACKEND_1_URL set): starting 5 simulated Azure OpenAI regions"
names=()
sim_ports=()
declare -A tpm_of prio_of weight_of port_of
n=0
for spec in "${regions[@]}"; do
  read -r name tpm prio weight <<< "$spec"
  n=$((n + 1))
  "$sim" --port 0 --name "$name" --deployment "$deployment:$tpm" --window-seconds "$window" \
    --api-key "demo-key-$name" --log-level warn > "$demo/$name.out" 2> "$demo/$name.log" &
  pid=$!
  pids+=("$pid")
  wait_for_line "$demo/$name.out" "listening on" "$pid" ||
    { cat "$demo/$name.log" >&2; die "smartlb-sim $name did not start"; }
  sim_port="$(sed -nE 's/.*:([0-9]+)$/\1/p' "$demo/$name.out" | head -n 1)"
  names+=("$name")
  sim_ports+=("$sim_port")
  tpm_of[$name]=$tpm
  prio_of[$name]=$prio
  weight_of[$name]=$weight
  port_of[$name]=$sim_port
  export "BACKEND_${n}_URL=http://127.0.0.1:$sim_port"
  export "BACKEND_${n}_NAME=$name"
  export "BACKEND_${n}_PRIORITY=$prio"
  export "BACKEND_${n}_WEIGHT=$weight"
  export "BACKEND_${n}_APIKEY=demo-key-$name"
done

export PORT="$port" ADMIN_PORT="$admin_port" LISTEN_ADDRESS="$listen"
unset CLIENT_API_KEYS  # the demo takes any client key
unset CONFIG_FILE      # (set but empty) the demo routes its own regions only
"$smartlb" > "$demo/smartlb.log" 2>&1 &
smartlb_pid=$!
pids+=("$smartlb_pid")
if ! wait_for_line "$demo/smartlb.log" "listening on" "$smartlb_pid"; then
  cat "$demo/smartlb.log" >&2
  die "smartlb did not start"
fi

url="$proxy/openai/deployments/$deployment/chat/completions?api-version=$api_version"
cat << EOF

  smartlb is listening on $proxy   (status page: http://$host:$admin_port/)

  Regions (simulated, quotas scaled to a ${window}-second window):
EOF
printf '    %-14s %-9s %-9s %-7s %s\n' "backend" "TPM" "priority" "weight" "address"
for name in "${names[@]}"; do
  printf '    %-14s %-9s %-9s %-7s %s\n' "$name" "${tpm_of[$name]}" "${prio_of[$name]}" \
    "${weight_of[$name]}" "127.0.0.1:${port_of[$name]}"
done
cat << EOF

  Try it (any api-key works: smartlb puts each region's own key on the request):

    curl -i '$url' \\
      -H 'api-key: anything' -H 'content-type: application/json' \\
      -d '{"messages":[{"role":"user","content":"Hello"}],"max_tokens":100}'

  Python (pip install openai):

    from openai import AzureOpenAI
    client = AzureOpenAI(azure_endpoint="$proxy", api_key="anything",
                         api_version="$api_version")
    r = client.chat.completions.with_raw_response.create(
        model="$deployment", messages=[{"role": "user", "content": "Hello"}])
    print(r.headers["x-smartlb-backend"], r.parse().choices[0].message.content)

  Node (npm install openai; save as demo.mjs, run node demo.mjs):

    import { AzureOpenAI } from "openai";
    const client = new AzureOpenAI({ endpoint: "$proxy", apiKey: "anything",
                                     apiVersion: "$api_version", deployment: "$deployment" });
    const r = await client.chat.completions.create({ model: "$deployment",
                                     messages: [{ role: "user", content: "Hello" }] });
    console.log(r.choices[0].message.content);

EOF

# --- a failover, then a burst of traffic -------------------------------------------------------
# First one region fails (the simulator answers 503 to every request it gets): requests go out
# one at a time until one has landed there, and the access log shows it was answered elsewhere
# at once. Then waves of large requests run the priority-1 regions out of quota.
if [[ "${DEMO_BURST:-1}" != 0 ]]; then
  # shellcheck disable=SC2089,SC2090  # JSON, not shell words
  body='{"messages":[{"role":"user","content":"Write a long story about load balancers."}],"max_tokens":4000}'
  one_request() {
    curl -s -o /dev/null --max-time 30 -X POST "$url" \
      -H 'api-key: anything' -H 'content-type: application/json' -d "$body" \
      -w '%{http_code}|%header{x-smartlb-backend}|%header{retry-after}|%header{retry-after-ms}\n' ||
      echo "000|||"
  }
  export -f one_request
  # shellcheck disable=SC2090
  export url body

  failing="${names[0]}"
  fault() { curl -s -o /dev/null --max-time 5 -X POST "http://127.0.0.1:${port_of[$failing]}/_sim/faults" -d "$1"; }
  fault '{"error_rate":1,"error_status":503}'
  say "  $failing now answers 503 to everything (a simulated outage). Requests, one at a time:"
  outage_line=""
  for ((i = 1; i <= 30; i++)); do
    one_request > /dev/null
    outage_line="$(grep "attempts=[2-9] ($failing:503" "$demo/smartlb.log" | head -n 1 || true)"
    [[ -n "$outage_line" ]] && break
  done
  fault '{"error_rate":0}'
  if [[ -n "$outage_line" ]]; then
    say "  Failover: request $i went to $failing, got its 503, and was sent at once to another"
    say "  region; the client got that region's 200 (smartlb's access log):"
    say "    $outage_line"
    say "  $failing cools down for 10 s (no Retry-After given): meanwhile nothing is sent there."
    say "  $failing answers normally again; smartlb sends it requests once that cooldown has ended."
  else
    say "  (none of $((i - 1)) requests was drawn to $failing: the weighted draw avoided it)"
    say "  $failing answers normally again."
  fi

  results="$demo/results.txt"
  : > "$results"
  log_from=$(wc -l < "$demo/smartlb.log")
  say ""
  say "  Sending a burst of chat completions (max_tokens 4000 each) through smartlb..."
  sent=0
  start_ns=$(date +%s%N)
  while ((sent < 400)); do
    seq 1 10 | xargs -P 5 -I{} bash -c one_request >> "$results"
    sent=$((sent + 10))
    p2_served=$(awk -F'|' '$1 == 200 && ($2 == "francecentral" || $2 == "japaneast")' "$results" | wc -l)
    proxy_429=$(awk -F'|' '$1 == 429 && $2 == ""' "$results" | wc -l)
    ((p2_served > 0 && proxy_429 > 0)) && break
  done
  elapsed_ms=$((($(date +%s%N) - start_ns) / 1000000))

  say ""
  say "  Burst: $sent requests in ${elapsed_ms} ms"
  printf '    %-14s %-9s %-16s %s\n' "backend" "priority" "served (200)" "turned down by the region (429)"
  region_429=0
  for name in "${names[@]}"; do
    served=$(awk -F'|' -v n="$name" '$1 == 200 && $2 == n' "$results" | wc -l)
    stats="$(curl -s --max-time 5 "http://127.0.0.1:${port_of[$name]}/_sim/stats" || true)"
    by_status="$(grep -o '"by_status":{[^}]*}' <<< "$stats" | head -n 1 || true)"
    throttled="$(sed -nE 's/.*"429":([0-9]+).*/\1/p' <<< "$by_status")"
    region_429=$((region_429 + ${throttled:-0}))
    printf '    %-14s %-9s %-16s %s\n' "$name" "${prio_of[$name]}" "$served" "${throttled:-0}"
  done
  ok=$(awk -F'|' '$1 == 200' "$results" | wc -l)
  proxy_429=$(awk -F'|' '$1 == 429 && $2 == ""' "$results" | wc -l)
  other=$((sent - ok - proxy_429))
  burst_log="$(tail -n +"$((log_from + 1))" "$demo/smartlb.log")"
  failovers=$(grep -c 'status=200 attempts=[2-9]' <<< "$burst_log" || true)
  say ""
  extra=""
  ((other > 0)) && extra=" (and $other other answers)"
  say "  The client got $ok x 200 and $proxy_429 x 429$extra."
  say "  Steering: smartlb reads each region's x-ratelimit-remaining-* headers and keeps a request"
  say "  away from a region whose reported tokens it would not fit;"
  if ((p2_served > 0)); then
    say "  so the priority-2 regions served $p2_served once priority 1 ran low."
  else
    say "  priority 1 had room for the whole burst."
  fi
  if ((failovers > 0)); then
    say "  The regions still turned down $region_429 request(s) with 429 (their usage moved faster than"
    say "  their reports); $failovers were answered by another region at once, for example:"
    grep 'status=200 attempts=[2-9]' <<< "$burst_log" | head -n 3 | sed 's/^/    /' || true
  else
    say "  No request of the burst needed a second region: the regions turned down $region_429."
  fi
  if ((proxy_429 > 0)); then
    IFS='|' read -r _ _ ra ra_ms <<< "$(awk -F'|' '$1 == 429 && $2 == ""' "$results" | head -n 1)"
    say "  When every region was out of quota, smartlb answered 429 itself, with"
    say "  Retry-After: $ra and retry-after-ms: $ra_ms -- the time until the soonest region recovers."
  fi
  say "  Quotas refill every $window seconds; run the burst again with the curl above in a loop."
fi

cat << EOF

  smartlb is running at $proxy (status page: http://$host:$admin_port/). Its log follows
  (also in build-release/demo/smartlb.log). Ctrl-C stops smartlb and the simulated regions.

EOF
tail -n 0 -f "$demo/smartlb.log" --pid="$smartlb_pid" &
pids+=("$!")
wait "$smartlb_pid" || true
