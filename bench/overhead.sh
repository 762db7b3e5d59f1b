#!/usr/bin/env bash
# Proxy overhead: wrk straight to a fast backend vs through smartlb, nginx and haproxy
# (plain reverse proxies, keep-alive to the upstream, access logs OFF on all of them).
#
# Placement (2 cores): the proxy under test is pinned to core 1 (smartlb THREADS=1, nginx one
# worker, haproxy nbthread 1); wrk (1 thread) and the backend share core 0. Runs are
# interleaved: for each repetition, every connection count, every target in turn, in an order
# that changes every repetition (see williams_order).
# Proxy CPU per request = delta(utime+stime of the proxy's processes) / requests completed.
#
# Usage: bench/overhead.sh              (BACKEND=nginx|sim  DURATION=10  REPS=3  CONNS="16 128"
#                                        TARGETS="direct smartlb nginx haproxy"  WARMUP=2
#                                        (target smartlb_log = smartlb with its access log on (the default),
#                                         stdout a pipe emptied by a reader on the load core;
#                                         target smartlb_q = smartlb with a declared, never reached TPM;
#                                         target smartlb_rules = smartlb with a 20-rule config file whose
#                                         last rule matches;
#                                         target smartlb_budgets = smartlb where every caller has a budget
#                                         of each kind (never reached);
#                                         targets smartlb_tls nginx_tls haproxy_tls = the three proxies to
#                                         the same backend over HTTPS (a local CA, certificate verified,
#                                         keep-alive and session resumption), with TLS=1;
#                                         targets smartlb_trace100 and smartlb_trace1 = smartlb exporting
#                                         OpenTelemetry traces at 100 % and 1 % sampling to a second nginx
#                                         on the load core (200 for every POST /v1/traces);
#                                         target smartlb_redis = smartlb_q with its quota leased from a
#                                         local redis-server (shared quotas, issue 16), with REDIS=1;
#                                         QUOTA_WINDOW=s: their quota window (default 1 s, the costliest
#                                         for leases: 20 ms sub-windows; smartlb's default is 60);
#                                         SMARTLB_B=path adds target smartlb_b, another build, for an A/B,
#                                         and with TLS=1 smartlb_b_tls, paired with smartlb_tls)
#                                        BACKEND_CT=application/json: content type of the fixed answer)
# Needs: wrk nginx haproxy taskset; smartlb built in $BUILD (default build-bench).
# Output: a summary table on stdout; raw wrk output and a TSV under bench/results/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
need wrk nginx haproxy taskset
BACKEND=${BACKEND:-nginx}
DURATION=${DURATION:-10}
REPS=${REPS:-3}
CONNS=${CONNS:-16 128}
TARGETS=${TARGETS:-direct smartlb nginx haproxy}
WARMUP=${WARMUP:-2}
PROXY_CORE=${PROXY_CORE:-1}
LOAD_CORE=${LOAD_CORE:-0}
PATH_Q="/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01"
STAMP=$(date +%Y%m%d-%H%M%S)
TSV="$RESULTS/overhead-$STAMP.tsv"

subst() { sed -e "s|@TMP@|$TMP|g" -e "s|@PORT@|$2|g" -e "s|@BACKEND_PORT@|${3:-}|g" "$1"; }

# --- backend on the load core
if [ "$BACKEND" = sim ]; then
  "$SIM" --port 0 --log-level warn --deployment gpt-4o:1000000000000:100000000 >"$TMP/sim.out" 2>"$TMP/sim.log" &
  BPID=$!; PIDS+=("$BPID")
  until grep -q listening "$TMP/sim.out" 2>/dev/null; do sleep 0.05; done
  BPORT=$(sed -E 's/.*:([0-9]+)$/\1/' "$TMP/sim.out")
  taskset -pc "$LOAD_CORE" "$BPID" >/dev/null
else
  BPORT=$(free_port)
  subst "$BENCH_DIR/conf/nginx-backend.conf.in" "$BPORT" | sed "s|@CT@|${BACKEND_CT:-application/json}|" >"$TMP/nginx-backend.conf"
  taskset -c "$LOAD_CORE" nginx -c "$TMP/nginx-backend.conf" -p "$TMP" &
  PIDS+=($!)
fi
wait_port "$BPORT"

