// The status page's admin actions in headless Chromium: smartlb (the real binary) with
// ADMIN_TOKENS set. Without a token the page says it needs one; a read token shows the status
// and no action; a write token shows the actions, and Drain, then Enable, change the backend
// (shown with who did it), even when the page redraws between a click's press and release, or
// while an action has the keyboard's focus. The token is never in the page's URL, and the page's CSP holds.
//
// Needs: SMARTLB_BIN, /usr/bin/chromium and `npm ci` in this directory.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import http from "node:http";

import { freePort, launchChromium } from "./page_support.mjs";


const SMARTLB_BIN = process.env.SMARTLB_BIN;
const READ_TOKEN = "read-pagecanary-0123456789abcdef";
const WRITE_TOKEN = "write-pagecanary-fedcba9876543210";


test("the page asks for a token, shows actions to a write token only, and drains and enables", { timeout: 120_000 }, async (t) => {
  assert.ok(SMARTLB_BIN, "set SMARTLB_BIN to the smartlb binary");
  const backend = http.createServer((req, res) => res.end("{}"));
  await new Promise((resolve) => backend.listen(0, "127.0.0.1", resolve));
  t.after(() => backend.close());

  const adminPort = await freePort();
  const child = spawn(SMARTLB_BIN, [], {
    env: {
      PATH: process.env.PATH, LISTEN_ADDRESS: "127.0.0.1", PORT: "0", ADMIN_PORT: String(adminPort), THREADS: "1",
      ACCESS_LOG: "off", BACKEND_1_URL: `http://127.0.0.1:${backend.address().port}`, BACKEND_1_NAME: "eastus",
      ADMIN_TOKENS: `read:${READ_TOKEN},write:${WRITE_TOKEN}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  t.after(() => child.kill("SIGKILL"));
  let out = "";
  await new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      if (/admin endpoints .* on 127\.0\.0\.1:\d+/.test(out)) resolve();
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("exit", (code) => reject(new Error(`smartlb exited (${code}):\n${out}`)));
  });

  const context = await launchChromium(t);
  const page = context.pages()[0] || (await context.newPage());
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // A CSP violation is reported on the console ("Refused to ...").
  page.on("console", (m) => { if (/Refused to/.test(m.text())) errors.push(m.text()); });

  await page.goto(`http://127.0.0.1:${adminPort}/`);
  await page.waitForFunction(() => /needs a token/.test(document.getElementById("conn").textContent));

  // A read token: the status, and no action.
  await page.fill("#token", READ_TOKEN);
  await page.click("#token-use");
  await page.waitForFunction(() => /read-1 · read/.test(document.getElementById("who").textContent));
  await page.waitForSelector("tr[data-backend=eastus]");
  assert.equal(await page.locator("button[data-action]").count(), 0, "a read token gets no action");

  // A write token: the actions.
  await page.fill("#token", WRITE_TOKEN);
  await page.click("#token-use");
  await page.waitForFunction(() => /write-1 · write/.test(document.getElementById("who").textContent));
  await page.waitForSelector("tr[data-backend=eastus] button[data-action=drain]");
  // Drain, pressed across a redraw: the page redraws the tables twice a second, and a click is
  // a press and a release on one element. The page holds the tables while a pointer is pressed.
  const box = await page.locator("tr[data-backend=eastus] button[data-action=drain]").boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  const shown = await page.textContent("#conn");
  await page.waitForFunction((was) => document.getElementById("conn").textContent !== was, shown);
  await page.mouse.up();
  await page.waitForFunction(() => /drained/.test(document.querySelector("tr[data-backend=eastus]")?.textContent || ""));
  const row = await page.textContent("tr[data-backend=eastus]");
  assert.match(row, /drained by write-1 \(write, sha256:[0-9a-f]{8}\) at \d\d:\d\d:\d\d UTC/);
  assert.match(out, /admin: backend eastus drained by write-1 \(write, sha256:[0-9a-f]{8}\)/, "logged with who");

  const status = await (await fetch(`http://127.0.0.1:${adminPort}/status`, {
    headers: { authorization: `Bearer ${READ_TOKEN}` },
  })).json();
  assert.equal(status.backends[0].admin_state, "drained");

  // Enable, from the keyboard: the focus stays on the action across a redraw.
  await page.focus("tr[data-backend=eastus] button[data-action=enable]");
  const before = await page.textContent("#conn");
  await page.waitForFunction((was) => document.getElementById("conn").textContent !== was, before);
  assert.equal(await page.evaluate(() => document.activeElement.dataset.action), "enable", "focus kept");
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => !/drained/.test(document.querySelector("tr[data-backend=eastus]")?.textContent || "x"));

  assert.ok(!page.url().includes(WRITE_TOKEN) && !page.url().includes(READ_TOKEN), "a token in the URL");
  assert.equal(await page.evaluate(() => sessionStorage.getItem("smartlb-admin-token")), WRITE_TOKEN);
  assert.equal(await page.evaluate(() => localStorage.length), 0, "nothing kept beyond the tab");
  await page.click("#token-forget");
  assert.equal(await page.evaluate(() => sessionStorage.getItem("smartlb-admin-token")), null);
  assert.ok(!out.includes(WRITE_TOKEN) && !out.includes(READ_TOKEN), "a token in the log");
  assert.deepEqual(errors, [], "no script errors and no CSP violation");
});
