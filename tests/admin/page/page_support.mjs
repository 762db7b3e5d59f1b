// What the status page's Chromium tests share: a free port on 127.0.0.1 and a headless
// Chromium (Debian's, driven by playwright-core) with a throw-away profile.
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

let chromium;
try {
  ({ chromium } = await import("playwright-core"));
} catch {
  throw new Error("playwright-core is missing: run `npm ci` in tests/admin/page");
}

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// A browser context for test `t`, closed (then its profile removed) when the test ends;
// `options` adds to the launch options (a viewport, say).
export async function launchChromium(t, options = {}) {
  const userDataDir = mkdtempSync(path.join(os.tmpdir(), "smartlb-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    ...options,
  });
  t.after(async () => {  // the browser first: it writes to its profile until it is closed
    await context.close();
    rmSync(userDataDir, { recursive: true, force: true, maxRetries: 5 });
  });
  return context;
}
