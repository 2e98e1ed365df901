#!/usr/bin/env node
// The bridge under load (issue 10, section 7): C channels, each a user who posts M messages one
// after another (the next once the reply to the last is complete), all channels at once, against
// the Mattermost test server (tests/servers/mattermost_server.mjs), or with --platform slack the
// Slack test server (tests/servers/slack_server.mjs, at Slack's rate tiers), and the asyncio model
// server of bench/concurrency (TOKENS tokens, DELAY ms apart: a streamed answer that takes real
// time). What is platform-specific is in mattermost_platform.mjs and slack_platform.mjs.
//
// It watches the channels over a WebSocket as a user would (Slack: as an app in the channels, over
// Socket Mode) and reports: replies lost or duplicated (every post must have exactly one reply,
// checked over the API at the end), post-to-placeholder, post-to-first-edit and post-to-complete
// p50/p99, edits per second per reply, the bridge's RSS idle before the load, at its peak and
// idle after (per active and per idle conversation; "before" is measured after a warm-up
// conversation in a channel of its own and the allocator's decay, so what any first answer
// touches once, code and caches, is not charged to the load), CPU seconds, and with --restart a
// SIGTERM and restart of the bridge half-way through. On Slack also the bridge's Web API calls per
// reply and the share answered 429, and its start-up calls (the harness waits until they are
// over before the warm-up conversation).
// --reply-timeout-s T: a reply not complete T s after its post is counted incomplete and its
// channel goes on (default 0: wait for ever).
// Baseline in the same run: the floor any relay has, the time from a user's post to that
// post's own `posted` event reaching the watching socket (one REST call, one event); the
// placeholder latency is reported against it as a ratio (Slack: the post's own `message` event).
//
// --ramp-ms R spreads the channels' first posts evenly over R ms (channel i starts at i*R/C)
// instead of all in the same instant; the default 0 is the all-at-once burst. Figures are also
// given for each channel's first post alone and for the later ones.
//
// Before the bridge starts, the harness warms itself up (posts, replies and edits in a channel
// the bot is not in; warmHarness in the platform modules), and the users' connections are opened before the
// clock starts: what is measured is the relay, not a cold JIT or TCP handshakes of the harness.
// --server-log FILE writes the test server's request log at the end; MM_NODE_ARGS passes node
// options (for example --cpu-prof --cpu-prof-dir=D) to the Mattermost test server, SLACK_NODE_ARGS
// to the Slack one and SLACK_SERVER_ARGS options of its own (for example --rate-scale 2).
//
// --relay node runs bench/bridge/node_relay.mjs (the same relaying on @mattermost/client, without
// retrieval, state or replay) instead of pilotfish, for a same-machine comparison; on Slack
// bench/bridge/slack_relay.mjs (the same on @slack/bolt).
//
// usage: node bench/bridge/load.mjs [--bin build/pilotfish] [--platform mattermost|slack]
//          [--channels 200] [--messages 20] [--tokens 8] [--delay-ms 150] [--warmup 3]
//          [--ramp-ms 0] [--restart] [--relay pilotfish|node] [--reply-timeout-s 0]
//          [--server-log FILE] [--json OUT]
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { server } from './harness_http.mjs';
import { startMattermost } from './mattermost_platform.mjs';
import { startSlack } from './slack_platform.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const opt = { bin: path.join(root, 'build/pilotfish'), channels: 200, messages: 20, tokens: 8,
              delayMs: 150, warmup: 3, rampMs: 0, restart: false, json: '', relay: 'pilotfish',
              platform: 'mattermost', replyTimeoutS: 0 };
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
  else if (a === '--platform') opt.platform = next();
  else if (a === '--reply-timeout-s') opt.replyTimeoutS = +next();
  else { console.error('unknown option ' + a); process.exit(2); }
}
if (!['mattermost', 'slack'].includes(opt.platform)) { console.error('--platform mattermost|slack'); process.exit(2); }

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pf-bridge-bench-'));
const repo = path.join(tmp, 'repo');
fs.mkdirSync(path.join(repo, 'src'), { recursive: true });
fs.writeFileSync(path.join(repo, 'src/retry.ts'),
  'export function retryWithBackoff(fn, tries = 3) {\n  return fn();\n}\n');
fs.writeFileSync(path.join(repo, 'README.md'), '# bench\n\nA repository for the bridge benchmark.\n');
const db = path.join(tmp, 'index.db');
execFileSync(opt.bin, ['index', repo, '--db', db, '--quiet']);

