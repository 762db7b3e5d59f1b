// End-to-end test of the stateful APIs (issue 25) with the official OpenAI Node SDK: Responses
// chains (plain and streamed), retrieve/delete, background responses, Files then Batches, a
// list followed page by page, a Realtime session over WebSocket, a Responses chain over the Responses API's WebSocket
// mode continued over HTTP (all on /openai/v1/...), and the same APIs on Azure-style
// paths (/openai/...?api-version=, the AzureOpenAI client). Each smartlb-sim is one resource that knows only the ids
// it created, as Azure resources do. Four scenarios, each with its own processes:
//   control        straight to ONE sim: every case must succeed whole;
//   three sims     through smartlb in front of three sims (equal priority): the same success
//                  count as the control;
//   one cooling    as above, one sim answering 429 with a long Retry-After: requests naming
//                  its ids get an honest 429/503 with Retry-After, everything else succeeds;
//   two replicas   two smartlb processes (no Redis) in front of the three sims, the steps of
//                  every case alternating between them.
// The client uses maxRetries: 0: every retry or failover seen here is smartlb's. The Responses
// WebSocket mode needs openai 7 (ResponsesWS), installed beside openai 5 under the alias openai7.
//
// Run:  npm ci --prefix tests/e2e
//       SMARTLB_BIN=build/src/smartlb SMARTLB_SIM_BIN=build/src/sim/smartlb-sim \
//         node --test tests/e2e/stateful.test.mjs
// (CTest: e2e.stateful sets both variables.)

import { existsSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

import {
  cleanEnv, describeOutput, requireBinary, spawnProcess as spawnListening, stop, STARTUP_TIMEOUT_MS, STOP_TIMEOUT_MS,
} from './processes.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

/** node:test options of a test through smartlb. */
function through() {
  return { timeout: TEST_TIMEOUT_MS };
}

const CLIENT_KEY = 'client-key-never-forwarded';
const SIMS = [
  { name: 'sim-a', key: 'key-a' },
  { name: 'sim-b', key: 'key-b' },
  { name: 'sim-c', key: 'key-c' },
];
const MODEL = 'gpt-4o';
const API_VERSION = '2025-04-01-preview';
const COOLING_RETRY_AFTER_MS = 600_000; // longer than the whole run: the sim stays cooled down

// Every wait is bounded. A case makes at most ~40 requests of at most REQUEST_TIMEOUT_MS each
// when everything times out; in practice each answer takes milliseconds, or fails at once.
const REQUEST_TIMEOUT_MS = 5_000; // SDK timeout per request, and per realtime event
const TEST_TIMEOUT_MS = 8_000; // node:test timeout per case (36 of them: under ctest's 300 s)

// ---------------------------------------------------------------------------------------------
// The SDK, and stopping a scenario's processes (child processes: processes.mjs).

async function loadSdk() {
  for (const pkg of ['openai', 'openai7', 'ws']) {
    if (!existsSync(join(HERE, 'node_modules', pkg, 'package.json'))) {
      throw new Error(
        `the ${pkg} package is not installed in ${join(HERE, 'node_modules')}: ` +
          'run `npm ci` in tests/e2e (e.g. `npm ci --prefix tests/e2e` from the repository root)');
    }
  }
  const { OpenAI, AzureOpenAI, toFile } = await import('openai');
  const { OpenAIRealtimeWS } = await import('openai/realtime/ws');
  const { OpenAI: OpenAI7 } = await import('openai7');
  const { ResponsesWS } = await import('openai7/resources/responses/ws');
  return { OpenAI, AzureOpenAI, toFile, OpenAIRealtimeWS, OpenAI7, ResponsesWS };
}

/** Stops the processes, then fails if any printed a sanitizer report (ASan/UBSan builds). */
async function stopAndCheck(procs) {
  await stop(procs);
  const reports = procs.filter((p) => /Sanitizer|runtime error:/.test(p.stderr.join('')));
  assert.deepEqual(reports.map((p) => p.name), [],
    `sanitizer reports:\n${reports.map(describeOutput).join('\n')}`);
}

// ---------------------------------------------------------------------------------------------
// A world: the sims and proxies of one scenario.

async function startSims(simBin, count) {
  const started = await Promise.all(
    SIMS.slice(0, count).map((sim) =>
      spawnListening(sim.name, simBin, [
        '--port', '0', '--name', sim.name, '--api-key', sim.key,
        '--deployment', `${MODEL}:100000000:100000`,
      ], cleanEnv({}))));
  return started.map(({ port, proc }, i) => ({ ...SIMS[i], port, proc }));
}

async function startSmartlb(smartlbBin, name, sims) {
  const env = {
    PORT: '0',
    ADMIN_PORT: '0',
    LISTEN_ADDRESS: '127.0.0.1',
    LOG_LEVEL: 'info',
    THREADS: '2',
    SHUTDOWN_TIMEOUT_SECONDS: '2',
  };
  sims.forEach((sim, i) => {
    const n = i + 1;
    env[`BACKEND_${n}_URL`] = `http://127.0.0.1:${sim.port}`;
    env[`BACKEND_${n}_NAME`] = sim.name;
    env[`BACKEND_${n}_PRIORITY`] = '1';
    env[`BACKEND_${n}_APIKEY`] = sim.key;
  });
  const { port, proc } = await spawnListening(name, smartlbBin, [], cleanEnv(env));
  return { name, port, proc };
}

async function simFaults(sim, faults) {
  const res = await fetch(`http://127.0.0.1:${sim.port}/_sim/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(faults),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  assert.equal(res.status, 200, `POST /_sim/faults on ${sim.name}: ${await res.text()}`);
}

async function simStats(sim) {
  const res = await fetch(`http://127.0.0.1:${sim.port}/_sim/stats`, {
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  assert.equal(res.status, 200, `GET /_sim/stats on ${sim.name}`);
  return res.json();
}

// ---------------------------------------------------------------------------------------------
// Clients. The SDK's realtime client always dials wss:// (buildRealtimeURL sets the scheme);
// neither smartlb's test listener nor the sim speaks TLS, so its socket is a plain TCP
// connection (ws's createConnection option): the WebSocket on top is the SDK's, unchanged.

function plainConnection(options) {
  return netConnect({ host: options.host, port: options.port });
}

function makeClient(sdk, port, apiKey) {
  return new sdk.OpenAI({
    baseURL: `http://127.0.0.1:${port}/openai/v1`,
    apiKey,
    maxRetries: 0,
    timeout: REQUEST_TIMEOUT_MS,
  });
}

/** The Azure-style client: /openai/...?api-version=, key in the api-key header. */
function makeAzureClient(sdk, port, apiKey) {
  return new sdk.AzureOpenAI({
    endpoint: `http://127.0.0.1:${port}`,
    apiKey,
    apiVersion: API_VERSION,
    maxRetries: 0,
    timeout: REQUEST_TIMEOUT_MS,
  });
}

/** "status code: message" of an SDK error, or the error's message. */
function describeError(e) {
  if (e && typeof e === 'object' && 'status' in e && e.status !== undefined) {
    const code = e.code ?? e.error?.code ?? '';
    const backend = e.headers?.get?.('x-smartlb-backend') ?? e.headers?.get?.('x-sim-name') ?? '';
    return `HTTP ${e.status}${code ? ` ${code}` : ''}${backend ? ` (from ${backend})` : ''}: ${e.message}`;
  }
  return e instanceof Error ? e.message : String(e);
}

/** Who answered: smartlb's x-smartlb-backend, else the sim's x-sim-name. */
function answeredBy(response) {
  return response.headers.get('x-smartlb-backend') ?? response.headers.get('x-sim-name') ?? '?';
}

// ---------------------------------------------------------------------------------------------
// The cases. Each runs its steps and counts those that succeed; a failed step is recorded
// with what went wrong and the case goes on where it can (a chain continues from its last
// good turn), so the count says how much of it works, as the issue's numbers do.

class Tally {
  constructor(caseName) {
    this.caseName = caseName;
    this.ok = 0;
    this.total = 0;
    this.failures = [];
  }

  /** Runs one step; returns its value, or undefined when it failed. */
  async step(label, fn) {
    this.total += 1;
    try {
      const value = await fn();
      this.ok += 1;
      return value;
    } catch (e) {
      this.failures.push(`${label}: ${describeError(e)}`);
      return undefined;
    }
  }

  summary() {
    return `${this.caseName}: ${this.ok} of ${this.total} steps succeeded` +
      (this.failures.length ? `\n  ${this.failures.join('\n  ')}` : '');
  }
}

const pick = (clients, i) => clients[i % clients.length];

async function responsesChain(clients, turns = 12) {
  const tally = new Tally(`${turns}-turn previous_response_id chain`);
  let previous;
  let previousInput = 0;
  for (let i = 0; i < turns; i++) {
    await tally.step(`turn ${i + 1}`, async () => {
      const r = await pick(clients, i).responses.create({
        model: MODEL,
        input: `Turn ${i + 1}: tell me one more thing.`,
        max_output_tokens: 16,
        ...(previous ? { previous_response_id: previous } : {}),
      });
      assert.equal(r.object, 'response');
      assert.equal(r.status, 'completed');
      assert.match(r.id, /^resp_/);
      assert.ok(r.output_text.length > 0, 'output_text is empty');
      assert.ok(r.usage.input_tokens > previousInput,
        `usage.input_tokens ${r.usage.input_tokens} did not grow past ${previousInput}: the previous turns were not in context`);
      previous = r.id;
      previousInput = r.usage.input_tokens;
    });
  }
  return tally;
}

async function streamedChain(clients, turns = 8) {
  const tally = new Tally(`${turns} streamed turns`);
  let previous;
  for (let i = 0; i < turns; i++) {
    await tally.step(`streamed turn ${i + 1}`, async () => {
      const stream = await pick(clients, i).responses.create({
        model: MODEL,
        input: `Streamed turn ${i + 1}.`,
        max_output_tokens: 16,
        stream: true,
        ...(previous ? { previous_response_id: previous } : {}),
      });
      const types = [];
      let deltas = '';
      let done = null;
      let completed = null;
      for await (const event of stream) {
        types.push(event.type);
        if (event.type === 'response.output_text.delta') deltas += event.delta;
        if (event.type === 'response.output_text.done') done = event.text;
        if (event.type === 'response.completed') completed = event.response;
      }
      assert.equal(types[0], 'response.created', `first event: ${types.join(', ')}`);
      assert.equal(types.at(-1), 'response.completed', `last event: ${types.join(', ')}`);
      assert.ok(deltas.length > 0, 'no output_text.delta');
      assert.equal(done, deltas, 'output_text.done is not the deltas joined');
      assert.ok(completed.usage.output_tokens > 0, 'response.completed has no usage');
      previous = completed.id;
    });
  }
  return tally;
}

async function retrieveAndDelete(clients) {
  const tally = new Tally('create, retrieve, delete');
  let n = 0;
  const ids = [];
  for (let i = 0; i < 3; i++) {
    const id = await tally.step(`create ${i + 1}`, async () => {
      const r = await pick(clients, n++).responses.create({ model: MODEL, input: `Keep me ${i + 1}.` });
      return r.id;
    });
    if (id) ids.push(id);
  }
  for (const id of ids) {
    await tally.step(`retrieve ${id}`, async () => {
      const r = await pick(clients, n++).responses.retrieve(id);
      assert.equal(r.id, id);
      assert.equal(r.status, 'completed');
    });
  }
  for (const id of ids) {
    await tally.step(`delete ${id}`, async () => {
      const r = await pick(clients, n++).responses.delete(id);
      // The SDK answers a DELETE with nothing (void); the answer is a 200 when it returns.
      assert.ok(r === undefined || r === null || r.deleted === true, `delete answered ${JSON.stringify(r)}`);
    });
    await tally.step(`retrieve deleted ${id} is 404`, async () => {
      await assert.rejects(pick(clients, n++).responses.retrieve(id), (e) => {
        assert.equal(e.status, 404, `expected 404, got ${describeError(e)}`);
        return true;
      }, 'answered 200: the response is still there');
    });
  }
  return tally;
}

async function backgroundResponse(clients) {
  const tally = new Tally('background response polled until completed');
  let n = 0;
  const created = await tally.step('create in the background', async () => {
    const r = await pick(clients, n++).responses.create({ model: MODEL, input: 'Later.', background: true });
    assert.equal(r.status, 'queued');
    return r;
  });
  if (!created) return tally;
  await tally.step(`poll ${created.id}`, async () => {
    let status = created.status;
    for (let polls = 0; polls < 5 && status !== 'completed'; polls++) {
      status = (await pick(clients, n++).responses.retrieve(created.id)).status;
    }
    assert.equal(status, 'completed', 'still not completed after 5 polls');
  });
  await tally.step(`input_items of ${created.id}`, async () => {
    const page = await pick(clients, n++).responses.inputItems.list(created.id);
    assert.ok(page.data.length >= 1, 'no input items');
  });
  return tally;
}

const BATCH_LINES = [1, 2, 3].map((i) => JSON.stringify({
  custom_id: `line-${i}`,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: MODEL, messages: [{ role: 'user', content: `Batch line ${i}.` }], max_tokens: 5 },
})).join('\n') + '\n';

async function filesThenBatch(sdk, clients) {
  const tally = new Tally('file upload, read back, batch on it, read the batch');
  let n = 0;
  const file = await tally.step('upload batch.jsonl', async () => {
    const f = await pick(clients, n++).files.create({
      file: await sdk.toFile(Buffer.from(BATCH_LINES), 'batch.jsonl', { type: 'application/jsonl' }),
      purpose: 'batch',
    });
    assert.match(f.id, /^file-/);
    assert.equal(f.bytes, Buffer.byteLength(BATCH_LINES));
    return f;
  });
  if (!file) return tally;
  await tally.step(`retrieve ${file.id}`, async () => {
    const f = await pick(clients, n++).files.retrieve(file.id);
    assert.equal(f.filename, 'batch.jsonl');
  });
  await tally.step(`content of ${file.id}`, async () => {
    const res = await pick(clients, n++).files.content(file.id);
    assert.equal(await res.text(), BATCH_LINES, 'the content read back differs from the upload');
  });
  const batch = await tally.step(`batch on ${file.id}`, async () => {
    const b = await pick(clients, n++).batches.create({
      input_file_id: file.id,
      endpoint: '/v1/chat/completions',
      completion_window: '24h',
    });
    assert.match(b.id, /^batch_/);
    return b;
  });
  if (!batch) return tally;
  const outputFileId = await tally.step(`poll ${batch.id}`, async () => {
    let b = batch;
    for (let polls = 0; polls < 5 && b.status !== 'completed'; polls++) {
      b = await pick(clients, n++).batches.retrieve(batch.id);
      assert.ok(!['failed', 'cancelled', 'expired'].includes(b.status), `batch ${b.status}: ${JSON.stringify(b.errors)}`);
    }
    assert.equal(b.status, 'completed', 'still not completed after 5 polls');
    assert.equal(b.request_counts.completed, 3);
    return b.output_file_id;
  });
  if (!outputFileId) return tally;
  await tally.step(`batch output ${outputFileId}`, async () => {
    const text = await (await pick(clients, n++).files.content(outputFileId)).text();
    const lines = text.trim().split('\n').map((l) => JSON.parse(l));
    assert.deepEqual(lines.map((l) => l.custom_id).sort(), ['line-1', 'line-2', 'line-3']);
    assert.ok(lines.every((l) => l.response.status_code === 200), text);
  });
  return tally;
}

// A list call answers what one resource holds; its pages must all come from that resource
// (the design pins a page's `after` id to the resource that listed it). Six files are
// uploaded with a purpose no other case uses, then listed one per page.
async function filesListedPageByPage(sdk, clients) {
  const tally = new Tally('files listed page by page');
  let n = 0;
  const owners = new Map(); // file id -> who stored it
  for (let i = 0; i < 6; i++) {
    await tally.step(`upload page-${i}.txt`, async () => {
      const { data, response } = await pick(clients, n++).files
        .create({
          file: await sdk.toFile(Buffer.from(`page ${i}\n`), `page-${i}.txt`, { type: 'text/plain' }),
          purpose: 'user_data',
        })
        .withResponse();
      owners.set(data.id, answeredBy(response));
    });
  }
  await tally.step('list them one per page', async () => {
    const { data: page, response } = await pick(clients, n++).files
      .list({ purpose: 'user_data', limit: 1 })
      .withResponse();
    const lister = answeredBy(response);
    const listed = [];
    for await (const file of page) { // the SDK follows has_more with after=<last id>
      listed.push(file.id);
      if (listed.length > 2 * owners.size) break;
    }
    const expected = [...owners].filter(([, owner]) => owner === lister).map(([id]) => id);
    assert.deepEqual([...listed].sort(), [...expected].sort(),
      `the first page came from ${lister}, which stored ${expected.length} of the ${owners.size} files; ` +
        `the pages listed ${listed.length}`);
  });
  return tally;
}

/** Waits for the realtime event of `type`, failing on an error event, a closed socket or
 *  REQUEST_TIMEOUT_MS. `onClose` registers a callback for the socket's close. */
function realtimeEvents(rt, onClose = (callback) => rt.socket.on('close', callback)) {
  const seen = [];
  const waiters = [];
  let failure = null;
  const settle = () => {
    for (const w of [...waiters]) {
      const i = seen.findIndex((e) => e.type === w.type);
      if (i >= 0) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve({ event: seen[i], before: seen.splice(0, i + 1) });
      } else if (failure) {
        waiters.splice(waiters.indexOf(w), 1);
        w.reject(new Error(`waiting for ${w.type}: ${failure}`));
      }
    }
  };
  rt.on('event', (e) => {
    seen.push(e);
    settle();
  });
  rt.on('error', (e) => {
    failure ??= e.message;
    settle();
  });
  onClose((code, reason) => {
    failure ??= `the WebSocket closed (${code} ${reason})`;
    settle();
  });
  return (type) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiters.splice(waiters.indexOf(w), 1);
      reject(new Error(`no ${type} within ${REQUEST_TIMEOUT_MS} ms (seen: ${seen.map((e) => e.type).join(', ')})`));
    }, REQUEST_TIMEOUT_MS);
    const w = {
      type,
      resolve: (v) => { clearTimeout(timer); resolve(v); },
      reject: (e) => { clearTimeout(timer); reject(e); },
    };
    waiters.push(w);
    settle();
  });
}

