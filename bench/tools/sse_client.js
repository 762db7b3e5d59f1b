#!/usr/bin/env node
// Opens N concurrent SSE streams (POST, stream: true) and, for every event stamped by
// sse_backend.js, records arrival minus send time. Optionally samples a process's RSS once
// every stream is open (and again halfway through). Prints one JSON line.
//
// node sse_client.js --url URL --streams 1000 [--watch-pid PID] [--timeout-s 120]
'use strict';
const http = require('http');
const fs = require('fs');
const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const url = new URL(args.url);
const n = Number(args.streams || 1000);
const watch = args['watch-pid'];
const body = JSON.stringify({ messages: [{ role: 'user', content: 'stream please' }], max_tokens: 100, stream: true });
const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
const rss = (pid) => { try { return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]); } catch { return null; } };

const delays = [];  // ms
let open = 0, done = 0, failed = 0, events = 0, rssBefore = watch ? rss(watch) : null, rssAllOpen = null, rssMid = null;
const statuses = {};
function start(i) {
  const req = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: 'POST', agent,
    headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
    statuses[res.statusCode] = (statuses[res.statusCode] || 0) + 1;
    open++;
    if (open === n && watch) { rssAllOpen = rss(watch); setTimeout(() => { rssMid = rss(watch); }, 3000); }
    let buf = '';
    res.setEncoding('utf8');
    res.on('data', (d) => {
      const now = process.hrtime.bigint();
      buf += d;
      let idx;
      while ((idx = buf.indexOf('\n\n')) >= 0) {
        const ev = buf.slice(0, idx); buf = buf.slice(idx + 2);
        const m = /"t":(\d+),"seq":(\d+)/.exec(ev);
        // The first two events of a stream are skipped: they overlap the opening of the others.
        if (m && Number(m[2]) >= 2) { delays.push(Number(now - BigInt(m[1])) / 1e6); events++; }
      }
    });
    res.on('end', () => { done++; if (done + failed === n) report(); });
    res.on('error', () => { failed++; if (done + failed === n) report(); });
  });
  req.on('error', () => { failed++; if (done + failed === n) report(); });
  req.end(body);
}
// Open the streams quickly but not all in one tick (a burst of 1000 SYNs overflows small backlogs).
let i = 0;
const opener = setInterval(() => { for (let k = 0; k < 50 && i < n; k++) start(i++); if (i >= n) clearInterval(opener); }, 5);
setTimeout(() => report(true), Number(args['timeout-s'] || 120) * 1000).unref();

let reported = false;
function report(timedOut = false) {
  if (reported) return; reported = true;
  const s = delays.sort((a, b) => a - b);
  const p = (q) => s.length ? +s[Math.min(s.length - 1, Math.floor(q * s.length))].toFixed(3) : null;
  console.log(JSON.stringify({ streams: n, statuses, completed: done, failed, timed_out: timedOut, events,
    delay_ms: { p50: p(0.5), p90: p(0.9), p99: p(0.99), p999: p(0.999), max: s.length ? +s[s.length - 1].toFixed(3) : null },
    rss_kb: { before: rssBefore, all_open: rssAllOpen, mid: rssMid } }));
  process.exit(0);
}
