// The live status page (GET / on the admin port) in headless Chromium: smartlb (the real
// binary) in front of four scripted backends in this process -- one rate limited on a
// deployment, one with a wrong key -- some traffic, then the page must show every backend
// in its priority group with its state, cooldown countdown, traffic and token shares, and
// never a key. A screenshot goes to $SMARTLB_SCREENSHOT (docs/status-page.png) when set.
//
// Needs: SMARTLB_BIN (the smartlb binary), /usr/bin/chromium (Debian package `chromium`),
// and `npm ci` in this directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import http from "node:http";

import { freePort, launchChromium } from "./page_support.mjs";


const SMARTLB_BIN = process.env.SMARTLB_BIN;
const KEYS = {
  eastus: "sk-pagecanary-east-0a9b8c7d6e5f",
  westeurope: "sk-pagecanary-west-1b2c3d4e5f6a",
  swedencentral: "sk-pagecanary-swe-2c3d4e5f6a7b",
  francecentral: "sk-pagecanary-fra-3d4e5f6a7b8c",
};

// A scripted Azure-like backend. `behave(deployment, body)` returns {status, headers, json} or
// {stream: true}; the key is checked like Azure does.
function mockBackend(name, key, behave) {
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const m = /^\/openai\/deployments\/([^/]+)\//.exec(req.url);
      const deployment = m ? decodeURIComponent(m[1]) : "";
      if (req.headers["api-key"] !== key) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { code: "401", message: "Access denied due to invalid subscription key." } }));
        return;
      }
      const parsed = JSON.parse(body || "{}");
      const r = behave(deployment, parsed) || {};
      const promptTokens = 20 + (body.length % 50);
      const completionTokens = 5 + (body.length % 30);
      // A little latency so the page has something to show (never asserted).
      const delay = 15 + ((body.length * 7) % 120);
      setTimeout(() => {
        if (r.status && r.status !== 200) {
          res.writeHead(r.status, { "content-type": "application/json", ...(r.headers || {}) });
          res.end(JSON.stringify({ error: { code: String(r.status), message: "scripted" } }));
          return;
        }
        if (parsed.stream) {
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: "Hello" } }], usage: null })}\n\n`);
          res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens } })}\n\n`);
          res.end("data: [DONE]\n\n");
          return;
        }
        res.writeHead(200, { "content-type": "application/json", "x-backend": name });
        res.end(JSON.stringify({
          choices: [{ message: { role: "assistant", content: "Hello" } }],
          usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
        }));
      }, delay);
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}


// Starts smartlb and resolves once both listeners are up.
function startSmartlb(env) {
  const child = spawn(SMARTLB_BIN, [], { env: { PATH: process.env.PATH, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  const ready = new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const api = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      const admin = /admin endpoints .* on 127\.0\.0\.1:(\d+)/.exec(out);
      if (api && admin) resolve({ apiPort: Number(api[1]), adminPort: Number(admin[1]) });
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`smartlb exited (${code}):\n${out}`)));
  });
  return { child, ready, output: () => out };
}

async function chat(apiPort, deployment, stream, i) {
  const res = await fetch(`http://127.0.0.1:${apiPort}/openai/deployments/${deployment}/chat/completions?api-version=2024-06-01`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ stream, messages: [{ role: "user", content: "hello number " + "x".repeat(i % 37) }] }),
  });
  await res.text();
  return res.status;
}

