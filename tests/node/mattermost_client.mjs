// Drives tests/servers/mattermost_server.mjs with the real Mattermost client library
// (@mattermost/client: Client4 over fetch, WebSocketClient over `ws`) and checks that the client
// works against it and sees Mattermost's behaviour, so the bridge's C++ tests talk to a faithful
// peer. Prints one line per check; exits non-zero if any fails.
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import readline from 'node:readline';

const require = createRequire(import.meta.url);
const { Client4, WebSocketClient, ClientError } = require('@mattermost/client');
const WS = require('ws');

// What the WebSocketClient needs in Node (chat-bridge spec section 6): a global WebSocket, and
// CloseEvent, which it builds on a ping timeout or a sequence mismatch (Node 20 has none).
globalThis.WebSocket = WS;
if (typeof globalThis.CloseEvent === 'undefined') {
  globalThis.CloseEvent = class CloseEvent extends Event {
    constructor(type, init = {}) {
      super(type);
      this.code = init.code ?? 0; this.reason = init.reason ?? ''; this.wasClean = !!init.wasClean;
    }
  };
}
// The client logs every connect/close to the console; keep the output to one line per check.
const realLog = console.log;
console.log = () => {};
const say = (s) => process.stdout.write(s + '\n');

const here = path.dirname(fileURLToPath(import.meta.url));
const serverScript = path.join(here, '..', 'servers', 'mattermost_server.mjs');

const watchdog = setTimeout(() => { say('FAIL - timed out'); process.exit(1); }, 240000);

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
    const v = pred();
    if (v) return v;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(20);
  }
}
async function rejects(promise) {
  try { await promise; } catch (e) { return e; }
  throw new Error('expected the call to throw');
}

