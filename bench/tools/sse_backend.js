#!/usr/bin/env node
// A streaming backend that stamps every SSE event with its send time (process.hrtime, i.e.
// CLOCK_MONOTONIC, comparable across processes on one machine). Answers any POST with
// `--events` events, one every `--interval-ms` (each stream starts at a random phase), then
// `data: [DONE]`. Prints "sse-backend listening on 127.0.0.1:PORT" when ready.
//
// node sse_backend.js [--port 0] [--events 100] [--interval-ms 100]
'use strict';
const http = require('http');
const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const events = Number(args.events || 100);
const interval = Number(args['interval-ms'] || 100);
const filler = 'x'.repeat(Number(args['pad'] || 60));  // an OpenAI delta event is ~150-250 bytes

const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    let k = 0;
    const tick = () => {
      if (res.destroyed) return;
      if (k >= events) { res.end('data: [DONE]\n\n'); return; }
      const t = process.hrtime.bigint();
      res.write(`data: {"t":${t},"seq":${k},"choices":[{"index":0,"delta":{"content":"${filler}"}}]}\n\n`);
      k++;
      timer = setTimeout(tick, interval);
    };
    let timer = setTimeout(tick, Math.random() * interval);
    res.on('close', () => clearTimeout(timer));
  });
});
server.keepAliveTimeout = 300000;
server.headersTimeout = 0;
server.requestTimeout = 0;
server.listen(Number(args.port || 0), '127.0.0.1', () => {
  console.log(`sse-backend listening on 127.0.0.1:${server.address().port}`);
});