# --- with TLS=1, the same fixed backend over HTTPS (a CA and a localhost certificate made here)
if [ "${TLS:-0}" = 1 ]; then start_tls_backend "$LOAD_CORE" "${BACKEND_CT:-application/json}"; fi

# --- proxies on the proxy core
declare -A PORT PROCS
PORT[direct]=$BPORT
SL_PORT=$(free_port)
env -i PATH="$PATH" PORT="$SL_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
  LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" BACKEND_1_NAME=fast \
  taskset -c "$PROXY_CORE" "$SMARTLB" 2>"$TMP/smartlb.log" &
SL_PID=$!; PIDS+=("$SL_PID"); PORT[smartlb]=$SL_PORT; PROCS[smartlb]=$SL_PID

# smartlb_log: the same with its default access log (ACCESS_LOG=on), stdout a pipe that a reader
# on the load core empties, as a container runtime's log driver does (optional target).
mkfifo "$TMP/access.fifo"
taskset -c "$LOAD_CORE" cat "$TMP/access.fifo" >/dev/null &
PIDS+=($!)
SLOG_PORT=$(free_port)
env -i PATH="$PATH" PORT="$SLOG_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=on \
  LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" BACKEND_1_NAME=fast \
  taskset -c "$PROXY_CORE" "$SMARTLB" >"$TMP/access.fifo" 2>"$TMP/smartlb-log.log" &
SLOG_PID=$!; PIDS+=("$SLOG_PID"); PORT[smartlb_log]=$SLOG_PORT; PROCS[smartlb_log]=$SLOG_PID

# smartlb_q: the same with a declared (never reached) quota, so every request is token-estimated
# and charged against a sliding window (optional target).
SQ_PORT=$(free_port)
env -i PATH="$PATH" PORT="$SQ_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
  LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" BACKEND_1_NAME=fast BACKEND_1_TPM=1000000000000 QUOTA_WINDOW_SECONDS="${QUOTA_WINDOW:-1}" \
  taskset -c "$PROXY_CORE" "$SMARTLB" 2>"$TMP/smartlb-q.log" &
SQ_PID=$!; PIDS+=("$SQ_PID"); PORT[smartlb_q]=$SQ_PORT; PROCS[smartlb_q]=$SQ_PID

# smartlb_rules: the same backend through a routing policy of 20 rules of which only the last
# matches (each of the others checks a model and metadata), so every request is matched against
# all of them (optional target).
write_rules20 "$TMP/rules20.yaml" "$BPORT"
SR_PORT=$(free_port)
env -i PATH="$PATH" PORT="$SR_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
  LOG_LEVEL=warn taskset -c "$PROXY_CORE" "$SMARTLB" --config "$TMP/rules20.yaml" 2>"$TMP/smartlb-rules.log" &
SR_PID=$!; PIDS+=("$SR_PID"); PORT[smartlb_rules]=$SR_PORT; PROCS[smartlb_rules]=$SR_PID

# smartlb_budgets: every caller (here the anonymous one) with a budget of each kind, never
# reached: every request is admitted, charged and settled, and carries x-ratelimit-* fields.
SBU_PORT=$(free_port)
env -i PATH="$PATH" PORT="$SBU_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
  LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" BACKEND_1_NAME=fast CLIENT_TOKENS_PER_MINUTE=1000000000 \
  CLIENT_REQUESTS_PER_MINUTE=100000000 CLIENT_TOKENS_PER_DAY=1000000000000 CLIENT_TOKENS_PER_MONTH=1000000000000 \
  taskset -c "$PROXY_CORE" "$SMARTLB" 2>"$TMP/smartlb-budgets.log" &
SBU_PID=$!; PIDS+=("$SBU_PID"); PORT[smartlb_budgets]=$SBU_PORT; PROCS[smartlb_budgets]=$SBU_PID

