// The status page's client budgets with cost limits, in headless Chromium: smartlb (the real
// binary) with a config file that prices gpt-4o and gives a client a daily cost budget; after one
// priced answer the page shows the cost columns in the prices' currency, beside the tokens.
//
// Needs: SMARTLB_BIN, /usr/bin/chromium and `npm ci` in this directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";

import { freePort, launchChromium } from "./page_support.mjs";


const SMARTLB_BIN = process.env.SMARTLB_BIN;
const CLIENT_KEY = "search-costcanary-1a2b3c";


test("status page shows a cost budget in the prices' currency", { timeout: 120_000 }, async (t) => {
  assert.ok(SMARTLB_BIN, "set SMARTLB_BIN to the smartlb binary");
  // 1,000 prompt and 500 completion tokens of gpt-4o at 2.50 / 10.00 USD per million: 0.0075 USD.
  const backend = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", model: "gpt-4o",
        choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
    });
  });
  await new Promise((resolve) => backend.listen(0, "127.0.0.1", resolve));
  t.after(() => backend.close());

  const dir = mkdtempSync(path.join(os.tmpdir(), "smartlb-cost-page-"));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const configFile = path.join(dir, "smartlb.yaml");
  writeFileSync(configFile, `
backends:
  - {name: eastus, url: "http://127.0.0.1:${backend.address().port}"}
prices:
  currency: USD
  models:
    - {model: gpt-4o, input: 2.50, output: 10.00}
clients:
  - name: search
    key: \${SEARCH_KEY}
    limits: {tokens_per_day: 1000000, cost_per_day: 1}
`);
  const adminPort = await freePort();
  const child = spawn(SMARTLB_BIN, [], {
    env: { PATH: process.env.PATH, LISTEN_ADDRESS: "127.0.0.1", PORT: "0", ADMIN_PORT: String(adminPort),
      THREADS: "1", ACCESS_LOG: "off", CONFIG_FILE: configFile, SEARCH_KEY: CLIENT_KEY },
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => child.kill("SIGKILL"));
  let out = "";
  const apiPort = await new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const m = /listening on 127\.0\.0\.1:(\d+)/.exec(out);
      if (m && /admin endpoints/.test(out)) resolve(Number(m[1]));
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`smartlb exited (${code}):\n${out}`)));
  });

  const res = await fetch(`http://127.0.0.1:${apiPort}/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21`, {
    method: "POST",
    headers: { "content-type": "application/json", "api-key": CLIENT_KEY },
    body: JSON.stringify({ messages: [{ role: "user", content: "hello" }] }),
  });
  assert.equal(res.status, 200, await res.text());

  const context = await launchChromium(t);
  const page = context.pages()[0] || (await context.newPage());
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));

  await page.goto(`http://127.0.0.1:${adminPort}/`);
  await page.waitForSelector('tr[data-budget="client:search"]');
  const heads = await page.$$eval("section.budgets th", (ths) => ths.map((th) => th.textContent));
  assert.ok(heads.includes("Cost / day (UTC)"), heads.join(" | "));
  const row = await page.textContent('tr[data-budget="client:search"]');
  assert.match(row, /0\.0075 USD of 1\.00 USD/, row);
  assert.match(row, /1500 of 1\.00M/, row);
  assert.deepEqual(errors, [], "no script errors");
  assert.ok(!(await page.content()).includes(CLIENT_KEY), "the client's key is on the page");
});