async function realtimeSession(sdk, clients) {
  const tally = new Tally('realtime session over WebSocket');
  const rt = new sdk.OpenAIRealtimeWS(
    { model: MODEL, options: { createConnection: plainConnection } }, pick(clients, 0));
  const next = realtimeEvents(rt);
  try {
    const opened = await tally.step('session.created', () => next('session.created'));
    if (!opened) return tally;
    await tally.step('session.update -> session.updated', async () => {
      rt.send({ type: 'session.update', session: { type: 'realtime', instructions: 'Be brief.' } });
      const { event } = await next('session.updated');
      assert.equal(event.session.instructions, 'Be brief.');
    });
    await tally.step('conversation.item.create -> conversation.item.created', async () => {
      rt.send({
        type: 'conversation.item.create',
        item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello.' }] },
      });
      await next('conversation.item.created');
    });
    await tally.step('response.create -> deltas, response.done with usage', async () => {
      rt.send({ type: 'response.create' });
      const { event, before } = await next('response.done');
      const deltas = before.filter((e) => e.type === 'response.output_text.delta');
      assert.ok(deltas.length > 0, `no response.output_text.delta (events: ${before.map((e) => e.type).join(', ')})`);
      assert.ok(event.response.usage.total_tokens > 0, 'response.done has no usage');
    });
  } finally {
    rt.close();
  }
  return tally;
}

