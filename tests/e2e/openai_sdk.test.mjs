// End-to-end test: the official OpenAI Node SDK (AzureOpenAI client) talks to smartlb, which
// fronts two smartlb-sim backends:
//   primary   (priority 1, key primary-key)   answers every request 429 + Retry-After 30 s
//   secondary (priority 2, key secondary-key) healthy
// The client uses maxRetries: 0, so a passing test proves that the proxy (not the SDK) failed
// over, and a client key that must never reach a backend. Two more blocks: the SDK through a
// rule of a config file, and files.create with a file that smartlb streams (a large upload).
//
// Run:  npm ci --prefix tests/e2e
//       SMARTLB_BIN=build/src/smartlb SMARTLB_SIM_BIN=build/src/sim/smartlb-sim \
//         node --test tests/e2e/openai_sdk.test.mjs
// (CTest: e2e.openai_sdk sets both variables.)

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import {
  children, cleanEnv, describeOutput, loadOpenAI, requireBinary, simStats, spawnListening, stopAll,
  REQUEST_TIMEOUT_MS, STARTUP_TIMEOUT_MS, STOP_TIMEOUT_MS, TEST_TIMEOUT_MS,
} from './processes.mjs';

const CLIENT_KEY = 'client-key-never-forwarded';
const PRIMARY_KEY = 'primary-key';
const SECONDARY_KEY = 'secondary-key';
const API_VERSION = '2024-10-21';
const DEPLOYMENT = 'gpt-4o';
const PRIMARY_RETRY_AFTER_MS = 30_000; // longer than the whole test: the primary stays cooled down

/** Asserts that no header the backend saw carries the client's key. */
function assertNoClientKey(stats, who) {
  for (const [name, value] of Object.entries(stats.last_request_headers ?? {})) {
    assert.ok(!String(value).includes(CLIENT_KEY),
      `${who} received the client's key in header ${name}: ${value}`);
  }
}

// ---------------------------------------------------------------------------------------------

