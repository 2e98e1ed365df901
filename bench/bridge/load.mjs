#!/usr/bin/env node
// The bridge under load (issue 10, section 7): C channels, each a user who posts M messages one
// after another (the next once the reply to the last is complete), all channels at once, against
// the Mattermost test server (tests/servers/mattermost_server.mjs) and the asyncio model server of
// bench/concurrency (TOKENS tokens, DELAY ms apart: a streamed answer that takes real time).
//
// It watches the channels over a WebSocket as a user would and reports: replies lost or
// duplicated (every post must have exactly one reply, checked over REST at the end),
// post-to-placeholder and post-to-first-edit p50/p99, edits per second per reply, the bridge's
// RSS idle before the load, at its peak and idle after (per active and per idle conversation;
// "before" is measured after a warm-up conversation in a channel of its own and the allocator's
// decay, so what any first answer touches once, code and caches, is not charged to the load),
// CPU seconds, and with --restart a SIGTERM and restart of the bridge half-way through.
// Baseline in the same run: the floor any relay has, the time from a user's post to that
// post's own `posted` event reaching the watching socket (one REST call, one event); the
// placeholder latency is reported against it as a ratio.
//
// --ramp-ms R spreads the channels' first posts evenly over R ms (channel i starts at i*R/C)
// instead of all in the same instant; the default 0 is the all-at-once burst. Figures are also
// given for each channel's first post alone and for the later ones.
//
// Before the bridge starts, the harness warms itself up (posts, replies and edits in a channel
// the bot is not in; see warmHarness below), and the users' connections are opened before the
// clock starts: what is measured is the relay, not a cold JIT or TCP handshakes of the harness.
// --server-log FILE writes the test server's request log at the end; MM_NODE_ARGS passes node
// options (for example --cpu-prof --cpu-prof-dir=D) to the test server.
//
// --relay node runs bench/bridge/node_relay.mjs (the same relaying on @mattermost/client, without
// retrieval, state or replay) instead of pilotfish, for a same-machine comparison.
//
// usage: node bench/bridge/load.mjs [--bin build/pilotfish] [--channels 200] [--messages 20]
//          [--tokens 8] [--delay-ms 150] [--warmup 3] [--ramp-ms 0] [--restart]
//          [--relay pilotfish|node] [--server-log FILE]
//          [--json OUT]
import { spawn, execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(path.join(root, 'tests/node/package.json'));
const WebSocket = require('ws');

const opt = { bin: path.join(root, 'build/pilotfish'), channels: 200, messages: 20, tokens: 8,
              delayMs: 150, warmup: 3, rampMs: 0, restart: false, json: '', relay: 'pilotfish' };
for (let i = 2; i < process.argv.length; ++i) {
  const a = process.argv[i];
  const next = () => process.argv[++i];
  if (a === '--bin') opt.bin = next();
  else if (a === '--channels') opt.channels = +next();
  else if (a === '--messages') opt.messages = +next();
  else if (a === '--tokens') opt.tokens = +next();
  else if (a === '--delay-ms') opt.delayMs = +next();
  else if (a === '--warmup') opt.warmup = +next();
  else if (a === '--ramp-ms') opt.rampMs = +next();
  else if (a === '--restart') opt.restart = true;
  else if (a === '--json') opt.json = next();
  else if (a === '--relay') opt.relay = next();
  else if (a === '--server-log') opt.serverLog = next();
  else { console.error('unknown option ' + a); process.exit(2); }
}

function server(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'] });
    let buf = '';
    p.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/PORT (\d+)/);
      if (m) resolve({ proc: p, port: +m[1] });
    });
    p.on('exit', (code) => reject(new Error(cmd + ' exited ' + code)));
  });
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pf-bridge-bench-'));
const repo = path.join(tmp, 'repo');
fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
fs.writeFileSync(path.join(repo, 'src/retry.ts'),
  'export function retryWithBackoff(fn, tries = 3) {\n  return fn();\n}\n');
fs.writeFileSync(path.join(repo, 'README.md'), '# bench\n\nA repository for the bridge benchmark.\n');
const db = path.join(tmp, 'index.db');
execFileSync(opt.bin, ['index', repo, '--db', db, '--quiet']);

// MM_NODE_ARGS: extra node options for the test server (for example --cpu-prof --cpu-prof-dir=D).
const mm = await server('node', [...(process.env.MM_NODE_ARGS || '').split(' ').filter(Boolean),
                                 path.join(root, 'tests/servers/mattermost_server.mjs')]);
