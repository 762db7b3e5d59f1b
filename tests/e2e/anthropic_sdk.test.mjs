// End-to-end test: Anthropic's official TypeScript SDK (@anthropic-ai/sdk) talks to smartlb,
// pointed at it as at Microsoft Foundry's /anthropic endpoint, in front of three smartlb-sim
// backends that speak Claude's Messages API:
//   throttled  (priority 1) answers every request 429 + retry-after 30 s
//   overloaded (priority 2) answers every request 529 overloaded_error (its health probes pass)
//   healthy    (priority 3)
// The client uses maxRetries: 0, so a passing test proves that smartlb (not the SDK) failed over,
// and a client key that must never reach a backend. The usage of each answer shows in smartlb's
// JSON access log and /metrics.
//
// Run:  npm ci --prefix tests/e2e
//       SMARTLB_BIN=build/src/smartlb SMARTLB_SIM_BIN=build/src/sim/smartlb-sim \
//         node --test tests/e2e/anthropic_sdk.test.mjs
// (CTest: e2e.anthropic_sdk sets both variables.)

import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  children, cleanEnv, describeOutput, requireBinary, simStats, spawnListening, stopAll,
  REQUEST_TIMEOUT_MS, STARTUP_TIMEOUT_MS, STOP_TIMEOUT_MS, TEST_TIMEOUT_MS,
} from './processes.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const CLIENT_KEY = 'client-anthropic-key-never-forwarded';
const KEYS = { throttled: 'throttled-key', overloaded: 'overloaded-key', healthy: 'healthy-key' };
const MODEL = 'claude-e2e';

async function loadAnthropic() {
  if (!existsSync(join(HERE, 'node_modules', '@anthropic-ai', 'sdk', 'package.json'))) {
    throw new Error('the @anthropic-ai/sdk package is not installed: run `npm ci` in tests/e2e');
  }
  return (await import('@anthropic-ai/sdk')).default;
}

/** A port nobody listens on now (the admin port smartlb is given). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function assertNoClientKey(stats, who) {
  for (const [name, value] of Object.entries(stats.last_request_headers ?? {})) {
    assert.ok(!String(value).includes(CLIENT_KEY), `${who} received the client's key in header ${name}`);
  }
}

/** smartlb's JSON access lines so far. */
function accessLines(proc) {
  return proc.stdout.filter((l) => l.includes('"type":"access"')).map((l) => JSON.parse(l));
}

