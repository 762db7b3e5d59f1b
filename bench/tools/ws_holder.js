#!/usr/bin/env node
// Holds N Realtime WebSocket sessions open (the `ws` package of tests/e2e): each sends one text
// frame and waits for its echo (smartlb-sim --realtime-echo), then idles. Prints
// "READY <open> <echoed> <failed>" once every session has echoed or failed, and holds them until
// SIGTERM. Sessions open CONCURRENCY at a time.
//
// node ws_holder.js --url ws://127.0.0.1:PORT/openai/v1/realtime?model=gpt-4o --count 2000 [--key KEY] [--concurrency 100]
'use strict';
const path = require('path');
const { createRequire } = require('module');
const WebSocket = createRequire(path.join(__dirname, '../../tests/e2e/package.json'))('ws');

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const count = Number(args.count || 1000);
const concurrency = Number(args.concurrency || 100);
const payload = JSON.stringify({ type: 'input_audio_buffer.append', audio: 'A'.repeat(96) });
const held = [];
let started = 0, open = 0, echoed = 0, failed = 0;

function done() {
  if (echoed + failed === count) console.log(`READY ${open} ${echoed} ${failed}`);
  else if (started < count) start();
}
function start() {
  started += 1;
  const ws = new WebSocket(args.url, { headers: { 'api-key': args.key || '' }, perMessageDeflate: false });
  let settled = false;
  const settle = (ok) => {
    if (settled) return;
    settled = true;
    if (ok) echoed += 1; else failed += 1;
    done();
  };
  ws.on('open', () => { open += 1; ws.send(payload); });
  ws.on('message', () => settle(true));
  ws.on('error', () => settle(false));
  ws.on('close', () => settle(false));
  held.push(ws);
}
for (let i = 0; i < Math.min(concurrency, count); i++) start();
process.on('SIGTERM', () => { for (const ws of held) ws.terminate(); process.exit(0); });
setInterval(() => {}, 1 << 30);