/** A 3-turn chain over the Responses API's WebSocket mode (one socket), then the last id
 *  retrieved over HTTP and one HTTP turn chained on it (the next clients: another replica). */
async function responsesOverWebSocket(sdk, clients) {
  const tally = new Tally('Responses WebSocket mode: 3 turns, then retrieve and a turn over HTTP');
  const first = pick(clients, 0);
  const socketClient = new sdk.OpenAI7({
    baseURL: first.baseURL, apiKey: first.apiKey, maxRetries: 0, timeout: REQUEST_TIMEOUT_MS,
  });
  const rws = new sdk.ResponsesWS(socketClient);
  const next = realtimeEvents(rws, (callback) => rws.on('close', callback));
  let previous;
  let previousInput = 0;
  try {
    for (let i = 0; i < 3; i++) {
      await tally.step(`socket turn ${i + 1}`, async () => {
        rws.send({
          type: 'response.create',
          model: MODEL,
          input: `Socket turn ${i + 1}: one more thing.`,
          ...(previous ? { previous_response_id: previous } : {}),
        });
        const { event, before } = await next('response.completed');
        const r = event.response;
        assert.equal(r.status, 'completed');
        assert.match(r.id, /^resp_/);
        assert.equal(before.find((e) => e.type === 'response.created')?.response.id, r.id,
          'response.created and response.completed name the same id');
        assert.equal(r.previous_response_id ?? undefined, previous);
        assert.ok(r.usage.input_tokens > previousInput,
          `usage.input_tokens ${r.usage.input_tokens} did not grow past ${previousInput}: the previous turns were not in context`);
        previous = r.id;
        previousInput = r.usage.input_tokens;
      });
    }
  } finally {
    rws.close();
  }
  if (!previous) return tally;
  await tally.step(`retrieve ${previous} over HTTP`, async () => {
    assert.equal((await pick(clients, 1).responses.retrieve(previous)).id, previous);
  });
  await tally.step('an HTTP turn chained on it', async () => {
    const r = await pick(clients, 2).responses.create({
      model: MODEL, input: 'And over HTTP?', previous_response_id: previous,
    });
    assert.equal(r.status, 'completed');
    assert.ok(r.usage.input_tokens > previousInput, 'the socket turns were not in context');
  });
  return tally;
}

