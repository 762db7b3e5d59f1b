#!/usr/bin/env node
// One Realtime WebSocket session (the `ws` package of tests/e2e) against a backend that echoes
// every message (smartlb-sim --realtime-echo): sends one text frame, waits for its echo, and
// so on, N times after a warm-up. Each round trip is one frame each way. Prints one JSON line:
// round-trip p50/p99/max in microseconds.
//
// node realtime_client.js --url ws://127.0.0.1:PORT/openai/v1/realtime?model=gpt-4o [--key KEY] [--frames 1000] [--warmup 100]
'use strict';
const path = require('path');
const { createRequire } = require('module');
const WebSocket = createRequire(path.join(__dirname, '../../tests/e2e/package.json'))('ws');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const frames = Number(args.frames || 1000);
const warmup = Number(args.warmup || 100);
const payload = JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(96) });

const ws = new WebSocket(args.url, { headers: { 'api-key': args.key || '' }, perMessageDeflate: false });
const rtts = [];
let sent = 0;
let t0 = 0n;
const timer = setTimeout(() => { console.error('timed out'); process.exit(1); }, 60_000);
function next() {
  sent += 1;
  t0 = process.hrtime.bigint();
  ws.send(payload);
}
ws.on('open', next);
ws.on('message', () => {
  const us = Number(process.hrtime.bigint() - t0) / 1000;
  if (sent > warmup) rtts.push(us);
  if (sent < warmup + frames) return next();
  clearTimeout(timer);
  rtts.sort((a, b) => a - b);
  const q = (p) => rtts[Math.min(rtts.length - 1, Math.floor(p * rtts.length))];
  console.log(JSON.stringify({ frames: rtts.length, p50_us: q(0.5), p99_us: q(0.99), max_us: rtts[rtts.length - 1] }));
  ws.close(1000);
});
ws.on('error', (e) => { console.error(e.message); process.exit(1); });
