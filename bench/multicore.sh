#!/usr/bin/env bash
# Multi-core scaling against nginx and haproxy, and where smartlb's time goes at 8 cores, on a
# machine with 16 or more cores. Made here, run there:
#
#   bench/multicore.sh pack              # here: bench/results/bundle (smartlb, peers, wrk, perf)
#   bench/results/bundle/multicore.sh    # there, with OUT=<folder for the results>
#
# The run: multicore_scale.sh (a fast nginx backend on cores 0-3, each proxy on 1, 2, 4 and 8
# cores from core 4, wrk on the cores left, access logs off then on; CORES, CONNS, DUR, REPS,
# LOGS as there), then smartlb alone at PROFILE_CORES (8) with its access log on, under the same
# load for PROFILE_SECONDS (8) with `perf record` (skipped where perf cannot open events),
# reported by symbol and by shared object. Results: $OUT/scale.tsv, $OUT/perf-symbols.txt,
# $OUT/perf-objects.txt; logs and scratch files in WORK (/tmp/multicore-work). SKIP_SCALE=1:
# only the profile (after one short 1-core step).
set -u
if [ "${1:-}" = pack ]; then
  root=$(cd "$(dirname "$0")/.." && pwd)
  bin=${SMARTLB:-$root/build-bench/src/smartlb}
  out=$root/bench/results/bundle
  rm -rf "$out"
  "$root/../shared/tools/multicore/bundle.sh" "$out" "$bin" "$(command -v perf)"
  # bundle.sh strips smartlb*: perf needs its symbols, and one copy keeps the bundle (57 MB) within
  # the 64 MiB a device call carries.
  cp "$bin" "$out/bin/smartlb"
  cp "$0" "$out/multicore.sh"
  cp "$root/bench/multicore_scale.sh" "$out/"
  exit 0
fi
D=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/multicore-out} WORK=${WORK:-/tmp/multicore-work}
mkdir -p "$OUT"
CONNS=${CONNS:-256}
if [ -n "${SKIP_SCALE:-}" ]; then  # one short step, for the backend's configuration
  CORES=1 CONNS=$CONNS DUR=1 REPS=1 LOGS=off "$D/multicore_scale.sh"
else
  CORES=${CORES:-1 2 4 8} CONNS=$CONNS DUR=${DUR:-4} REPS=${REPS:-2} LOGS=${LOGS:-off on} "$D/multicore_scale.sh"
fi

n=${PROFILE_CORES:-8}
NCPU=$(nproc)
last=$((3 + n))
pc="4-$last" bc=0-3 wc="$((last + 1))-$((NCPU - 1))"
if [ -n "${LOCAL:-}" ]; then pc=0-1 bc=0-1 wc=0-1; # a try of the script on a small machine
elif [ "$last" -ge $((NCPU - 2)) ]; then echo "profile: too few cores for $n"; exit 0; fi
LD="$D/lib/ld-linux-x86-64.so.2 --library-path $D/lib"
W=$WORK
setsid $LD "$D/bin/taskset" -c "$bc" $LD "$D/bin/nginx" -c "$W/nb/nginx.conf" -p "$W/nb" -g 'daemon off;' \
  >"$W/profile-backend.log" 2>&1 &
bpid=$!
setsid $LD "$D/bin/taskset" -c "$pc" env PORT=18301 ADMIN_PORT=0 LISTEN_ADDRESS=127.0.0.1 THREADS=$n \
  LOG_LEVEL=warn ACCESS_LOG=${PROFILE_LOG:-on} BACKEND_1_URL=http://127.0.0.1:18000 BACKEND_1_APIKEY=k \
  $LD "$D/bin/smartlb" >"$W/profile-smartlb.log" 2>&1 &
spid=$!
for _ in $(seq 50); do (exec 3<>/dev/tcp/127.0.0.1/18301) 2>/dev/null && break; sleep 0.1; done
PATHQ='/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21'
secs=${PROFILE_SECONDS:-8}
WRK_PATH=$PATHQ WRK_BODY_FILE=$W/body.json WRK_HEADERS="api-key: client-key" \
  $LD "$D/bin/taskset" -c "$wc" $LD "$D/bin/wrk" -t8 -c"${CONNS%% *}" -d"$((secs + 3))s" \
  -s "$D/wrk_post.lua" "http://127.0.0.1:18301$PATHQ" >"$W/profile-wrk.txt" 2>&1 &
wpid=$!
sleep 2
if $LD "$D/bin/perf" record -F 499 -o "$W/perf.data" -p "$spid" -- sleep "$secs" >"$W/perf-record.log" 2>&1; then
  $LD "$D/bin/perf" report -i "$W/perf.data" --stdio --no-children --sort sym -g none --percent-limit 0.4 \
    >"$OUT/perf-symbols.txt" 2>/dev/null
  $LD "$D/bin/perf" report -i "$W/perf.data" --stdio --no-children --sort dso -g none \
    >"$OUT/perf-objects.txt" 2>/dev/null
  rm -f "$W/perf.data"
else
  echo "perf record failed: $(tail -2 "$W/perf-record.log")"
fi
wait "$wpid"
kill -TERM -- -"$spid" -"$bpid" 2>/dev/null
sed -n "s/^WRKJSON /profile wrk: /p" "$W/profile-wrk.txt"
echo profile done
