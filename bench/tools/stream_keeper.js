#!/usr/bin/env node
// Keeps N SSE streams open for a while (bench/drain.sh): each stream is a POST with
// "stream": true read to its end; when one ends another starts, until --duration seconds have
// passed. A stream is whole when its last event is "data: [DONE]"; one that ends without it
// (a reset, a cut) is truncated. Writes one TSV line per stream (start, end, status, backend,
// whole) to --out and prints a JSON summary.
//
// node stream_keeper.js --url URL --streams 100 --duration S [--out file.tsv] [--timeout-ms 60000]
'use strict';
const http = require('http');
const fs = require('fs');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const url = new URL(args.url);
const n = Number(args.streams || 100);
const duration = Number(args.duration || 30);
const timeoutMs = Number(args['timeout-ms'] || 60000);
const body = JSON.stringify({ messages: [{ role: 'user', content: 'stream please' }], max_tokens: 100, stream: true });
const agent = new http.Agent({ keepAlive: true, maxSockets: n, maxFreeSockets: n });
const t0 = Date.now();
const recs = [];
let running = 0;

function start() {
  running++;
  const rec = { start: Date.now() - t0, end: 0, status: 0, backend: '', whole: false, err: '' };
  let tail = '';
  const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', agent,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
    rec.status = res.statusCode;
    rec.backend = res.headers['x-smartlb-backend'] || '';
    res.setEncoding('utf8');
    res.on('data', (d) => { tail = (tail + d).slice(-64); });
    res.on('end', () => { rec.whole = /data: \[DONE\]\s*$/.test(tail); finish(); });
    res.on('error', (e) => { rec.err = e.code || e.message; finish(); });
  });
  let finished = false;
  function finish() {
    if (finished) return;
    finished = true;
    rec.end = Date.now() - t0;
    recs.push(rec);
    running--;
    if (Date.now() - t0 < duration * 1000) start();
    else if (running === 0) report();
  }
  req.setTimeout(timeoutMs, () => { rec.err = 'timeout'; req.destroy(); });
  req.on('error', (e) => { rec.err = rec.err || e.code || e.message; finish(); });
  req.end(body);
}

let reported = false;
function report() {
  if (reported) return;
  reported = true;
  if (args.out) {
    const lines = ['start_ms\tend_ms\tstatus\tbackend\twhole\terror'];
    for (const r of recs) lines.push([r.start, r.end, r.status, r.backend, r.whole ? 1 : 0, r.err].join('\t'));
    fs.writeFileSync(args.out, lines.join('\n') + '\n');
  }
  const byBackend = {};
  for (const r of recs) if (r.status === 200) byBackend[r.backend] = (byBackend[r.backend] || 0) + 1;
  console.log(JSON.stringify({ streams: n, duration, completed: recs.length,
    whole: recs.filter((r) => r.status === 200 && r.whole).length,
    truncated: recs.filter((r) => r.status === 200 && !r.whole).length,
    failed: recs.filter((r) => r.status !== 200).length, by_backend: byBackend }));
  process.exit(0);
}
for (let i = 0; i < n; i++) start();
// Hard bound: report whatever finished.
setTimeout(report, duration * 1000 + timeoutMs + 5000).unref();