const srv = await startServer();
const base = `http://127.0.0.1:${srv.port}`;
const wsUrl = `ws://127.0.0.1:${srv.port}/api/v4/websocket`;
async function ctl(method, p, body) {
  const r = await fetch(base + p, { method, body: body === undefined ? undefined : JSON.stringify(body) });
  const j = await r.json();
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(j)}`);
  return j;
}

const bot = await ctl('POST', '/_test/users', { username: 'copilot', is_bot: true });
const alice = await ctl('POST', '/_test/users', { username: 'alice' });
const carol = await ctl('POST', '/_test/users', { username: 'carol' });
const town = await ctl('POST', '/_test/channels', { name: 'town', display_name: 'Town', type: 'P', members: [bot.id, alice.id] });
const secret = await ctl('POST', '/_test/channels', { name: 'secret', type: 'P', members: [alice.id, carol.id] });
const dm = await ctl('POST', '/_test/channels', { type: 'D', members: [bot.id, alice.id] });
const { team } = await ctl('GET', '/_test/state');

const client = new Client4();
client.setUrl(base);
client.setToken(bot.token);
const aliceClient = new Client4();
aliceClient.setUrl(base);
aliceClient.setToken(alice.token);

// ---------------------------------------------------------------- identity and lookups

await check('getMe returns the bot', async () => {
  const me = await client.getMe();
  assert.equal(me.id, bot.id);
  assert.equal(me.username, 'copilot');
  assert.equal(me.is_bot, true);
});
await check('getUser and getUserByUsername', async () => {
  const u = await client.getUser(alice.id);
  assert.equal(u.username, 'alice');
  assert.equal(u.is_bot, undefined); // omitempty, as the real User JSON
  const v = await client.getUserByUsername('alice');
  assert.equal(v.id, alice.id);
  const e = await rejects(client.getUserByUsername('nobody'));
  assert.equal(e.status_code, 404);
  assert.equal(e.server_error_id, 'app.user.get_by_username.app_error');
});
await check('getMyTeams and getChannel', async () => {
  const teams = await client.getMyTeams();
  assert.deepEqual(teams.map((t) => t.id), [team.id]);
  const c = await client.getChannel(dm.id);
  assert.equal(c.type, 'D');
  assert.equal(c.name, [bot.id, alice.id].sort().join('__'));
  const t = await client.getChannel(town.id);
  assert.equal(t.display_name, 'Town');
  assert.equal(t.team_id, team.id);
});
await check('DM discovery: GET /users/me/channels lists the D channel named uid1__uid2', async () => {
  const list = await client.getAllTeamsChannels();
  const d = list.find((c) => c.type === 'D');
  assert.ok(d);
  assert.deepEqual(d.name.split('__').sort(), [bot.id, alice.id].sort());
  assert.ok(!list.some((c) => c.id === secret.id));
});
await check('a bad token: ClientError 401 api.context.session_expired.app_error', async () => {
  const bad = new Client4();
  bad.setUrl(base);
  bad.setToken('not-a-token');
  const e = await rejects(bad.getMe());
  assert.ok(e instanceof ClientError);
  assert.equal(e.status_code, 401);
  assert.equal(e.server_error_id, 'api.context.session_expired.app_error');
  return e.message;
});
await check('a private channel the bot is not in: 403 api.context.permissions.app_error', async () => {
  const e = await rejects(client.getChannel(secret.id));
  assert.equal(e.status_code, 403);
  assert.equal(e.server_error_id, 'api.context.permissions.app_error');
  const e2 = await rejects(client.createPost({ channel_id: secret.id, message: 'hi' }));
  assert.equal(e2.status_code, 403);
});

// ---------------------------------------------------------------- WebSocket (auth challenge)

const events = [];
const wsc = new WebSocketClient({ minWebSocketRetryTime: 300, reconnectJitterRange: 100 });
let reconnects = 0, missed = 0, closes = 0;
wsc.addMessageListener((m) => events.push(m));
wsc.addReconnectListener(() => reconnects++);
wsc.addMissedMessageListener(() => missed++);
wsc.addCloseListener(() => closes++);
const eventsOf = (type) => events.filter((e) => e.event === type);

await check('WebSocketClient.initialize: hello, then the challenge is accepted', async () => {
  wsc.initialize(wsUrl, bot.token);
  const hello = await waitFor(() => eventsOf('hello')[0], 'hello');
  assert.equal(hello.seq, 0);
  assert.match(hello.data.connection_id, /^[a-z0-9]{26}$/);
  assert.match(hello.data.server_version, /^10\.5\.0\./);
  assert.equal(hello.broadcast.user_id, bot.id);
  await sleep(50);
  const conns = (await ctl('GET', '/_test/ws')).connections;
  assert.equal(conns.length, 1);
  assert.equal(conns[0].authenticated, true);
  assert.equal(conns[0].auth, 'challenge');
  assert.equal(conns[0].upgrade_query.sequence_number, '0');
  return `connection_id ${hello.data.connection_id}`;
});
await check('WebSocketClient ping gets the pong reply', async () => {
  const reply = await new Promise((resolve) => wsc.ping(resolve));
  assert.equal(reply.status, 'OK');
  assert.equal(reply.data.text, 'pong');
  assert.equal(typeof reply.data.server_time, 'number');
});

// ---------------------------------------------------------------- posts

let t0 = 0, botPost = null;
await check('createPost: 201 shape, and a posted event whose data.post is a JSON string', async () => {
  t0 = Date.now() - 1;
  botPost = await client.createPost({ channel_id: town.id, message: 'hello <town> & co', root_id: '' });
  assert.match(botPost.id, /^[a-z0-9]{26}$/);
  for (const k of ['create_at', 'update_at']) assert.equal(typeof botPost[k], 'number');
  assert.equal(botPost.edit_at, 0);
  assert.equal(botPost.delete_at, 0);
  assert.equal(botPost.user_id, bot.id);
  assert.equal(botPost.original_id, '');
  assert.equal(botPost.type, '');
  assert.equal(botPost.props.from_bot, 'true');
  assert.deepEqual(botPost.file_ids, []);
  assert.deepEqual(botPost.metadata, {});
  const ev = await waitFor(() => eventsOf('posted').find((e) => JSON.parse(e.data.post).id === botPost.id), 'posted');
  assert.equal(typeof ev.data.post, 'string');
  assert.equal(JSON.parse(ev.data.post).message, 'hello <town> & co');
  assert.equal(ev.data.channel_type, 'P');
  assert.equal(ev.data.channel_name, 'town');
  assert.equal(ev.data.channel_display_name, 'Town');
  assert.equal(ev.data.sender_name, '@copilot');
  assert.equal(ev.data.team_id, team.id);
  assert.equal(ev.data.set_online, true);
  assert.equal(ev.data.mentions, undefined);
  assert.equal(ev.broadcast.channel_id, town.id);
});
await check('a mention: only the mentioned user\'s copy carries data.mentions, a JSON string', async () => {
  const p = await ctl('POST', '/_test/posts', { user_id: alice.id, channel_id: town.id, message: 'hey @copilot, ping' });
  const ev = await waitFor(() => eventsOf('posted').find((e) => JSON.parse(e.data.post).id === p.id), 'posted');
  assert.equal(typeof ev.data.mentions, 'string');
  assert.deepEqual(JSON.parse(ev.data.mentions), [bot.id]);
  assert.equal(ev.data.sender_name, '@alice');
  const d = await ctl('POST', '/_test/posts', { user_id: alice.id, channel_id: dm.id, message: 'in private' });
  const dev = await waitFor(() => eventsOf('posted').find((e) => JSON.parse(e.data.post).id === d.id), 'DM posted');
  assert.equal(dev.data.channel_type, 'D');
  assert.equal(dev.data.channel_display_name, '@alice');
  assert.deepEqual(JSON.parse(dev.data.mentions), [bot.id]);
});
await check('events carry consecutive seq numbers (the client closes on a gap)', async () => {
  const seqs = events.map((e) => e.seq);
  assert.deepEqual(seqs, seqs.map((_, i) => i));
  assert.equal(closes, 0);
});

let edited = null;
await check('patchPost: edit_at and update_at bumped, post_edited event', async () => {
  edited = await client.patchPost({ id: botPost.id, message: 'hello again' });
  assert.equal(edited.id, botPost.id);
  assert.equal(edited.message, 'hello again');
  assert.ok(edited.edit_at > 0);
  assert.ok(edited.update_at >= botPost.update_at);
  const ev = await waitFor(() => eventsOf('post_edited').find((e) => JSON.parse(e.data.post).id === botPost.id), 'post_edited');
  assert.equal(JSON.parse(ev.data.post).message, 'hello again');
});
await check('patch of a post that does not exist: 403, not 404', async () => {
  const e = await rejects(client.patchPost({ id: 'abcdefghijklmnopqrstuvwxyz', message: 'x' }));
  assert.equal(e.status_code, 403);
  assert.equal(e.server_error_id, 'api.context.permissions.app_error');
  const e2 = await rejects(aliceClient.patchPost({ id: botPost.id, message: 'not yours' }));
  assert.equal(e2.status_code, 403);
});
let doomed = null, reply = null;
await check('deletePost: {status: OK}, post_deleted, and the root takes its replies along', async () => {
  doomed = await client.createPost({ channel_id: town.id, message: 'short-lived' });
  reply = await aliceClient.createPost({ channel_id: town.id, message: 'a reply', root_id: doomed.id });
  assert.equal(reply.root_id, doomed.id);
  const res = await client.deletePost(doomed.id);
  assert.deepEqual(res, { status: 'OK' });
  const ev = await waitFor(() => eventsOf('post_deleted').find((e) => JSON.parse(e.data.post).id === doomed.id), 'post_deleted');
  assert.equal(ev.data.delete_by, undefined);
  const rows = (await ctl('GET', `/_test/posts?channel_id=${town.id}`)).posts;
  assert.ok(rows.find((r) => r.id === reply.id).delete_at > 0);
  const e = await rejects(client.deletePost(doomed.id));
  assert.equal(e.status_code, 404);
  assert.equal(e.server_error_id, 'app.post.get.app_error');
});
await check('reply_count: the live replies of the root (an edit\'s history row and a deleted reply do not count)', async () => {
  const root = await client.createPost({ channel_id: town.id, message: 'a thread' });
  const r1 = await aliceClient.createPost({ channel_id: town.id, message: 'one', root_id: root.id });
  assert.equal(r1.reply_count, 1);
  await aliceClient.patchPost({ id: r1.id, message: 'one, edited' });
  const r2 = await client.createPost({ channel_id: town.id, message: 'two', root_id: root.id });
  assert.equal(r2.reply_count, 2);
  await client.deletePost(r2.id);
  const r3 = await client.createPost({ channel_id: town.id, message: 'three', root_id: root.id });
  assert.equal(r3.reply_count, 2);
});
await check('getPostsSince: edit-history rows (original_id) and deleted rows are included', async () => {
  const list = await client.getPostsSince(town.id, t0);
  for (const k of ['order', 'posts', 'next_post_id', 'prev_post_id']) assert.ok(k in list, k);
  const all = Object.values(list.posts);
  const history = all.find((p) => p.original_id === botPost.id);
  assert.ok(history, 'the edit-history row');
  assert.equal(history.message, 'hello <town> & co');
  assert.ok(history.delete_at > 0);
  assert.notEqual(history.id, botPost.id);
  assert.equal(list.posts[botPost.id].message, 'hello again');
  assert.ok(list.posts[doomed.id].delete_at > 0, 'the deleted root');
  assert.ok(list.posts[reply.id].delete_at > 0, 'the deleted reply');
  assert.ok(list.order.includes(history.id));
  const creates = list.order.map((id) => list.posts[id].create_at);
  assert.deepEqual(creates, [...creates].sort((a, b) => b - a)); // newest first
  const later = await client.getPostsSince(town.id, Date.now() + 60000);
  assert.deepEqual(later.order, []);
  return `${list.order.length} rows`;
});
await check('getPosts (pages) leaves out deleted and history rows', async () => {
  const list = await client.getPosts(town.id, 0, 60);
  assert.ok(list.order.includes(botPost.id));
  assert.ok(!list.order.includes(doomed.id));
  assert.ok(!Object.values(list.posts).some((p) => p.original_id));
});
await check('a reply to a root that does not exist: 400 api.post.create_post.root_id.app_error', async () => {
  const e = await rejects(client.createPost({ channel_id: town.id, message: 'x', root_id: 'zzzzzzzzzzzzzzzzzzzzzzzzzz' }));
  assert.equal(e.status_code, 400);
  assert.equal(e.server_error_id, 'api.post.create_post.root_id.app_error');
});
await check('a message over 16383 runes: 400 model.post.is_valid.message_length.app_error', async () => {
  await client.createPost({ channel_id: town.id, message: '\u00e9'.repeat(16383) });
  const e = await rejects(client.createPost({ channel_id: town.id, message: 'x'.repeat(16384) }));
  assert.equal(e.status_code, 400);
  assert.equal(e.server_error_id, 'model.post.is_valid.message_length.app_error');
});
await check('pending_post_id: a repeated create returns the first post and posts once', async () => {
  const before = eventsOf('posted').length;
  const a = await client.createPost({ channel_id: town.id, message: 'once', pending_post_id: `${bot.id}:1234` });
  const b = await client.createPost({ channel_id: town.id, message: 'once', pending_post_id: `${bot.id}:1234` });
  assert.equal(b.id, a.id);
  await sleep(200);
  assert.equal(eventsOf('posted').length, before + 1);
  const rows = (await ctl('GET', `/_test/posts?channel_id=${town.id}`)).posts.filter((r) => r.message === 'once');
  assert.equal(rows.length, 1);
});

// ---------------------------------------------------------------- reactions, typing, files

await check('addReaction: the reaction, and reaction_added with data.reaction a JSON string', async () => {
  const r = await client.addReaction(bot.id, botPost.id, 'thumbsup');
  assert.equal(r.emoji_name, 'thumbsup');
  assert.equal(r.post_id, botPost.id);
  const ev = await waitFor(() => eventsOf('reaction_added')[0], 'reaction_added');
  assert.equal(typeof ev.data.reaction, 'string');
  assert.equal(JSON.parse(ev.data.reaction).emoji_name, 'thumbsup');
  assert.equal(ev.broadcast.channel_id, town.id);
  const e = await rejects(client.addReaction(alice.id, botPost.id, 'x'));
  assert.equal(e.status_code, 403);
  await client.removeReaction(bot.id, botPost.id, 'thumbsup');
  await waitFor(() => eventsOf('reaction_removed')[0], 'reaction_removed');
});
await check('typing: REST and the WebSocket action reach the other members only', async () => {
  const aliceEvents = [];
  const aws = new WebSocketClient({ minWebSocketRetryTime: 300, reconnectJitterRange: 100 });
  aws.addMessageListener((m) => aliceEvents.push(m));
  aws.initialize(wsUrl, alice.token);
  await waitFor(() => aliceEvents.find((e) => e.event === 'hello'), 'alice hello');
  await client.doFetch(`${client.getUserRoute('me')}/typing`, { method: 'post', body: JSON.stringify({ channel_id: town.id }) });
  const ev = await waitFor(() => aliceEvents.find((e) => e.event === 'typing'), 'typing');
  assert.equal(ev.data.user_id, bot.id);
  assert.deepEqual(ev.broadcast.omit_users, { [bot.id]: true });
  const reply = await new Promise((resolve) => wsc.userTyping(town.id, '', resolve));
  assert.equal(reply.status, 'OK');
  await waitFor(() => aliceEvents.filter((e) => e.event === 'typing').length === 2, 'second typing');
  assert.equal(eventsOf('typing').length, 0);
  const log = (await ctl('GET', `/_test/typing?channel_id=${town.id}`)).typing;
  assert.deepEqual(log.map((t) => t.via), ['rest', 'ws']);
  aws.close();
});
await check('uploadFile (FormData), createPost with file_ids, then download it', async () => {
  const fd = new FormData();
  fd.append('channel_id', town.id);
  fd.append('files', new Blob(['file body \u2713'], { type: 'text/plain' }), 'notes.txt');
  const up = await client.uploadFile(fd);
  assert.equal(up.file_infos.length, 1);
  const info = up.file_infos[0];
  assert.equal(info.name, 'notes.txt');
  assert.equal(info.extension, 'txt');
  assert.equal(info.size, Buffer.byteLength('file body \u2713'));
  assert.equal(info.user_id, bot.id);
  assert.equal(info.post_id, undefined);
  assert.deepEqual(up.client_ids, []);
  const p = await client.createPost({ channel_id: town.id, message: 'see file', file_ids: [info.id] });
  assert.deepEqual(p.file_ids, [info.id]);
  assert.equal(p.metadata.files[0].id, info.id);
  assert.equal(p.metadata.files[0].post_id, p.id);
  const ev = await waitFor(() => eventsOf('posted').find((e) => JSON.parse(e.data.post).id === p.id), 'posted');
  assert.equal(ev.data.otherFile, 'true');
  const r = await fetch(client.getFileUrl(info.id), { headers: { Authorization: `Bearer ${bot.token}` } });
  assert.equal(r.status, 200);
  assert.equal(await r.text(), 'file body \u2713');
  assert.match(r.headers.get('content-disposition'), /^attachment;filename="notes.txt"/);
  const carolClient = new Client4();
  carolClient.setUrl(base);
  carolClient.setToken(carol.token);
  const e = await rejects(carolClient.doFetch(client.getFileUrl(info.id), { method: 'get' }));
  assert.equal(e.status_code, 403);
  const meta = await client.doFetch(`${client.getFileUrl(info.id)}/info`, { method: 'get' });
  assert.equal(meta.post_id, p.id);
});

await check('admin flow: createChannel, addToChannel (team membership first), getChannelByName', async () => {
  const dave = await ctl('POST', '/_test/users', { username: 'dave', in_team: false });
  const c = await client.createChannel({ team_id: team.id, name: 'bridge-room', display_name: 'Bridge Room', type: 'P' });
  assert.equal(c.type, 'P');
  assert.equal(c.creator_id, bot.id);
  const e = await rejects(client.addToChannel(dave.id, c.id));
  assert.equal(e.server_error_id, 'app.team.get_member.missing.app_error');
  const tm = await client.addToTeam(team.id, dave.id);
  assert.equal(tm.user_id, dave.id);
  const m = await client.addToChannel(dave.id, c.id);
  assert.equal(m.channel_id, c.id);
  const ev = await waitFor(() => eventsOf('posted').find((x) => JSON.parse(x.data.post).channel_id === c.id), 'the system post');
  assert.equal(JSON.parse(ev.data.post).type, 'system_add_to_channel');
  const byName = await client.getChannelByName(team.id, 'bridge-room');
  assert.equal(byName.id, c.id);
  const e2 = await rejects(client.getChannelByName(team.id, 'no-such-room'));
  assert.equal(e2.status_code, 404);
});

await check('an open channel takes a team member adding themselves or others; a private one only from its members', async () => {
  const open = await ctl('POST', '/_test/channels', { name: 'plaza', type: 'O', members: [alice.id] });
  const m = await client.addToChannel(bot.id, open.id);   // joins
  assert.equal(m.user_id, bot.id);
  const other = await ctl('POST', '/_test/channels', { name: 'square', type: 'O', members: [alice.id] });
  const c = await client.addToChannel(carol.id, other.id); // adds someone without being a member
  assert.equal(c.user_id, carol.id);
  const e = await rejects(client.addToChannel(bot.id, secret.id));
  assert.equal(e.status_code, 403);
  assert.equal(e.server_error_id, 'api.context.permissions.app_error');
});

// ---------------------------------------------------------------- rate limits

await check('a scripted 429: the client throws, and cannot tell it from other failures', async () => {
  await ctl('POST', '/_test/fail', { method: 'GET', path: '^/api/v4/users/me$', status: 429, retry_after_s: 2 });
  const e = await rejects(client.getMe());
  assert.ok(e instanceof ClientError);
  // the body is text/plain "limit exceeded\n": no JSON, so no status_code and no id
  assert.equal(e.status_code, undefined);
  assert.equal(e.server_error_id, undefined);
  assert.equal(e.message, '');
  await ctl('POST', '/_test/fail', { method: 'GET', path: '^/api/v4/users/me$', status: 429, retry_after_s: 2 });
  const r = await fetch(`${base}/api/v4/users/me`, { headers: { Authorization: `Bearer ${bot.token}` } });
  assert.equal(r.status, 429);
  assert.equal(await r.text(), 'limit exceeded\n');
  assert.equal(r.headers.get('retry-after'), '2');
  assert.equal(r.headers.get('x-ratelimit-reset'), '2');
  assert.match(r.headers.get('content-type'), /^text\/plain/);
  await client.getMe(); // the script is used up
  return `ClientError message "${e.message}", status_code ${e.status_code}, server_error_id ${e.server_error_id}`;
});
await check('the real limiter (--rate-limit 2 --rate-burst 1): 429 with X-Ratelimit headers', async () => {
  const s2 = await startServer(['--rate-limit', '2', '--rate-burst', '1']);
  try {
    const u = await (await fetch(`http://127.0.0.1:${s2.port}/_test/users`, { method: 'POST', body: JSON.stringify({ username: 'b' }) })).json();
    const c = new Client4();
    c.setUrl(`http://127.0.0.1:${s2.port}`);
    c.setToken(u.token);
    await c.getMe();
    await c.getMe();
    const e = await rejects(c.getMe());
    assert.equal(e.status_code, undefined);
    const r = await fetch(`http://127.0.0.1:${s2.port}/api/v4/users/me`, { headers: { Authorization: `Bearer ${u.token}` } });
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('x-ratelimit-limit'), '2');
    assert.equal(r.headers.get('x-ratelimit-remaining'), '0');
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    await sleep(1100);
    await c.getMe();
  } finally { await s2.stop(); }
});

