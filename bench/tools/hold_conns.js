#!/usr/bin/env node
// Opens N TCP connections to an HTTP server, optionally sends one keep-alive request on each
// (so the server has a finished request behind it and the connection is an idle keep-alive
// one), then holds them open. Prints "READY <open> <ok>" once all are in place, then waits for
// SIGTERM (or --hold-s). Raw sockets, no HTTP agent: exactly one connection per socket.
//
// node hold_conns.js --port P --conns N [--request 1] [--prompt-bytes B] [--path /...] [--hold-s 120] [--batch 200]
'use strict';
const net = require('net');
const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const port = Number(args.port), n = Number(args.conns || 1000), withRequest = args.request === '1';
const path = args.path || '/openai/deployments/gpt-4o/chat/completions?api-version=2024-02-01';
const content = args['prompt-bytes'] ? 'x'.repeat(Number(args['prompt-bytes'])) : 'hi';  // a long prompt's request
const body = JSON.stringify({ messages: [{ role: 'user', content }], max_tokens: 10 });
const req = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const batch = Number(args.batch || 200);
const socks = [];
let open = 0, ok = 0, failed = 0, started = 0;

function one() {
  return new Promise((resolve) => {
    const s = net.connect({ port, host: '127.0.0.1' });
    socks.push(s);
    let got = '';
    s.on('error', () => { failed++; resolve(); });
    s.on('connect', () => {
      open++;
      if (!withRequest) return resolve();
      s.write(req);
    });
    s.on('data', (d) => {
      got += d.toString('latin1');
      // A complete answer: head + Content-Length body (the proxy sends Content-Length here).
      const h = got.indexOf('\r\n\r\n');
      if (h < 0) return;
      const m = /content-length:\s*(\d+)/i.exec(got.slice(0, h));
      if (m && got.length - h - 4 >= Number(m[1])) { if (got.startsWith('HTTP/1.1 200')) ok++; got = ''; resolve(); }
    });
  });
}
(async () => {
  while (started < n) {
    const k = Math.min(batch, n - started);
    started += k;
    await Promise.all(Array.from({ length: k }, one));
  }
  console.log(`READY ${open} ${ok} ${failed}`);
})();
process.on('SIGTERM', () => { for (const s of socks) s.destroy(); process.exit(0); });
setTimeout(() => process.exit(0), Number(args['hold-s'] || 120) * 1000);