describe('smartlb with the OpenAI Node SDK (AzureOpenAI)', () => {
  let AzureOpenAI;
  let client;
  let ports = {};
  let proxyProc;

  /** Runs a test body; on failure, appends the children's logs to the error. */
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
    ({ AzureOpenAI } = await loadOpenAI());

    const simEnv = cleanEnv({});
    [ports.primary, ports.secondary] = await Promise.all([
      spawnListening('primary-sim', simBin, [
        '--port', '0', '--name', 'primary', '--deployment', `${DEPLOYMENT}:1000000:10000`,
        '--api-key', PRIMARY_KEY,
        '--force-status', '429', '--force-retry-after-ms', String(PRIMARY_RETRY_AFTER_MS),
      ], simEnv),
      spawnListening('secondary-sim', simBin, [
        '--port', '0', '--name', 'secondary', '--deployment', `${DEPLOYMENT}:1000000:10000`,
        '--api-key', SECONDARY_KEY,
      ], simEnv),
    ]);

    ports.proxy = await spawnListening('smartlb', smartlbBin, [], cleanEnv({
      PORT: '0',
      ADMIN_PORT: '0',
      LISTEN_ADDRESS: '127.0.0.1',
      LOG_LEVEL: 'info',
      THREADS: '2',
      SHUTDOWN_TIMEOUT_SECONDS: '2',
      BACKEND_1_URL: `http://127.0.0.1:${ports.primary}`,
      BACKEND_1_NAME: 'primary',
      BACKEND_1_PRIORITY: '1',
      BACKEND_1_APIKEY: PRIMARY_KEY,
      BACKEND_2_URL: `http://127.0.0.1:${ports.secondary}`,
      BACKEND_2_NAME: 'secondary',
      BACKEND_2_PRIORITY: '2',
      BACKEND_2_APIKEY: SECONDARY_KEY,
    }));
    proxyProc = children.find((c) => c.name === 'smartlb');

    client = new AzureOpenAI({
      endpoint: `http://127.0.0.1:${ports.proxy}`,
      apiKey: CLIENT_KEY,
      apiVersion: API_VERSION,
      deployment: DEPLOYMENT,
      maxRetries: 0, // any failover seen by the test is the proxy's
      timeout: REQUEST_TIMEOUT_MS,
    });
  }, { timeout: 2 * STARTUP_TIMEOUT_MS + 2_000 });

  after(async () => {
    await stopAll();
  }, { timeout: 2 * STOP_TIMEOUT_MS + 2_000 });

  test('chat completion fails over from the 429-ing primary to the secondary',
    { timeout: TEST_TIMEOUT_MS }, withLogs(async () => {
      const { data, response } = await client.chat.completions
        .create({
          model: DEPLOYMENT,
          messages: [{ role: 'user', content: 'Say hello through smartlb.' }],
          max_tokens: 10,
        })
        .withResponse();

      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-smartlb-backend'), 'secondary',
        'x-smartlb-backend names the backend that served the answer');
      assert.equal(data.object, 'chat.completion');
      assert.equal(data.choices.length, 1);
      assert.equal(data.choices[0].message.role, 'assistant');
      assert.equal(typeof data.choices[0].message.content, 'string');
      assert.ok(data.choices[0].message.content.length > 0, 'content is not empty');
      assert.equal(data.choices[0].finish_reason, 'stop');
      assert.ok(data.usage, 'usage is present');
      assert.ok(data.usage.prompt_tokens > 0, 'usage.prompt_tokens > 0');
      assert.ok(data.usage.completion_tokens > 0, 'usage.completion_tokens > 0');
      assert.equal(data.usage.total_tokens, data.usage.prompt_tokens + data.usage.completion_tokens);

      // The primary really was tried first and answered 429 (with the primary's key: a wrong
      // key would have been a 401).
      const primary = await simStats(ports.primary);
      assert.equal(primary.requests, 1, `primary saw one request: ${JSON.stringify(primary.by_status)}`);
      assert.deepEqual(primary.by_status, { 429: 1 }, 'primary answered 429');
      assert.equal(primary.last_request_headers['api-key'], PRIMARY_KEY,
        'the proxy sent the primary its own key');
      assert.equal(primary.last_request_headers.authorization, undefined);
      assertNoClientKey(primary, 'primary');

      const secondary = await simStats(ports.secondary);
      assert.equal(secondary.requests, 1);
      assert.deepEqual(secondary.by_status, { 200: 1 });
      assert.equal(secondary.last_request_headers['api-key'], SECONDARY_KEY,
        'the proxy sent the secondary its own key');
      assert.equal(secondary.last_request_headers.authorization, undefined,
        'no Authorization header reaches the secondary');
      assertNoClientKey(secondary, 'secondary');
      assert.match(secondary.last_request_path,
        new RegExp(`^/openai/deployments/${DEPLOYMENT}/chat/completions\\?api-version=${API_VERSION}$`));
    }));

  test('streaming chat completion yields content chunks and a usage chunk',
    { timeout: TEST_TIMEOUT_MS }, withLogs(async () => {
      const { data: stream, response } = await client.chat.completions
        .create({
          model: DEPLOYMENT,
          messages: [{ role: 'user', content: 'Stream something through smartlb.' }],
          max_tokens: 20,
          stream: true,
          stream_options: { include_usage: true },
        })
        .withResponse();

      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-smartlb-backend'), 'secondary');
      assert.match(response.headers.get('content-type') ?? '', /^text\/event-stream/);

      let chunks = 0;
      let contentChunks = 0;
      let content = '';
      let usage = null;
      let finishReason = null;
      for await (const chunk of stream) {
        chunks += 1;
        assert.equal(chunk.object, 'chat.completion.chunk');
        const choice = chunk.choices[0];
        if (choice?.delta?.content) {
          contentChunks += 1;
          content += choice.delta.content;
        }
        if (choice?.finish_reason) finishReason = choice.finish_reason;
        if (chunk.usage) {
          assert.equal(usage, null, 'only one usage chunk');
          assert.deepEqual(chunk.choices, [], 'the usage chunk has no choices');
          usage = chunk.usage;
        }
      }

      assert.ok(chunks >= 3, `several chunks (got ${chunks})`);
      assert.ok(contentChunks >= 2, `several content chunks (got ${contentChunks})`);
      assert.ok(content.length > 0, 'concatenated content is not empty');
      assert.equal(finishReason, 'stop');
      assert.ok(usage, 'a usage chunk was received');
      assert.ok(usage.prompt_tokens > 0);
      assert.equal(usage.completion_tokens, contentChunks, 'one completion token per content chunk');
      assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);

      const secondary = await simStats(ports.secondary);
      assert.equal(secondary.last_request_headers['api-key'], SECONDARY_KEY);
      assertNoClientKey(secondary, 'secondary');
      const body = JSON.parse(secondary.last_request_body);
      assert.equal(body.stream, true, 'stream flag forwarded');
      assert.deepEqual(body.stream_options, { include_usage: true }, 'stream_options forwarded');
    }));

  test('embeddings return a vector', { timeout: TEST_TIMEOUT_MS }, withLogs(async () => {
    // The SDK's default: it asks for base64 and decodes the float32 values itself.
    const { data, response } = await client.embeddings
      .create({ model: DEPLOYMENT, input: 'embed me through smartlb' })
      .withResponse();

    assert.equal(response.status, 200);
    assert.equal(response.headers.get('x-smartlb-backend'), 'secondary');
    assert.equal(data.object, 'list');
    assert.equal(data.data.length, 1);
    const vec = data.data[0].embedding;
    assert.ok(Array.isArray(vec), 'embedding is an array of numbers');
    assert.equal(vec.length, 8, `the sim's 8-float vector (got ${JSON.stringify(vec)})`);
    for (const x of vec) assert.ok(typeof x === 'number' && Number.isFinite(x), `finite component: ${x}`);
    assert.ok(vec.some((x) => x !== 0), 'not all zeros');
    assert.ok(Math.abs(vec[0] - 0.125) < 1e-6, `decoded like the sim's floats (got ${vec[0]})`);
    assert.ok(data.usage.prompt_tokens > 0);

    const secondary = await simStats(ports.secondary);
    assert.equal(secondary.last_request_headers['api-key'], SECONDARY_KEY);
    assertNoClientKey(secondary, 'secondary');
    assert.equal(JSON.parse(secondary.last_request_body).input, 'embed me through smartlb');
    assert.match(secondary.last_request_path,
      new RegExp(`^/openai/deployments/${DEPLOYMENT}/embeddings\\?api-version=${API_VERSION}$`));
  }));

  test('the cooled-down primary is not retried while its Retry-After runs',
    { timeout: TEST_TIMEOUT_MS }, withLogs(async () => {
      const primary = await simStats(ports.primary);
      assert.equal(primary.requests, 1,
        `primary got only the first request (by_status ${JSON.stringify(primary.by_status)})`);
      const secondary = await simStats(ports.secondary);
      assert.equal(secondary.requests, 3, 'secondary served all three requests');
      assert.deepEqual(secondary.by_status, { 200: 3 });
      assert.equal(proxyProc.exit, null, 'smartlb is still running');
    }));
});

