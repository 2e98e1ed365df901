// Drives tests/servers/slack_server.mjs with the real Slack packages (@slack/web-api 8.2.0,
// @slack/socket-mode 3.1.0, @slack/bolt 5.1.0, pinned in package.json) and checks that they work
// against it and see Slack's behaviour (../shared/spec/slack-protocol.md), so the Slack adapter's
// C++ tests talk to a faithful peer. Prints one line per check; exits non-zero if any fails.
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import readline from 'node:readline';

const require = createRequire(import.meta.url);
const { WebClient, ErrorCode } = require('@slack/web-api');
const { SocketModeClient } = require('@slack/socket-mode');
const { App, LogLevel } = require('@slack/bolt');
const WS = require('ws');

const say = (s) => process.stdout.write(s + '\n');
const here = path.dirname(fileURLToPath(import.meta.url));
const serverScript = path.join(here, '..', 'servers', 'slack_server.mjs');
const watchdog = setTimeout(() => { say('FAIL - timed out'); process.exit(1); }, 240000);
const silent = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => LogLevel.ERROR, setName() {} };

function startServer(args = []) {
  const child = spawn(process.execPath, [serverScript, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: child.stdout });
    rl.once('line', (line) => {
      const m = /^PORT (\d+)$/.exec(line);
      if (!m) return reject(new Error('bad first line: ' + line));
      resolve({ child, port: Number(m[1]), stop: () => new Promise((r) => { child.once('exit', r); child.stdin.end(); }) });
    });
    child.once('exit', (code) => reject(new Error('server exited ' + code)));
  });
}

let failures = 0;
async function check(name, fn) {
  try {
    const note = await fn();
    say(`ok - ${name}${note ? ' (' + note + ')' : ''}`);
  } catch (e) {
    failures++;
    say(`FAIL - ${name}: ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`);
  }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(pred, what, ms = 8000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await pred();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(20);
  }
}
async function rejects(promise) {
  try { await promise; } catch (e) { return e; }
  throw new Error('expected the call to throw');
}

