// The status page's Redis section in headless Chromium: smartlb (the real binary) with
// REDIS_URL pointing at a real redis-server (with a password) started here, beside a second
// replica; the page must list both replicas, mark this one, say Redis is connected, and never
// show the password.
//
// Needs: SMARTLB_BIN, /usr/bin/redis-server, /usr/bin/chromium and `npm ci` in this directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import http from "node:http";

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
