// End-to-end test of OpenTelemetry traces: a Node app traced by OpenTelemetry's JS SDK (its
// fetch instrumented by @opentelemetry/instrumentation-undici) asks smartlb through the official
// OpenAI SDK; smartlb fails over from a 429-ing primary to a healthy secondary. The app and
// smartlb export to the same OTLP/HTTP JSON receiver (in this process), where the app's span, its
// fetch span, smartlb's SERVER span and smartlb's two CLIENT spans must form ONE trace.
//
// Run:  npm ci --prefix tests/e2e
//       SMARTLB_BIN=build/src/smartlb SMARTLB_SIM_BIN=build/src/sim/smartlb-sim \
//         node --test tests/e2e/otel_trace.test.mjs
// (CTest: e2e.otel_trace sets both variables.)

import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';

import {
  children, cleanEnv, describeOutput, loadOpenAI, requireBinary, simStats, spawnListening, stopAll,
  REQUEST_TIMEOUT_MS, STARTUP_TIMEOUT_MS, STOP_TIMEOUT_MS, TEST_TIMEOUT_MS,
} from './processes.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

const CLIENT_KEY = 'client-key-never-in-a-span';
const PRIMARY_KEY = 'primary-key-never-in-a-span';
const SECONDARY_KEY = 'secondary-key-never-in-a-span';
const PROMPT = 'A prompt that must never reach a span.';
const API_VERSION = '2024-10-21';
const DEPLOYMENT = 'gpt-4o';
const SPANS_TIMEOUT_MS = 5_000; // waiting for the expected spans at the receiver

const SERVER = 2; // OTLP's SpanKind numbers
const CLIENT = 3;

async function loadOpenTelemetry() {
  if (!existsSync(join(HERE, 'node_modules', '@opentelemetry', 'sdk-trace-node', 'package.json'))) {
    throw new Error(
      `the @opentelemetry packages are not installed in ${join(HERE, 'node_modules')}: ` +
        'run `npm ci` in tests/e2e (e.g. `npm ci --prefix tests/e2e` from the repository root)');
  }
  const [api, node, resources, exporter, instrumentation, undici] = await Promise.all([
    import('@opentelemetry/api'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/instrumentation'),
    import('@opentelemetry/instrumentation-undici'),
  ]);
  return { api, node, resources, exporter, instrumentation, undici };
}

/** An OTLP/HTTP JSON receiver: keeps every POST /v1/traces body, raw and decoded, and wakes the
 *  waiters of `until` on each. */
function startReceiver() {
  const bodies = [];
  const requests = [];
  let wake = () => {};
  const server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      requests.push({ path: req.url, contentType: req.headers['content-type'] });
      bodies.push(raw);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
      wake();
    });
  });
  /** Every span received so far, with its service's name. */
  const spans = () => bodies.flatMap((raw) => JSON.parse(raw).resourceSpans ?? []).flatMap((rs) => {
    const service = rs.resource?.attributes?.find((a) => a.key === 'service.name')?.value?.stringValue;
    return (rs.scopeSpans ?? []).flatMap((ss) => (ss.spans ?? []).map((s) => ({ ...s, service })));
  });
  /** Resolves when `done(spans())` holds; rejects after SPANS_TIMEOUT_MS with what came. */
  const until = (done) => new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      wake = () => {};
      reject(new Error(`the receiver's spans after ${SPANS_TIMEOUT_MS} ms: ${JSON.stringify(spans(), null, 1)}`));
    }, SPANS_TIMEOUT_MS);
    wake = () => {
      if (!done(spans())) return;
      clearTimeout(timer);
      wake = () => {};
      resolve(spans());
    };
    wake();
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port, bodies, requests, spans, until }));
  });
}

const attr = (span, key) => {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.doubleValue ?? v.boolValue);
};

// ---------------------------------------------------------------------------------------------

