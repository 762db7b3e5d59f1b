// What the end-to-end tests share: the binaries under test, child processes started and
// stopped with bounded waits (their output kept for failure messages), and the sim's stats.
import { spawn } from 'node:child_process';
import { accessSync, constants as fsConstants, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

// Every wait is bounded; worst case (all of them expire) is about 50 s, under CTest's 120 s.
export const STARTUP_TIMEOUT_MS = 5_000; // per process, waiting for its "listening on" line
export const REQUEST_TIMEOUT_MS = 5_000; // SDK timeout per request
export const TEST_TIMEOUT_MS = 8_000; // node:test timeout per test
export const STOP_TIMEOUT_MS = 2_000; // SIGTERM grace before SIGKILL

// ---------------------------------------------------------------------------------------------
// Preconditions, checked before anything is spawned, with messages that say what to do.

export function requireBinary(envName) {
  const p = process.env[envName];
  if (!p) {
    throw new Error(
      `${envName} is not set: point it at the built binary ` +
        `(e.g. ${envName}=build/src/${envName === 'SMARTLB_BIN' ? 'smartlb' : 'sim/smartlb-sim'}), ` +
        'or run the test through ctest (e2e.*), which sets it');
  }
  if (!existsSync(p)) throw new Error(`${envName}=${p}: no such file (build it first)`);
  try {
    accessSync(p, fsConstants.X_OK);
  } catch {
    throw new Error(`${envName}=${p}: not executable`);
  }
  return p;
}

export async function loadOpenAI() {
  if (!existsSync(join(HERE, 'node_modules', 'openai', 'package.json'))) {
    throw new Error(
      `the openai package is not installed in ${join(HERE, 'node_modules')}: ` +
        `run \`npm ci\` in tests/e2e (e.g. \`npm ci --prefix tests/e2e\` from the repository root)`);
  }
  return import('openai');
}

// ---------------------------------------------------------------------------------------------
// Child processes.

export const children = [];

/** Spawns a process, keeps its output (for failure messages), and resolves with the port of
 *  its first stdout line matching `listening on 127.0.0.1:PORT`. Rejects if the process exits
 *  first or if the line does not come within STARTUP_TIMEOUT_MS. */
export async function spawnListening(name, bin, args, env) {
  return (await spawnProcess(name, bin, args, env)).port;
}

/** As spawnListening, resolving with { port, proc } (proc: the child and its output). */
export function spawnProcess(name, bin, args, env) {
  const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = { name, child, stdout: [], stderr: [], exit: null };
  children.push(proc);
  child.on('exit', (code, signal) => {
    proc.exit = { code, signal };
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => proc.stderr.push(d));

  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err, port) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(new Error(`${name}: ${err}\n${describeOutput(proc)}`));
      else resolve({ port, proc });
    };
    const timer = setTimeout(
      () => finish(`no "listening on" line on stdout within ${STARTUP_TIMEOUT_MS} ms`),
      STARTUP_TIMEOUT_MS);
    child.on('error', (e) => finish(`cannot start ${bin}: ${e.message}`));
    child.on('exit', (code, signal) => finish(`exited (code ${code}, signal ${signal}) before listening`));
    // readline keeps draining stdout after the line (smartlb writes its access log there).
    createInterface({ input: child.stdout }).on('line', (line) => {
      proc.stdout.push(line);
      const m = /listening on 127\.0\.0\.1:(\d+)\b/.exec(line);
      if (m) finish(null, Number(m[1]));
    });
  });
}

export function describeOutput(proc) {
  const tail = (lines, n) => lines.slice(-n).join('\n');
  const err = proc.stderr.join('').split('\n');
  return [
    `--- ${proc.name} pid=${proc.child.pid} exit=${proc.exit ? JSON.stringify(proc.exit) : 'running'}`,
    `--- ${proc.name} stdout (last 40 lines):`,
    tail(proc.stdout, 40),
    `--- ${proc.name} stderr (last 40 lines):`,
    tail(err, 40),
  ].join('\n');
}

export async function stopAll() {
  await stop(children);
}

/** Stops `procs` (SIGTERM, then SIGKILL after STOP_TIMEOUT_MS). */
export async function stop(procs) {
  await Promise.all(
    procs.map(async (proc) => {
      const { child } = proc;
      if (proc.exit || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      let timer;
      const timedOut = await Promise.race([
        exited.then(() => false),
        new Promise((r) => (timer = setTimeout(() => r(true), STOP_TIMEOUT_MS))),
      ]);
      clearTimeout(timer);
      if (timedOut) {
        child.kill('SIGKILL');
        await exited;
      }
    }));
}

// Last resort if the runner is interrupted: never leave a proxy or a sim behind.
function killAllNow() {
  for (const { child } of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
}
process.on('exit', killAllNow);
for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143]]) {
  process.once(sig, () => {
    killAllNow();
    process.exit(code);
  });
}

// ---------------------------------------------------------------------------------------------
// Helpers.

/** Environment for children: the caller's, minus any smartlb configuration it may carry. */
export function cleanEnv(extra) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^(BACKEND_|OTEL_|REDIS_|CLIENT_)/.test(k)) continue;
    if (['PORT', 'LISTEN_ADDRESS', 'ADMIN_PORT', 'LOG_FORMAT', 'CONFIG_FILE'].includes(k)) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

export async function simStats(port) {
  const res = await fetch(`http://127.0.0.1:${port}/_sim/stats`, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  assert.equal(res.status, 200, `GET /_sim/stats on ${port}`);
  return res.json();
}