# smartlb_trace100, smartlb_trace1: smartlb with traces on, exported to an OTLP stand-in (the
# fixed backend's nginx config on its own port, on the load core) at 100 % and 1 % sampling.
OT_PORT=$(free_port)
subst "$BENCH_DIR/conf/nginx-backend.conf.in" "$OT_PORT" | sed -e "s|@CT@|application/json|g" -e "s|nginx-backend|nginx-otlp|g" >"$TMP/otlp.conf"
taskset -c "$LOAD_CORE" nginx -c "$TMP/otlp.conf" -p "$TMP" -e "$TMP/otlp.err" & PIDS+=($!)
wait_port "$OT_PORT"
for ratio in 100 1; do
  port=$(free_port)
  env -i PATH="$PATH" PORT="$port" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
    LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" BACKEND_1_NAME=fast \
    OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$OT_PORT" OTEL_TRACES_SAMPLER=traceidratio \
    OTEL_TRACES_SAMPLER_ARG="$(awk -v r="$ratio" 'BEGIN { print r / 100 }')" \
    taskset -c "$PROXY_CORE" "$SMARTLB" >/dev/null 2>"$TMP/smartlb-trace$ratio.log" &  # not the teardown's failed exports
  pid=$!; PIDS+=("$pid"); PORT[smartlb_trace$ratio]=$port; PROCS[smartlb_trace$ratio]=$pid
done

# smartlb_redis: smartlb_q with REDIS_URL: its quota is leased from a redis-server on the load
# core (docs/scale-out.md), what a replica of a scaled-out deployment does (optional, REDIS=1).
REDIS_TARGETS=""
if [ "${REDIS:-0}" = 1 ]; then
  need redis-server
  RD_PORT=$(free_port)
  taskset -c "$LOAD_CORE" redis-server --bind 127.0.0.1 --port "$RD_PORT" --save '' --appendonly no \
    >"$TMP/redis.log" 2>&1 &
  PIDS+=($!)
  wait_port "$RD_PORT"
  SRD_PORT=$(free_port)
  env -i PATH="$PATH" PORT="$SRD_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
    LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" BACKEND_1_NAME=fast BACKEND_1_TPM=1000000000000 QUOTA_WINDOW_SECONDS="${QUOTA_WINDOW:-1}" \
    REDIS_URL="redis://127.0.0.1:$RD_PORT" taskset -c "$PROXY_CORE" "$SMARTLB" 2>"$TMP/smartlb-redis.log" &
  SRD_PID=$!; PIDS+=("$SRD_PID"); PORT[smartlb_redis]=$SRD_PORT; PROCS[smartlb_redis]=$SRD_PID
  REDIS_TARGETS="smartlb_redis"
fi

# smartlb_b: another build of smartlb (SMARTLB_B=path), for an A/B of a change under the same
# conditions; it appears as a peer in the paired table.
if [ -n "${SMARTLB_B:-}" ]; then
  SB_PORT=$(free_port)
  env -i PATH="$PATH" PORT="$SB_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
    LOG_LEVEL=warn BACKEND_1_URL="http://127.0.0.1:$BPORT" BACKEND_1_NAME=fast \
    taskset -c "$PROXY_CORE" "$SMARTLB_B" 2>"$TMP/smartlb-b.log" &
  SB_PID=$!; PIDS+=("$SB_PID"); PORT[smartlb_b]=$SB_PORT; PROCS[smartlb_b]=$SB_PID
fi

NG_PORT=$(free_port)
subst "$BENCH_DIR/conf/nginx-proxy.conf.in" "$NG_PORT" "$BPORT" >"$TMP/nginx-proxy.conf"
taskset -c "$PROXY_CORE" nginx -c "$TMP/nginx-proxy.conf" -p "$TMP" &
NG_PID=$!; PIDS+=("$NG_PID"); PORT[nginx]=$NG_PORT

HA_PORT=$(free_port)
subst "$BENCH_DIR/conf/haproxy.cfg.in" "$HA_PORT" "$BPORT" >"$TMP/haproxy.cfg"
taskset -c "$PROXY_CORE" haproxy -db -f "$TMP/haproxy.cfg" 2>"$TMP/haproxy.log" &
HA_PID=$!; PIDS+=("$HA_PID"); PORT[haproxy]=$HA_PORT