describe('one trace from a Node app through smartlb to its backends', () => {
  let receiver;
  let provider;
  let otel;
  let client;
  const ports = {};

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
    const { AzureOpenAI } = await loadOpenAI();
    otel = await loadOpenTelemetry();
    receiver = await startReceiver();

    // The app's tracing, as an app sets it up: spans to the receiver, fetch instrumented.
    const { NodeTracerProvider, SimpleSpanProcessor } = otel.node;
    const { resourceFromAttributes } = otel.resources;
    provider = new NodeTracerProvider({
      resource: resourceFromAttributes({ 'service.name': 'e2e-app' }),
      spanProcessors: [new SimpleSpanProcessor(new otel.exporter.OTLPTraceExporter({
        url: `http://127.0.0.1:${receiver.port}/v1/traces`,
      }))],
    });
    provider.register();
    otel.instrumentation.registerInstrumentations({
      tracerProvider: provider,
      instrumentations: [new otel.undici.UndiciInstrumentation()],
    });

    const simEnv = cleanEnv({});
    [ports.primary, ports.secondary] = await Promise.all([
      spawnListening('primary-sim', simBin, [
        '--port', '0', '--name', 'primary', '--deployment', `${DEPLOYMENT}:1000000:10000`,
        '--api-key', PRIMARY_KEY, '--force-status', '429', '--force-retry-after-ms', '30000',
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
      THREADS: '1',
      SHUTDOWN_TIMEOUT_SECONDS: '2',
      BACKEND_1_URL: `http://127.0.0.1:${ports.primary}`,
      BACKEND_1_NAME: 'primary',
      BACKEND_1_PRIORITY: '1',
      BACKEND_1_APIKEY: PRIMARY_KEY,
      BACKEND_2_URL: `http://127.0.0.1:${ports.secondary}`,
      BACKEND_2_NAME: 'secondary',
      BACKEND_2_PRIORITY: '2',
      BACKEND_2_APIKEY: SECONDARY_KEY,
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`,
      OTEL_SERVICE_NAME: 'smartlb-e2e',
      OTEL_BSP_SCHEDULE_DELAY: '50', // the test waits on the receiver, not on a 5 s batch
    }));

    client = new AzureOpenAI({
      endpoint: `http://127.0.0.1:${ports.proxy}`,
      apiKey: CLIENT_KEY,
      apiVersion: API_VERSION,
      deployment: DEPLOYMENT,
      maxRetries: 0, // the failover is smartlb's
      timeout: REQUEST_TIMEOUT_MS,
    });
  }, { timeout: 2 * STARTUP_TIMEOUT_MS + 5_000 });

  after(async () => {
    await provider?.shutdown();
    await stopAll();
    await new Promise((r) => (receiver ? receiver.server.close(r) : r()));
  }, { timeout: 2 * STOP_TIMEOUT_MS + 2_000 });

  test('the app\'s span, smartlb\'s SERVER span and its two CLIENT spans (a failover) are one trace',
    { timeout: TEST_TIMEOUT_MS + SPANS_TIMEOUT_MS }, withLogs(async () => {
      const tracer = otel.api.trace.getTracer('e2e-app');
      const appSpan = await tracer.startActiveSpan('ask smartlb', async (span) => {
        const data = await client.chat.completions.create({
          model: DEPLOYMENT, messages: [{ role: 'user', content: PROMPT }], max_tokens: 10,
        });
        assert.equal(data.object, 'chat.completion');
        span.end();
        return span.spanContext();
      });
      await provider.forceFlush();

      const traceId = appSpan.traceId;
      const spans = await receiver.until((all) =>
        all.filter((s) => s.traceId === traceId && s.service === 'smartlb-e2e').length >= 3 &&
        all.some((s) => s.spanId === appSpan.spanId));
      const inTrace = spans.filter((s) => s.traceId === traceId);
      assert.equal(inTrace.length, spans.length, 'every span received is of the one trace');

      const app = inTrace.find((s) => s.spanId === appSpan.spanId);
      assert.equal(app.service, 'e2e-app');
      const fetchSpans = inTrace.filter((s) => s.service === 'e2e-app' && s.kind === CLIENT);
      assert.equal(fetchSpans.length, 1, 'the app\'s one fetch');
      assert.equal(fetchSpans[0].parentSpanId, app.spanId);

      const mine = inTrace.filter((s) => s.service === 'smartlb-e2e');
      const servers = mine.filter((s) => s.kind === SERVER);
      assert.equal(servers.length, 1, 'one SERVER span');
      const server = servers[0];
      assert.equal(server.parentSpanId, fetchSpans[0].spanId, 'smartlb continues the app\'s fetch span');
      assert.equal(server.name, `chat ${DEPLOYMENT}`);
      assert.equal(attr(server, 'gen_ai.operation.name'), 'chat');
      assert.equal(attr(server, 'smartlb.backend'), 'secondary');
      assert.equal(attr(server, 'smartlb.attempts'), 2);

      const attempts = mine.filter((s) => s.kind === CLIENT)
        .sort((a, b) => attr(a, 'smartlb.attempt') - attr(b, 'smartlb.attempt'));
      assert.equal(attempts.length, 2, 'a failover: two CLIENT spans');
      for (const a of attempts) assert.equal(a.parentSpanId, server.spanId);
      assert.deepEqual(attempts.map((a) => attr(a, 'smartlb.backend')), ['primary', 'secondary']);
      assert.equal(attr(attempts[0], 'error.type'), '429');
      assert.equal(attr(attempts[0], 'smartlb.cooldown.cause'), 'throttled');
      assert.equal(attr(attempts[1], 'http.response.status_code'), 200);
      assert.equal(attr(attempts[1], 'gen_ai.provider.name'), 'azure.ai.openai');
      assert.ok(attr(attempts[1], 'gen_ai.usage.input_tokens') > 0, 'usage on the serving attempt');

      // Each backend was told its own attempt's span as the parent.
      const primary = await simStats(ports.primary);
      const secondary = await simStats(ports.secondary);
      assert.equal(primary.last_request_headers.traceparent, `00-${traceId}-${attempts[0].spanId}-01`);
      assert.equal(secondary.last_request_headers.traceparent, `00-${traceId}-${attempts[1].spanId}-01`);

      // smartlb's exports carry no prompt and no key.
      assert.ok(receiver.requests.every((r) => r.path === '/v1/traces' && r.contentType === 'application/json'));
      const sent = receiver.bodies.filter((b) => b.includes('smartlb-e2e')).join('\n');
      for (const secret of [PROMPT, CLIENT_KEY, PRIMARY_KEY, SECONDARY_KEY])
        assert.ok(!sent.includes(secret), `no span carries ${JSON.stringify(secret)}`);
    }));
});
