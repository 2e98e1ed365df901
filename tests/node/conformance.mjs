#!/usr/bin/env node
// Conformance test: reads `pilotfish serve`'s chat stream with the real `ai` npm client, once per
// version of the matrix in the UI message stream spec (section 10): DefaultChatTransport does the
// POST, parses the SSE and validates every chunk with that version's uiMessageChunkSchema;
// readUIMessageStream applies the client's ordering rules and builds the assistant message.
// A fetch tap records the raw bytes of every response for the framing checks.
//
// Per version: a fresh `pilotfish serve` (shared index and scripted model server), then
//   1 plain text, default body (with history)     5 raw bytes: headers, framing, [DONE], schema (every response)
//   2 Activepieces body                            6 negatives: 401, 400 (Error.message is JSON), bad JSON
//   3 tool call then text; sandboxed tool error    7 client abort mid-stream: the model request is closed;
//                                                  7b text reaches the client as the model streams it
//   4 model connection lost mid-stream; model rejects the request
// and a check that SIGTERM stops the server. Server basics (healthz, search, index roles) once.
//
// Env: PILOTFISH_BIN (default <repo>/build/pilotfish), AI_VERSIONS (comma list, default all),
// PF_KEEP_TMP=1 keeps the temp dir. Exit 0 when everything passed, 1 otherwise.
import { spawn, execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const BIN = path.resolve(root, process.env.PILOTFISH_BIN || 'build/pilotfish');
const MODEL_SERVER = path.join(here, '..', 'servers', 'openai_server.py');
const ALL_VERSIONS = ['ai-5-92', 'ai-5-216', 'ai-6-230', 'ai-5-277', 'ai-6-325'];
const VERSIONS = process.env.AI_VERSIONS ? process.env.AI_VERSIONS.split(',').map(s => s.trim()) : ALL_VERSIONS;
const FIVE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};
const REQUEST_TIMEOUT_MS = 15_000;
const A_TS = 'export function greet(name: string) { return "hi " + name; }\n';