// ---------------------------------------------------------------- reconnects

await check('a dropped socket: the client reconnects, a new hello with a new connection_id', async () => {
  const firstId = eventsOf('hello')[0].data.connection_id;
  const helloCount = eventsOf('hello').length;
  await ctl('POST', '/_test/ws/drop', { user_id: bot.id });
  await waitFor(() => reconnects === 1, 'the reconnect listener', 10000);
  const hello = await waitFor(() => eventsOf('hello')[helloCount], 'a second hello', 10000);
  assert.notEqual(hello.data.connection_id, firstId);
  assert.equal(hello.seq, 0);
  assert.equal(missed, 1); // the client saw a different connection_id: messages were missed
  const hist = (await ctl('GET', '/_test/ws')).history.filter((h) => h.user_id === bot.id);
  const last = hist[hist.length - 1];
  assert.equal(last.upgrade_query.connection_id, firstId); // it asked to resume...
  assert.equal(last.resumed, false); // ...but a challenge-authenticated socket cannot
  const p = await ctl('POST', '/_test/posts', { user_id: alice.id, channel_id: town.id, message: 'after reconnect' });
  await waitFor(() => eventsOf('posted').find((e) => JSON.parse(e.data.post).id === p.id), 'posted after reconnect');
  return `reconnect query ${JSON.stringify(last.upgrade_query)}`;
});
await check('token on the upgrade: a dropped socket resumes, no hello, the gap\'s events arrive in seq', async () => {
  const evs = [];
  let rec = 0, miss = 0;
  const hc = new WebSocketClient({
    minWebSocketRetryTime: 1500, reconnectJitterRange: 100,
    newWebSocketFn: (url) => new WS(url, { headers: { Authorization: `Bearer ${bot.token}` } }),
  });
  hc.addMessageListener((m) => evs.push(m));
  hc.addReconnectListener(() => rec++);
  hc.addMissedMessageListener(() => miss++);
  hc.initialize(wsUrl); // no token: no authentication_challenge
  const hello = await waitFor(() => evs.find((e) => e.event === 'hello'), 'hello');
  await ctl('POST', '/_test/posts', { user_id: alice.id, channel_id: town.id, message: 'before the drop' });
  await waitFor(() => evs.length === 2, 'the first post');
  await ctl('POST', '/_test/ws/drop', { user_id: bot.id });
  const gap = await ctl('POST', '/_test/posts', { user_id: alice.id, channel_id: town.id, message: 'during the gap' });
  await waitFor(() => rec === 1, 'reconnect', 10000);
  const ev = await waitFor(() => evs.find((e) => e.event === 'posted' && JSON.parse(e.data.post).id === gap.id), 'the gap post', 5000);
  assert.equal(ev.seq, 2);
  assert.equal(evs.filter((e) => e.event === 'hello').length, 1);
  assert.equal(miss, 0);
  const conns = (await ctl('GET', '/_test/ws')).connections.filter((c) => c.auth === 'header');
  assert.equal(conns.length, 1);
  assert.equal(conns[0].resumed, true);
  assert.equal(conns[0].connection_id, hello.data.connection_id);
  hc.close();
});