async function azureStyle(sdk, clients) {
  const tally = new Tally('Azure-style paths (/openai/...?api-version=): chain, file, realtime');
  let n = 0;
  let previous;
  for (let i = 0; i < 3; i++) {
    await tally.step(`turn ${i + 1}`, async () => {
      const r = await pick(clients, n++).responses.create({
        model: MODEL,
        input: `Azure turn ${i + 1}.`,
        ...(previous ? { previous_response_id: previous } : {}),
      });
      assert.equal(r.status, 'completed');
      previous = r.id;
    });
  }
  const file = await tally.step('upload notes.txt', async () => pick(clients, n++).files.create({
    file: await sdk.toFile(Buffer.from('azure notes\n'), 'notes.txt', { type: 'text/plain' }),
    purpose: 'assistants',
  }));
  if (file) {
    await tally.step(`content of ${file.id}`, async () => {
      assert.equal(await (await pick(clients, n++).files.content(file.id)).text(), 'azure notes\n');
    });
  }
  const rt = await sdk.OpenAIRealtimeWS.azure(pick(clients, n++), {
    deploymentName: MODEL,
    options: { createConnection: plainConnection },
  });
  const next = realtimeEvents(rt);
  try {
    await tally.step('realtime session.created', () => next('session.created'));
  } finally {
    rt.close();
  }
  return tally;
}