// ---------------------------------------------------------------------------------------------
// A routing policy file: the SDK's requests go where a rule says, with the model renamed.

describe('smartlb with the OpenAI Node SDK through a rule of the config file', () => {
  let AzureOpenAI;
  let ports = {};
  const UPSTREAM_DEPLOYMENT = 'gpt-4o-0806';
  const RULES_KEY = 'rules-sim-key';
  const LIMITED_KEY = 'limited-client-key-1';

  const withLogs = (fn) => async (t) => {
    try {
      await fn(t);
    } catch (e) {
      const logs = children.map(describeOutput).join('\n');
      if (e && typeof e === 'object' && typeof e.message === 'string') e.message += `\n${logs}`;
      throw e;
    }
  };

  before(async () => {
    const smartlbBin = requireBinary('SMARTLB_BIN');
    const simBin = requireBinary('SMARTLB_SIM_BIN');
    ({ AzureOpenAI } = await loadOpenAI());
    ports.sim = await spawnListening('rules-sim', simBin, [
      '--port', '0', '--name', 'eastus', '--deployment', `${UPSTREAM_DEPLOYMENT}:1000000:10000`,
      '--api-key', RULES_KEY,
    ], cleanEnv({}));
    const dir = mkdtempSync(join(tmpdir(), 'smartlb-e2e-'));
    const file = join(dir, 'smartlb.yaml');
    writeFileSync(file, [
      'backends:',
      `  - {name: eastus, url: "http://127.0.0.1:${ports.sim}", api_key: "\${RULES_SIM_KEY}"}`,
      'targets:',
      `  - {id: eastus/gpt-4o, backend: eastus, deployment: ${UPSTREAM_DEPLOYMENT}}`,
      'rules:',
      '  - id: e2e',
      '    type: weight-based-routing',
      '    when: {models: [gpt-4o], metadata: {env: e2e}}',
      '    load_balance_targets: [{target: eastus/gpt-4o, override_params: {max_tokens: 5}}]',
      '  - id: e2e-any',
      '    type: weight-based-routing',
      '    when: {models: [gpt-4o], subjects: [tier:limited]}',
      '    load_balance_targets: [{target: eastus/gpt-4o}]',
      'clients:',
      `  - {name: e2e, key: "${CLIENT_KEY}"}`,
      `  - {name: limited, key: "${LIMITED_KEY}", subjects: [tier:limited], limits: {requests_per_minute: 1}}`,
      '',
    ].join('\n'));
    ports.proxy = await spawnListening('smartlb-rules', smartlbBin, ['--config', file], cleanEnv({
      PORT: '0',
      ADMIN_PORT: '0',
      LISTEN_ADDRESS: '127.0.0.1',
      THREADS: '1',
      SHUTDOWN_TIMEOUT_SECONDS: '2',
      RULES_SIM_KEY: RULES_KEY,
    }));
  }, { timeout: 2 * STARTUP_TIMEOUT_MS + 2_000 });

  after(async () => {
    await stopAll();
  }, { timeout: 2 * STOP_TIMEOUT_MS + 2_000 });

  const clientWith = (headers, apiKey = CLIENT_KEY) => new AzureOpenAI({
    endpoint: `http://127.0.0.1:${ports.proxy}`,
    apiKey,
    apiVersion: API_VERSION,
    deployment: 'gpt-4o',
    maxRetries: 0,
    timeout: REQUEST_TIMEOUT_MS,
    defaultHeaders: headers,
  });

  test('a request matching the rule reaches the renamed deployment with the overrides',
    { timeout: TEST_TIMEOUT_MS }, withLogs(async () => {
      const client = clientWith({ 'x-smartlb-metadata': JSON.stringify({ env: 'e2e' }) });
      const { data, response } = await client.chat.completions
        .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello, rules.' }], max_tokens: 50 })
        .withResponse();
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-smartlb-backend'), 'eastus');
      assert.equal(data.object, 'chat.completion');
      const stats = await simStats(ports.sim);
      assert.match(stats.last_request_path, new RegExp(`^/openai/deployments/${UPSTREAM_DEPLOYMENT}/chat/completions`));
      assert.equal(JSON.parse(stats.last_request_body).max_tokens, 5, 'override_params applied');
      assert.equal(stats.last_request_headers['x-smartlb-metadata'], undefined, 'metadata is not forwarded');
      assertNoClientKey(stats, 'rules-sim');
    }));

  test('a client over its budget gets a 429 rate_limit_exceeded the SDK understands, and no backend call',
    { timeout: TEST_TIMEOUT_MS }, withLogs(async () => {
      const client = clientWith({}, LIMITED_KEY);
      const before = (await simStats(ports.sim)).requests;
      const { response } = await client.chat.completions
        .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello, budget.' }], max_tokens: 5 })
        .withResponse();
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('x-ratelimit-limit-requests'), '1', 'the client\'s own budget');
      assert.equal(response.headers.get('x-ratelimit-remaining-requests'), '0');
      await assert.rejects(
        client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Again.' }], max_tokens: 5 }),
        (e) => {
          const header = (name) => (typeof e.headers?.get === 'function' ? e.headers.get(name) : e.headers?.[name]);
          assert.equal(e.status, 429);
          assert.equal(e.code, 'rate_limit_exceeded');
          assert.equal(e.type, 'requests');
          assert.ok(Number(header('retry-after-ms')) > 0, `retry-after-ms: ${header('retry-after-ms')}`);
          assert.match(e.message, /Rate limit reached for client 'limited'/);
          return true;
        });
      assert.equal((await simStats(ports.sim)).requests, before + 1, 'the refused request never reached the backend');
    }));

  test('models.list() shows the names the client may ask for, from smartlb, not a backend',
    { timeout: TEST_TIMEOUT_MS }, withLogs(async () => {
      const before = (await simStats(ports.sim)).requests;
      const ids = [];
      for await (const m of clientWith({}).models.list()) ids.push(m.id);
      assert.deepEqual(ids, ['gpt-4o'], 'the rules\' model name, not the deployment the backend calls it');
      const limited = [];
      for await (const m of clientWith({}, LIMITED_KEY).models.list()) limited.push(m.id);
      assert.deepEqual(limited, ['gpt-4o']);
      assert.equal((await simStats(ports.sim)).requests, before, 'no backend was asked');
    }));

  test('a request no rule matches gets a 404 model_not_found the SDK understands',
    { timeout: TEST_TIMEOUT_MS }, withLogs(async () => {
      const client = clientWith({});
      const before = (await simStats(ports.sim)).requests;
      await assert.rejects(
        client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }),
        (e) => e.status === 404 && e.code === 'model_not_found');
      const stats = await simStats(ports.sim);
      assert.equal(stats.requests, before, 'the backend was not called');
    }));
});