const chat = opt.platform === 'slack' ? await startSlack(root) : await startMattermost(root);
const model = await server('python3', [path.join(root, 'bench/concurrency/model_server.py'),
  '--tokens', String(opt.tokens), '--delay-ms', String(opt.delayMs)]);
const { channels, warmChannel } = await chat.setup(opt.channels);
const config = path.join(tmp, 'pilotfish.json');
fs.writeFileSync(config, JSON.stringify({
  providers: { a: { type: 'openai', baseUrl: `http://127.0.0.1:${model.port}/v1`, models: [{ id: 'm' }] } },
  defaults: { chatModel: 'a:m' },
  server: { reindexSchedule: '' },
  bridge: {
    platforms: { [chat.name]: chat.platformConfig({ mode: 'allowlist', users: ['alice'] }) },
    channels: [warmChannel, ...channels].map((id) => ({ id, platform: chat.name, bot: 'copilot', workingDirectory: repo,
                                      triggerMode: 'all' })),
    shutdownGraceSeconds: 2,
  },
}));

let bridge;
function startBridge() {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, ...chat.relayEnv(), CHANNELS: [warmChannel, ...channels].join(','),
                  MODEL_URL: `http://127.0.0.1:${model.port}/v1` };
    const p = opt.relay === 'node'
      ? spawn('node', [chat.relayScript], { env, stdio: ['ignore', 'pipe', 'inherit'] })
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
await chat.watch({
  own(id, now) { ownEvent.set(id, now); },
  reply(rootId, replyId, edited, text, now) {
    let r = replies.get(rootId);
    if (!r) replies.set(rootId, r = { created: now, edits: [], ids: new Set() });
    r.ids.add(replyId);
    if (edited) r.edits.push(now);
    if (text.includes(finalWord) && !r.done) {
      r.done = now;
      const resolve = done.get(rootId);
      if (resolve) resolve();
    }
  },
});
await chat.warmHarness(5, channels.length);
bridge = await startBridge();
if (process.env.BENCH_PERF) spawn('perf', ['record', '-g', '-o', process.env.BENCH_PERF, '-p', String(bridge.pid)], { stdio: 'ignore' });
await new Promise((r) => setTimeout(r, 1500));
// Slack: the bridge's start-up calls (the catch-up of every channel) are over before anything else.
const startup = await chat.bridgeSettled();
const rssAtStart = rss(bridge.pid);
// Resolves once the reply to post id is complete (has the answer's last word), or with
// --reply-timeout-s after that long without it (then counted as incomplete).
let incomplete = 0;
function completion(id) {
  return new Promise((resolve) => {
    const r = replies.get(id);
    if (r && r.done) return resolve();
    if (opt.replyTimeoutS > 0) {
      const timer = setTimeout(() => { ++incomplete; done.delete(id); resolve(); }, opt.replyTimeoutS * 1000);
      done.set(id, () => { clearTimeout(timer); resolve(); });
    } else done.set(id, resolve);
  });
}
// The warm-up conversation, then the allocator's decay (as after the load, below).
async function ask(channel, message) {
  await completion(await chat.post(channel, message));
}
for (let m = 0; m < opt.warmup; ++m) await ask(warmChannel, `warm-up ${m} about retryWithBackoff`);
if (opt.warmup) await new Promise((r) => setTimeout(r, 12000));
const idleBefore = rss(bridge.pid);
let peak = idleBefore, restarted = false, cpuBefore = 0;
const sampler = setInterval(() => { peak = Math.max(peak, rss(bridge.pid)); }, 100);
const total = opt.channels * opt.messages;
let finished = 0;
await chat.beforeLoad();
const t0 = performance.now();
const progress = setInterval(() => process.stderr.write(
  `load.mjs: ${finished}/${total} replies complete after ${((performance.now() - t0) / 1000).toFixed(0)} s\n`), 60000);