const CASES = [
  { name: '12-turn previous_response_id chain', run: (sdk, clients) => responsesChain(clients) },
  { name: '8 streamed turns', run: (sdk, clients) => streamedChain(clients) },
  { name: 'retrieve and delete', run: (sdk, clients) => retrieveAndDelete(clients) },
  { name: 'background response', run: (sdk, clients) => backgroundResponse(clients) },
  { name: 'files then batch', run: (sdk, clients) => filesThenBatch(sdk, clients) },
  { name: 'files listed page by page', run: (sdk, clients) => filesListedPageByPage(sdk, clients) },
  { name: 'realtime session', run: (sdk, clients) => realtimeSession(sdk, clients) },
  { name: 'Responses over WebSocket, then HTTP', run: (sdk, clients) => responsesOverWebSocket(sdk, clients) },
  {
    name: 'Azure-style paths',
    run: (sdk, clients, azureClients) => azureStyle(sdk, azureClients),
  },
];

// What the control achieved, case by case: the bar for the scenarios through smartlb.
const controlCounts = new Map();


function assertAsGoodAsControl(caseName, tally, context) {
  const expected = controlCounts.get(caseName) ?? tally.total;
  assert.equal(tally.ok, expected,
    `${context}: ${tally.ok} of ${tally.total} steps succeeded, the control ${expected}\n${tally.summary()}`);
}

