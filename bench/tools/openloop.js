#!/usr/bin/env node
// Open-loop HTTP load generator: sends requests at a fixed arrival rate whatever the
// responses do (a request is never held back waiting for an earlier one), over a pool of
// keep-alive connections. Records every request (send time, status, latency,
// x-smartlb-backend / x-sim-name, Retry-After) as TSV and prints a JSON summary.
//
// node openloop.js --url URL --rate R --duration S [--conns 512] [--out file.tsv]
//                  [--content-chars 400] [--max-tokens 100] [--timeout-ms 30000]
//                  [--batch-share 0.5]   (that share of the requests, evenly spread, carries
//                                         x-smartlb-priority: batch; the summary adds by_class)
//                  [--api-key KEY]       (sent as api-key: a client of smartlb's)
'use strict';
const http = require('http');
const fs = require('fs');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const url = new URL(args.url);
const rate = Number(args.rate);
const duration = Number(args.duration || 60);
const conns = Number(args.conns || 512);
const timeoutMs = Number(args['timeout-ms'] || 30000);
const chars = Number(args['content-chars'] || 400);
const maxTokens = Number(args['max-tokens'] || 100);
const batchShare = Number(args['batch-share'] || 0);
const isBatch = (i) => Math.floor((i + 1) * batchShare) > Math.floor(i * batchShare);
const content = 'The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(chars / 45)).slice(0, chars);
const body = JSON.stringify({ messages: [{ role: 'user', content }], max_tokens: maxTokens });
const agent = new http.Agent({ keepAlive: true, maxSockets: conns, maxFreeSockets: conns });

const total = Math.round(rate * duration);
const recs = [];
let sent = 0, done = 0, inflightMax = 0, inflight = 0;
const t0 = process.hrtime.bigint();
const ms = () => Number(process.hrtime.bigint() - t0) / 1e6;

function fire(i) {
  const start = ms();
  inflight++; if (inflight > inflightMax) inflightMax = inflight;
  const cls = isBatch(i) ? 'batch' : 'interactive';
  const rec = { i, start, status: 0, backend: '', sim: '', retry: '', retryMs: '', lat: 0, err: '', cls };
  const req = http.request({
    host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', agent,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body),
      ...(cls === 'batch' ? { 'x-smartlb-priority': 'batch' } : {}),
      ...(args['api-key'] ? { 'api-key': args['api-key'] } : {}) },
  }, (res) => {
    rec.status = res.statusCode;
    rec.backend = res.headers['x-smartlb-backend'] || '';
    rec.sim = res.headers['x-sim-name'] || '';
    rec.retry = res.headers['retry-after'] || '';
    rec.retryMs = res.headers['retry-after-ms'] || '';
    res.on('data', () => {});
    res.on('end', () => finish());
    res.on('error', (e) => { rec.err = e.code || e.message; finish(); });
  });
  let finished = false;
  function finish() {
    if (finished) return; finished = true;
    rec.lat = ms() - start; inflight--; done++; recs.push(rec);
    if (done === total) report();
  }
  req.setTimeout(timeoutMs, () => { rec.err = 'timeout'; req.destroy(); });
  req.on('error', (e) => { rec.err = rec.err || e.code || e.message; finish(); });
  req.end(body);
}

// The schedule: request i is due at i / rate seconds. A 1 ms tick sends whatever is due.
let lateMax = 0;
const timer = setInterval(() => {
  const now = ms();
  while (sent < total && sent * 1000 / rate <= now) {
    lateMax = Math.max(lateMax, now - sent * 1000 / rate);
    fire(sent++);
  }
  if (sent >= total) clearInterval(timer);
}, 1);
// Hard bound: report whatever finished.
setTimeout(() => { report(); }, (duration * 1000) + timeoutMs + 5000).unref();

let reported = false;
function pct(a, p) { if (!a.length) return null; const s = [...a].sort((x, y) => x - y); return +s[Math.min(s.length - 1, Math.floor(p / 100 * s.length))].toFixed(2); }
function report() {
  if (reported) return; reported = true;
  if (args.out) {
    const lines = ['i\tstart_ms\tstatus\tlatency_ms\tbackend\tsim\tretry_after\tretry_after_ms\terror\tclass'];
    for (const r of recs.sort((a, b) => a.i - b.i))
      lines.push([r.i, r.start.toFixed(2), r.status, r.lat.toFixed(2), r.backend, r.sim, r.retry, r.retryMs, r.err, r.cls].join('\t'));
    fs.writeFileSync(args.out, lines.join('\n') + '\n');
  }
  const byStatus = {}, byBackend = {}, byClass = {};
  let r429 = 0, r429WithRetry = 0, r5xx = 0, errors = 0;
  const lat200 = [];
  for (const r of recs) {
    byStatus[r.status] = (byStatus[r.status] || 0) + 1;
    if (r.status === 200) { const b = r.backend || r.sim || '?'; byBackend[b] = (byBackend[b] || 0) + 1; lat200.push(r.lat); }
    if (r.status === 429) { r429++; if (r.retry || r.retryMs) r429WithRetry++; }
    if (r.status >= 500) r5xx++;
    if (r.status === 0) errors++;
    const c = byClass[r.cls] || (byClass[r.cls] = { sent: 0, ok: 0, r429: 0 });
    c.sent++; if (r.status === 200) c.ok++; if (r.status === 429) c.r429++;
  }
  console.log(JSON.stringify({ rate, duration, scheduled: total, sent, completed: recs.length, by_status: byStatus,
    ok: byStatus[200] || 0, r429, r429_with_retry_after: r429WithRetry, r5xx, transport_errors: errors,
    ok_by_backend: byBackend, latency_ok_ms: { p50: pct(lat200, 50), p99: pct(lat200, 99) },
    max_inflight: inflightMax, max_send_lateness_ms: +lateMax.toFixed(2),
    ...(batchShare > 0 ? { by_class: byClass } : {}) }));
  process.exit(0);
}
