#!/usr/bin/env bash
# Multi-core scaling: smartlb, haproxy and nginx as plain reverse proxies in front of a fast nginx
# backend, with 1, 2, 4 and 8 proxy cores, access logs off and on. Runs from the bundle that
# `bench/multicore.sh pack` makes (this file is copied into it). Derived from the bundle tool's
# run.sh, with the access logs made a variable:
#   LOGS="off on"   off: no proxy writes an access line (the peers' fastest setting);
#                   on: each writes one line per request, as deployed by default: nginx its
#                   default combined log to a file (unbuffered), haproxy `option httplog` to
#                   stdout, smartlb ACCESS_LOG=on to stdout; stdout goes to a file.
# Backend on cores 0-3, proxy on cores 4.., wrk on the cores left (at most 8 threads); needs 14
# cores for 8 proxy cores. CORES, CONNS, DUR, REPS as in run.sh. Logs and scratch files go to
# WORK (not OUT, which holds only the results): $OUT/scale.tsv with one row per run.
set -u
D=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/multicore-out}; mkdir -p "$OUT"
W=${WORK:-/tmp/multicore-work}; rm -rf "$W"; mkdir -p "$W"/{nb,np}/{logs,tmp}
LD="$D/lib/ld-linux-x86-64.so.2 --library-path $D/lib"
NCPU=$(nproc); echo "cpus $NCPU, $(uname -m), $(uname -r)" | tee "$OUT/machine.txt"
grep -m1 'model name' /proc/cpuinfo >>"$OUT/machine.txt"
ulimit -n 65536 2>/dev/null || ulimit -n 16384
CORES=${CORES:-"1 2 4 8"}; CONNS=${CONNS:-256}; DUR=${DUR:-4}; REPS=${REPS:-2}; LOGS=${LOGS:-"off on"}
FAST_BODY='{"id":"chatcmpl-fast","object":"chat.completion","created":1732000000,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Load balancers spread requests so that no single backend exceeds its rate limit."},"finish_reason":"stop"}],"usage":{"prompt_tokens":32,"completion_tokens":16,"total_tokens":48}}'
cat >"$W/body.json" <<'EOF'
{"model":"gpt-4o","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Write one sentence about load balancers and rate limits."}],"max_tokens":16,"temperature":0}
EOF
head_conf() { printf 'user root;\nworker_processes %s;\npid nginx.pid;\nerror_log logs/error.log warn;\nevents { worker_connections 16384; multi_accept on; }\nhttp {\n access_log off;\n client_body_temp_path tmp/body; proxy_temp_path tmp/proxy; fastcgi_temp_path tmp/f; uwsgi_temp_path tmp/u; scgi_temp_path tmp/s;\n keepalive_requests 10000000; keepalive_timeout 75s;\n' "$1"; }
{ head_conf 4; cat <<EOF
 server { listen 127.0.0.1:18000 backlog=8192 reuseport;
  location / { default_type application/json; add_header x-ratelimit-remaining-tokens 1000000000 always; return 200 '$FAST_BODY'; } }
}
EOF
} >"$W/nb/nginx.conf"
pids=()
start() { # start CPUS LOG cmd...
  local c=$1 l=$2; shift 2
  setsid $LD "$D/bin/taskset" -c "$c" "$@" >"$l" 2>&1 </dev/null & pids+=($!); LAST=$!
}
stop() { kill -TERM -- -"$1" 2>/dev/null; for _ in $(seq 30); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done; kill -KILL -- -"$1" 2>/dev/null; }
trap 'for p in "${pids[@]}"; do stop $p; done' EXIT
waitp() { for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 not open" >&2; return 1; }
ticks() { awk -v g="$1" '{ sub(/^.*\) /, ""); if ($3 == g) t += $12 + $13 } END { print t + 0 }' /proc/[0-9]*/stat 2>/dev/null; }
HZ=$(getconf CLK_TCK)
start "${BACK:-0-3}" "$W/backend.log" $LD "$D/bin/nginx" -c "$W/nb/nginx.conf" -p "$W/nb" -e "$W/nb/logs/error.log" -g 'daemon off;'
waitp 18000 || { cat "$W/backend.log"; exit 1; }
printf 'proxy\tlogs\tcores\tconns\trep\trps\tp50_ms\tp99_ms\tcpu_us_per_req\terrors\tlog_lines\n' >"$OUT/scale.tsv"
PATHQ='/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21'
wrk() { # wrk PORT SECONDS CPUS THREADS
  WRK_PATH=$PATHQ WRK_BODY_FILE=$W/body.json WRK_HEADERS="api-key: client-key" \
    $LD "$D/bin/taskset" -c "$3" $LD "$D/bin/wrk" -t"$4" -c"$CONNS" -d"$2s" -s "$D/wrk_post.lua" "http://127.0.0.1:$1$PATHQ" 2>&1
}
for logs in $LOGS; do
 for n in $CORES; do
  last=$((3 + n)); [ -z "${LOCAL:-}" ] && [ $last -ge $((NCPU - 2)) ] && { echo "skip $n cores"; continue; }
  pc="4-$last"; wc="$((last + 1))-$((NCPU - 1))"; wt=$((NCPU - last - 1)); [ $wt -gt 8 ] && wt=8
  if [ -n "${LOCAL:-}" ]; then pc=0-1; wc=0-1; wt=1; fi
  rm -f "$W"/np/logs/access.log "$W"/*-out.log
  nlog='access_log off;'; hlog=''; slog=off
  if [ "$logs" = on ]; then nlog='access_log logs/access.log;'; hlog=$'  log global\n  option httplog'; slog=on; fi
  { head_conf "$n"; cat <<EOF
 upstream fast { server 127.0.0.1:18000; keepalive 512; }
 server { listen 127.0.0.1:18101 backlog=8192 reuseport; $nlog location / { proxy_pass http://fast; proxy_http_version 1.1; proxy_set_header Connection ""; proxy_buffering off; } }
}
EOF
  } >"$W/np/nginx.conf"
  cat >"$W/haproxy.cfg" <<EOF
global
  nbthread $n
  maxconn 6000
  log stdout format raw local0
defaults
  mode http
$hlog
  option http-keep-alive
  http-reuse always
  timeout connect 5s
  timeout client 300s
  timeout server 300s
frontend f
  bind 127.0.0.1:18201
  default_backend b
backend b
  server s1 127.0.0.1:18000 maxconn 4000
EOF
  declare -A PG=() PORT=([nginx]=18101 [haproxy]=18201 [smartlb]=18301)
  start "$pc" "$W/nginx-out.log" $LD "$D/bin/nginx" -c "$W/np/nginx.conf" -p "$W/np" -e "$W/np/logs/error.log" -g 'daemon off;'; PG[nginx]=$LAST
  start "$pc" "$W/haproxy-out.log" $LD "$D/bin/haproxy" -db -f "$W/haproxy.cfg"; PG[haproxy]=$LAST
  start "$pc" "$W/smartlb-out.log" env PORT=18301 ADMIN_PORT=0 LISTEN_ADDRESS=127.0.0.1 THREADS=$n LOG_LEVEL=warn ACCESS_LOG=$slog \
    BACKEND_1_URL=http://127.0.0.1:18000 BACKEND_1_APIKEY=k $LD "$D/bin/smartlb"; PG[smartlb]=$LAST
  for t in nginx haproxy smartlb; do waitp "${PORT[$t]}" || tail -5 "$W/$t-out.log"; done
  for r in $(seq "$REPS"); do
    for t in smartlb haproxy nginx; do
      [ "$r" = 1 ] && wrk "${PORT[$t]}" 1 "$wc" "$wt" >/dev/null
      lf=$W/$t-out.log; [ $t = nginx ] && lf=$W/np/logs/access.log
      l0=$(wc -l 2>/dev/null <"$lf" || echo 0); t0=$(ticks "${PG[$t]}")
      o=$(wrk "${PORT[$t]}" "$DUR" "$wc" "$wt")
      t1=$(ticks "${PG[$t]}"); l1=$(wc -l 2>/dev/null <"$lf" || echo 0)
      echo "$o" | sed -n 's/^WRKJSON //p' | awk -v t=$t -v lg=$logs -v n=$n -v c=$CONNS -v r=$r -v dt=$((t1 - t0)) -v hz=$HZ -v ll=$((l1 - l0)) '
        { match($0,/"requests":[0-9]+/); q=substr($0,RSTART+11,RLENGTH-11)
          match($0,/"rps":[0-9.]+/); rps=substr($0,RSTART+6,RLENGTH-6)
          match($0,/"p50_ms":[0-9.]+/); p50=substr($0,RSTART+9,RLENGTH-9)
          match($0,/"p99_ms":[0-9.]+/); p99=substr($0,RSTART+9,RLENGTH-9)
          e=0; while (match($0,/"err_[a-z]+":[0-9]+/)) { s=substr($0,RSTART,RLENGTH); sub(/.*:/,"",s); e+=s; $0=substr($0,RSTART+RLENGTH) }
          printf "%s\t%s\t%d\t%d\t%d\t%.0f\t%.3f\t%.3f\t%.2f\t%d\t%d\n", t,lg,n,c,r,rps,p50,p99,(q>0? dt/hz*1e6/q : 0),e,ll }' >>"$OUT/scale.tsv"
      tail -1 "$OUT/scale.tsv"
    done
  done
  for t in nginx haproxy smartlb; do stop "${PG[$t]}"; done
  sleep 0.5
 done
done
echo done