test("status page shows groups, states, countdowns, shares and no key", { timeout: 120_000 }, async (t) => {
  assert.ok(SMARTLB_BIN, "set SMARTLB_BIN to the smartlb binary");
  const ok = () => ({});
  const backends = {
    // eastus is out of gpt-4o quota for 90 s (Retry-After), fine for gpt-4o-mini. Neither
    // region of priority 1 has an "o1" deployment (404: fail over to priority 2).
    eastus: await mockBackend("eastus", KEYS.eastus, (d) =>
      d === "gpt-4o" ? { status: 429, headers: { "retry-after": "90" } } : d === "o1" ? { status: 404 } : {}),
    westeurope: await mockBackend("westeurope", KEYS.westeurope, (d) => (d === "o1" ? { status: 404 } : {})),
    // francecentral's configured key is wrong: it answers 401 -> auth_failed, on to priority 3.
    francecentral: await mockBackend("francecentral", "the-right-key-is-elsewhere", ok),
    swedencentral: await mockBackend("swedencentral", KEYS.swedencentral, ok),
  };
  t.after(() => Object.values(backends).forEach((s) => s.close()));

  const env = {
    LISTEN_ADDRESS: "127.0.0.1", PORT: "0", ADMIN_PORT: String(await freePort()), THREADS: "2", ACCESS_LOG: "off",
    BACKEND_1_NAME: "eastus", BACKEND_1_PRIORITY: "1", BACKEND_1_WEIGHT: "2",
    BACKEND_2_NAME: "westeurope", BACKEND_2_PRIORITY: "1", BACKEND_2_WEIGHT: "1",
    BACKEND_3_NAME: "francecentral", BACKEND_3_PRIORITY: "2", BACKEND_3_WEIGHT: "1",
    BACKEND_4_NAME: "swedencentral", BACKEND_4_PRIORITY: "3", BACKEND_4_WEIGHT: "1",
    DEFAULT_COOLDOWN_SECONDS: "120", MAX_COOLDOWN_SECONDS: "300",
    // Every caller (here the anonymous one) has a budget of its own: the page lists it.
    CLIENT_TOKENS_PER_MINUTE: "1000000", CLIENT_REQUESTS_PER_MINUTE: "100000",
    // The charts get a sample every second here (10 s by default).
    STATUS_SAMPLE_INTERVAL_MS: "1000",
  };
  ["eastus", "westeurope", "francecentral", "swedencentral"].forEach((name, i) => {
    env[`BACKEND_${i + 1}_URL`] = `http://127.0.0.1:${backends[name].address().port}`;
    env[`BACKEND_${i + 1}_APIKEY`] = KEYS[name];
  });
  const daemon = startSmartlb(env);
  t.after(() => daemon.child.kill("SIGKILL"));
  const { apiPort, adminPort } = await daemon.ready;

  // Traffic: gpt-4o-mini spread over priority 1; gpt-4o fails over from eastus (429).
  const statuses = [];
  for (let i = 0; i < 36; i += 4) {
    statuses.push(...(await Promise.all([
      chat(apiPort, "gpt-4o-mini", false, i), chat(apiPort, "gpt-4o", i % 8 === 0, i + 1),
      chat(apiPort, "gpt-4o-mini", true, i + 2), chat(apiPort, "gpt-4o", false, i + 3),
    ])));
  }
  // o1: 404 on priority 1, 401 on priority 2, served by priority 3.
  statuses.push(await chat(apiPort, "o1", false, 1), await chat(apiPort, "o1", true, 2));
  assert.ok(statuses.every((s) => s === 200), `every request served: ${statuses}`);
  const context = await launchChromium(t, { viewport: { width: 1440, height: 860 } });
  const page = context.pages()[0] || (await context.newPage());
  const external = [];
  page.on("request", (r) => { if (!r.url().startsWith(`http://127.0.0.1:${adminPort}/`)) external.push(r.url()); });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  await page.goto(`http://127.0.0.1:${adminPort}/`);
  await page.waitForSelector('tr[data-backend="francecentral"]');
  // Two polls, so shares come from a window of real deltas.
  await page.waitForFunction(() => /Updated/.test(document.getElementById("conn").textContent));

  const status = await (await fetch(`http://127.0.0.1:${adminPort}/status`)).json();
  const byName = Object.fromEntries(status.backends.map((b) => [b.name, b]));
  const eastGpt4o = byName.eastus.deployments.find((d) => d.name === "gpt-4o");
  assert.equal(eastGpt4o.state, "cooling");
  assert.ok(eastGpt4o.cooldown_remaining_ms > 0 && eastGpt4o.cooldown_remaining_ms <= 90_000);
  assert.equal(byName.francecentral.state, "auth_failed");

  const groups = await page.$$eval("section.group:not(.budgets) h2", (hs) => hs.map((h) => h.textContent));
  assert.deepEqual(groups.map((g) => g.split(" · ")[0]), ["Priority 1", "Priority 2", "Priority 3"]);
  const eastRow = await page.textContent('tr[data-backend="eastus"]');
  assert.match(eastRow, /available/);
  assert.match(eastRow, /gpt-4o · cooling (1:\d\d|\d+ s) \(throttled\)/, eastRow);
  assert.match(eastRow, /gpt-4o-mini/);
  assert.match(eastRow, /\d+% · \d+ req/);
  const westRow = await page.textContent('tr[data-backend="westeurope"]');
  assert.match(westRow, /\d+% · \d+ req/);
  assert.match(await page.textContent('tr[data-backend="francecentral"]'), /auth failed/);
  // The charts of the last minutes, drawn by the page from /status "history": the traffic
  // above shows in the requests chart and as the backends' shares.
  await page.waitForFunction(() => {
    const line = document.querySelector('.chart[data-chart="requests"] polyline');
    return line && line.getAttribute("points").split(" ").length >= 2 &&
      document.querySelectorAll('.chart[data-chart="share"] polygon').length >= 2;
  });
  const charts = await page.$$eval(".chart", (cs) => cs.map((c) => c.dataset.chart));
  assert.deepEqual(charts, ["requests", "throttled", "share", "latency"]);
  const shareLegend = await page.textContent('.chart[data-chart="share"] .legend');
  assert.match(shareLegend, /eastus/);
  assert.match(shareLegend, /swedencentral/);
  const history = (await (await fetch(`http://127.0.0.1:${adminPort}/status`)).json()).history;
  assert.equal(history.interval_seconds, 1);
  assert.ok(history.samples.some((s) => s.requests_per_s > 0), JSON.stringify(history.samples.slice(-3)));
  const budget = await page.textContent('tr[data-budget="subject-caller:*:anonymous"]');
  assert.match(budget, /anonymous/);
  assert.match(budget, /its own, of every caller/);
  assert.match(budget, /[\d.]+k? of 1\.00M/, budget);
  assert.match(budget, /38 of 100\.0k/, budget);
  const header = await page.textContent("header");
  assert.match(header, /ready/);

  // The countdown moves without a new poll result being needed.
  const before = await page.textContent('tr[data-backend="eastus"] .dep.cooling');
  await page.waitForFunction((b) => document.querySelector('tr[data-backend="eastus"] .dep.cooling').textContent !== b, before);

  const html = await page.content();
  for (const key of Object.values(KEYS)) assert.ok(!html.includes(key), "a key is on the page");
  assert.ok(!html.includes("pagecanary"), "a key fragment is on the page");
  assert.deepEqual(external, [], "the page loads nothing but its own origin");
  assert.deepEqual(errors, [], "no script errors");

  if (process.env.SMARTLB_SCREENSHOT) {
    // Wait for a window long enough to show a request rate, then capture.
    await page.waitForFunction(() => document.getElementById("k-rps").textContent !== "–");
    await page.screenshot({ path: process.env.SMARTLB_SCREENSHOT, fullPage: true });
  }
});