// ---------------------------------------------------------------- robustness

function rawSocket(headers = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WS(wsUrl, { headers });
    const frames = [];
    ws.on('message', (d) => frames.push(d.toString()));
    ws.on('open', () => resolve({ ws, frames }));
    ws.on('error', reject);
  });
}
await check('malformed WebSocket frames: error replies or a closed socket, never a crash', async () => {
  const { ws, frames } = await rawSocket({ Authorization: `Bearer ${bot.token}` });
  await waitFor(() => frames.length === 1, 'hello');
  ws.send(JSON.stringify({ action: 'ping' })); // no seq
  ws.send(JSON.stringify({ seq: 5 })); // no action
  ws.send(JSON.stringify({ seq: 6, action: 'no_such_action' }));
  ws.send(JSON.stringify({ seq: 7, action: 'ping' }));
  await waitFor(() => frames.length === 5, 'four replies');
  const [noSeq, noAction, badAction, pong] = frames.slice(1).map((f) => JSON.parse(f));
  assert.deepEqual([noSeq.status, noSeq.seq_reply, noSeq.error.id], ['FAIL', undefined, 'api.web_socket_router.bad_seq.app_error']);
  assert.deepEqual([noAction.seq_reply, noAction.error.id], [5, 'api.web_socket_router.no_action.app_error']);
  assert.deepEqual([badAction.seq_reply, badAction.error.id, badAction.error.status_code], [6, 'api.web_socket_router.bad_action.app_error', 500]);
  assert.equal(pong.data.text, 'pong');
  const closed = new Promise((r) => ws.once('close', (code) => r(code)));
  ws.send('this is not json {');
  const code = await closed; // websocket.Decode fails: the server closes the connection
  const { ws: ws2, frames: f2 } = await rawSocket();
  ws2.send(JSON.stringify({ seq: 1, action: 'authentication_challenge', data: { token: 'wrong' } }));
  const code2 = await new Promise((r) => ws2.once('close', (c) => r(c)));
  assert.equal(f2.length, 0); // a bad challenge token: closed, no hello, no reply
  return `not-JSON frame: closed (${code}); bad challenge: closed (${code2})`;
});
await check('bad REST bodies: 400 AppError, and the server still answers', async () => {
  const r = await fetch(`${base}/api/v4/posts`, { method: 'POST', body: 'not json at all', headers: { Authorization: `Bearer ${bot.token}` } });
  assert.equal(r.status, 400);
  assert.equal(r.headers.get('content-type'), 'application/json');
  const j = await r.json();
  assert.equal(j.id, 'api.context.invalid_body_param.app_error');
  assert.equal(j.status_code, 400);
  assert.match(j.request_id, /^[a-z0-9]{26}$/);
  const r2 = await fetch(`${base}/api/v4/posts`, { method: 'POST', body: '{"channel_id": 7}', headers: { Authorization: `Bearer ${bot.token}` } });
  assert.equal(r2.status, 400);
  const r3 = await fetch(`${base}/api/v4/reactions`, { method: 'POST', body: '[1,2', headers: { Authorization: `Bearer ${bot.token}` } });
  assert.equal(r3.status, 400);
  const r4 = await fetch(`${base}/api/v4/files`, { method: 'POST', body: '--x\r\nbroken', headers: { Authorization: `Bearer ${bot.token}`, 'Content-Type': 'multipart/form-data; boundary=x' } });
  assert.equal(r4.status, 400);
  const me = await client.getMe();
  assert.equal(me.id, bot.id);
  const log = (await ctl('GET', '/_test/log')).requests;
  assert.ok(log.some((e) => e.path === '/api/v4/posts' && e.status === 400 && e.body === 'not json at all'));
});

wsc.close();
await srv.stop();
clearTimeout(watchdog);
console.log = realLog;
say(failures ? `${failures} check(s) failed` : 'all checks passed');
process.exit(failures ? 1 : 0);