// ---------------------------------------------------------------- processes and clean-up
// Synchronous, so that nothing is lost when the process exits with output still queued on a pipe.
const say = text => fs.writeSync(1, text + '\n');
const children = new Set();
function killAll() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}
process.on('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { killAll(); process.exit(130); });
const deadline = setTimeout(() => { say(`FAIL: conformance test took longer than 150 s (at: ${progress})`); killAll(); process.exit(1); }, 150_000);
let progress = 'start';
deadline.unref();

function track(child, name) {
  children.add(child);
  child.output = '';
  const keep = d => { child.output = (child.output + d).slice(-20000); };
  child.stderr?.on('data', keep);
  child.exited = new Promise(res => child.on('exit', (code, signal) => { children.delete(child); res({ code, signal }); }));
  child.name = name;
  return child;
}

// Resolves with the first stdout line; rejects when the process exits or stays silent.
function firstLine(child, timeoutMs) {
  return new Promise((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${child.name}: no first line within ${timeoutMs} ms; output: ${child.output}`)), timeoutMs);
    const onData = d => {
      buf += d;
      child.output = (child.output + d).slice(-20000);
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        child.stdout.off('data', onData);
        child.stdout.on('data', d2 => { child.output = (child.output + d2).slice(-20000); });
        resolve(buf.slice(0, nl));
      }
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', onData);
    child.on('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`${child.name} exited (code ${code}, signal ${signal}) before its first line; output: ${child.output}`)); });
  });
}

function run(cmd, args) {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      else resolve(stdout);
    });
  });
}

async function startModelServer(dir, script) {
  const scriptFile = path.join(dir, 'model-script.json');
  fs.writeFileSync(scriptFile, JSON.stringify(script, null, 1));
  const log = path.join(dir, 'model-requests.log');
  const events = path.join(dir, 'model-events.log');
  const child = track(spawn('python3', [MODEL_SERVER, '--script', scriptFile, '--log', log, '--events', events],
    { stdio: ['pipe', 'pipe', 'pipe'] }), 'model server');
  const line = await firstLine(child, 10_000);
  const m = /^PORT (\d+)$/.exec(line);
  if (!m) throw new Error(`model server: unexpected first line ${JSON.stringify(line)}`);
  return { child, port: Number(m[1]), log, events };
}

async function startPilotfish(dir, db, config, repo) {
  const child = track(spawn(BIN, ['serve', '--db', db, '--config', config, '--repo', repo, '--listen', '127.0.0.1:0'],
    { stdio: ['ignore', 'pipe', 'pipe'] }), 'pilotfish serve');
  const line = await firstLine(child, 15_000);
  const m = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
  if (!m) throw new Error(`pilotfish serve: first line ${JSON.stringify(line)} is not "listening on http://127.0.0.1:<port>"`);
  return { child, base: m[1] };
}

async function stopPilotfish(child) {
  child.kill('SIGTERM');
  const timer = new Promise(res => setTimeout(() => res(null), 5000));
  const r = await Promise.race([child.exited, timer]);
  if (!r) { child.kill('SIGKILL'); throw new Error('pilotfish serve did not exit within 5 s of SIGTERM'); }
  if (!(r.code === 0 || r.signal === 'SIGTERM'))
    throw new Error(`pilotfish serve exited with code ${r.code}, signal ${r.signal} on SIGTERM; output: ${child.output}`);
}

// ---------------------------------------------------------------- assertions
class Failure extends Error {}
function assert(cond, msg) { if (!cond) throw new Failure(typeof msg === 'function' ? msg() : msg); }
function assertEq(actual, expected, what) {
  assert(isDeepStrictEqual(actual, expected), () => `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
}
const show = (bytes, max = 1500) => {
  const s = typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString('utf8');
  return JSON.stringify(s.length > max ? s.slice(0, max) + '…' : s);
};

// Checks a whole SSE response body byte for byte against spec section 2 and validates every
// payload with the version's own schema. Returns the parsed chunks.
async function checkRaw(ai, raw, label) {
  assert(raw.readError === undefined, () => `${label}: reading the raw body failed: ${raw.readError}; bytes received: ${show(raw.bytes)}`);
  assertEq(raw.status, 200, `${label}: status`);
  const expectedHeaders = ai.UI_MESSAGE_STREAM_HEADERS ?? FIVE_HEADERS;
  for (const [k, v] of Object.entries(expectedHeaders))
    assertEq(raw.headers.get(k), v, `${label}: header ${k}`);
  let text;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(raw.bytes); } catch { throw new Failure(`${label}: body is not valid UTF-8`); }
  assert(!text.includes('\r'), () => `${label}: body contains \\r (spec framing is "data: <json>\\n\\n"): ${show(text)}`);
  assert(text.endsWith('data: [DONE]\n\n'), () => `${label}: body does not end with "data: [DONE]\\n\\n"; last bytes: ${show(text.slice(-300))}`);
  const blocks = text.split('\n\n');
  assertEq(blocks.pop(), '', `${label}: trailing bytes after the last event`);
  const schema = typeof ai.uiMessageChunkSchema === 'function' ? ai.uiMessageChunkSchema() : null;
  const chunks = [];
  let done = 0;
  for (const [i, block] of blocks.entries()) {
    if (block.split('\n').every(l => l.startsWith(':'))) continue; // SSE comments (keep-alive pings)
    assert(!block.includes('\n'), () => `${label}: event ${i} is not one "data: " line (a raw newline inside the payload?): ${show(block)}`);
    assert(block.startsWith('data: '), () => `${label}: event ${i} does not start with "data: ": ${show(block)}`);
    const payload = block.slice(6);
    if (payload === '[DONE]') { done++; continue; }
    assert(done === 0, () => `${label}: event after data: [DONE]: ${show(block)}`);
    let chunk;
    try { chunk = JSON.parse(payload); } catch { throw new Failure(`${label}: event ${i} payload is not JSON: ${show(block)}`); }
    assert(chunk && typeof chunk === 'object' && typeof chunk.type === 'string', () => `${label}: event ${i} has no type: ${show(block)}`);
    if (schema) {
      const r = await schema.validate(chunk);
      assert(r.success, () => `${label}: chunk rejected by uiMessageChunkSchema: ${payload} — ${String(r.error?.message ?? r.error).slice(0, 600)}`);
    }
    chunks.push(chunk);
  }
  assertEq(done, 1, `${label}: number of data: [DONE] events`);
  checkSequence(chunks, label);
  return chunks;
}

// The order of spec sections 4 and 6: start, steps (each start-step ... finish-step), finish.
function checkSequence(chunks, label) {
  const types = chunks.map(c => c.type);
  const where = () => `${label}: chunk types ${JSON.stringify(types)}`;
  assert(types[0] === 'start', () => `${where()}: first chunk is not start`);
  assert(typeof chunks[0].messageId === 'string' && chunks[0].messageId.length > 0, () => `${label}: start has no messageId: ${JSON.stringify(chunks[0])}`);
  assert(types.at(-1) === 'finish', () => `${where()}: last chunk is not finish`);
  const allowed = ['stop', 'length', 'content-filter', 'tool-calls', 'error', 'other'];
  assert(allowed.includes(chunks.at(-1).finishReason), () => `${label}: finish.finishReason ${JSON.stringify(chunks.at(-1).finishReason)} not one of ${allowed}`);
  let inStep = false, errored = false, steps = 0;
  let text = new Map(); // id -> open?
  let tools = new Map(); // toolCallId -> stage
  for (const [i, c] of chunks.entries()) {
    const at = `${label}: chunk ${i} ${JSON.stringify(c)} (types ${JSON.stringify(types)})`;
    if (i === 0 || i === chunks.length - 1) continue;
    assert(c.type !== 'start' && c.type !== 'finish', `${at}: second start/finish`);
    if (c.type === 'start-step') { assert(!inStep, `${at}: start-step inside a step`); inStep = true; steps++; text = new Map(); tools = new Map(); continue; }
    if (c.type === 'finish-step') {
      assert(inStep, `${at}: finish-step outside a step`);
      if (!errored) {
        for (const [id, open] of text) assert(!open, `${at}: text part ${id} never ended`);
        for (const [id, stage] of tools) assert(stage === 'output', `${at}: tool call ${id} has no output before finish-step`);
      }
      inStep = false; continue;
    }
    if (c.type === 'error') { errored = true; continue; }
    if (c.type === 'message-metadata') continue;
    assert(!errored, `${at}: content after the error chunk (only finish-step and finish may follow)`);
    assert(inStep, `${at}: content outside start-step/finish-step`);
    switch (c.type) {
      case 'text-start': assert(!text.has(c.id), `${at}: text id reused`); text.set(c.id, true); break;
      case 'text-delta': case 'text-end':
        assert(text.get(c.id) === true, `${at}: ${c.type} without an open text-start in this step`);
        if (c.type === 'text-end') text.set(c.id, false);
        break;
      case 'tool-input-start': assert(!tools.has(c.toolCallId), `${at}: toolCallId reused`); tools.set(c.toolCallId, 'start'); break;
      case 'tool-input-delta': assert(tools.get(c.toolCallId) === 'start', `${at}: tool-input-delta out of order`); break;
      case 'tool-input-available': assert(tools.get(c.toolCallId) === 'start', `${at}: tool-input-available without tool-input-start`); tools.set(c.toolCallId, 'input'); break;
      case 'tool-output-available': case 'tool-output-error':
        assert(tools.get(c.toolCallId) === 'input', `${at}: ${c.type} without tool-input-available`); tools.set(c.toolCallId, 'output'); break;
      default: break;
    }
  }
  assert(!inStep, () => `${where()}: finish while a step is open`);
  assert(steps >= 1, () => `${where()}: no step`);
  const errors = types.filter(t => t === 'error').length;
  if (errors) {
    assert(errors === 1, () => `${where()}: more than one error chunk`);
    assertEq(chunks.at(-1).finishReason, 'error', `${label}: finishReason after an error chunk`);
  }
}

// ---------------------------------------------------------------- the client side
const userMsg = (id, text) => ({ id, role: 'user', parts: [{ type: 'text', text }] });
const assistantMsg = (id, text) => ({ id, role: 'assistant', parts: [{ type: 'step-start' }, { type: 'text', text, state: 'done' }] });
const firstText = m => m.parts.find(p => p.type === 'text')?.text ?? '';
// What the Activepieces web client sends (spec 7.2).
const activepiecesBody = ({ messages }) => ({
  body: {
    message: firstText(messages.at(-1)),
    conversationHistory: messages.slice(0, -1).slice(-50).map(m => ({ role: m.role, content: firstText(m) })),
  },
});

async function readAll(stream) {
  const out = [];
  const reader = stream.getReader();
  for (;;) { const { done, value } = await reader.read(); if (done) return out; out.push(value); }
}

// One chat through the real transport. Returns the UIMessage states, the chunks the transport
// produced, the client's errors and the raw response.
async function chat(ai, base, { messages, headers, prepare, abortAfterFirstDelta }) {
  const raw = {};
  const tap = async (url, init) => {
    const res = await fetch(url, init);
    raw.status = res.status;
    raw.headers = res.headers;
    if (!res.body) { raw.bytes = new Uint8Array(); raw.done = Promise.resolve(); return res; }
    const [a, b] = res.body.tee();
    raw.parts = [];
    raw.done = (async () => {
      const reader = b.getReader();
      try {
        for (;;) { const { done, value } = await reader.read(); if (done) break; raw.parts.push(value); }
      } catch (e) { raw.readError = String(e); }
      raw.bytes = Buffer.concat(raw.parts);
    })();
    return new Response(a, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  const ac = new AbortController();
  // A response that never ends fails its case, with what had arrived, instead of the whole run.
  const timer = setTimeout(() => { result.timedOut = true; ac.abort(); }, REQUEST_TIMEOUT_MS);
  const transport = new ai.DefaultChatTransport({ api: `${base}/v1/platform-copilot/chat`, headers, fetch: tap, prepareSendMessagesRequest: prepare });
  const result = { states: [], errors: [], chunks: [], raw };
  raw.bytes = undefined;
  let stream;
  result.sentAt = Date.now() / 1000;
  try {
    stream = await transport.sendMessages({ chatId: 'chat-1', messages, trigger: 'submit-message', messageId: undefined, abortSignal: ac.signal });
  } catch (e) {
    await raw.done;
    clearTimeout(timer);
    result.thrown = e;
    return result;
  }
  const [s1, s2] = stream.tee();
  const chunksDone = readAll(s2).then(c => { result.chunks = c; }, e => { result.chunkError = e; });
  try {
    for await (const m of ai.readUIMessageStream({ stream: s1, terminateOnError: true, onError: e => result.errors.push(e) })) {
      result.states.push(structuredClone(m));
      if (!result.firstTextAt && firstText(m).length > 0) result.firstTextAt = Date.now() / 1000;
      if (abortAfterFirstDelta && !result.abortedAt && firstText(m).length > 0) {
        result.abortedAt = Date.now() / 1000;
        ac.abort();
      }
    }
  } catch (e) {
    result.terminated = e;
  }
  await chunksDone;
  await raw.done;
  clearTimeout(timer);
  result.final = result.states.at(-1);
  return result;
}

function assertCleanStream(r, label) {
  assert(!r.timedOut, () => `${label}: the response did not end within ${REQUEST_TIMEOUT_MS / 1000} s; bytes received: ${show(r.raw.bytes ?? Buffer.concat(r.raw.parts ?? []))}`);
  assert(!r.thrown, () => `${label}: sendMessages threw: ${r.thrown?.message}`);
  assert(!r.chunkError, () => `${label}: the transport's chunk stream failed (SSE parse or schema validation): ${r.chunkError?.message?.slice(0, 800)}; raw body ${show(r.raw.bytes)}`);
  assert(!r.terminated && r.errors.length === 0, () => `${label}: client error: ${(r.terminated ?? r.errors[0])?.message}; raw body ${show(r.raw.bytes)}`);
  assert(r.final, `${label}: readUIMessageStream produced no message`);
}

function assertFinalMessage(r, label, expectedTypes) {
  const start = r.chunks.find(c => c.type === 'start');
  assert(start, `${label}: no start chunk`);
  assertEq(r.final.id, start.messageId, `${label}: final message id vs start.messageId`);
  assertEq(r.final.role, 'assistant', `${label}: final message role`);
  assertEq(r.final.parts.map(p => p.type), expectedTypes, `${label}: part types`);
}

function assertJsonError(text, status, label, code) {
  let body;
  try { body = JSON.parse(text); } catch { throw new Failure(`${label}: error body is not JSON: ${show(text)}`); }
  assert(body && typeof body.error === 'string' && body.error.length > 0, () => `${label}: error body has no "error" string: ${text}`);
  assert(typeof body.message === 'string', () => `${label}: error body has no "message" string: ${text}`);
  if (code) assertEq(body.error, code, `${label}: error code (status ${status})`);
  return body;
}

// ---------------------------------------------------------------- model server log
const readJsonLines = file => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l)) : []);
const userTexts = body => (body?.messages ?? []).filter(m => m.role === 'user').map(m => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
const chatRequests = (model, marker) => readJsonLines(model.log).filter(r => r.path.endsWith('/chat/completions') && userTexts(r.body).some(t => t.includes(marker)));
const contentText = c => (typeof c === 'string' ? c : JSON.stringify(c ?? ''));

// ---------------------------------------------------------------- the cases
const M = (tag, n) => `[${tag} case${n}]`; // markers the model script matches on

function modelScript(tags) {
  const s = [];
  for (const tag of tags) {
    s.push({ match: M(tag, 1), chat: { text: ['Greeting ', 'from the model.\n', 'Line two: "quoted", \\ and \t tab.'], finish: 'stop' } });
    s.push({ match: M(tag, 2), chat: { text: ['Activepieces ', 'answer.'], finish: 'stop' } });
    s.push({ match: M(tag, 3), chat: { tool_calls: [{ id: 'call_read', name: 'read_file', arguments: '{"filePath":"src/a.ts"}' }], finish: 'tool_calls' } });
    s.push({ match: M(tag, 3), chat: { text: ['The file ', 'defines greet.'], finish: 'stop' } });
    s.push({ match: M(tag, 33), chat: { tool_calls: [{ id: 'call_escape', name: 'read_file', arguments: '{"filePath":"../../../../../../../../etc/passwd"}' }], finish: 'tool_calls' } });
    s.push({ match: M(tag, 33), chat: { text: ['Not allowed.'], finish: 'stop' } });
    s.push({ match: M(tag, 4), chat: { text: ['Partial ', 'answer ', 'never arrives'], finish: 'stop', drop_after: 2 } });
    s.push({ match: M(tag, 44), status: 400, body: { error: { message: 'scripted: model rejects the request', type: 'invalid_request_error' } } });
    s.push({ match: M(tag, 7), chat: { text: Array.from({ length: 40 }, (_, i) => `tick${i} `), finish: 'stop', chunk_delay: 0.1 } });
  }
  return s;
}

async function casesFor(tag, ai, ctx, record) {
  const { base, keys, model } = ctx;
  const auth = { Authorization: `Bearer ${keys.user}` };
  const history = [userMsg('u0', 'What does greet do? [hist-q]'), assistantMsg('a0', 'It greets someone. [hist-a]')];
  const step = async (name, fn) => {
    const t0 = Date.now();
    progress = `${tag} ${name}`;
    try { const note = await fn(); record(tag, name, null, Date.now() - t0, note); } catch (e) { record(tag, name, e, Date.now() - t0); }
  };

  await step('1 plain text, default body', async () => {
    const r = await chat(ai, base, { messages: [...history, userMsg('u1', `Say hello ${M(tag, 1)}`)], headers: auth });
    assertCleanStream(r, 'case 1');
    const chunks = await checkRaw(ai, r.raw, 'case 1 raw');
    assertEq(r.chunks, chunks, 'case 1: chunks from the transport vs raw payloads');
    assertFinalMessage(r, 'case 1', ['step-start', 'text']);
    assertEq(r.final.parts[1].text, 'Greeting from the model.\nLine two: "quoted", \\ and \t tab.', 'case 1: text');
    assertEq(chunks.at(-1).finishReason, 'stop', 'case 1: finishReason');
    const [req] = chatRequests(model, M(tag, 1));
    assert(req, 'case 1: the model saw no request with the question');
    const all = req.body.messages.map(m => contentText(m.content)).join('\n');
    assert(all.includes('[hist-q]') && all.includes('[hist-a]'), () => `case 1: the conversation history of the default body did not reach the model: ${show(JSON.stringify(req.body.messages), 600)}`);
  });

  await step('2 Activepieces body', async () => {
    const r = await chat(ai, base, { messages: [...history, userMsg('u2', `Explain ${M(tag, 2)}`)], headers: auth, prepare: activepiecesBody });
    assertCleanStream(r, 'case 2');
    await checkRaw(ai, r.raw, 'case 2 raw');
    assertFinalMessage(r, 'case 2', ['step-start', 'text']);
    assertEq(r.final.parts[1].text, 'Activepieces answer.', 'case 2: text');
    const [req] = chatRequests(model, M(tag, 2));
    assert(req, 'case 2: the model saw no request with the message');
    const msgs = req.body.messages;
    const iq = msgs.findIndex(m => m.role === 'user' && contentText(m.content).includes('[hist-q]'));
    const ia = msgs.findIndex(m => m.role === 'assistant' && contentText(m.content).includes('[hist-a]'));
    const im = msgs.findIndex(m => m.role === 'user' && contentText(m.content).includes(M(tag, 2)));
    assert(iq >= 0 && iq < ia && ia < im, () => `case 2: conversationHistory did not reach the model in order (user, assistant, message): ${show(JSON.stringify(msgs), 800)}`);
  });

  await step('3 tool call then text', async () => {
    const r = await chat(ai, base, { messages: [userMsg('u3', `What is in src/a.ts? ${M(tag, 3)}`)], headers: auth });
    assertCleanStream(r, 'case 3');
    const chunks = await checkRaw(ai, r.raw, 'case 3 raw');
    assertFinalMessage(r, 'case 3', ['step-start', 'tool-read_file', 'step-start', 'text']);
    const tool = r.final.parts[1];
    assertEq(tool.state, 'output-available', 'case 3: tool part state');
    assertEq(tool.input, { filePath: 'src/a.ts' }, 'case 3: tool input');
    assert(JSON.stringify(tool.output ?? null).includes('export function greet(name: string)'), () => `case 3: tool output lacks the file content: ${JSON.stringify(tool.output)}`);
    assertEq(r.final.parts[3].text, 'The file defines greet.', 'case 3: text after the tool');
    assertEq(chunks.at(-1).finishReason, 'stop', 'case 3: finishReason');
    const reqs = chatRequests(model, M(tag, 3));
    assertEq(reqs.length, 2, 'case 3: model requests');
    const toolMsg = reqs[1].body.messages.find(m => m.role === 'tool');
    assert(toolMsg && contentText(toolMsg.content).includes('export function greet'), () => `case 3: the second model request has no tool message with the file: ${show(JSON.stringify(reqs[1].body.messages), 800)}`);
    assertEq(toolMsg.tool_call_id, 'call_read', 'case 3: tool_call_id sent back to the model');
  });

  await step('3b tool error: path outside the repo', async () => {
    const r = await chat(ai, base, { messages: [userMsg('u33', `Read it ${M(tag, 33)}`)], headers: auth });
    assertCleanStream(r, 'case 3b');
    await checkRaw(ai, r.raw, 'case 3b raw');
    assertFinalMessage(r, 'case 3b', ['step-start', 'tool-read_file', 'step-start', 'text']);
    const tool = r.final.parts[1];
    assert(['output-available', 'output-error'].includes(tool.state), `case 3b: tool state ${tool.state}`);
    assert(!JSON.stringify(tool).includes('root:x:0:0'), 'case 3b: /etc/passwd leaked through read_file');
    const reqs = chatRequests(model, M(tag, 33));
    assert(reqs.length === 2 && !JSON.stringify(reqs[1].body).includes('root:x:0:0'), 'case 3b: /etc/passwd reached the model (or no second model request)');
  });

  await step('4 model connection lost mid-stream', async () => {
    const r = await chat(ai, base, { messages: [userMsg('u4', `Long answer please ${M(tag, 4)}`)], headers: auth });
    assert(!r.thrown, () => `case 4: sendMessages threw: ${r.thrown?.message}`);
    assert(!r.chunkError, () => `case 4: the transport's chunk stream failed: ${r.chunkError?.message?.slice(0, 800)}; raw ${show(r.raw.bytes)}`);
    const chunks = await checkRaw(ai, r.raw, 'case 4 raw');
    const types = chunks.map(c => c.type);
    const ie = types.indexOf('error');
    assert(ie > 0, () => `case 4: no error chunk; types ${JSON.stringify(types)}`);
    assertEq(types.slice(ie + 1), ['finish-step', 'finish'], 'case 4: chunks after the error');
    assertEq(chunks.at(-1).finishReason, 'error', 'case 4: finishReason');
    const deltas = chunks.filter(c => c.type === 'text-delta').map(c => c.delta).join('');
    assertEq(deltas, 'Partial answer ', 'case 4: text forwarded before the failure');
    assert(typeof chunks[ie].errorText === 'string' && chunks[ie].errorText.length > 0, 'case 4: empty errorText');
    assert(r.errors.length >= 1, 'case 4: onError was not called');
    assertEq(r.terminated?.message, chunks[ie].errorText, 'case 4: the error readUIMessageStream ended with');
    assert(r.final && firstText(r.final).startsWith('Partial answer'), () => `case 4: last message state before the error: ${JSON.stringify(r.final)}`);
    assertEq(chatRequests(model, M(tag, 4)).length, 1, 'case 4: model requests (no retry after streaming began)');
  });

  await step('4b model rejects the request (before any token)', async () => {
    const r = await chat(ai, base, { messages: [userMsg('u44', `Anything ${M(tag, 44)}`)], headers: auth });
    if (r.thrown) { // spec 6.4: a failure before the stream exists is a non-2xx JSON response
      assert(r.raw.status >= 400, `case 4b: threw with status ${r.raw.status}`);
      assertJsonError(r.thrown.message, r.raw.status, 'case 4b');
      return;
    }
    const chunks = await checkRaw(ai, r.raw, 'case 4b raw');
    assert(chunks.some(c => c.type === 'error'), () => `case 4b: 200 without an error chunk: ${JSON.stringify(chunks)}`);
    assert(r.terminated, 'case 4b: the client did not end with an error');
  });

  await step('6 negatives: 401, 400, malformed JSON', async () => {
    const msg = [userMsg('u6', 'hello')];
    let r = await chat(ai, base, { messages: msg, headers: {} });
    assert(r.thrown, 'no token: sendMessages did not throw');
    assertEq(r.raw.status, 401, 'no token: status');
    assertJsonError(r.thrown.message, 401, 'no token', 'unauthorized');
    r = await chat(ai, base, { messages: msg, headers: { Authorization: 'Bearer wrong-key' } });
    assertEq(r.raw.status, 401, 'wrong token: status');
    assertJsonError(r.thrown?.message, 401, 'wrong token', 'unauthorized');
    for (const [label, body] of [
      ['neither messages nor message', { id: 'x', trigger: 'submit-message' }],
      ['both messages and message', { id: 'x', messages: msg, trigger: 'submit-message', message: 'hello', conversationHistory: [] }],
      ['empty message', { message: '', conversationHistory: [] }],
      ['messages not an array', { id: 'x', messages: 'hello', trigger: 'submit-message' }],
    ]) {
      r = await chat(ai, base, { messages: msg, headers: auth, prepare: () => ({ body }) });
      assert(r.thrown, () => `${label}: sendMessages did not throw (status ${r.raw.status}, body ${show(r.raw.bytes, 300)})`);
      assertEq(r.raw.status, 400, `${label}: status`);
      assertJsonError(r.thrown.message, 400, label);
    }
    const res = await fetch(`${base}/v1/platform-copilot/chat`, { method: 'POST', headers: { ...auth, 'Content-Type': 'application/json' }, body: '{"messages": [' });
    assertEq(res.status, 400, 'malformed JSON: status');
    assertJsonError(await res.text(), 400, 'malformed JSON');
  });

  let firstTextDelay;
  await step('7 client abort mid-stream stops the model request', async () => {
    const r = await chat(ai, base, { messages: [userMsg('u7', `Count slowly ${M(tag, 7)}`)], headers: auth, abortAfterFirstDelta: true });
    const returned = Date.now() / 1000 - r.abortedAt;
    firstTextDelay = r.firstTextAt - r.sentAt;
    assert(!r.thrown, () => `case 7: sendMessages threw: ${r.thrown?.message}`);
    assert(r.abortedAt, () => `case 7: no text arrived to abort after; raw ${show(r.raw.bytes)}`);
    let ev;
    for (let i = 0; i < 50 && !ev; i++) {
      ev = readJsonLines(model.events).find(e => e.match === M(tag, 7));
      if (!ev) await new Promise(res => setTimeout(res, 100));
    }
    assert(ev, 'case 7: the model stream neither completed nor was closed within 5 s of the abort');
    assert(ev.event === 'client disconnected', () => `case 7: pilotfish kept reading the model stream to its end after the client aborted (model stream completed ${(ev.time - r.abortedAt).toFixed(2)} s after the abort)`);
    const lag = ev.time - r.abortedAt;
    assert(lag < 2.0, `case 7: the model request was closed only ${lag.toFixed(2)} s after the client aborted`);
    assert(ev.chunks_sent < ev.chunks_total, 'case 7: all model chunks were sent');
    const h = await fetch(`${base}/healthz`, { headers: auth });
    assertEq(h.status, 200, 'case 7: /healthz after the abort');
    return `model stream closed ${lag.toFixed(2)} s after the abort, after ${ev.chunks_sent} of ${ev.chunks_total} chunks; client done in ${returned.toFixed(2)} s`;
  });

  await step('7b text reaches the client as the model streams it', async () => {
    // In case 7 the model sends its first token at once and then one every 0.1 s: text must reach
    // the client as it is generated (spec 2: flush after every event), not when a buffer fills.
    assert(firstTextDelay !== undefined && !Number.isNaN(firstTextDelay), 'case 7b: case 7 saw no text');
    assert(firstTextDelay < 1.0, () => `case 7b: the first text reached the client ${firstTextDelay.toFixed(2)} s after the request, though the model sent its first token at once and then one every 0.1 s`);
    return `first text ${firstTextDelay.toFixed(2)} s after the request`;
  });
}

async function basics(base, keys, record) {
  const step = async (name, fn) => {
    const t0 = Date.now();
    try { const note = await fn(); record('server', name, null, Date.now() - t0, note); } catch (e) { record('server', name, e, Date.now() - t0); }
  };
  const get = async (p, key, init = {}) => {
    const res = await fetch(base + p, { ...init, headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...(init.headers ?? {}) } });
    const text = await res.text();
    let json; try { json = JSON.parse(text); } catch { json = undefined; }
    return { status: res.status, text, json };
  };
  await step('GET /healthz', async () => {
    const r = await get('/healthz', keys.user);
    assertEq(r.status, 200, '/healthz status');
    assertEq(r.json?.status, 'ok', `/healthz body ${r.text}`);
  });
  await step('GET /v1/search', async () => {
    const r = await get('/v1/search?q=greet&limit=5', keys.user);
    assertEq(r.status, 200, `/v1/search status (body ${r.text.slice(0, 300)})`);
    assert(Array.isArray(r.json?.results) && r.json.results.length >= 1 && r.json.results.length <= 5, `/v1/search results: ${r.text.slice(0, 300)}`);
    assert(JSON.stringify(r.json.results).includes('src/a.ts'), `/v1/search: src/a.ts not among the results: ${r.text.slice(0, 500)}`);
    const n = await get('/v1/search?q=greet', null);
    assertEq(n.status, 401, '/v1/search without a key');
    assertJsonError(n.text, 401, '/v1/search without a key', 'unauthorized');
  });
  await step('POST /v1/platform-copilot/index roles', async () => {
    const u = await get('/v1/platform-copilot/index', keys.user, { method: 'POST' });
    assertEq(u.status, 403, `index as user: status (body ${u.text})`);
    assertJsonError(u.text, 403, 'index as user', 'forbidden');
    const a = await get('/v1/platform-copilot/index', keys.admin, { method: 'POST' });
    assertEq(a.status, 200, `index as admin: status (body ${a.text})`);
    assert(['indexing_started', 'already_running'].includes(a.json?.status), `index as admin: body ${a.text}`);
  });
}

// ---------------------------------------------------------------- main
async function main() {
  if (!fs.existsSync(BIN)) throw new Error(`pilotfish binary not found at ${BIN} (set PILOTFISH_BIN)`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pilotfish-conformance-'));
  const results = [];
  const record = (tag, name, err, ms, note) => {
    results.push({ tag, name, err });
    const line = `${err ? 'FAIL' : 'ok  '} ${tag.padEnd(8)} ${name} (${ms} ms${note ? '; ' + note : ''})`;
    say(err ? `${line}\n     ${err instanceof Failure ? err.message : err.stack}` : line);
  };
  try {
    const repo = path.join(tmp, 'repo');
    fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'src', 'a.ts'), A_TS);
    fs.writeFileSync(path.join(repo, 'README.md'), '# Tiny repo\n\nThe `greet` function in src/a.ts says hi.\n');
    const db = path.join(tmp, 'index.db');
    progress = 'pilotfish index';
    await run(BIN, ['index', repo, '--db', db]);

    const model = await startModelServer(tmp, modelScript(VERSIONS));
    const keys = { admin: randomBytes(16).toString('hex'), user: randomBytes(16).toString('hex') };
    const hash = k => 'sha256:' + createHash('sha256').update(k).digest('hex');
    const config = path.join(tmp, 'config.json');
    fs.writeFileSync(config, JSON.stringify({
      providers: { test: { type: 'openai', baseUrl: `http://127.0.0.1:${model.port}/v1`, models: [{ id: 'm1' }] } },
      defaults: { chatModel: 'test:m1' },
      server: { apiKeys: [{ name: 'admin1', hash: hash(keys.admin), role: 'admin' }, { name: 'user1', hash: hash(keys.user), role: 'user' }] },
    }, null, 2));

    for (const tag of VERSIONS) {
      let ai;
      try { ai = await import(tag); } catch (e) {
        record(tag, 'import', new Failure(`cannot load ${tag} (${e.message}); install the pinned clients with scripts/install-deps.sh or npm ci --prefix tests/node`), 0);
        continue;
      }
      let server;
      progress = `${tag} start pilotfish serve`;
      try { server = await startPilotfish(tmp, db, config, repo); } catch (e) { record(tag, 'start pilotfish serve', e, 0); continue; }
      await casesFor(tag, ai, { base: server.base, keys, model }, record);
      if (tag === VERSIONS[0]) await basics(server.base, keys, record);
      try { await stopPilotfish(server.child); record(tag, 'SIGTERM stops the server', null, 0); } catch (e) { record(tag, 'SIGTERM stops the server', e, 0); }
    }
    model.child.stdin.end();
  } catch (e) {
    record('setup', 'setup', e, 0);
  } finally {
    killAll();
    if (process.env.PF_KEEP_TMP === '1') say(`temp dir kept: ${tmp}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
  const failed = results.filter(r => r.err);
  say(`\n${results.length - failed.length} passed, ${failed.length} failed (versions: ${VERSIONS.join(', ')})`);
  for (const f of failed) say(`  FAIL ${f.tag} ${f.name}`);
  process.exit(failed.length ? 1 : 0);
}

main();
