// The status page's Redis section in headless Chromium: smartlb (the real binary) with
// REDIS_URL pointing at a real redis-server (with a password) started here, beside a second
// replica; the page must list both replicas, mark this one, say Redis is connected, and never
// show the password. Then a client's in-flight cap held by two replicas.
//
// Needs: SMARTLB_BIN, /usr/bin/redis-server, /usr/bin/chromium and `npm ci` in this directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

import { freePort, launchChromium } from "./page_support.mjs";


const SMARTLB_BIN = process.env.SMARTLB_BIN;
const REDIS_SERVER = process.env.REDIS_SERVER || "/usr/bin/redis-server";
const PASSWORD = "redis-pagecanary-5e6f7a8b";


// Spawns `bin` and resolves with the first match of `re` in its output.
function startAndAwait(bin, args, env, re) {
  const child = spawn(bin, args, { env: { PATH: process.env.PATH, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const ready = new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const m = re.exec(out);
      if (m) resolve(m);
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`${bin} exited (${code}):\n${out}`)));
  });
  return { child, ready, output: () => out };
}

test("status page lists the live replicas and hides the Redis password", { timeout: 120_000 }, async (t) => {
  assert.ok(SMARTLB_BIN, "set SMARTLB_BIN to the smartlb binary");
  const backend = http.createServer((req, res) => res.end("{}"));
  await new Promise((resolve) => backend.listen(0, "127.0.0.1", resolve));
  t.after(() => backend.close());

  const redisPort = await freePort();
  const redis = startAndAwait(REDIS_SERVER, ["--bind", "127.0.0.1", "--port", String(redisPort), "--save", "",
    "--appendonly", "no", "--requirepass", PASSWORD], {}, /Ready to accept connections/);
  t.after(() => redis.child.kill("SIGKILL"));
  await redis.ready;

  const replica = async (id) => {
    const adminPort = await freePort();
    const d = startAndAwait(SMARTLB_BIN, [], {
      LISTEN_ADDRESS: "127.0.0.1", PORT: "0", ADMIN_PORT: String(adminPort), THREADS: "1", ACCESS_LOG: "off",
      BACKEND_1_URL: `http://127.0.0.1:${backend.address().port}`, BACKEND_1_NAME: "eastus",
      REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${redisPort}`, REPLICA_ID: id,
    }, /admin endpoints .* on 127\.0\.0\.1:(\d+)/);
    t.after(() => d.child.kill("SIGKILL"));
    await d.ready;
    return { adminPort, output: d.output };
  };
  const a = await replica("replica-a");
  const b = await replica("replica-b");

  const context = await launchChromium(t);
  const page = context.pages()[0] || (await context.newPage());
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  await page.goto(`http://127.0.0.1:${a.adminPort}/`);
  // Heartbeats every second: wait until the page has seen both replicas.
  await page.waitForFunction(() => /2 live replica/.test(document.querySelector("section.redis h2")?.textContent || ""));
  const section = await page.textContent("section.redis");
  assert.match(section, /Redis · connected/);
  assert.match(section, /replica-a \(this one\)/);
  assert.match(section, /replica-b/);
  assert.match(section, /redis:\/\/:\*\*\*@127\.0\.0\.1/);

  const html = await page.content();
  assert.ok(!html.includes(PASSWORD), "the Redis password is on the page");
  for (const out of [a.output(), b.output()]) assert.ok(!out.includes(PASSWORD), "the Redis password is in a log");
  assert.deepEqual(errors, [], "no script errors");
});

// A client's max_in_flight held by two replicas: each page shows the requests in flight on every
// replica against the cap, and says how many of them are its own.
test("status page shows a shared in-flight cap across replicas", { timeout: 120_000 }, async (t) => {
  assert.ok(SMARTLB_BIN, "set SMARTLB_BIN to the smartlb binary");
  const CLIENT_KEY = "batch-inflightcanary-9c8d7e";
  // Every answer is held open (its head sent) until the test ends.
  const held = [];
  const backend = http.createServer((req, res) => {
    req.resume();
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write("data: {}\n\n");
    held.push(res);
  });
  await new Promise((resolve) => backend.listen(0, "127.0.0.1", resolve));
  t.after(() => { for (const r of held) r.destroy(); backend.close(); });

  const redisPort = await freePort();
  const redis = startAndAwait(REDIS_SERVER, ["--bind", "127.0.0.1", "--port", String(redisPort), "--save", "",
    "--appendonly", "no"], {}, /Ready to accept connections/);
  t.after(() => redis.child.kill("SIGKILL"));
  await redis.ready;
  const dir = mkdtempSync(path.join(os.tmpdir(), "smartlb-inflight-page-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, "smartlb.yaml");
  writeFileSync(configFile, `
backends:
  - {name: eastus, url: "http://127.0.0.1:${backend.address().port}"}
clients:
  - name: batch
    key: \${BATCH_KEY}
    limits: {max_in_flight: 3}
`);
  const replica = async (id) => {
    const adminPort = await freePort();
    const d = startAndAwait(SMARTLB_BIN, [], {
      LISTEN_ADDRESS: "127.0.0.1", PORT: "0", ADMIN_PORT: String(adminPort), THREADS: "1", ACCESS_LOG: "off",
      CONFIG_FILE: configFile, BATCH_KEY: CLIENT_KEY, REDIS_URL: `redis://127.0.0.1:${redisPort}`, REPLICA_ID: id,
    }, /listening on 127\.0\.0\.1:(\d+)[^]*admin endpoints/);
    t.after(() => d.child.kill("SIGKILL"));
    const m = await d.ready;
    return { port: Number(m[1]), adminPort };
  };
  const a = await replica("replica-a");
  const b = await replica("replica-b");
  // A stream held on b, then one on a: a's ask for a slot learns b's lease.
  const open = async (r) => {
    const res = await fetch(`http://127.0.0.1:${r.port}/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21`, {
      method: "POST",
      headers: { "content-type": "application/json", "api-key": CLIENT_KEY },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }], stream: true }),
    });
    assert.equal(res.status, 200);
    const reader = res.body.getReader();
    await reader.read();  // the first event: the request holds its slot
    t.after(() => reader.cancel().catch(() => {}));
  };
  await open(b);
  await open(a);

  const context = await launchChromium(t);
  const page = context.pages()[0] || (await context.newPage());
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`http://127.0.0.1:${a.adminPort}/`);
  await page.waitForSelector('tr[data-budget="client:batch"]');
  const heads = await page.$$eval("section.budgets th", (ths) => ths.map((th) => th.textContent));
  assert.ok(heads.includes("In flight"), heads.join(" | "));
  const row = await page.textContent('tr[data-budget="client:batch"]');
  assert.match(row, /2 of 3 \(1 here\)/, row);
  assert.deepEqual(errors, [], "no script errors");
});
