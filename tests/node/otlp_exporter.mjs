// The OTLP receiver test server (tests/servers/otlp_receiver.py) against the real OpenTelemetry
// JavaScript SDK and its OTLP/HTTP exporter (@opentelemetry/exporter-trace-otlp-http): spans the
// real exporter sends are decoded whole (ids, parents, kinds, every attribute type, status, the
// resource), a missing header is refused as the exporter expects, and a partial success is
// read. pilotfish's own exporter is tested against the same receiver (tests/otlp_exporter_test.cpp),
// so what it accepts is what a collector accepts.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { context, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';

const here = path.dirname(fileURLToPath(import.meta.url));
const say = (line) => process.stdout.write(line + '\n');
const watchdog = setTimeout(() => { say('FAIL - timed out'); process.exit(1); }, 120000);

function startReceiver(args = []) {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', [path.join(here, '../servers/otlp_receiver.py'), ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const m = /PORT (\d+)/.exec(buf);
      if (m) resolve({ port: Number(m[1]), stop: () => new Promise((r) => { child.once('exit', r); child.stdin.end(); }) });
    });
    child.once('exit', (code) => reject(new Error('receiver exited ' + code)));
  });
}

let failures = 0;
async function check(name, fn) {
  try {
    await fn();
    say(`ok - ${name}`);
  } catch (e) {
    failures++;
    say(`FAIL - ${name}: ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`);
  }
}

function provider(url, headers = {}) {
  const exporter = new OTLPTraceExporter({ url, headers });
  const p = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { p, exporter, tracer: p.getTracer('faithful-check') };
}
const spansOf = async (port) => (await (await fetch(`http://127.0.0.1:${port}/spans`)).json());

const rx = await startReceiver(['--header', 'x-api-key=k1', '--reject-name', 'rejected']);
const url = `http://127.0.0.1:${rx.port}/v1/traces`;

await check('spans of the real exporter are decoded whole: ids, parents, kinds, attributes, status', async () => {
  const { p, tracer } = provider(url, { 'x-api-key': 'k1' });
  const parent = tracer.startSpan('chat.turn', { kind: SpanKind.SERVER });
  parent.setAttribute('pilotfish.channel', 'mm:c1');
  parent.setAttribute('count', 3);
  parent.setAttribute('ratio', 0.5);
  parent.setAttribute('flag', true);
  parent.setAttribute('list', ['a', 'b']);
  const child = tracer.startSpan('tool run_command', { kind: SpanKind.CLIENT }, trace.setSpan(context.active(), parent));
  child.setStatus({ code: SpanStatusCode.ERROR, message: 'exit 2' });
  child.end();
  parent.end();
  await p.forceFlush();
  const { spans } = await spansOf(rx.port);
  const turn = spans.find((s) => s.name === 'chat.turn');
  const tool = spans.find((s) => s.name === 'tool run_command');
  assert.ok(turn && tool, JSON.stringify(spans));
  assert.equal(turn.traceId, parent.spanContext().traceId);
  assert.equal(turn.spanId, parent.spanContext().spanId);
  assert.equal(turn.parentSpanId, '');
  assert.equal(tool.parentSpanId, turn.spanId);
  assert.equal(tool.traceId, turn.traceId);
  assert.equal(turn.kind, 2);
  assert.equal(tool.kind, 3);
  assert.deepEqual(turn.attributes, { 'pilotfish.channel': 'mm:c1', count: 3, ratio: 0.5, flag: true, list: ['a', 'b'] });
  assert.deepEqual(tool.status, { code: 2, message: 'exit 2' });
  assert.ok(turn.end >= turn.start && turn.start > 1.6e18);
  assert.equal(turn.resource['telemetry.sdk.language'], 'nodejs');
  assert.equal(turn.scope, 'faithful-check');
  await p.shutdown();
});

await check('without the header the export fails (401) and nothing is kept; with it, it succeeds', async () => {
  await fetch(`http://127.0.0.1:${rx.port}/spans`, { method: 'DELETE' });
  const bare = new BasicTracerProvider();  // no processor: the span is exported by hand below
  const span = bare.getTracer('t').startSpan('refused');
  span.end();
  const exportWith = (headers) => new Promise((resolve) => new OTLPTraceExporter({ url, headers }).export([span], resolve));
  const refused = await exportWith({});
  assert.equal(refused.code, 1);  // ExportResultCode.FAILED
  assert.equal(refused.error.code, 401);  // OTLPExporterError: the HTTP status
  assert.deepEqual((await spansOf(rx.port)).spans, []);
  const taken = await exportWith({ 'x-api-key': 'k1' });
  assert.equal(taken.code, 0);    // ExportResultCode.SUCCESS
  assert.deepEqual((await spansOf(rx.port)).spans.map((s) => s.name), ['refused']);
});

await check('a partial success is answered as the collector does, and the exporter takes it', async () => {
  await fetch(`http://127.0.0.1:${rx.port}/spans`, { method: 'DELETE' });
  const { exporter, tracer, p } = provider(url, { 'x-api-key': 'k1' });
  const a = tracer.startSpan('rejected');
  a.end();
  await p.forceFlush();
  const { spans, requests } = await spansOf(rx.port);
  assert.equal(requests, 1);
  assert.deepEqual(spans, []);
  // The answer itself, as the exporter read it.
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k1' },
    body: JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), name: 'rejected', startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] }] }) });
  assert.deepEqual(await r.json(), { partialSuccess: { rejectedSpans: '1', errorMessage: 'rejected by name' } });
  assert.ok(exporter);
  await p.shutdown();
});

await check('bad bodies get 400 with a Status, other types 415', async () => {
  const post = (body, type = 'application/json') => fetch(url, { method: 'POST', headers: { 'content-type': type, 'x-api-key': 'k1' }, body });
  for (const bad of ['{', '[]', JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: 'xyz', spanId: 'b'.repeat(16), name: 'n' }] }] }] }),
    JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [{ traceId: '0'.repeat(32), spanId: 'b'.repeat(16), name: 'n' }] }] }] })]) {
    const r = await post(bad);
    assert.equal(r.status, 400, bad);
    assert.equal((await r.json()).code, 3);
  }
  assert.equal((await post('x', 'application/x-protobuf')).status, 415);
});

clearTimeout(watchdog);
await rx.stop();
say(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
