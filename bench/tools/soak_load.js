#!/usr/bin/env node
// Open-loop load for the soak (bench/soak.sh): requests at a fixed arrival rate whatever the
// responses do, over keep-alive connections; a fraction of them stream ("stream": true) and a
// fraction of the streamed ones disconnect after the first body bytes (a client that goes away
// mid-stream). Keeps only counters (an hour at 500/s is 1.8 M requests), writes a one-line
// JSON progress file every --progress-s seconds and the JSON summary on stdout at the end.
//
// node soak_load.js --url URL --rate R --duration S [--stream-fraction 0.5]
//                   [--abort-fraction 0.1] [--conns 1024] [--timeout-ms 30000]
//                   [--max-tokens 20] [--progress FILE] [--progress-s 10]
'use strict';
const http = require('http');
const fs = require('fs');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const url = new URL(args.url);
const rate = Number(args.rate);
const duration = Number(args.duration || 60);
const streamFraction = Number(args['stream-fraction'] ?? 0.5);
const abortFraction = Number(args['abort-fraction'] ?? 0.1);
const conns = Number(args.conns || 1024);
const timeoutMs = Number(args['timeout-ms'] || 30000);
const maxTokens = Number(args['max-tokens'] || 20);
const progressS = Number(args['progress-s'] || 10);
const messages = [{ role: 'user', content: 'The quick brown fox jumps over the lazy dog. '.repeat(4) }];
const bodies = {
  plain: JSON.stringify({ messages, max_tokens: maxTokens }),
  stream: JSON.stringify({ messages, max_tokens: maxTokens, stream: true }),
};
const agent = new http.Agent({ keepAlive: true, maxSockets: conns, maxFreeSockets: conns });

const total = Math.round(rate * duration);
const c = {
  sent: 0, done: 0, inflight: 0, inflight_max: 0, streamed: 0, aborted_by_client: 0,
  by_status: {}, truncated: 0, transport_errors: {}, timeouts: 0,
};
const t0 = process.hrtime.bigint();
const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;
// Deterministic choice of kind per request index (no RNG needed): request i streams when the
// running share of streams is below the fraction, and likewise for aborts among streams.
let streams = 0, aborts = 0;

function fire(i) {
  const stream = (streams + 1) <= (i + 1) * streamFraction;
  if (stream) streams++;
  const abort = stream && (aborts + 1) <= streams * abortFraction;
  if (abort) aborts++;
  c.sent++; c.inflight++; if (c.inflight > c.inflight_max) c.inflight_max = c.inflight;
  if (stream) c.streamed++;
  const body = stream ? bodies.stream : bodies.plain;
  let finished = false;
  const finish = () => { if (finished) return; finished = true; c.inflight--; c.done++; if (c.done === total) report(); };
  const req = http.request({
    host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', agent,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  }, (res) => {
    c.by_status[res.statusCode] = (c.by_status[res.statusCode] || 0) + 1;
    let first = true;
    res.on('data', () => {
      if (abort && first && res.statusCode === 200) {
        c.aborted_by_client++;
        req.destroy();  // closes the connection mid-stream
        finish();
      }
      first = false;
    });
    let ended = false;
    res.on('end', () => { ended = true; finish(); });
    res.on('error', () => {});
    // Closed before the end and not by us: the proxy cut the answer (a backend reset mid-stream).
    res.on('close', () => { if (!ended && !finished) c.truncated++; finish(); });
  });
  req.setTimeout(timeoutMs, () => { c.timeouts++; req.destroy(); });
  req.on('error', (e) => {
    if (!finished) { const k = e.code || e.message; c.transport_errors[k] = (c.transport_errors[k] || 0) + 1; }
    finish();
  });
  req.end(body);
}

// Request i is due at i / rate seconds; a 5 ms tick sends whatever is due (cheaper than 1 ms
// and still a steady rate at this granularity).
let lateMax = 0;
const timer = setInterval(() => {
  const now = ms();
  while (c.sent < total && c.sent * 1000 / rate <= now) {
    lateMax = Math.max(lateMax, now - c.sent * 1000 / rate);
    fire(c.sent);
  }
  if (c.sent >= total) clearInterval(timer);
}, 5);
if (args.progress) {
  setInterval(() => {
    fs.writeFileSync(args.progress, JSON.stringify({ t_s: +(ms() / 1000).toFixed(1), ...c }) + '\n');
  }, progressS * 1000).unref();
}
setTimeout(() => report(), duration * 1000 + timeoutMs + 5000).unref();

let reported = false;
function report() {
  if (reported) return; reported = true;
  console.log(JSON.stringify({ rate, duration, scheduled: total, ...c, max_send_lateness_ms: +lateMax.toFixed(2) }));
  process.exit(0);
}