function withLogs(procs, fn) {
  return async (t) => {
    try {
      await fn(t);
    } catch (e) {
      const logs = procs().map(describeOutput).join('\n');
      if (e && typeof e === 'object' && typeof e.message === 'string') {
        e.message += `\n${logs}`;
        throw e;
      }
      throw new Error(`${String(e)}\n${logs}`);
    }
  };
}

// ---------------------------------------------------------------------------------------------

describe('control: the SDK straight to one sim', () => {
  let sdk;
  let sims = [];
  let client;
  let azureClient;
  before(async () => {
    sdk = await loadSdk();
    sims = await startSims(requireBinary('SMARTLB_SIM_BIN'), 1);
    client = makeClient(sdk, sims[0].port, sims[0].key);
    azureClient = makeAzureClient(sdk, sims[0].port, sims[0].key);
  }, { timeout: STARTUP_TIMEOUT_MS + 2_000 });
  after(() => stopAndCheck(sims.map((s) => s.proc)), { timeout: STOP_TIMEOUT_MS + 2_000 });

  for (const c of CASES) {
    test(c.name, { timeout: TEST_TIMEOUT_MS }, withLogs(() => sims.map((s) => s.proc), async () => {
      const tally = await c.run(sdk, [client], [azureClient]);
      controlCounts.set(c.name, tally.ok);
      assert.equal(tally.ok, tally.total, tally.summary());
    }));
  }

  test('a chain naming another resource\'s id is 400 previous_response_not_found',
    { timeout: TEST_TIMEOUT_MS }, withLogs(() => sims.map((s) => s.proc), async () => {
      await assert.rejects(
        client.responses.create({ model: MODEL, input: 'x', previous_response_id: 'resp_not_from_here' }),
        (e) => {
          assert.equal(e.status, 400, describeError(e));
          assert.equal(e.code, 'previous_response_not_found', describeError(e));
          return true;
        });
    }));
});

describe('through smartlb in front of three sims', () => {
  let sdk;
  let sims = [];
  let proxy;
  let client;
  let azureClient;
  const procs = () => [...sims.map((s) => s.proc), ...(proxy ? [proxy.proc] : [])];
  before(async () => {
    sdk = await loadSdk();
    sims = await startSims(requireBinary('SMARTLB_SIM_BIN'), 3);
    proxy = await startSmartlb(requireBinary('SMARTLB_BIN'), 'smartlb', sims);
    client = makeClient(sdk, proxy.port, CLIENT_KEY);
    azureClient = makeAzureClient(sdk, proxy.port, CLIENT_KEY);
  }, { timeout: 2 * STARTUP_TIMEOUT_MS + 2_000 });
  after(() => stopAndCheck(procs()), { timeout: STOP_TIMEOUT_MS + 2_000 });

  for (const c of CASES) {
    test(c.name, through(), withLogs(procs, async () => {
      assertAsGoodAsControl(c.name, await c.run(sdk, [client], [azureClient]), 'through smartlb');
    }));
  }

  test('the work was spread over more than one sim', { timeout: TEST_TIMEOUT_MS }, withLogs(procs, async () => {
    const served = await Promise.all(sims.map(async (s) => ({ name: s.name, stats: await simStats(s) })));
    const busy = served.filter((s) => (s.stats.by_status?.['200'] ?? 0) > 0);
    assert.ok(busy.length >= 2,
      `only ${busy.map((s) => s.name).join(', ') || 'no sim'} answered 200: the three sims were not all candidates ` +
        `(${served.map((s) => `${s.name} ${JSON.stringify(s.stats.by_status)}`).join('; ')})`);
  }));
});