const ACK_MS = 600;
const srv = await startServer(['--ack-timeout-ms', String(ACK_MS), '--ping-ms', '2000']);
const base = `http://127.0.0.1:${srv.port}`;
const slackApiUrl = `${base}/api/`;
async function ctl(method, p, body) {
  const r = await fetch(base + p, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const j = await r.json();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}
const messagesOf = async (channel) => (await ctl('GET', `/_test/messages?channel=${channel}`)).messages;

const alice = await ctl('POST', '/_test/users', { name: 'alice' });
const carol = await ctl('POST', '/_test/users', { name: 'carol' });
const copilot = await ctl('POST', '/_test/apps', { name: 'copilot' });        // driven by Bolt
const raw = await ctl('POST', '/_test/apps', { name: 'rawbot' });             // driven by SocketModeClient
const town = await ctl('POST', '/_test/channels', { type: 'public', name: 'town', members: [alice.id, copilot.bot_user_id] });
const lab = await ctl('POST', '/_test/channels', { type: 'private', name: 'lab', members: [alice.id, raw.bot_user_id, copilot.bot_user_id] });
const outside = await ctl('POST', '/_test/channels', { type: 'public', name: 'outside', members: [alice.id] });
const secret = await ctl('POST', '/_test/channels', { type: 'private', name: 'secret', members: [alice.id, carol.id] });
const dm = await ctl('POST', '/_test/channels', { type: 'im', members: [alice.id, copilot.bot_user_id] });
const web = new WebClient(copilot.bot_token, { slackApiUrl, logger: silent, retryConfig: { retries: 0 } });
// Rate limits are exercised by their own checks below; off until then, so bursts of setup calls pass.
await ctl('POST', '/_test/rate', { enabled: false });
const post = (channel, text, extra = {}) => ctl('POST', '/_test/messages', { user: alice.id, channel, text, ...extra });

// ---------------------------------------------------------------- Web API

await check('auth.test names the bot user and bot; x-oauth-scopes becomes response_metadata.scopes', async () => {
  const r = await web.auth.test();
  assert.equal(r.user_id, copilot.bot_user_id);
  assert.equal(r.bot_id, copilot.bot_id);
  assert.equal(r.team_id, copilot.team_id);
  assert.ok(r.response_metadata.scopes.includes('chat:write'));
  assert.ok(r.response_metadata.scopes.includes('channels:history'));
});
await check('conversations.create, invite and list through the WebClient: names checked, taken names and repeat invites refused', async () => {
  const made = await web.conversations.create({ name: 'payments' });
  assert.equal(made.channel.name, 'payments');
  assert.equal(made.channel.is_private, false);
  assert.equal(made.channel.is_member, true);
  let e = await rejects(web.conversations.create({ name: 'payments' }));
  assert.equal(e.data.error, 'name_taken');
  e = await rejects(web.conversations.create({ name: 'Bad Name' }));
  assert.equal(e.data.error, 'invalid_name_specials');
  e = await rejects(web.conversations.create({ name: 'x'.repeat(81) }));
  assert.equal(e.data.error, 'invalid_name_maxlength');
  const core = await web.conversations.create({ name: 'core', is_private: true });
  assert.equal(core.channel.is_private, true);
  const invited = await web.conversations.invite({ channel: made.channel.id, users: alice.id });
  assert.equal(invited.channel.id, made.channel.id);
  e = await rejects(web.conversations.invite({ channel: made.channel.id, users: alice.id }));
  assert.equal(e.data.error, 'already_in_channel');
  e = await rejects(web.conversations.invite({ channel: made.channel.id, users: copilot.bot_user_id }));
  assert.equal(e.data.error, 'cant_invite_self');
  e = await rejects(web.conversations.invite({ channel: outside.id, users: carol.id }));
  assert.equal(e.data.error, 'not_in_channel');
  const names = [];
  for await (const page of web.paginate('conversations.list', { types: 'public_channel,private_channel', limit: 2 }))
    names.push(...page.channels.map((c) => c.name));
  for (const n of ['payments', 'core', 'town', 'outside', 'lab']) assert.ok(names.includes(n), n);
  assert.ok(!names.includes('secret'));
});
await check('ok:false answers raise WebAPIPlatformError with data.error', async () => {
  let e = await rejects(web.chat.postMessage({ channel: 'CNOSUCH', text: 'x' }));
  assert.equal(e.code, ErrorCode.PlatformError);
  assert.equal(e.data.error, 'channel_not_found');
  e = await rejects(web.chat.postMessage({ channel: outside.id, text: 'x' }));
  assert.equal(e.data.error, 'not_in_channel');
  e = await rejects(web.chat.postMessage({ channel: secret.id, text: 'x' }));
  assert.equal(e.data.error, 'channel_not_found');
  e = await rejects(web.apiCall('conversations.history', {}));
  assert.equal(e.data.error, 'invalid_arguments');
  assert.deepEqual(e.data.response_metadata.messages, ['[ERROR] missing required field: channel']);
  e = await rejects(web.apiCall('no.such.method', {}));
  assert.equal(e.data.error, 'unknown_method');
});
await check('tokens: invalid_auth, not_authed, not_allowed_token_type both ways, token_revoked', async () => {
  let e = await rejects(new WebClient('xoxb-bogus', { slackApiUrl, logger: silent }).auth.test());
  assert.equal(e.data.error, 'invalid_auth');
  e = await rejects(new WebClient(undefined, { slackApiUrl, logger: silent }).auth.test());
  assert.equal(e.data.error, 'not_authed');
  e = await rejects(new WebClient(copilot.app_token, { slackApiUrl, logger: silent }).auth.test());
  assert.equal(e.data.error, 'not_allowed_token_type');
  e = await rejects(web.apps.connections.open());
  assert.equal(e.data.error, 'not_allowed_token_type');
  const { token } = await ctl('POST', '/_test/tokens', { app_id: copilot.app_id, scopes: ['chat:write'] });
  await ctl('POST', '/_test/tokens/revoke', { token });
  e = await rejects(new WebClient(token, { slackApiUrl, logger: silent }).auth.test());
  assert.equal(e.data.error, 'token_revoked');
});
await check('missing_scope carries needed and provided; accepted scopes in the header', async () => {
  const { token } = await ctl('POST', '/_test/tokens', { app_id: copilot.app_id, scopes: ['chat:write', 'channels:read'] });
  const limited = new WebClient(token, { slackApiUrl, logger: silent });
  const e = await rejects(limited.conversations.history({ channel: town.id }));
  assert.equal(e.data.error, 'missing_scope');
  assert.equal(e.data.needed, 'channels:history');
  assert.equal(e.data.provided, 'chat:write,channels:read');
  assert.deepEqual(e.data.response_metadata.acceptedScopes, ['channels:history']);
  const p = await rejects(limited.conversations.history({ channel: lab.id }));
  assert.equal(p.data.needed, 'groups:history');
  const ok = await limited.chat.postMessage({ channel: town.id, text: 'scoped' });
  assert.deepEqual(ok.response_metadata.scopes, ['chat:write', 'channels:read']);
});
await check('chat.postMessage: thread_ts, metadata, markdown_text, size limits', async () => {
  const parent = await post(town.id, 'question');
  const r = await web.chat.postMessage({ channel: town.id, text: 'answer', thread_ts: parent.ts,
    metadata: { event_type: 'pf_reply', event_payload: { source: parent.ts } } });
  assert.match(r.ts, /^\d{10}\.\d{6}$/);
  assert.ok(r.ts > parent.ts);
  assert.equal(r.message.thread_ts, parent.ts);
  assert.equal(r.message.bot_id, copilot.bot_id);
  assert.equal(r.message.metadata.event_payload.source, parent.ts);
  const md = await web.chat.postMessage({ channel: town.id, markdown_text: '**bold**' });
  assert.equal(md.message.text, '**bold**');
  let e = await rejects(web.chat.postMessage({ channel: town.id, text: 'a', markdown_text: 'b' }));
  assert.equal(e.data.error, 'markdown_text_conflict');
  e = await rejects(web.chat.postMessage({ channel: town.id, text: 'x'.repeat(40001) }));
  assert.equal(e.data.error, 'msg_too_long');
  await web.chat.postMessage({ channel: town.id, text: 'x'.repeat(40000) });
  e = await rejects(web.chat.postMessage({ channel: town.id, thread_ts: '1.000001', text: 'x' }));
  assert.equal(e.data.error, 'invalid_thread_ts');
  e = await rejects(web.chat.postMessage({ channel: town.id }));
  assert.equal(e.data.error, 'no_text');
});
await check('chat.update: edits kept, msg_too_long past 4,000, cant_update_message, message_not_found; chat.delete', async () => {
  const r = await web.chat.postMessage({ channel: town.id, text: 'draft' });
  const u = await web.chat.update({ channel: town.id, ts: r.ts, text: 'final' });
  assert.equal(u.text, 'final');
  assert.equal(u.message.edited.user, copilot.bot_user_id);
  let e = await rejects(web.chat.update({ channel: town.id, ts: r.ts, text: 'y'.repeat(4001) }));
  assert.equal(e.data.error, 'msg_too_long');
  const theirs = await post(town.id, 'mine');
  e = await rejects(web.chat.update({ channel: town.id, ts: theirs.ts, text: 'no' }));
  assert.equal(e.data.error, 'cant_update_message');
  e = await rejects(web.chat.update({ channel: town.id, ts: '1700000000.000001', text: 'no' }));
  assert.equal(e.data.error, 'message_not_found');
  const row = (await messagesOf(town.id)).find((m) => m.ts === r.ts);
  assert.deepEqual(row.edits.map((x) => x.text), ['final']);
  await web.chat.delete({ channel: town.id, ts: r.ts });
  e = await rejects(web.chat.delete({ channel: town.id, ts: r.ts }));
  assert.equal(e.data.error, 'message_not_found');
  e = await rejects(web.chat.delete({ channel: town.id, ts: theirs.ts }));
  assert.equal(e.data.error, 'cant_delete_message');
});
await check('reactions: add, already_reacted, remove, no_reaction', async () => {
  const m = await post(town.id, 'react to me');
  await web.reactions.add({ channel: town.id, timestamp: m.ts, name: 'eyes' });
  let e = await rejects(web.reactions.add({ channel: town.id, timestamp: m.ts, name: 'eyes' }));
  assert.equal(e.data.error, 'already_reacted');
  const row = (await messagesOf(town.id)).find((x) => x.ts === m.ts);
  assert.deepEqual(row.reactions, [{ name: 'eyes', users: [copilot.bot_user_id], count: 1 }]);
  await web.reactions.remove({ channel: town.id, timestamp: m.ts, name: 'eyes' });
  e = await rejects(web.reactions.remove({ channel: town.id, timestamp: m.ts, name: 'eyes' }));
  assert.equal(e.data.error, 'no_reaction');
});
await check('conversations.history pages newest first with paginate(); oldest/latest exclusive unless inclusive', async () => {
  const hist = await ctl('POST', '/_test/channels', { type: 'public', name: 'hist', members: [alice.id, copilot.bot_user_id] });
  const t0 = 1700000000;
  for (let i = 0; i < 25; i++) await post(hist.id, `m${i}`, { ts: `${t0 + i}.000100` });
  const seen = [];
  let pages = 0;
  for await (const p of web.paginate('conversations.history', { channel: hist.id, limit: 10 })) {
    pages++; seen.push(...p.messages.map((m) => m.text));
  }
  assert.equal(pages, 3);
  assert.deepEqual(seen, Array.from({ length: 25 }, (_, i) => `m${24 - i}`));
  const r = await web.conversations.history({ channel: hist.id, oldest: `${t0 + 5}.000100`, latest: `${t0 + 8}.000100` });
  assert.deepEqual(r.messages.map((m) => m.text), ['m7', 'm6']);
  assert.equal(r.has_more, false);
  const inc = await web.conversations.history({ channel: hist.id, oldest: `${t0 + 5}.000100`, latest: `${t0 + 8}.000100`, inclusive: true });
  assert.deepEqual(inc.messages.map((m) => m.text), ['m8', 'm7', 'm6', 'm5']);
  const lim = await web.conversations.history({ channel: hist.id, limit: 2 });
  assert.equal(lim.has_more, true);
  assert.ok(lim.response_metadata.next_cursor);
  return `${seen.length} messages in ${pages} pages`;
});
await check('conversations.replies: parent first, then replies oldest first; thread_not_found; history hides replies', async () => {
  const parent = await post(town.id, 'thread root');
  const r1 = await post(town.id, 'r1', { thread_ts: parent.ts });
  await web.chat.postMessage({ channel: town.id, thread_ts: parent.ts, text: 'r2' });
  await post(town.id, 'r3', { thread_ts: r1.ts });   // a reply's ts threads to the parent
  const r = await web.conversations.replies({ channel: town.id, ts: r1.ts });
  assert.deepEqual(r.messages.map((m) => m.text), ['thread root', 'r1', 'r2', 'r3']);
  assert.equal(r.messages[0].reply_count, 3);
  assert.equal(r.messages[0].latest_reply, r.messages[3].ts);
  const after = await web.conversations.replies({ channel: town.id, ts: parent.ts, oldest: r1.ts });
  assert.deepEqual(after.messages.map((m) => m.text), ['thread root', 'r2', 'r3']);
  const e = await rejects(web.conversations.replies({ channel: town.id, ts: '1600000000.000001' }));
  assert.equal(e.data.error, 'thread_not_found');
  const h = await web.conversations.history({ channel: town.id, oldest: parent.ts, inclusive: true });
  assert.deepEqual(h.messages.map((m) => m.text), ['thread root']);
});
await check('conversations.info / open / members, users.conversations, users.info, bots.info', async () => {
  const info = await web.conversations.info({ channel: lab.id });
  assert.equal(info.channel.is_private, true);
  assert.equal(info.channel.is_member, true);
  const opened = await web.conversations.open({ users: alice.id });
  assert.equal(opened.channel.id, dm.id);
  const fresh = await web.conversations.open({ users: carol.id });
  assert.match(fresh.channel.id, /^D/);
  const viaUser = await web.chat.postMessage({ channel: carol.id, text: 'hi carol' });
  assert.equal(viaUser.channel, fresh.channel.id);
  const mem = await web.conversations.members({ channel: town.id });
  assert.deepEqual(mem.members.sort(), [alice.id, copilot.bot_user_id].sort());
  const mine = await web.users.conversations({ types: 'public_channel,private_channel,im' });
  const ids = mine.channels.map((c) => c.id);
  for (const id of [town.id, lab.id, dm.id]) assert.ok(ids.includes(id), id);
  assert.ok(!ids.includes(outside.id));
  const u = await web.users.info({ user: alice.id });
  assert.equal(u.user.name, 'alice');
  assert.equal(u.user.is_bot, false);
  const b = await web.bots.info({ bot: copilot.bot_id });
  assert.equal(b.bot.user_id, copilot.bot_user_id);
  const e = await rejects(web.users.info({ user: 'UNOBODY' }));
  assert.equal(e.data.error, 'user_not_found');
});
await check('files.uploadV2 uploads through getUploadURLExternal/completeUploadExternal and shares the file', async () => {
  const r = await web.files.uploadV2({ channel_id: town.id, filename: 'notes.txt', content: 'hello file', initial_comment: 'here it is' });
  assert.equal(r.ok, true);
  const fileId = r.files[0].files[0].id;
  const msg = (await messagesOf(town.id)).reverse().find((m) => m.subtype === 'file_share');
  assert.equal(msg.text, 'here it is');
  assert.equal(msg.files[0].id, fileId);
  assert.equal(msg.files[0].size, 10);
  const dl = await fetch(msg.files[0].url_private_download, { headers: { Authorization: `Bearer ${copilot.bot_token}` } });
  assert.equal(dl.status, 200);
  assert.equal(await dl.text(), 'hello file');
  const anon = await fetch(msg.files[0].url_private);
  assert.equal(anon.status, 200);
  assert.match(anon.headers.get('content-type'), /^text\/html/);
  assert.match(await anon.text(), /Sign in/);
});
await check('chatStream (ChatStreamer): startStream, appendStream, stopStream; stream errors', async () => {
  const root = await post(dm.id, 'stream me something');
  const streamer = web.chatStream({ channel: dm.id, thread_ts: root.ts, buffer_size: 8 });
  await streamer.append({ markdown_text: 'Hello ' });
  await streamer.append({ markdown_text: 'streaming ' });
  await streamer.append({ markdown_text: 'world' });
  const ts = streamer.ts;
  assert.ok(ts);
  let row = (await messagesOf(dm.id)).find((m) => m.ts === ts);
  assert.equal(row.streaming_state, 'in_progress');
  const e1 = await rejects(web.chat.update({ channel: dm.id, ts, text: 'replace' }));
  assert.equal(e1.data.error, 'streaming_state_conflict');
  const stopped = await streamer.stop({ markdown_text: '!' });
  assert.equal(stopped.message.text, 'Hello streaming world!');
  row = (await messagesOf(dm.id)).find((m) => m.ts === ts);
  assert.equal(row.streaming_state, 'completed');
  assert.equal(row.thread_ts, root.ts);
  const e2 = await rejects(web.chat.appendStream({ channel: dm.id, ts, markdown_text: 'more' }));
  assert.equal(e2.data.error, 'message_not_in_streaming_state');
  const troot = await post(town.id, 'stream in a channel');
  const e3 = await rejects(web.chat.startStream({ channel: town.id, thread_ts: troot.ts, markdown_text: 'x' }));
  assert.equal(e3.data.error, 'missing_recipient_user_id');
  const ok = await web.chat.startStream({ channel: town.id, thread_ts: troot.ts, markdown_text: 'x',
    recipient_user_id: alice.id, recipient_team_id: copilot.team_id });
  const other = new WebClient(raw.bot_token, { slackApiUrl, logger: silent });
  await ctl('POST', '/_test/channels/' + town.id + '/members', { user: raw.bot_user_id });
  const e4 = await rejects(other.chat.appendStream({ channel: town.id, ts: ok.ts, markdown_text: 'y' }));
  assert.equal(e4.data.error, 'message_not_owned_by_app');
  await ctl('DELETE', `/_test/channels/${town.id}/members/${raw.bot_user_id}`);
  await web.assistant.threads.setStatus({ channel_id: town.id, thread_ts: troot.ts, status: 'is thinking…' });
  const st = await ctl('GET', `/_test/messages?channel=${town.id}`);
  assert.equal(st.statuses[troot.ts].status, 'is thinking…');
  await ctl('POST', `/_test/apps/${copilot.app_id}/delivery`, { agents: false });
  const e5 = await rejects(web.chat.startStream({ channel: dm.id, thread_ts: root.ts, markdown_text: 'x' }));
  assert.equal(e5.data.error, 'not_agent_app');
  await ctl('POST', `/_test/apps/${copilot.app_id}/delivery`, { agents: true });
});

// ---------------------------------------------------------------- rate limits

await ctl('POST', '/_test/rate', { enabled: true });
await check('429 with Retry-After: rejectRateLimitedCalls throws WebAPIRateLimitedError with retryAfter', async () => {
  await ctl('POST', '/_test/rate', { limits: { 'users.info': 2 } });
  const strict = new WebClient(copilot.bot_token, { slackApiUrl, logger: silent, rejectRateLimitedCalls: true });
  await strict.users.info({ user: alice.id });
  await strict.users.info({ user: alice.id });
  const e = await rejects(strict.users.info({ user: alice.id }));
  assert.equal(e.code, ErrorCode.RateLimitedError);
  assert.ok(e.retryAfter >= 1 && e.retryAfter <= 60, String(e.retryAfter));
  const log = await ctl('GET', '/_test/calls?method=users.info');
  assert.equal(log.counts['users.info'].ratelimited, 1);
  assert.equal(log.calls.at(-1).status, 429);
  return `retryAfter ${e.retryAfter}s`;
});
await check('the SDK waits Retry-After and retries; the call then succeeds', async () => {
  await ctl('POST', '/_test/rate', { limits: { 'users.info': 1 }, window_ms: 1000 });
  const patient = new WebClient(copilot.bot_token, { slackApiUrl, logger: silent, retryConfig: { retries: 3, minTimeout: 10, maxTimeout: 50 } });
  const waits = [];
  patient.on('rate_limited', (sec) => waits.push(sec));
  await patient.users.info({ user: alice.id });
  const t = Date.now();
  const r = await patient.users.info({ user: alice.id });
  assert.equal(r.ok, true);
  assert.deepEqual(waits, [1]);
  assert.ok(Date.now() - t >= 900);
});
await check('--rate-scale / scale shrinks the tiers: Tier 3 x 0.04 = 2 per window', async () => {
  await ctl('POST', '/_test/rate', { limits: {}, window_ms: 60000, scale: 0.04 });
  const strict = new WebClient(copilot.bot_token, { slackApiUrl, logger: silent, rejectRateLimitedCalls: true });
  await strict.conversations.info({ channel: town.id });
  await strict.conversations.info({ channel: town.id });
  const e = await rejects(strict.conversations.info({ channel: town.id }));
  assert.equal(e.code, ErrorCode.RateLimitedError);
  await strict.users.info({ user: alice.id });   // Tier 4 x 0.04 = 4: still free
  await ctl('POST', '/_test/rate', { scale: 1 });
});
await check('chat.postMessage: per-channel burst, then 429; another channel unaffected', async () => {
  await ctl('POST', '/_test/rate', { limits: {}, window_ms: 60000, post_burst: 3 });
  const strict = new WebClient(copilot.bot_token, { slackApiUrl, logger: silent, rejectRateLimitedCalls: true });
  for (let i = 0; i < 3; i++) await strict.chat.postMessage({ channel: town.id, text: `burst ${i}` });
  const e = await rejects(strict.chat.postMessage({ channel: town.id, text: 'burst 3' }));
  assert.equal(e.code, ErrorCode.RateLimitedError);
  await strict.chat.postMessage({ channel: dm.id, text: 'elsewhere' });
  await ctl('POST', '/_test/reset');
});

// ---------------------------------------------------------------- Socket Mode with SocketModeClient

const envs = [];
let autoAck = true;
const sock = new SocketModeClient({ appToken: raw.app_token, logger: silent, clientPingTimeout: 1000,
  clientOptions: { slackApiUrl, logger: silent } });
let connects = 0;
sock.on('connected', () => { connects++; });
sock.on('slack_event', async (a) => {
  envs.push(a);
  if (autoAck) await a.ack();
});
const evFor = (pred, what, ms) => waitFor(() => envs.find(pred), what, ms);

await check('SocketModeClient connects after hello; events_api envelopes carry the Events API body', async () => {
  await sock.start();
  const m = await post(lab.id, 'hello raw');
  const got = await evFor((a) => a.body.event.ts === m.ts, 'message event');
  assert.equal(got.type, 'events_api');
  assert.equal(got.retry_num, 0);
  assert.equal(got.retry_reason, '');
  const b = got.body;
  assert.equal(b.type, 'event_callback');
  assert.match(b.event_id, /^Ev/);
  assert.equal(b.api_app_id, raw.app_id);
  assert.equal(b.authorizations[0].user_id, raw.bot_user_id);
  assert.equal(b.event.type, 'message');
  assert.equal(b.event.channel_type, 'group');
  assert.equal(b.event.user, alice.id);
  assert.ok(b.event.client_msg_id);
  const socks = await ctl('GET', '/_test/sockets');
  assert.equal(socks.connections.filter((s) => s.app_id === raw.app_id).length, 1);
});
await check('app_mention comes besides message: other event_id, same ts', async () => {
  const m = await post(lab.id, `hey <@${raw.bot_user_id}> look`);
  const men = await evFor((a) => a.body.event.type === 'app_mention' && a.body.event.ts === m.ts, 'app_mention');
  const msg = await evFor((a) => a.body.event.type === 'message' && a.body.event.ts === m.ts, 'message');
  assert.notEqual(men.body.event_id, msg.body.event_id);
  assert.equal(men.body.event.client_msg_id, msg.body.event.client_msg_id);
});
await check('an unacknowledged envelope is redelivered: retry_attempt+1, "timeout", same event_id, new envelope_id', async () => {
  autoAck = false;
  const m = await post(lab.id, 'do not ack me');
  const first = await evFor((a) => a.body.event.ts === m.ts, 'first delivery');
  const second = await evFor((a) => a.body.event.ts === m.ts && a.retry_num === 1, 'redelivery', ACK_MS * 4);
  autoAck = true;
  await second.ack();
  assert.equal(second.retry_reason, 'timeout');
  assert.equal(second.body.event_id, first.body.event_id);
  assert.notEqual(second.envelope_id, first.envelope_id);
  await sleep(ACK_MS * 2);
  assert.equal(envs.filter((a) => a.body.event.ts === m.ts).length, 2);
  const { envelopes } = await ctl('GET', `/_test/apps/${raw.app_id}/envelopes`);
  const mine = envelopes.filter((x) => x.event_id === first.body.event_id);
  assert.deepEqual(mine.map((x) => x.outcome), ['timeout', 'acked']);
});
await check('never acknowledged: 3 redeliveries, then dropped', async () => {
  autoAck = false;
  const m = await post(lab.id, 'never ack');
  await waitFor(() => envs.filter((a) => a.body.event.ts === m.ts).length >= 4, '4 deliveries', ACK_MS * 8);
  await sleep(ACK_MS * 2);
  autoAck = true;
  const got = envs.filter((a) => a.body.event.ts === m.ts);
  assert.deepEqual(got.map((a) => a.retry_num), [0, 1, 2, 3]);
});
await check('edits, deletions and reactions arrive as message_changed, message_deleted, reaction_added', async () => {
  const m = await post(lab.id, 'to be edited');
  await ctl('POST', '/_test/messages/edit', { channel: lab.id, ts: m.ts, text: 'edited' });
  const ch = await evFor((a) => a.body.event.subtype === 'message_changed' && a.body.event.message.ts === m.ts, 'message_changed');
  assert.equal(ch.body.event.message.text, 'edited');
  assert.equal(ch.body.event.previous_message.text, 'to be edited');
  assert.ok(ch.body.event.message.edited.ts);
  await ctl('POST', '/_test/reactions', { user: alice.id, channel: lab.id, ts: m.ts, name: 'white_check_mark' });
  const re = await evFor((a) => a.body.event.type === 'reaction_added' && a.body.event.item.ts === m.ts, 'reaction_added');
  assert.equal(re.body.event.reaction, 'white_check_mark');
  assert.equal(re.body.event.item_user, alice.id);
  await ctl('POST', '/_test/messages/delete', { channel: lab.id, ts: m.ts });
  const del = await evFor((a) => a.body.event.subtype === 'message_deleted' && a.body.event.deleted_ts === m.ts, 'message_deleted');
  assert.equal(del.body.event.previous_message.text, 'edited');
});
await check('a disconnect frame (refresh_requested) makes the client reconnect; events flow again', async () => {
  const before = connects;
  const r = await ctl('POST', '/_test/sockets/disconnect', { app_id: raw.app_id, reason: 'refresh_requested' });
  assert.equal(r.sent, 1);
  await waitFor(() => connects > before, 'reconnect', 10000);
  const m = await post(lab.id, 'after refresh');
  await evFor((a) => a.body.event.ts === m.ts, 'event after reconnect');
  const socks = await ctl('GET', '/_test/sockets');
  assert.equal(socks.connections.filter((s) => s.app_id === raw.app_id).length, 1);
});
await check('a dropped socket: the client reconnects; events posted in the gap arrive after it', async () => {
  const before = connects;
  const r = await ctl('POST', '/_test/sockets/drop', { app_id: raw.app_id });
  assert.equal(r.dropped, 1);
  const m = await post(lab.id, 'during the gap');
  await waitFor(() => connects > before, 'reconnect', 10000);
  const got = await evFor((a) => a.body.event.ts === m.ts, 'gap event');
  assert.equal(got.retry_num, 0);
});
await check('delivery paused with mode "drop" loses events (a gap to catch up from history)', async () => {
  await ctl('POST', `/_test/apps/${raw.app_id}/delivery`, { mode: 'drop' });
  const lost = await post(lab.id, 'lost event');
  await ctl('POST', `/_test/apps/${raw.app_id}/delivery`, { mode: 'normal' });
  const kept = await post(lab.id, 'kept event');
  await evFor((a) => a.body.event.ts === kept.ts, 'kept');
  assert.ok(!envs.some((a) => a.body.event.ts === lost.ts));
  const rawWeb = new WebClient(raw.bot_token, { slackApiUrl, logger: silent });
  const h = await rawWeb.conversations.history({ channel: lab.id, oldest: lost.ts, inclusive: true });
  assert.deepEqual(h.messages.map((x) => x.text), ['kept event', 'lost event']);
});
await sock.disconnect();

await check('apps.connections.open tickets are one-use; the 11th socket gets too_many_websockets', async () => {
  const crowd = await ctl('POST', '/_test/apps', { name: 'crowd' });
  const appWeb = new WebClient(crowd.app_token, { slackApiUrl, logger: silent });
  const open = async () => {
    const { url } = await appWeb.apps.connections.open();
    const ws = new WS(url);
    const first = await new Promise((res, rej) => { ws.once('message', (d) => res(JSON.parse(d))); ws.once('error', rej); });
    return { ws, url, first };
  };
  const conns = [];
  for (let i = 0; i < 10; i++) conns.push(await open());
  assert.equal(conns[0].first.type, 'hello');
  assert.equal(conns[9].first.num_connections, 10);
  assert.equal(conns[0].first.connection_info.app_id, crowd.app_id);
  assert.ok(conns[0].first.debug_info.approximate_connection_time > 0);
  const extra = await open();
  assert.equal(extra.first.type, 'disconnect');
  assert.equal(extra.first.reason, 'too_many_websockets');
  const reuse = await new Promise((res) => {
    const ws = new WS(conns[0].url);
    ws.once('unexpected-response', (req, resp) => res(resp.statusCode));
    ws.once('open', () => res('opened'));
    ws.once('error', () => {});
  });
  assert.equal(reuse, 401);
  for (const c of [...conns, extra]) c.ws.terminate();
});

// ---------------------------------------------------------------- Bolt

await check('Bolt App (socketMode) gets app_mention and message events and replies with say()', async () => {
  const app = new App({ token: copilot.bot_token, appToken: copilot.app_token, socketMode: true,
    logger: silent, logLevel: LogLevel.ERROR, clientOptions: { slackApiUrl, logger: silent } });
  const mentions = [], messages = [];
  app.event('app_mention', async ({ event, say: reply }) => {
    mentions.push(event);
    await reply({ text: `pong to <@${event.user}>`, thread_ts: event.ts });
  });
  // The events queued for copilot while it had no socket arrive first: count only those from here on.
  let since = '9';
  app.message(async ({ message }) => { if (message.ts >= since) messages.push(message); });
  await app.start();
  try {
    await sleep(500);
    since = (await post(outside.id, 'marker')).ts;
    const m = await post(town.id, `<@${copilot.bot_user_id}> ping`);
    const d = await post(dm.id, 'a direct message');
    await waitFor(() => mentions.length === 1 && messages.length >= 2, 'Bolt events');
    const reply = await waitFor(async () => (await messagesOf(town.id)).find((x) => x.thread_ts === m.ts && x.bot_id === copilot.bot_id), 'say() reply');
    assert.equal(reply.text, `pong to <@${alice.id}>`);
    await sleep(300);   // the reply's own message event must not reach app.message (ignoreSelf)
    assert.deepEqual(messages.map((x) => `${x.ts} ${x.user} ${x.subtype || ''}`).sort(), [`${m.ts} ${alice.id} `, `${d.ts} ${alice.id} `].sort());
    assert.equal(messages.find((x) => x.ts === d.ts).channel_type, 'im');
    assert.equal(mentions[0].ts, m.ts);
  } finally {
    await app.stop();
  }
});

clearTimeout(watchdog);
await srv.stop();
say(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