const model = await server('python3', [path.join(root, 'bench/concurrency/model_server.py'),
  '--tokens', String(opt.tokens), '--delay-ms', String(opt.delayMs)]);
const base = `http://127.0.0.1:${mm.port}`;
// The users' requests go over kept-alive connections, one per user at the burst (opened before
// the clock starts, below), as each user's own client would hold one: undici's fetch cost the
// load generator about 1.5 ms of CPU per request and a new TCP connection per concurrent post,
// on the two cores the bridge and the server need.
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
function call(method, p, body, token) {
  const data = body === undefined ? undefined : JSON.stringify(body);
  const headers = data === undefined ? {} : { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) };
  if (token) headers.Authorization = 'Bearer ' + token;
  return new Promise((resolve, reject) => {
    const req = http.request(base + p, { method, agent, headers },
    (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const t = Buffer.concat(chunks).toString('utf8');
        try { resolve(t ? JSON.parse(t) : null); } catch (e) { reject(e); }
      });
    });
    req.on('error', reject);
    req.end(data);
  });
}
const bot = await call('POST', '/_test/users', { username: 'copilot', is_bot: true });
const alice = await call('POST', '/_test/users', { username: 'alice' });
const channels = [];
for (let i = 0; i < opt.channels; ++i)
  channels.push((await call('POST', '/_test/channels',
    { name: 'c' + i, type: 'O', members: [bot.id, alice.id] })).id);
const warmChannel = (await call('POST', '/_test/channels',
  { name: 'warmup', type: 'O', members: [bot.id, alice.id] })).id;
// The harness warms itself up before anything is measured, in a channel the bot is not in (the
// bridge sees none of it): the test server and the load generator are JavaScript, and their
// code paths for posts, replies, edits and events are compiled by the JIT only after some use.
// Cold, the test server took 166 ms for a burst of 200 posts that it took 69 ms for warm. The
// real server is Go, compiled ahead of time; the relay under test gets only its own warm-up
// conversation below.
const bob = await call('POST', '/_test/users', { username: 'bob' });
const harnessChannel = (await call('POST', '/_test/channels',
  { name: 'harness', type: 'O', members: [alice.id, bob.id] })).id;
async function warmHarness(rounds) {
  for (let i = 0; i < rounds; ++i) {
    await Promise.all(channels.map(async (_, k) => {
      const q = await call('POST', '/_test/posts', { user_id: alice.id, channel_id: harnessChannel, message: `warm ${i} ${k}` });
      const a = await call('POST', '/api/v4/posts', { channel_id: harnessChannel, root_id: q.id, message: 'Working…' }, bob.token);
      await call('PUT', `/api/v4/posts/${a.id}/patch`, { message: `an answer to warm ${i} ${k}` }, bob.token);
    }));
  }
}
const config = path.join(tmp, 'pilotfish.json');
fs.writeFileSync(config, JSON.stringify({
  providers: { a: { type: 'openai', baseUrl: `http://127.0.0.1:${model.port}/v1`, models: [{ id: 'm' }] } },
  defaults: { chatModel: 'a:m' },
  server: { reindexSchedule: '' },
  bridge: {
    platforms: { mm: { url: base, bots: { copilot: { tokenEnv: 'MM_TOKEN' } },
                       access: { mode: 'allowlist', users: ['alice'] } } },
    channels: [warmChannel, ...channels].map((id) => ({ id, platform: 'mm', bot: 'copilot', workingDirectory: repo,
                                      triggerMode: 'all' })),
    shutdownGraceSeconds: 2,
  },
}));

let bridge;
function startBridge() {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, MM_TOKEN: bot.token, MM_URL: base, CHANNELS: [warmChannel, ...channels].join(','),
                  MODEL_URL: `http://127.0.0.1:${model.port}/v1` };
    const p = opt.relay === 'node'
      ? spawn('node', [path.join(root, 'bench/bridge/node_relay.mjs')], { env, stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(opt.bin, ['bridge', '--db', db, '--config', config], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    p.stdout.on('data', (d) => { if (String(d).includes('bridge running')) resolve(p); });
    p.on('exit', (code) => reject(new Error('bridge exited ' + code)));
  });
}
function rss(pid) {
  try {
    const m = fs.readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
    return m ? +m[1] : 0;
  } catch { return 0; }
}
function cpu(pid) {
  try {
    const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (+f[11] + +f[12]) / 100;
  } catch { return 0; }
}