const posted = [];
const firstPosts = new Set();  // each channel's first post
async function conversation(channel, index) {
  if (opt.rampMs > 0) await new Promise((r) => setTimeout(r, (index * opt.rampMs) / opt.channels));
  for (let m = 0; m < opt.messages; ++m) {
    const t = performance.now();
    const id = await chat.post(channel, `question ${m} about retryWithBackoff`);
    sentAt.set(id, t);
    if (m === 0) firstPosts.add(id);
    posted.push({ channel, id });
    await completion(id);
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
clearInterval(progress);
// jemalloc hands freed pages back after its 10 s decay: idle means after that.
await new Promise((r) => setTimeout(r, 12000));
const idleAfter = rss(bridge.pid);
const cpuSeconds = cpuBefore + cpu(bridge.pid);

// Exactly one reply per post, over the API (the server's own record).
let lost = 0, duplicated = 0;
for (const channel of channels) {
  const count = await chat.replyCounts(channel);
  for (const p of posted.filter((x) => x.channel === channel)) {
    const n = count.get(p.id) || 0;
    if (n === 0) ++lost;
    if (n > 1) duplicated += n - 1;
  }
}
const pct = (xs, q) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN; };
const placeholder = [], firstEdit = [], complete = [], rate = [], floor = [], firstPlaceholder = [], laterPlaceholder = [], firstFloor = [];
for (const [id, t] of sentAt) {
  if (ownEvent.has(id)) floor.push(ownEvent.get(id) - t);
  if (ownEvent.has(id) && firstPosts.has(id)) firstFloor.push(ownEvent.get(id) - t);
  const r = replies.get(id);
  if (!r) continue;
  placeholder.push(r.created - t);
  (firstPosts.has(id) ? firstPlaceholder : laterPlaceholder).push(r.created - t);
  if (r.edits.length) firstEdit.push(r.edits[0] - t);
  if (r.done) complete.push(r.done - t);
  const span = ((r.done || r.edits[r.edits.length - 1]) - r.created) / 1000;
  if (r.edits.length >= 2 && span > 0) rate.push(r.edits.length / Math.max(span, opt.delayMs * opt.tokens / 1000));
}
const result = {
  relay: opt.relay, channels: opt.channels, messages: opt.messages, tokens: opt.tokens, delay_ms: opt.delayMs,
  platform: opt.platform, ramp_ms: opt.rampMs, restart: opt.restart, posts: posted.length, lost, duplicated,
  incomplete, wall_s: +wall.toFixed(1),
  replies_per_s: +(posted.length / wall).toFixed(1),
  post_to_placeholder_ms: { p50: +pct(placeholder, 0.5).toFixed(1), p99: +pct(placeholder, 0.99).toFixed(1) },
  first_posts_placeholder_ms: { p50: +pct(firstPlaceholder, 0.5).toFixed(1), p99: +pct(firstPlaceholder, 0.99).toFixed(1) },
  later_posts_placeholder_ms: { p50: +pct(laterPlaceholder, 0.5).toFixed(1), p99: +pct(laterPlaceholder, 0.99).toFixed(1) },
  baseline_post_to_own_event_ms: { p50: +pct(floor, 0.5).toFixed(1), p99: +pct(floor, 0.99).toFixed(1) },
  first_posts_baseline_ms: { p50: +pct(firstFloor, 0.5).toFixed(1), p99: +pct(firstFloor, 0.99).toFixed(1) },
  placeholder_vs_baseline_p50: +(pct(placeholder, 0.5) / pct(floor, 0.5)).toFixed(2),
  post_to_first_edit_ms: { p50: +pct(firstEdit, 0.5).toFixed(1), p99: +pct(firstEdit, 0.99).toFixed(1) },
  post_to_complete_reply_ms: { p50: +pct(complete, 0.5).toFixed(1), p99: +pct(complete, 0.99).toFixed(1) },
  edits_per_s_per_reply: { p50: +pct(rate, 0.5).toFixed(2), max: +Math.max(...rate).toFixed(2) },
  rss_kib: { at_start: rssAtStart, idle_before: idleBefore, peak, idle_after: idleAfter },
  kib_per_active_conversation: +((peak - idleBefore) / opt.channels).toFixed(1),
  kib_per_idle_conversation: +((idleAfter - idleBefore) / opt.channels).toFixed(1),
  bridge_cpu_s: +cpuSeconds.toFixed(1),
  ...startup,
  ...(await chat.stats(posted.length)),
};
console.log(JSON.stringify(result, null, 2));
// --server-log FILE: the test server's request log (Mattermost: every REST call and upgrade, with
// its time; Slack: every Web API call with its method, app and whether it got 429).
if (opt.serverLog) fs.writeFileSync(opt.serverLog, JSON.stringify(await chat.serverLog()));
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify(result, null, 2));
bridge.kill('SIGTERM');
chat.stop();
model.proc.kill('SIGTERM');
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(lost || duplicated || incomplete ? 1 : 0);