describe('smartlb with the Anthropic TypeScript SDK (Messages API)', () => {
  let client;
  let ports = {};
  let proxyProc;

  const withLogs = (fn) => async (t) => {
    try {
      await fn(t);
    } catch (e) {
      const logs = children.map(describeOutput).join('\n');
      if (e && typeof e === 'object' && typeof e.message === 'string') {
        e.message += `\n${logs}`;
        throw e;
      }
      throw new Error(`${String(e)}\n${logs}`);
    }
  };

  before(async () => {
    const smartlbBin = requireBinary('SMARTLB_BIN');
    const simBin = requireBinary('SMARTLB_SIM_BIN');
    const Anthropic = await loadAnthropic();

    const sim = (name, extra) => spawnListening(`${name}-sim`, simBin, [
      '--port', '0', '--name', name, '--deployment', `${MODEL}:1000000:10000`, '--api-key', KEYS[name], ...extra,
    ], cleanEnv({}));
    [ports.throttled, ports.overloaded, ports.healthy] = await Promise.all([
      sim('throttled', ['--force-status', '429', '--force-retry-after-ms', '30000']),
      // An error rate, not a forced status: a forced 5xx reaches health probes too, and the prober
      // would take the backend out before any request tried it.
      sim('overloaded', ['--error-rate', '1', '--error-status', '529']),
      sim('healthy', []),
    ]);
    ports.admin = await freePort();
    const backends = {};
    ['throttled', 'overloaded', 'healthy'].forEach((name, i) => {
      const x = i + 1;
      backends[`BACKEND_${x}_URL`] = `http://127.0.0.1:${ports[name]}`;
      backends[`BACKEND_${x}_NAME`] = name;
      backends[`BACKEND_${x}_PRIORITY`] = String(x);
      backends[`BACKEND_${x}_APIKEY`] = KEYS[name];
    });
    ports.proxy = await spawnListening('smartlb', smartlbBin, [], cleanEnv({
      PORT: '0',
      ADMIN_PORT: String(ports.admin),
      LISTEN_ADDRESS: '127.0.0.1',
      LOG_FORMAT: 'json',
      THREADS: '2',
      SHUTDOWN_TIMEOUT_SECONDS: '2',
      ...backends,
    }));
    proxyProc = children.find((c) => c.name === 'smartlb');

    client = new Anthropic({
      baseURL: `http://127.0.0.1:${ports.proxy}/anthropic`,
      apiKey: CLIENT_KEY,
      maxRetries: 0, // any failover seen by the test is smartlb's
      timeout: REQUEST_TIMEOUT_MS,
    });
  }, { timeout: 3 * STARTUP_TIMEOUT_MS + 2_000 });

  after(async () => {
    await stopAll();
  }, { timeout: 2 * STOP_TIMEOUT_MS + 2_000 });

  test('messages.create fails over past a 429 and a 529 to the healthy backend', { timeout: TEST_TIMEOUT_MS },
    withLogs(async () => {
      const { data, response } = await client.messages
        .create({ model: MODEL, max_tokens: 32, messages: [{ role: 'user', content: 'Hello through smartlb' }] })
        .withResponse();
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-smartlb-backend'), 'healthy');
      assert.equal(data.type, 'message');
      assert.equal(data.role, 'assistant');
      assert.ok(data.content[0].text.length > 0);
      assert.ok(data.usage.input_tokens > 0 && data.usage.output_tokens > 0);

      const throttled = await simStats(ports.throttled);
      assert.deepEqual(throttled.by_status, { 429: 1 }, 'tried first, answered 429');
      const overloaded = await simStats(ports.overloaded);
      assert.deepEqual(overloaded.by_status, { 529: 1 }, 'tried second, answered 529');
      for (const [name, port] of Object.entries({ throttled: ports.throttled, overloaded: ports.overloaded,
                                                   healthy: ports.healthy })) {
        const s = await simStats(port);
        assert.equal(s.last_request_headers['x-api-key'], KEYS[name], `${name} got its own key as x-api-key`);
        assert.equal(s.last_request_headers.authorization, undefined);
        assertNoClientKey(s, name);
        assert.match(s.last_request_path, /^\/anthropic\/v1\/messages$/);
      }
    }));

  test('a streamed message goes straight to the healthy backend while the others cool down',
    { timeout: TEST_TIMEOUT_MS }, withLogs(async () => {
      const stream = client.messages.stream({
        model: MODEL, max_tokens: 32, messages: [{ role: 'user', content: 'Stream through smartlb' }],
      });
      const types = [];
      let text = '';
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      }
      const final = await stream.finalMessage();
      assert.equal(types[0], 'message_start');
      assert.ok(types.includes('content_block_delta'));
      assert.equal(types.at(-1), 'message_stop');
      assert.ok(text.length > 0);
      assert.ok(final.usage.output_tokens > 0);
      assert.deepEqual((await simStats(ports.throttled)).by_status, { 429: 1 }, 'not asked again');
      assert.deepEqual((await simStats(ports.overloaded)).by_status, { 529: 1 }, 'not asked again');
    }));

  test('the usage of each answer reaches the access log and /metrics', { timeout: TEST_TIMEOUT_MS },
    withLogs(async () => {
      let lines = [];
      for (let i = 0; i < 50 && lines.length < 2; ++i) {  // the access line is written as the request ends
        lines = accessLines(proxyProc).filter((l) => l.path === '/anthropic/v1/messages');
        if (lines.length < 2) await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(lines.length, 2, 'one access line per request');
      for (const l of lines) {
        assert.equal(l.backend, 'healthy');
        assert.ok(l.prompt_tokens > 0, `prompt tokens in ${JSON.stringify(l)}`);
        assert.ok(l.completion_tokens > 0, `completion tokens in ${JSON.stringify(l)}`);
      }
      assert.deepEqual(lines[0].attempt_log.map((a) => a.status), [429, 529, 200]);
      const metrics = await (await fetch(`http://127.0.0.1:${ports.admin}/metrics`)).text();
      assert.match(metrics, /smartlb_prompt_tokens_total\{backend="healthy",deployment="claude-e2e"\} [1-9]/);
      assert.match(metrics, /smartlb_completion_tokens_total\{backend="healthy",deployment="claude-e2e"\} [1-9]/);
    }));
});