# The TLS targets: each proxy to the HTTPS backend, verifying its certificate against the CA,
# keeping connections alive and resuming TLS sessions.
TLS_TARGETS=""
if [ "${TLS:-0}" = 1 ]; then
  ST_PORT=$(free_port)
  env -i PATH="$PATH" PORT="$ST_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
    LOG_LEVEL=warn BACKEND_1_URL="https://localhost:$TPORT" BACKEND_1_NAME=fast UPSTREAM_CA_FILE="$TMP/ca.pem" \
    taskset -c "$PROXY_CORE" "$SMARTLB" 2>"$TMP/smartlb-tls.log" &
  ST_PID=$!; PIDS+=("$ST_PID"); PORT[smartlb_tls]=$ST_PORT; PROCS[smartlb_tls]=$ST_PID
  NT_PORT=$(free_port)
  subst "$BENCH_DIR/conf/nginx-proxy.conf.in" "$NT_PORT" "$TPORT" |
    sed -e "s|proxy_pass http://backend;|proxy_pass https://backend; proxy_ssl_trusted_certificate $TMP/ca.pem; proxy_ssl_verify on; proxy_ssl_server_name on; proxy_ssl_name localhost; proxy_ssl_session_reuse on;|" \
        -e "s|nginx-proxy.pid|nginx-proxy-tls.pid|; s|nginx-proxy.err|nginx-proxy-tls.err|" >"$TMP/nginx-proxy-tls.conf"
  taskset -c "$PROXY_CORE" nginx -c "$TMP/nginx-proxy-tls.conf" -p "$TMP" &
  NT_PID=$!; PIDS+=("$NT_PID"); PORT[nginx_tls]=$NT_PORT
  HT_PORT=$(free_port)
  subst "$BENCH_DIR/conf/haproxy.cfg.in" "$HT_PORT" "$TPORT" |
    sed -e "s|server b1 127.0.0.1:$TPORT maxconn 9000|server b1 127.0.0.1:$TPORT maxconn 9000 ssl verify required ca-file $TMP/ca.pem sni str(localhost) verifyhost localhost|" \
        -e "s|haproxy.pid|haproxy-tls.pid|" >"$TMP/haproxy-tls.cfg"
  taskset -c "$PROXY_CORE" haproxy -db -f "$TMP/haproxy-tls.cfg" 2>"$TMP/haproxy-tls.log" &
  HT_PID=$!; PIDS+=("$HT_PID"); PORT[haproxy_tls]=$HT_PORT
  TLS_TARGETS="smartlb_tls nginx_tls haproxy_tls"
  if [ -n "${SMARTLB_B:-}" ]; then  # the other build over HTTPS too: smartlb_b_tls
    SBT_PORT=$(free_port)
    env -i PATH="$PATH" PORT="$SBT_PORT" LISTEN_ADDRESS=127.0.0.1 ADMIN_PORT=0 THREADS=1 ACCESS_LOG=off \
      LOG_LEVEL=warn BACKEND_1_URL="https://localhost:$TPORT" BACKEND_1_NAME=fast UPSTREAM_CA_FILE="$TMP/ca.pem" \
      taskset -c "$PROXY_CORE" "$SMARTLB_B" 2>"$TMP/smartlb-b-tls.log" &
    SBT_PID=$!; PIDS+=("$SBT_PID"); PORT[smartlb_b_tls]=$SBT_PORT; PROCS[smartlb_b_tls]=$SBT_PID
    TLS_TARGETS+=" smartlb_b_tls"
  fi
fi

for t in smartlb smartlb_log smartlb_q smartlb_rules smartlb_budgets smartlb_trace100 smartlb_trace1 nginx haproxy ${SMARTLB_B:+smartlb_b} $TLS_TARGETS \
         $REDIS_TARGETS; do
  wait_port "${PORT[$t]}"
done
sleep 0.3
PROCS[nginx]=$(tree_pids "$NG_PID")
PROCS[haproxy]=$(tree_pids "$HA_PID")
if [ -n "$TLS_TARGETS" ]; then PROCS[nginx_tls]=$(tree_pids "$NT_PID"); PROCS[haproxy_tls]=$(tree_pids "$HT_PID"); fi
PROCS[direct]=""

# Sanity: one request through each target.
for t in $TARGETS; do
  code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'content-type: application/json' \
    -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":100}' "http://127.0.0.1:${PORT[$t]}$PATH_Q")
  [ "$code" = 200 ] || { echo "$t answered $code" >&2; exit 1; }
done

to_ms() {  # wrk latency token (e.g. 512.00us, 1.23ms, 1.01s) -> ms
  awk -v v="$1" 'BEGIN{ if (v ~ /us$/) {sub(/us$/,"",v); print v/1000}
                        else if (v ~ /ms$/) {sub(/ms$/,"",v); print v+0}
                        else if (v ~ /s$/) {sub(/s$/,"",v); print v*1000} }'
}