// Replies as the channel sees them, keyed by the post they answer (their thread root).
const replies = new Map();
const sentAt = new Map();
const ownEvent = new Map();  // the user's post -> when its own posted event arrived
const done = new Map();  // post id -> resolve
const finalWord = `tok${opt.tokens - 1}`;
const ws = new WebSocket(`ws://127.0.0.1:${mm.port}/api/v4/websocket`,
                         { headers: { Authorization: 'Bearer ' + alice.token } });
await new Promise((r) => ws.on('open', r));
ws.on('message', (raw) => {
  const now = performance.now();
  let ev;
  try { ev = JSON.parse(String(raw)); } catch { return; }
  if (ev.event !== 'posted' && ev.event !== 'post_edited') return;
  const post = JSON.parse(ev.data.post);
  if (post.user_id === alice.id && ev.event === 'posted') {
    ownEvent.set(post.id, now);
    return;
  }
  if (post.user_id !== bot.id || !post.root_id) return;
  let r = replies.get(post.root_id);
  if (!r) replies.set(post.root_id, r = { created: now, edits: [], ids: new Set() });
  r.ids.add(post.id);
  if (ev.event === 'post_edited') r.edits.push(now);
  if (post.message.includes(finalWord) && !r.done) {
    r.done = now;
    const resolve = done.get(post.root_id);
    if (resolve) resolve();
  }
});

const harnessWatch = new WebSocket(`ws://127.0.0.1:${mm.port}/api/v4/websocket`,
                                   { headers: { Authorization: 'Bearer ' + bob.token } });
await new Promise((r) => harnessWatch.on('open', r));
harnessWatch.on('message', (raw) => { try { JSON.parse(JSON.parse(String(raw)).data.post || '{}'); } catch {} });
await warmHarness(5);
bridge = await startBridge();
if (process.env.BENCH_PERF) spawn('perf', ['record', '-g', '-o', process.env.BENCH_PERF, '-p', String(bridge.pid)], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 1500));
const rssAtStart = rss(bridge.pid);
// The warm-up conversation, then the allocator's decay (as after the load, below).
async function ask(channel, message) {
  const p = await call('POST', '/_test/posts', { user_id: alice.id, channel_id: channel, message });
  await new Promise((resolve) => {
    const r = replies.get(p.id);
    if (r && r.done) resolve(); else done.set(p.id, resolve);
  });
}
for (let m = 0; m < opt.warmup; ++m) await ask(warmChannel, `warm-up ${m} about retryWithBackoff`);
if (opt.warmup) await new Promise((r) => setTimeout(r, 12000));
const idleBefore = rss(bridge.pid);
let peak = idleBefore, restarted = false, cpuBefore = 0;
const sampler = setInterval(() => { peak = Math.max(peak, rss(bridge.pid)); }, 100);
const total = opt.channels * opt.messages;
let finished = 0;
await Promise.all(channels.map(() => call('GET', '/api/v4/system/ping')));
const t0 = performance.now();
const posted = [];
const firstPosts = new Set();  // each channel's first post
async function conversation(channel, index) {
  if (opt.rampMs > 0) await new Promise((r) => setTimeout(r, (index * opt.rampMs) / opt.channels));
  for (let m = 0; m < opt.messages; ++m) {
    const t = performance.now();
    const p = await call('POST', '/_test/posts', { user_id: alice.id, channel_id: channel,
                                                  message: `question ${m} about retryWithBackoff` });
    sentAt.set(p.id, t);
    if (m === 0) firstPosts.add(p.id);
    posted.push({ channel, id: p.id });
    await new Promise((resolve) => {
      const r = replies.get(p.id);
      if (r && r.done) resolve(); else done.set(p.id, resolve);
    });
    ++finished;
    if (opt.restart && !restarted && finished >= total / 2) {
      restarted = true;
      cpuBefore = cpu(bridge.pid);
      const old = bridge;
      old.removeAllListeners('exit');
      const exited = new Promise((r) => old.on('exit', r));
      old.kill('SIGTERM');
      await exited;
      bridge = await startBridge();
    }
  }
}
await Promise.all(channels.map((c, i) => conversation(c, i)));
const wall = (performance.now() - t0) / 1000;
clearInterval(sampler);
// jemalloc hands freed pages back after its 10 s decay: idle means after that.
await new Promise((r) => setTimeout(r, 12000));
const idleAfter = rss(bridge.pid);
const cpuSeconds = cpuBefore + cpu(bridge.pid);