describe('through smartlb, one sim cooling down', () => {
  let sdk;
  let sims = [];
  let proxy;
  let client;
  let azureClient;
  let cooling;
  const owned = new Map(); // response id -> sim name
  const procs = () => [...sims.map((s) => s.proc), ...(proxy ? [proxy.proc] : [])];
  before(async () => {
    sdk = await loadSdk();
    sims = await startSims(requireBinary('SMARTLB_SIM_BIN'), 3);
    proxy = await startSmartlb(requireBinary('SMARTLB_BIN'), 'smartlb', sims);
    client = makeClient(sdk, proxy.port, CLIENT_KEY);
    azureClient = makeAzureClient(sdk, proxy.port, CLIENT_KEY);
    // Stored responses on as many sims as smartlb spreads them over (at most 12 tries).
    for (let i = 0; i < 12 && new Set(owned.values()).size < sims.length; i++) {
      const { data, response } = await client.responses
        .create({ model: MODEL, input: `Seed ${i}.` })
        .withResponse();
      owned.set(data.id, answeredBy(response));
    }
    // The sim that owns the first id cools down from now on.
    cooling = sims.find((s) => s.name === owned.values().next().value);
    assert.ok(cooling, `the first seed was answered by ${owned.values().next().value}, not a sim`);
    await simFaults(cooling, { force_status: 429, force_retry_after_ms: COOLING_RETRY_AFTER_MS });
  }, { timeout: 2 * STARTUP_TIMEOUT_MS + 12 * REQUEST_TIMEOUT_MS });
  after(() => stopAndCheck(procs()), { timeout: STOP_TIMEOUT_MS + 2_000 });

  test('its ids get an honest 429 or 503 with Retry-After', through(), withLogs(procs, async () => {
    const ids = [...owned].filter(([, name]) => name === cooling.name).map(([id]) => id);
    const failures = [];
    for (const id of ids) {
      for (const [what, call] of [
        ['retrieve', () => client.responses.retrieve(id)],
        ['chain', () => client.responses.create({ model: MODEL, input: 'Next.', previous_response_id: id })],
      ]) {
        try {
          const r = await call();
          failures.push(`${what} ${id}: answered ${r.id} although its owner ${cooling.name} is cooling down`);
        } catch (e) {
          if (![429, 503].includes(e.status)) failures.push(`${what} ${id}: ${describeError(e)}, expected 429 or 503`);
          else if (!e.headers?.get('retry-after')) failures.push(`${what} ${id}: ${e.status} without Retry-After`);
        }
      }
    }
    assert.deepEqual(failures, [], `${cooling.name} owns ${ids.length} ids:\n  ${failures.join('\n  ')}`);
  }));

  test('ids on the other sims still answer', through(), withLogs(procs, async () => {
    const others = [...owned].filter(([, name]) => name !== cooling.name);
    const failures = [];
    for (const [id, name] of others) {
      try {
        assert.equal((await client.responses.retrieve(id)).id, id);
      } catch (e) {
        failures.push(`retrieve ${id} (created on ${name}): ${describeError(e)}`);
      }
    }
    assert.deepEqual(failures, [], failures.join('\n'));
  }));

  for (const c of CASES) {
    test(`${c.name} (on the other sims)`, through(), withLogs(procs, async () => {
      assertAsGoodAsControl(c.name, await c.run(sdk, [client], [azureClient]), `with ${cooling.name} cooling down`);
    }));
  }
});

describe('two smartlb replicas (no Redis), steps alternating', () => {
  let sdk;
  let sims = [];
  let proxies = [];
  let clients = [];
  let azureClients = [];
  const procs = () => [...sims.map((s) => s.proc), ...proxies.map((p) => p.proc)];
  before(async () => {
    sdk = await loadSdk();
    sims = await startSims(requireBinary('SMARTLB_SIM_BIN'), 3);
    const smartlbBin = requireBinary('SMARTLB_BIN');
    proxies = await Promise.all(['smartlb-1', 'smartlb-2'].map((n) => startSmartlb(smartlbBin, n, sims)));
    clients = proxies.map((p) => makeClient(sdk, p.port, CLIENT_KEY));
    azureClients = proxies.map((p) => makeAzureClient(sdk, p.port, CLIENT_KEY));
  }, { timeout: 2 * STARTUP_TIMEOUT_MS + 2_000 });
  after(() => stopAndCheck(procs()), { timeout: STOP_TIMEOUT_MS + 2_000 });

  for (const c of CASES) {
    test(c.name, through(), withLogs(procs, async () => {
      assertAsGoodAsControl(c.name, await c.run(sdk, clients, azureClients), 'through two replicas');
    }));
  }
});