echo "# overhead $STAMP backend=$BACKEND duration=${DURATION}s reps=$REPS load_before=$(loadavg)" | tee "$TSV"
printf 'rep\tconns\ttarget\trps\tp50_ms\tp99_ms\terrors\tproxy_cpu_us_per_req\tload1\tproxy_user_us_per_req\tsteal_ms\n' | tee -a "$TSV"
# The order of the targets changes every repetition (a Williams square: over n repetitions of
# n targets, n even, each target runs in every position once and right after every other target
# once), so no target always gets the same slot or the same predecessor on a drifting machine.
read -r -a TARGET_LIST <<<"$TARGETS"
NT=${#TARGET_LIST[@]}
williams_order() {  # williams_order REP -> the targets in that repetition's order
  local r=$(( ($1 - 1) % NT )) j k=0 out=()
  for ((j = 0; j < NT; j++)); do
    if ((j == 0)); then k=0; elif ((j % 2 == 1)); then k=$(((j + 1) / 2)); else k=$((NT - j / 2)); fi
    out+=("${TARGET_LIST[$(((k + r) % NT))]}")
  done
  echo "${out[*]}"
}
for rep in $(seq 1 "$REPS"); do
  ORDER=$(williams_order "$rep")
  for c in $CONNS; do
    for t in $ORDER; do
      url="http://127.0.0.1:${PORT[$t]}$PATH_Q"
      taskset -c "$LOAD_CORE" wrk -t1 -c"$c" -d"${WARMUP}s" -s "$BENCH_DIR/conf/chat.lua" "$url" >/dev/null
      pids=${PROCS[$t]}
      case $t in
        nginx) pids=$(tree_pids "$NG_PID") ;; haproxy) pids=$(tree_pids "$HA_PID") ;;
        nginx_tls) pids=$(tree_pids "$NT_PID") ;; haproxy_tls) pids=$(tree_pids "$HT_PID") ;;
      esac
      before=0; ubefore=0; [ -n "$pids" ] && before=$(cpu_ticks $pids) && ubefore=$(utime_ticks $pids)
      out="$RESULTS/overhead-$STAMP-r$rep-c$c-$t.txt"
      s0=$(steal_ticks)
      taskset -c "$LOAD_CORE" wrk -t1 -c"$c" -d"${DURATION}s" --timeout 5s --latency \
        -s "$BENCH_DIR/conf/chat.lua" "$url" >"$out"
      after=0; uafter=0; [ -n "$pids" ] && after=$(cpu_ticks $pids) && uafter=$(utime_ticks $pids)
      s1=$(steal_ticks)
      reqs=$(awk '/requests in/{print $1}' "$out")
      rps=$(awk '/^Requests\/sec/{print $2}' "$out")
      p50=$(to_ms "$(awk '$1=="50%"{print $2}' "$out")")
      p99=$(to_ms "$(awk '$1=="99%"{print $2}' "$out")")
      errs=$(awk '/Non-2xx/{n+=$NF} /Socket errors/{gsub(/,/,""); n+=$4+$6+$8+$10} END{print n+0}' "$out")
      cpu="-"; usr="-"
      [ "$before" = "?" ] || [ "$after" = "?" ] && cpu="?"
      [ -n "$pids" ] && [ "$cpu" != "?" ] && cpu=$(awk -v d=$((after - before)) -v tck="$CLK_TCK" -v n="$reqs" 'BEGIN{printf "%.1f", d*1e6/tck/n}') &&
        usr=$(awk -v d=$((uafter - ubefore)) -v tck="$CLK_TCK" -v n="$reqs" 'BEGIN{printf "%.1f", d*1e6/tck/n}')
      printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$c" "$t" "$rps" "$p50" "$p99" "$errs" "$cpu" \
        "$(cut -d' ' -f1 /proc/loadavg)" "$usr" $(((s1 - s0) * 1000 / CLK_TCK)) | tee -a "$TSV"
    done
  done
done