// Exactly one reply per post, over REST (the server's own record).
let lost = 0, duplicated = 0;
for (const channel of channels) {
  const rows = (await call('GET', '/_test/posts?channel_id=' + channel)).posts;
  const count = new Map();
  for (const row of rows)
    if (row.user_id === bot.id && row.delete_at === 0 && row.original_id === '' && row.root_id)
      count.set(row.root_id, (count.get(row.root_id) || 0) + 1);
  for (const p of posted.filter((x) => x.channel === channel)) {
    const n = count.get(p.id) || 0;
    if (n === 0) ++lost;
    if (n > 1) duplicated += n - 1;
  }
}
const pct = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN; };
const placeholder = [], firstEdit = [], rate = [], floor = [], firstPlaceholder = [], laterPlaceholder = [], firstFloor = [];
for (const [id, t] of sentAt) {
  if (ownEvent.has(id)) floor.push(ownEvent.get(id) - t);
  if (ownEvent.has(id) && firstPosts.has(id)) firstFloor.push(ownEvent.get(id) - t);
  const r = replies.get(id);
  if (!r) continue;
  placeholder.push(r.created - t);
  (firstPosts.has(id) ? firstPlaceholder : laterPlaceholder).push(r.created - t);
  if (r.edits.length) firstEdit.push(r.edits[0] - t);
  const span = ((r.done || r.edits[r.edits.length - 1]) - r.created) / 1000;
  if (r.edits.length >= 2 && span > 0) rate.push(r.edits.length / Math.max(span, opt.delayMs * opt.tokens / 1000));
}
const result = {
  relay: opt.relay, channels: opt.channels, messages: opt.messages, tokens: opt.tokens, delay_ms: opt.delayMs,
  ramp_ms: opt.rampMs, restart: opt.restart, posts: posted.length, lost, duplicated, wall_s: +wall.toFixed(1),
  replies_per_s: +(posted.length / wall).toFixed(1),
  post_to_placeholder_ms: { p50: +pct(placeholder, 0.5).toFixed(1), p99: +pct(placeholder, 0.99).toFixed(1) },
  first_posts_placeholder_ms: { p50: +pct(firstPlaceholder, 0.5).toFixed(1), p99: +pct(firstPlaceholder, 0.99).toFixed(1) },
  later_posts_placeholder_ms: { p50: +pct(laterPlaceholder, 0.5).toFixed(1), p99: +pct(laterPlaceholder, 0.99).toFixed(1) },
  baseline_post_to_own_event_ms: { p50: +pct(floor, 0.5).toFixed(1), p99: +pct(floor, 0.99).toFixed(1) },
  first_posts_baseline_ms: { p50: +pct(firstFloor, 0.5).toFixed(1), p99: +pct(firstFloor, 0.99).toFixed(1) },
  placeholder_vs_baseline_p50: +(pct(placeholder, 0.5) / pct(floor, 0.5)).toFixed(2),
  post_to_first_edit_ms: { p50: +pct(firstEdit, 0.5).toFixed(1), p99: +pct(firstEdit, 0.99).toFixed(1) },
  edits_per_s_per_reply: { p50: +pct(rate, 0.5).toFixed(2), max: +Math.max(...rate).toFixed(2) },
  rss_kib: { at_start: rssAtStart, idle_before: idleBefore, peak, idle_after: idleAfter },
  kib_per_active_conversation: +((peak - idleBefore) / opt.channels).toFixed(1),
  kib_per_idle_conversation: +((idleAfter - idleBefore) / opt.channels).toFixed(1),
  bridge_cpu_s: +cpuSeconds.toFixed(1),
};
console.log(JSON.stringify(result, null, 2));
// --server-log FILE: the test server's request log (every REST call and upgrade, with its time).
if (opt.serverLog) fs.writeFileSync(opt.serverLog, JSON.stringify(await call('GET', '/_test/log')));
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify(result, null, 2));
ws.close();
bridge.kill('SIGTERM');
mm.proc.stdin.end();
model.proc.kill('SIGTERM');
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(lost || duplicated ? 1 : 0);