// ---------------------------------------------------------------------------------------------
// A large upload (docs/stateful-apis.md, "Large uploads"): files.create with a file above
// STREAM_REQUEST_BODY_BYTES (the default 4 MiB) is streamed to the sim, and reads back whole.

describe('smartlb with the OpenAI Node SDK: a file above the streaming threshold', () => {
  const UPLOAD_BYTES = 6 * 1024 * 1024 + 7;
  let client;
  let toFile;
  let ports = {};

  before(async () => {
    const smartlbBin = requireBinary('SMARTLB_BIN');
    const simBin = requireBinary('SMARTLB_SIM_BIN');
    let OpenAI;
    ({ OpenAI, toFile } = await loadOpenAI());
    ports.sim = await spawnListening('upload-sim', simBin, [
      '--port', '0', '--name', 'upload-sim', '--api-key', SECONDARY_KEY,
    ], cleanEnv({}));
    ports.proxy = await spawnListening('smartlb-upload', smartlbBin, [], cleanEnv({
      PORT: '0',
      ADMIN_PORT: '0',
      LISTEN_ADDRESS: '127.0.0.1',
      LOG_LEVEL: 'info',
      THREADS: '2',
      SHUTDOWN_TIMEOUT_SECONDS: '2',
      // Below the file: it passes only if it is streamed, not buffered.
      MAX_REQUEST_BODY_BYTES: String(5 * 1024 * 1024),
      BACKEND_1_URL: `http://127.0.0.1:${ports.sim}`,
      BACKEND_1_NAME: 'upload-sim',
      BACKEND_1_APIKEY: SECONDARY_KEY,
    }));
    client = new OpenAI({
      baseURL: `http://127.0.0.1:${ports.proxy}/openai/v1`,
      apiKey: CLIENT_KEY,
      maxRetries: 0,
      timeout: REQUEST_TIMEOUT_MS,
    });
  }, { timeout: 2 * STARTUP_TIMEOUT_MS + 2_000 });

  after(async () => {
    await stopAll();
  }, { timeout: 2 * STOP_TIMEOUT_MS + 2_000 });

  test('files.create streams it through and files.content gives the same bytes back',
    { timeout: TEST_TIMEOUT_MS }, async () => {
      const bytes = Buffer.alloc(UPLOAD_BYTES);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 11)) & 0xff;
      const file = await client.files.create({
        file: await toFile(bytes, 'big.jsonl', { type: 'application/jsonl' }),
        purpose: 'batch',
      });
      assert.equal(file.bytes, UPLOAD_BYTES);
      const back = Buffer.from(await (await client.files.content(file.id)).arrayBuffer());
      assert.equal(back.length, UPLOAD_BYTES);
      assert.ok(back.equals(bytes), 'the bytes read back are the bytes sent');
      const sim = await simStats(ports.sim);
      assert.equal(sim.last_request_headers['api-key'], SECONDARY_KEY, 'the backend got its own key');
      assertNoClientKey(sim, 'upload-sim');
    });
});