echo
echo "Summary (median over $REPS reps; [min-max] of requests/s) — backend=$BACKEND, access logs off everywhere but smartlb_log"
awk -F'\t' 'NR>2 {k=$2"\t"$3; n[k]++; rps[k,n[k]]=$4; p50[k,n[k]]=$5; p99[k,n[k]]=$6; cpu[k,n[k]]=$8; err[k]+=$7; keys[k]=1}
  function med(a,k,m,   i,j,t,v){ for(i=1;i<=m;i++) v[i]=a[k,i]+0; for(i=1;i<=m;i++) for(j=i+1;j<=m;j++) if(v[j]<v[i]){t=v[i];v[i]=v[j];v[j]=t}
      return (m%2)? v[(m+1)/2] : (v[m/2]+v[m/2+1])/2 }
  function mn(a,k,m,  i,x){x=a[k,1]+0; for(i=2;i<=m;i++) if(a[k,i]+0<x) x=a[k,i]+0; return x}
  function mx(a,k,m,  i,x){x=a[k,1]+0; for(i=2;i<=m;i++) if(a[k,i]+0>x) x=a[k,i]+0; return x}
  END { printf "%-6s %-8s %10s %17s %8s %8s %12s %7s\n","conns","target","req/s","[min-max]","p50 ms","p99 ms","cpu us/req","errors";
        for (k in keys) { split(k,a,"\t"); m=n[k];
          printf "%-6s %-8s %10.0f %8.0f-%-8.0f %8.3f %8.3f %12s %7d\n", a[1], a[2], med(rps,k,m), mn(rps,k,m), mx(rps,k,m), med(p50,k,m), med(p99,k,m), (a[2]=="direct"?"-":sprintf("%.1f",med(cpu,k,m))), err[k] } }' "$TSV" | sort -k1,1n -k2,2
# Paired view: the machine's speed drifts by more than the differences between proxies, so
# compare within a repetition (the targets of one rep run back to back) and count wins.
echo
echo "Paired by repetition: smartlb / peer (smartlb_tls / peer for the _tls peers, smartlb_q / smartlb_redis; req/s ratio > 1 and CPU ratio < 1 favour smartlb);"
echo "geo mean [95 % confidence interval]: the geometric mean of the ratios (a mean of logs, so"
echo "smartlb/peer and peer/smartlb agree), ± 1.96 standard errors of the log. A target that is the"
echo "same build (SMARTLB_B=\$SMARTLB) measures the harness: its interval should contain 1."
awk -F'\t' 'NR>2 { r[$1"\t"$2"\t"$3]=$4; c[$1"\t"$2"\t"$3]=$8; reps[$1]=1; conns[$2]=1; tg[$3]=1 }
  function median(v,m,  i,j,t){ for(i=1;i<=m;i++) for(j=i+1;j<=m;j++) if(v[j]<v[i]){t=v[i];v[i]=v[j];v[j]=t}
      return (m%2)? v[(m+1)/2] : (v[m/2]+v[m/2+1])/2 }
  function geo_ci(v,m,  i,s,ss,mu,h){ if (m<2) return "-"; s=0; for(i=1;i<=m;i++) s+=log(v[i]); mu=s/m
      ss=0; for(i=1;i<=m;i++) ss+=(log(v[i])-mu)^2; h=1.96*sqrt(ss/(m-1)/m)
      return sprintf("%.3f [%.3f-%.3f]", exp(mu), exp(mu-h), exp(mu+h)) }
  END { printf "%-6s %-10s %13s %8s %22s %11s %8s %22s\n", "conns", "peer", "req/s median", "wins", "geo mean [ci95]", "cpu median", "wins", "geo mean [ci95]";
    for (cn in conns) for (p in tg) { if (p=="smartlb" || p=="smartlb_q" || p=="direct" || p=="smartlb_tls") continue
      # HTTPS peers against smartlb over HTTPS; Redis-leased quotas against the same quota kept locally
      base = (p ~ /_tls$/) ? "smartlb_tls" : (p == "smartlb_redis" ? "smartlb_q" : "smartlb")
      n=0; wr=0; wc=0; nc=0; delete vr; delete vc
      for (rep in reps) { a=rep"\t"cn"\t"base; b=rep"\t"cn"\t"p
        if (!(a in r) || !(b in r) || r[b]+0==0) continue
        vr[++n]=r[a]/r[b]; if (vr[n]>1) wr++
        if (c[a]+0>0 && c[b]+0>0) { vc[++nc]=c[a]/c[b]; if (vc[nc]<1) wc++ } }
      if (n) { mr=geo_ci(vr,n); mc=geo_ci(vc,nc)
        printf "%-6s %-10s %13.3f %4d/%-3d %22s %11.3f %4d/%-3d %22s\n", cn, p, median(vr,n), wr, n, mr, (nc?median(vc,nc):0), wc, nc, mc } } }' "$TSV" | sort -k1,1n -k2,2
echo "raw: $TSV"
