#!/usr/bin/env node
/*
A protocol-level Slack test server (stand-in for one Slack workspace in the tests of the chat
bridge): the Web API under /api/<method> and Socket Mode over a WebSocket, as
../shared/spec/slack-protocol.md describes them from Slack's method specs and the official SDKs
(@slack/web-api 8.2.0, @slack/socket-mode 3.1.0, @slack/bolt 5.1.0). State lives in memory. It is
checked against those real packages by tests/node/slack_client.mjs. Points marked [unconfirmed]
follow the spec's guesses where no source says.

Listens on 127.0.0.1 at an ephemeral port and prints "PORT <n>" as the only line of stdout. Exits
when stdin closes. Run: node tests/servers/slack_server.mjs [options]; it loads `ws` from
tests/node/node_modules (npm ci --prefix tests/node), whatever the working directory.

Options
  --port N                listen port (default 0: ephemeral)
  --host H                listen address (default 127.0.0.1)
  --ack-timeout-ms N      an envelope not acknowledged within N ms is redelivered (default 3000)
  --max-retries N         redeliveries after the first delivery (default 3); then it is dropped
  --offline-ttl-ms N      an event waiting for a socket longer than this is dropped (default 300000)
  --ping-ms N             server WebSocket ping interval (default 10000; 0 = never) [unconfirmed]
  --max-connections N     open sockets per app (default 10); one more gets too_many_websockets
  --refresh-ms N          recycle each socket after N ms: "warning" 10 s before (if N > 20 s),
                          then "refresh_requested" and a close 10 s later (default 0 = never)
  --rate-scale F          multiply every rate limit by F (0.1: Tier 3 = 5 per window) (default 1)
  --rate-window-ms N      the window the tier limits count in (default 60000)
  --post-burst N          chat.postMessage bucket size per channel (default 3) [unconfirmed]
  --no-rate-limit         no 429s at all (switchable through the control API as well)
  --no-agents             apps start with the Agents feature off (not_agent_app)
  --mention-in-dm         also send app_mention for mentions in DMs (default off) [unconfirmed]
  --verbose               log to stderr

Web API: POST (or GET) /api/<method>, args form-encoded (objects as JSON strings), JSON
(`application/json; charset=utf-8`; without charset the answer adds warning missing_charset), or
the query string; token in "Authorization: Bearer" or a `token` form/query field (not in JSON).
Answers are HTTP 200 {ok,...}; errors {ok:false,error} (argument errors add
response_metadata.messages ["[ERROR] missing required field: x"]); every answer to a known token
has x-oauth-scopes, and x-accepted-oauth-scopes names the method's scope. No token: not_authed;
unknown: invalid_auth; revoked: token_revoked; an xapp token anywhere but apps.connections.open,
or an xoxb one there: not_allowed_token_type; scope lacking: missing_scope {needed, provided}.
Over a limit (per app and method: Tier 2 20, Tier 3 50, Tier 4 100 per window; chat.postMessage
a token bucket per channel, 1/s with a burst): HTTP 429, Retry-After (s), {ok:false,error:
"ratelimited"}. 429s are not counted against the window.
  Methods (tier): auth.test (4), apps.connections.open (3), bots.info (3), users.info (4),
  users.list (2; paged by cursor, limit <= 1000, deleted users included),
  chat.postMessage (special), chat.update (3), chat.delete (3), chat.startStream (2),
  chat.appendStream (4), chat.stopStream (2), assistant.threads.setStatus (4), reactions.add (3),
  reactions.remove (2), conversations.history / replies / info / open / join (3),
  conversations.create (2), conversations.invite (3), conversations.list (2; paged),
  conversations.members (4), users.conversations (3), files.getUploadURLExternal (4),
  files.completeUploadExternal (4). Others: unknown_method.
Behaviour worth knowing:
  - ts: "seconds.micro", strictly increasing across the workspace. chat.postMessage: text >
    40,000 chars -> msg_too_long; markdown_text > 12,000 -> msg_too_long; markdown_text with text
    or blocks -> markdown_text_conflict; no content -> no_text; channel may be a user id (the bot's
    DM); a public channel the bot is not in -> not_in_channel; private/unknown -> channel_not_found;
    thread_ts naming no message -> invalid_thread_ts [unconfirmed]; a reply's ts threads to its
    parent. chat.update: text > 4,000 -> msg_too_long, others' message -> cant_update_message, a
    stream in progress -> streaming_state_conflict; edits are kept (control API).
  - Streams: startStream (needs thread_ts; recipient_user_id/_team_id outside DMs, else
    missing_recipient_user_id / missing_recipient_team_id) makes a message with streaming_state
    in_progress; appendStream appends markdown_text / chunks' text; stopStream completes it
    (returns message). Another app's stream: message_not_owned_by_app; not streaming:
    message_not_in_streaming_state; stopped via the control API: stopped_by_user. Agents off:
    startStream/appendStream/stopStream/assistant.* answer not_agent_app [unconfirmed].
    Events: `message` at start, `message_changed` at stop, nothing per append [unconfirmed].
  - conversations.history: top-level messages newest first; oldest/latest exclusive unless
    inclusive; limit 100 default, 999 max; cursor "next_ts:<ts>" base64; has_more. Parents carry
    reply_count/reply_users/latest_reply; deleted parents with replies stay as tombstones.
    conversations.replies: the parent first (on every page), then replies oldest first;
    thread_not_found. metadata only with include_all_metadata.
  - Files: getUploadURLExternal -> upload_url (/upload/v1/<id> on this server; raw or multipart
    body; answers "OK - <bytes>"), completeUploadExternal posts a file_share message when given
    channel_id. url_private(_download) serve the bytes to a token with files:read that can see the
    file; anyone else gets HTTP 200 text/html, a sign-in page, as Slack does.
  - Events (Socket Mode, to apps whose bot user is a member and has the scope): message
    (channel_type channel/group/im/mpim; users' posts carry client_msg_id and a rich_text block;
    bots' carry bot_id/app_id/bot_profile, the app's own included), app_mention (own event_id,
    same ts) for "<@BOTUSER>" outside DMs, message_changed, message_deleted, reaction_added /
    reaction_removed. Each envelope goes to one live socket (round robin); unacknowledged within
    the ack timeout it is redelivered with a new envelope_id, retry_attempt+1, retry_reason
    "timeout", the same event_id, up to --max-retries times. With no socket open events wait.
  - Socket: /link/?ticket=<one-use>&app_id=A..; a used or unknown ticket -> HTTP 401
    [unconfirmed]. First frame hello {num_connections, debug_info, connection_info}. Acks
    {"envelope_id"} count only on the socket that got the envelope.

Control API (no auth, JSON in and out, under /_test; errors {"error": "..."} with 400/404):
  GET    /_test/state                 {team, users, apps (with tokens), channels (with members)}
  POST   /_test/users                 {name, real_name?, id?} -> user
  POST   /_test/apps                  {name, scopes?: [..] (default all a bridge needs), agents?,
                                      id?} -> {app_id, bot_id, bot_user_id, bot_token, app_token,
                                      scopes, team_id}
  POST   /_test/tokens                {app_id, scopes: [..]} -> {token}: another xoxb token
  POST   /_test/tokens/revoke         {token} -> later calls answer token_revoked
  POST   /_test/apps/{id}/delivery    {mode?: "normal"|"hold"|"drop", ignore_acks?: bool,
                                      agents?: bool} -> the app's settings; hold queues events,
                                      drop discards them (a gap), normal flushes the queue
  GET    /_test/apps/{id}/envelopes   {envelopes: [{envelope_id, event_id, event_type,
                                      retry_attempt, retry_reason, conn_id, sent_at, acked_at,
                                      outcome: "sent"|"acked"|"timeout"|"dropped"}]}
  POST   /_test/channels              {type: public|private|im|mpim, name?, members: [ids], id?}
                                      -> channel (+ members)
  POST   /_test/channels/{id}/members {user}; DELETE /_test/channels/{id}/members/{user}
  POST   /_test/messages              {user, channel, text, thread_ts?, ts?, client_msg_id?}
                                      -> {ok, channel, ts} (events as a Slack client's post);
                                      ts back-dates a message (no events)
  POST   /_test/messages/edit         {channel, ts, text} -> message_changed
  POST   /_test/messages/delete       {channel, ts} -> message_deleted
  POST   /_test/messages/stop-stream  {channel, ts} (the user pressed stop)
  GET    /_test/messages?channel=C    {messages: [every message, replies and deleted included,
                                      oldest first, with edits [{ts, text}], streaming_state,
                                      appends, reactions, metadata, files, deleted], statuses}
  POST   /_test/reactions             {user, channel, ts, name, remove?: bool}
  POST   /_test/files                 {user, channel, name, content_base64, mimetype?, text?,
                                      thread_ts?} -> {file, ts}: a user's file_share message
  GET    /_test/calls[?method=M]      {calls: [{t, method, http_method, status, ok, error,
                                      ratelimited, app_id, channel}], counts: {M: {calls, ok,
                                      ratelimited}}}; DELETE /_test/calls clears it
  POST   /_test/reset                 clears the call log, rate windows and envelope logs
  GET    /_test/rate; POST /_test/rate {enabled?, scale?, window_ms?, post_burst?,
                                      limits?: {method: n per window}} -> the settings
  GET    /_test/sockets               {connections: [open], history: [all]}: {id, app_id,
                                      opened_at, hello_at, closed_at, close_code, acks}
  POST   /_test/sockets/drop          {app_id?, conn_id?, close_code?} -> {dropped}: destroy
                                      without a close frame, or close with close_code
  POST   /_test/sockets/disconnect    {app_id?, conn_id?, reason: "warning"|"refresh_requested"|
                                      ..., close_after_ms?} -> {sent}
*/
import http from 'node:http';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../node/package.json', import.meta.url));
const { WebSocketServer } = require('ws');

// ---------------------------------------------------------------- options

function parseOptions(argv) {
  const o = { port: 0, host: '127.0.0.1', ackTimeoutMs: 3000, maxRetries: 3, offlineTtlMs: 300000,
    pingMs: 10000, maxConnections: 10, refreshMs: 0, rateScale: 1, rateWindowMs: 60000,
    postBurst: 3, rateLimit: true, agents: true, mentionInDm: false, verbose: false };
  const num = { '--port': 'port', '--ack-timeout-ms': 'ackTimeoutMs', '--max-retries': 'maxRetries',
    '--offline-ttl-ms': 'offlineTtlMs', '--ping-ms': 'pingMs', '--max-connections': 'maxConnections',
    '--refresh-ms': 'refreshMs', '--rate-scale': 'rateScale', '--rate-window-ms': 'rateWindowMs',
    '--post-burst': 'postBurst' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (num[a]) {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < 0) { process.stderr.write(`slack_server: bad value for ${a}\n`); process.exit(2); }
      o[num[a]] = v;
    } else if (a === '--host') o.host = argv[++i];
    else if (a === '--no-rate-limit') o.rateLimit = false;
    else if (a === '--no-agents') o.agents = false;
    else if (a === '--mention-in-dm') o.mentionInDm = true;
    else if (a === '--verbose') o.verbose = true;
    else { process.stderr.write(`slack_server: unknown option ${a}\n`); process.exit(2); }
  }
  return o;
}
const opt = parseOptions(process.argv.slice(2));
const log = (...a) => { if (opt.verbose) process.stderr.write(`slack_server: ${a.join(' ')}\n`); };

// ---------------------------------------------------------------- helpers

const now = () => Date.now();
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
function slackId(prefix, n = 10) {
  const b = crypto.randomBytes(n);
  let s = prefix;
  for (const x of b) s += ALNUM[x % 36];
  return s;
}
const randHex = (n) => crypto.randomBytes(n).toString('hex');

// ts as an integer count of microseconds; strictly increasing for new messages.
let lastTsMicro = 0;
function nextTsMicro() {
  lastTsMicro = Math.max(now() * 1000, lastTsMicro + 1);
  return lastTsMicro;
}
const tsString = (us) => `${Math.floor(us / 1e6)}.${String(us % 1e6).padStart(6, '0')}`;
// A ts argument ("1712345678.123456", "1712345678", "1712345678.5") -> microseconds, or null.
function parseTs(s) {
  if (typeof s === 'number') s = String(s);
  if (typeof s !== 'string' || !/^\d{1,12}(\.\d{1,6})?$/.test(s)) return null;
  const [sec, frac = ''] = s.split('.');
  return Number(sec) * 1e6 + Number(frac.padEnd(6, '0'));
}
const b64 = (s) => Buffer.from(s).toString('base64');
const unb64 = (s) => { try { return Buffer.from(String(s), 'base64').toString('utf8'); } catch { return ''; } };

// An error answered as HTTP 200 {ok:false, error, ...extra}.
class SlackError extends Error {
  constructor(error, extra = {}) { super(error); this.error = error; this.extra = extra; }
}
const fail = (error, extra) => { throw new SlackError(error, extra); };
const missingArg = (name) => fail('invalid_arguments',
  { response_metadata: { messages: [`[ERROR] missing required field: ${name}`] } });
const boolArg = (v) => v === true || v === 'true' || v === '1' || v === 1;
function jsonArg(v, name) {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return v;
  try { return JSON.parse(v); } catch {
    return fail('invalid_arguments', { response_metadata: { messages: [`[ERROR] invalid JSON in field: ${name}`] } });
  }
}

// ---------------------------------------------------------------- state

const team = { id: 'T' + slackId('', 8), name: 'Test Workspace', domain: 'test-workspace' };
const users = new Map();      // id -> {id, name, real_name, is_bot, bot_id?, app_id?, deleted}
const apps = new Map();       // app id -> app
const bots = new Map();       // bot id -> app
const tokens = new Map();     // token -> {token, kind: 'bot'|'app', app, scopes: Set, revoked}
const channels = new Map();   // id -> channel
const files = new Map();      // id -> file
const uploads = new Map();    // upload key -> file id
const tickets = new Map();    // ticket -> {app, expires}
let calls = [];
const rate = { enabled: opt.rateLimit, scale: opt.rateScale, windowMs: opt.rateWindowMs,
  postBurst: opt.postBurst, limits: {} };
const DEFAULT_SCOPES = ['app_mentions:read', 'chat:write', 'channels:history', 'groups:history',
  'im:history', 'mpim:history', 'channels:read', 'groups:read', 'im:read', 'mpim:read',
  'reactions:read', 'reactions:write', 'files:read', 'files:write', 'users:read', 'im:write',
  'channels:join', 'assistant:write', 'channels:manage', 'groups:write'];
const TYPE_INFO = {   // channel type -> event channel_type, scope prefix, id prefix
  public: { ct: 'channel', scope: 'channels', prefix: 'C' },
  private: { ct: 'group', scope: 'groups', prefix: 'C' },
  im: { ct: 'im', scope: 'im', prefix: 'D' },
  mpim: { ct: 'mpim', scope: 'mpim', prefix: 'G' },
};

function makeUser(spec) {
  const id = spec.id || slackId('U');
  if (users.has(id)) throw new ControlError(400, `duplicate user id ${id}`);
  const u = { id, name: spec.name, real_name: spec.real_name || spec.name, is_bot: !!spec.is_bot,
    bot_id: spec.bot_id, app_id: spec.app_id, deleted: false, updated: Math.floor(now() / 1000) };
  users.set(id, u);
  return u;
}

function makeToken(kind, app, scopes) {
  const token = kind === 'app'
    ? `xapp-1-${app.id}-${Date.now()}-${randHex(16)}`
    : `xoxb-${Math.floor(Math.random() * 1e12)}-${Math.floor(Math.random() * 1e12)}-${randHex(12)}`;
  const t = { token, kind, app, scopes: new Set(scopes), revoked: false };
  tokens.set(token, t);
  return t;
}

function makeApp(spec) {
  if (typeof spec.name !== 'string' || !spec.name) throw new ControlError(400, 'name is required');
  const app = { id: spec.id || slackId('A'), bot_id: slackId('B'), name: spec.name,
    scopes: Array.isArray(spec.scopes) ? spec.scopes.map(String) : [...DEFAULT_SCOPES],
    agents: spec.agents === undefined ? opt.agents : !!spec.agents,
    mode: 'normal', ignoreAcks: false, queue: [], inflight: new Map(), envelopes: [], rr: 0 };
  if (apps.has(app.id)) throw new ControlError(400, `duplicate app id ${app.id}`);
  app.user = makeUser({ name: spec.name, is_bot: true, bot_id: app.bot_id, app_id: app.id });
  app.botToken = makeToken('bot', app, app.scopes);
  app.appToken = makeToken('app', app, ['connections:write']);
  apps.set(app.id, app); bots.set(app.bot_id, app);
  return app;
}

function makeChannel(spec) {
  const info = TYPE_INFO[spec.type];
  if (!info) throw new ControlError(400, 'type must be public, private, im or mpim');
  const members = [...new Set((spec.members || []).map(String))];
  for (const m of members) if (!users.has(m)) throw new ControlError(404, `unknown user ${m}`);
  if (spec.type === 'im' && members.length !== 2) throw new ControlError(400, 'an im has two members');
  const id = spec.id || slackId(info.prefix);
  if (channels.has(id)) throw new ControlError(400, `duplicate channel id ${id}`);
  const c = { id, type: spec.type, name: spec.name || (spec.type === 'im' ? id : `${spec.type}-${id.toLowerCase()}`),
    members: new Set(members), created: Math.floor(now() / 1000), archived: false,
    creator: members[0] || '', messages: [], byTs: new Map(), statuses: new Map() };
  if (spec.type === 'mpim' && !spec.name) c.name = 'mpdm-' + members.map((m) => users.get(m).name).join('--') + '-1';
  channels.set(id, c);
  return c;
}

function findIm(a, b) {
  for (const c of channels.values()) if (c.type === 'im' && c.members.has(a) && c.members.has(b)) return c;
  return null;
}

// ---------------------------------------------------------------- rate limits

const TIERS = { 2: 20, 3: 50, 4: 100 };
const windows = new Map();   // key -> [times]
const buckets = new Map();   // key -> {tokens, at}
// Returns 0 when the call may go, else the Retry-After seconds.
function rateCheck(app, method, spec, args) {
  if (!rate.enabled || !app) return 0;
  const t = now();
  if (spec.tier === 'post') {
    const key = `${app.id}|${method}|${args.channel || ''}`;
    const perMs = (60 * rate.scale) / rate.windowMs;            // tokens per ms (1/s by default)
    const cap = Math.max(1, rate.postBurst);
    const b = buckets.get(key) || { tokens: cap, at: t };
    b.tokens = Math.min(cap, b.tokens + (t - b.at) * perMs); b.at = t;
    buckets.set(key, b);
    if (b.tokens < 1) return Math.max(1, Math.ceil((1 - b.tokens) / perMs / 1000));
    b.tokens -= 1;
    return 0;
  }
  const limit = rate.limits[method] ?? Math.max(1, Math.floor(TIERS[spec.tier] * rate.scale));
  const key = `${app.id}|${method}`;
  let w = windows.get(key);
  if (!w) windows.set(key, w = []);
  while (w.length && w[0] <= t - rate.windowMs) w.shift();
  if (w.length >= limit) return Math.max(1, Math.ceil((w[0] + rate.windowMs - t) / 1000));
  w.push(t);
  return 0;
}

// ---------------------------------------------------------------- messages

// Channel as the Web API shows it, to `viewer` (a user id).
function channelJSON(c, viewer) {
  const o = { id: c.id, name: c.name, is_channel: c.type === 'public', is_group: c.type === 'private',
    is_im: c.type === 'im', is_mpim: c.type === 'mpim', is_private: c.type !== 'public',
    created: c.created, is_archived: c.archived, is_general: false, unlinked: 0,
    name_normalized: c.name, is_shared: false, is_org_shared: false, is_ext_shared: false,
    is_pending_ext_shared: false, context_team_id: team.id, creator: c.creator,
    is_member: viewer ? c.members.has(viewer) : false,
    topic: { value: '', creator: '', last_set: 0 }, purpose: { value: '', creator: '', last_set: 0 } };
  if (c.type === 'im') {
    o.user = [...c.members].find((m) => m !== viewer) || [...c.members][0];
    o.is_user_deleted = false; o.is_open = true;
    delete o.name; delete o.name_normalized; delete o.topic; delete o.purpose;
  }
  return o;
}

function richText(text) {
  const elements = [];
  let last = 0;
  for (const m of text.matchAll(/<@([UW][A-Z0-9]+)>/g)) {
    if (m.index > last) elements.push({ type: 'text', text: text.slice(last, m.index) });
    elements.push({ type: 'user', user_id: m[1] });
    last = m.index + m[0].length;
  }
  if (last < text.length) elements.push({ type: 'text', text: text.slice(last) });
  return [{ type: 'rich_text', block_id: randHex(3), elements: [{ type: 'rich_text_section', elements }] }];
}

function botProfile(app) {
  return { id: app.bot_id, app_id: app.id, name: app.name, icons: { image_36: '', image_48: '', image_72: '' },
    deleted: false, updated: app.user.updated, team_id: team.id };
}

function fileJSON(f) {
  const base = `${serverBase}/files-pri/${team.id}-${f.id}`;
  return { id: f.id, created: f.created, timestamp: f.created, name: f.name, title: f.title,
    mimetype: f.mimetype, filetype: f.filetype, pretty_type: f.filetype.toUpperCase(), user: f.user,
    user_team: team.id, editable: false, size: f.data ? f.data.length : 0, mode: 'hosted',
    is_external: false, external_type: '', is_public: false, public_url_shared: false,
    display_as_bot: false, username: '', url_private: `${base}/${encodeURIComponent(f.name)}`,
    url_private_download: `${base}/download/${encodeURIComponent(f.name)}`,
    permalink: `https://${team.domain}.slack.com/files/${f.user}/${f.id}/${encodeURIComponent(f.name)}`,
    permalink_public: `https://slack-files.com/${team.id}-${f.id}-${randHex(5)}`,
    channels: [...f.channels], groups: [], ims: [], has_rich_preview: false, file_access: 'visible' };
}

// A message as the Web API and events show it.
function messageJSON(m, { metadata = true } = {}) {
  if (m.tombstone) {
    const o = { type: 'message', subtype: 'tombstone', text: 'This message was deleted.', user: 'USLACKBOT',
      hidden: true, ts: m.ts, thread_ts: m.ts };
    Object.assign(o, threadFields(m));
    return o;
  }
  const o = { user: m.user, type: 'message', ts: m.ts };
  if (m.subtype) o.subtype = m.subtype;
  if (m.bot_id) { o.bot_id = m.bot_id; o.app_id = m.app_id; }
  o.text = m.text;
  o.team = team.id;
  if (m.client_msg_id) o.client_msg_id = m.client_msg_id;
  if (m.bot_id) o.bot_profile = botProfile(bots.get(m.bot_id));
  if (m.files) { o.files = m.files.map((id) => fileJSON(files.get(id))); o.upload = false; o.display_as_bot = false; }
  o.blocks = m.blocks;
  if (m.edited) o.edited = { ...m.edited };
  if (m.thread_ts) { o.thread_ts = m.thread_ts; if (m.thread_ts !== m.ts) o.parent_user_id = m.parent_user_id; }
  Object.assign(o, threadFields(m));
  if (m.streaming_state) o.streaming_state = m.streaming_state;
  if (metadata && m.metadata) o.metadata = m.metadata;
  const rs = [...m.reactions].filter(([, us]) => us.length).map(([name, us]) => ({ name, users: [...us], count: us.length }));
  if (rs.length) o.reactions = rs;
  return o;
}
function threadFields(m) {
  if (!m.replies || !m.replies.length) return {};
  const live = m.replies.filter((r) => !r.deleted);
  if (!live.length) return {};
  const ru = [...new Set(live.map((r) => r.user))];
  return { reply_count: live.length, reply_users_count: ru.length, latest_reply: live[live.length - 1].ts,
    reply_users: ru.slice(0, 5), is_locked: false, subscribed: false };
}

function insertMessage(c, m) {
  const arr = c.messages;
  let i = arr.length;
  while (i > 0 && arr[i - 1].key > m.key) i--;
  arr.splice(i, 0, m);
  c.byTs.set(m.ts, m);
}

// Creates a message in channel c by user u (a human or a bot user); fires its events unless quiet.
function storeMessage(c, u, fields, { quiet = false, tsMicro } = {}) {
  const key = tsMicro ?? nextTsMicro();
  const ts = tsString(key);
  if (c.byTs.has(ts)) throw new SlackError('invalid_ts');
  const m = { key, ts, channel: c.id, user: u.id, text: fields.text ?? '', blocks: fields.blocks ?? [],
    reactions: new Map(), edits: [], appends: [], deleted: false, replies: [] };
  const app = u.is_bot ? apps.get(u.app_id) : null;
  if (app) { m.bot_id = app.bot_id; m.app_id = app.id; } else m.client_msg_id = fields.client_msg_id || crypto.randomUUID();
  if (fields.subtype) m.subtype = fields.subtype;
  if (fields.files) m.files = fields.files;
  if (fields.metadata) m.metadata = fields.metadata;
  if (fields.streaming_state) m.streaming_state = fields.streaming_state;
  if (fields.parent) {
    m.thread_ts = fields.parent.ts; m.parent_user_id = fields.parent.user;
    fields.parent.thread_ts = fields.parent.ts;
    fields.parent.replies.push(m);
    c.statuses.delete(fields.parent.ts);
  }
  insertMessage(c, m);
  if (!quiet) emitMessage(c, m);
  return m;
}

// The thread parent a thread_ts names (a reply's ts names its parent), or null.
function threadParent(c, ts) {
  const m = c.byTs.get(String(ts));
  if (!m) return null;
  if (m.thread_ts && m.thread_ts !== m.ts) return c.byTs.get(m.thread_ts) || null;
  return m;
}

function editMessage(c, m, byUser, text, blocks) {
  const previous = messageJSON(m);
  const editTs = tsString(nextTsMicro());
  m.edits.push({ ts: editTs, text });
  m.text = text;
  m.blocks = blocks ?? (m.bot_id ? [] : richText(text));
  m.edited = { user: byUser, ts: editTs };
  emitChanged(c, m, previous);
  return m;
}

function deleteMessage(c, m) {
  const previous = messageJSON(m);
  m.deleted = true;
  if (m.replies.some((r) => !r.deleted) && !(m.thread_ts && m.thread_ts !== m.ts)) m.tombstone = true;
  else c.byTs.delete(m.ts);
  const evTs = tsString(nextTsMicro());
  emitToMembers(c, 'message', () => ({ type: 'message', subtype: 'message_deleted', hidden: true,
    deleted_ts: m.ts, channel: c.id, previous_message: previous, event_ts: evTs, ts: evTs,
    channel_type: TYPE_INFO[c.type].ct }));
}

function setReaction(c, m, userId, name, add) {
  const us = m.reactions.get(name) || [];
  if (add) {
    if (us.includes(userId)) fail('already_reacted');
    us.push(userId); m.reactions.set(name, us);
  } else {
    if (!us.includes(userId)) fail('no_reaction');
    us.splice(us.indexOf(userId), 1);
    if (!us.length) m.reactions.delete(name);
  }
  const evTs = tsString(nextTsMicro());
  emitToMembers(c, 'reaction', () => ({ type: add ? 'reaction_added' : 'reaction_removed', user: userId,
    reaction: name, item: { type: 'message', channel: c.id, ts: m.ts }, item_user: m.user, event_ts: evTs }));
}

// ---------------------------------------------------------------- events and Socket Mode delivery

function appHasScope(app, scope) { return app.botToken.scopes.has(scope); }

// Sends an event (built per app by make) to every app whose bot user is in c and has the scope.
function emitToMembers(c, kind, make) {
  const scope = kind === 'message' ? `${TYPE_INFO[c.type].scope}:history`
    : kind === 'mention' ? 'app_mentions:read' : 'reactions:read';
  for (const app of apps.values()) {
    if (!c.members.has(app.user.id) || !appHasScope(app, scope)) continue;
    const ev = make(app);
    if (ev) enqueueEvent(app, ev);
  }
}

function emitMessage(c, m) {
  const ct = TYPE_INFO[c.type].ct;
  emitToMembers(c, 'message', () => ({ ...messageJSON(m, { metadata: false }), channel: c.id, event_ts: m.ts, channel_type: ct }));
  if (c.type === 'im' && !opt.mentionInDm) return;
  emitToMembers(c, 'mention', (app) => {
    if (m.user === app.user.id || !m.text.includes(`<@${app.user.id}>`)) return null;
    const o = { type: 'app_mention', user: m.user, text: m.text, ts: m.ts };
    if (m.client_msg_id) o.client_msg_id = m.client_msg_id;
    if (m.bot_id) { o.bot_id = m.bot_id; o.app_id = m.app_id; }
    Object.assign(o, { team: team.id, blocks: m.blocks, channel: c.id, event_ts: m.ts });
    if (m.thread_ts) { o.thread_ts = m.thread_ts; if (m.thread_ts !== m.ts) o.parent_user_id = m.parent_user_id; }
    if (m.files) o.files = m.files.map((id) => fileJSON(files.get(id)));
    return o;
  });
}

function emitChanged(c, m, previous) {
  const evTs = tsString(nextTsMicro());
  emitToMembers(c, 'message', () => ({ type: 'message', subtype: 'message_changed', message: messageJSON(m, { metadata: false }),
    previous_message: previous, channel: c.id, hidden: true, ts: evTs, event_ts: evTs,
    channel_type: TYPE_INFO[c.type].ct }));
}

function enqueueEvent(app, event) {
  if (app.mode === 'drop') { log('dropped (mode drop)', event.type); return; }
  const t = now();
  const body = { token: 'verification-token', team_id: team.id, context_team_id: team.id,
    context_enterprise_id: null, api_app_id: app.id, event, type: 'event_callback',
    event_id: slackId('Ev', 10), event_time: Math.floor(t / 1000),
    authorizations: [{ enterprise_id: null, team_id: team.id, user_id: app.user.id, is_bot: true,
      is_enterprise_install: false }],
    is_ext_shared_channel: false, event_context: `4-${b64(JSON.stringify({ c: event.channel || '' }))}` };
  deliver(app, { body, attempt: 0, reason: '', created: t });
}

const liveConns = (app) => [...sockets].filter((s) => s.app === app && s.helloAt && !s.closedAt);

function deliver(app, d) {
  const conns = liveConns(app);
  if (app.mode === 'hold' || !conns.length) { app.queue.push(d); return; }
  const s = conns[app.rr++ % conns.length];
  const envelopeId = crypto.randomUUID();
  const rec = { envelope_id: envelopeId, event_id: d.body.event_id, event_type: d.body.event.type,
    retry_attempt: d.attempt, retry_reason: d.reason, conn_id: s.id, sent_at: now(), acked_at: null, outcome: 'sent' };
  app.envelopes.push(rec);
  const frame = { envelope_id: envelopeId, payload: d.body, type: 'events_api',
    accepts_response_payload: false, retry_attempt: d.attempt, retry_reason: d.reason };
  const entry = { d, rec, conn: s, timer: null };
  entry.timer = setTimeout(() => {
    app.inflight.delete(envelopeId);
    rec.outcome = 'timeout';
    if (d.attempt >= opt.maxRetries) { rec.outcome = 'dropped'; log('dropped after retries', d.body.event_id); return; }
    deliver(app, { ...d, attempt: d.attempt + 1, reason: 'timeout' });
  }, opt.ackTimeoutMs);
  app.inflight.set(envelopeId, entry);
  s.ws.send(JSON.stringify(frame));
}

function flushQueue(app) {
  if (app.mode === 'hold' || !liveConns(app).length) return;
  const q = app.queue; app.queue = [];
  for (const d of q) {
    if (now() - d.created > opt.offlineTtlMs) { log('dropped (offline too long)', d.body.event_id); continue; }
    deliver(app, d);
  }
}

function onAck(s, envelopeId) {
  const app = s.app;
  const entry = app.inflight.get(envelopeId);
  if (!entry) { s.strayAcks++; return; }
  if (entry.conn !== s || app.ignoreAcks) { s.strayAcks++; return; }
  clearTimeout(entry.timer);
  app.inflight.delete(envelopeId);
  entry.rec.outcome = 'acked'; entry.rec.acked_at = now();
  s.acks++;
}

// ---------------------------------------------------------------- Web API methods

// Each: tier (2|3|4|'post'), scope (a string, a function of args, or null), token ('bot'|'app').
const methods = {};
const method = (name, tier, scope, handler, token = 'bot') => { methods[name] = { tier, scope, handler, token }; };

function needChannel(ctx, id, { member = true } = {}) {
  if (!id) missingArg('channel');
  const c = channels.get(String(id));
  const me = ctx.app.user.id;
  if (!c || (c.type !== 'public' && !c.members.has(me))) fail('channel_not_found');
  if (member && !c.members.has(me)) fail('not_in_channel');
  return c;
}
const scopeFor = (suffix) => (args) => {
  const c = channels.get(String(args.channel || args.channel_id || ''));
  return `${TYPE_INFO[c ? c.type : 'public'].scope}:${suffix}`;
};
function needMessage(c, ts) {
  if (!ts) missingArg('ts');
  const m = c.byTs.get(String(ts));
  if (!m || m.deleted) fail('message_not_found');
  return m;
}
function checkContent(args, { maxText }) {
  const text = args.text === undefined ? undefined : String(args.text);
  const blocks = jsonArg(args.blocks, 'blocks');
  const md = args.markdown_text === undefined ? undefined : String(args.markdown_text);
  if (md !== undefined && (text !== undefined || blocks !== undefined)) fail('markdown_text_conflict');
  if (md !== undefined && md.length > 12000) fail('msg_too_long');
  if (text !== undefined && text.length > maxText) fail('msg_too_long');
  if (blocks !== undefined && (!Array.isArray(blocks) || blocks.length > 50)) fail('invalid_blocks');
  if (!text && !md && !(blocks && blocks.length)) fail('no_text');
  return { text: md ?? text ?? '', blocks: md !== undefined ? [{ type: 'markdown', text: md }] : (blocks || []) };
}
function postTarget(ctx, channel) {
  if (!channel) missingArg('channel');
  if (/^[UW]/.test(String(channel))) {
    const u = users.get(String(channel));
    if (!u) fail('channel_not_found');
    return findIm(ctx.app.user.id, u.id) || makeChannel({ type: 'im', members: [ctx.app.user.id, u.id] });
  }
  const c = needChannel(ctx, channel);
  if (c.archived) fail('is_archived');
  return c;
}
function needAgents(ctx) { if (!ctx.app.agents) fail('not_agent_app'); }

method('auth.test', 4, null, (ctx) => ({ url: `https://${team.domain}.slack.com/`, team: team.name,
  user: ctx.app.user.name, team_id: team.id, user_id: ctx.app.user.id, bot_id: ctx.app.bot_id,
  is_enterprise_install: false }));

method('apps.connections.open', 3, 'connections:write', (ctx) => {
  const ticket = crypto.randomUUID();
  tickets.set(ticket, { app: ctx.app, expires: now() + 60000 });
  const host = ctx.req.headers.host || `${opt.host}:${server.address().port}`;
  return { url: `ws://${host}/link/?ticket=${ticket}&app_id=${ctx.app.id}` };
}, 'app');

method('bots.info', 3, 'users:read', (ctx, a) => {
  if (!a.bot) missingArg('bot');
  const app = bots.get(String(a.bot));
  if (!app) fail('bot_not_found');
  return { bot: { id: app.bot_id, deleted: false, name: app.name, updated: app.user.updated, app_id: app.id,
    user_id: app.user.id, icons: { image_36: '', image_48: '', image_72: '' } } };
});

function userJSON(u) {
  const o = { id: u.id, team_id: team.id, name: u.name, deleted: u.deleted, color: '9f69e7',
    real_name: u.real_name, tz: 'Europe/Berlin', tz_label: 'Central European Time', tz_offset: 3600,
    profile: { real_name: u.real_name, display_name: u.name, real_name_normalized: u.real_name,
      display_name_normalized: u.name, team: team.id }, is_admin: false, is_owner: false,
    is_primary_owner: false, is_restricted: false, is_ultra_restricted: false, is_bot: u.is_bot,
    is_app_user: false, updated: u.updated };
  if (u.is_bot) { o.profile.bot_id = u.bot_id; o.profile.api_app_id = u.app_id; }
  return o;
}

method('users.info', 4, 'users:read', (ctx, a) => {
  if (!a.user) missingArg('user');
  const u = users.get(String(a.user));
  if (!u) fail('user_not_found');
  return { user: userJSON(u) };
});

method('users.list', 2, 'users:read', (ctx, a) => {
  if (a.limit !== undefined && a.limit !== '' && Number(a.limit) > 1000) fail('invalid_limit');
  const list = [...users.values()].sort((x, y) => (x.id < y.id ? -1 : 1));
  const p = page(list, a, (u) => u.id);
  return { members: p.items.map(userJSON), cache_ts: Math.floor(now() / 1000),
    response_metadata: { next_cursor: p.next_cursor } };
});

method('chat.postMessage', 'post', 'chat:write', (ctx, a) => {
  const c = postTarget(ctx, a.channel);
  const content = checkContent(a, { maxText: 40000 });
  let parent = null;
  if (a.thread_ts !== undefined && a.thread_ts !== '') {
    parent = threadParent(c, a.thread_ts);
    if (!parent || parent.deleted) fail('invalid_thread_ts');
  }
  const metadata = jsonArg(a.metadata, 'metadata');
  if (metadata !== undefined && (typeof metadata !== 'object' || !metadata.event_type)) fail('invalid_metadata_format');
  const m = storeMessage(c, ctx.app.user, { ...content, parent, metadata });
  return { channel: c.id, ts: m.ts, message: messageJSON(m) };
});

method('chat.update', 3, 'chat:write', (ctx, a) => {
  const c = needChannel(ctx, a.channel);
  const m = needMessage(c, a.ts);
  if (m.user !== ctx.app.user.id) fail('cant_update_message');
  if (m.streaming_state === 'in_progress') fail('streaming_state_conflict');
  const content = checkContent(a, { maxText: 4000 });
  editMessage(c, m, ctx.app.user.id, content.text, content.blocks);
  return { channel: c.id, ts: m.ts, text: m.text, message: messageJSON(m) };
});

method('chat.delete', 3, 'chat:write', (ctx, a) => {
  const c = needChannel(ctx, a.channel);
  const m = needMessage(c, a.ts);
  if (m.user !== ctx.app.user.id) fail('cant_delete_message');
  deleteMessage(c, m);
  return { channel: c.id, ts: m.ts };
});

function streamText(a) {
  let text = a.markdown_text === undefined ? '' : String(a.markdown_text);
  const chunks = jsonArg(a.chunks, 'chunks');
  if (chunks !== undefined) {
    if (!Array.isArray(chunks)) fail('invalid_chunks');
    for (const ch of chunks) if (ch && ch.type === 'markdown_text') text += String(ch.text ?? '');
  }
  if (text.length > 12000) fail('msg_too_long');
  return { text, chunks: chunks || [] };
}
function needStream(ctx, a) {
  needAgents(ctx);
  const c = needChannel(ctx, a.channel);
  const m = needMessage(c, a.ts);
  if (m.app_id !== ctx.app.id) fail('message_not_owned_by_app');
  if (m.streaming_state === 'stopped') fail('stopped_by_user');
  if (m.streaming_state !== 'in_progress') fail('message_not_in_streaming_state');
  return { c, m };
}

method('chat.startStream', 2, 'chat:write', (ctx, a) => {
  needAgents(ctx);
  const c = needChannel(ctx, a.channel);
  if (!a.thread_ts) missingArg('thread_ts');
  const parent = threadParent(c, a.thread_ts);
  if (!parent || parent.deleted) fail('invalid_thread_ts');
  if (c.type !== 'im') {
    if (!a.recipient_user_id) fail('missing_recipient_user_id');
    if (!a.recipient_team_id) fail('missing_recipient_team_id');
  }
  const { text, chunks } = streamText(a);
  const m = storeMessage(c, ctx.app.user, { text, blocks: [], parent, streaming_state: 'in_progress' });
  m.appends.push({ t: now(), text, chunks });
  return { channel: c.id, ts: m.ts };
});

method('chat.appendStream', 4, 'chat:write', (ctx, a) => {
  const { c, m } = needStream(ctx, a);
  const { text, chunks } = streamText(a);
  if (!text && !chunks.length) fail('no_text');
  m.text += text;
  m.appends.push({ t: now(), text, chunks });
  return { channel: c.id, ts: m.ts };
});

method('chat.stopStream', 2, 'chat:write', (ctx, a) => {
  const { c, m } = needStream(ctx, a);
  const previous = messageJSON(m);
  const { text, chunks } = streamText(a);
  m.text += text;
  m.appends.push({ t: now(), text, chunks, stop: true });
  const blocks = jsonArg(a.blocks, 'blocks');
  if (Array.isArray(blocks)) m.blocks = blocks;
  const metadata = jsonArg(a.metadata, 'metadata');
  if (metadata) m.metadata = metadata;
  m.streaming_state = 'completed';
  emitChanged(c, m, previous);
  return { channel: c.id, ts: m.ts, message: messageJSON(m) };
});

method('assistant.threads.setStatus', 4, 'chat:write', (ctx, a) => {
  needAgents(ctx);
  if (!a.channel_id) missingArg('channel_id');
  if (!a.thread_ts) missingArg('thread_ts');
  if (a.status === undefined) missingArg('status');
  const c = needChannel(ctx, a.channel_id);
  if (!threadParent(c, a.thread_ts)) fail('invalid_thread_ts');
  const loading = jsonArg(a.loading_messages, 'loading_messages');
  if (loading !== undefined && (!Array.isArray(loading) || loading.length > 10)) fail('invalid_arguments');
  if (String(a.status) === '') c.statuses.delete(String(a.thread_ts));
  else c.statuses.set(String(a.thread_ts), { status: String(a.status), loading_messages: loading || [], t: now() });
  return {};
});

function reactionArgs(ctx, a) {
  const c = needChannel(ctx, a.channel);
  if (!a.timestamp) missingArg('timestamp');
  if (!a.name) missingArg('name');
  const m = c.byTs.get(String(a.timestamp));
  if (!m || m.deleted) fail('message_not_found');
  const name = String(a.name).replace(/^:|:$/g, '');
  if (!/^[a-z0-9_+\-']+(::skin-tone-[2-6])?$/.test(name)) fail('invalid_name');
  return { c, m, name };
}
method('reactions.add', 3, 'reactions:write', (ctx, a) => {
  const { c, m, name } = reactionArgs(ctx, a);
  if (!m.reactions.has(name) && m.reactions.size >= 50) fail('too_many_reactions');
  setReaction(c, m, ctx.app.user.id, name, true);
  return {};
});
method('reactions.remove', 2, 'reactions:write', (ctx, a) => {
  const { c, m, name } = reactionArgs(ctx, a);
  setReaction(c, m, ctx.app.user.id, name, false);
  return {};
});

// Paging of a list already filtered and ordered; the cursor names the key of the next item.
function page(list, a, keyOf) {
  let limit = a.limit === undefined || a.limit === '' ? 100 : Number(a.limit);
  if (!Number.isFinite(limit) || limit < 1) limit = 100;
  limit = Math.min(999, Math.floor(limit));
  let start = 0;
  if (a.cursor) {
    const m = /^next_ts:(.+)$/.exec(unb64(a.cursor));
    if (!m) fail('invalid_cursor');
    start = list.findIndex((x) => keyOf(x) === m[1]);
    if (start < 0) start = list.length;
  }
  const items = list.slice(start, start + limit);
  const next = list[start + limit];
  return { items, has_more: !!next, next_cursor: next ? b64(`next_ts:${keyOf(next)}`) : '' };
}
function tsRange(a) {
  const bad = (name) => fail('invalid_ts_' + name);
  const oldest = a.oldest === undefined || a.oldest === '' ? 0 : parseTs(a.oldest);
  const latest = a.latest === undefined || a.latest === '' ? Infinity : parseTs(a.latest);
  if (oldest === null) bad('oldest');
  if (latest === null) bad('latest');
  const inc = boolArg(a.inclusive);
  return (k) => (inc ? k >= oldest && k <= latest : k > oldest && k < latest);
}

method('conversations.history', 3, scopeFor('history'), (ctx, a) => {
  const c = needChannel(ctx, a.channel);
  const inRange = tsRange(a);
  const list = c.messages.filter((m) => (!m.deleted || m.tombstone) && !(m.thread_ts && m.thread_ts !== m.ts)
    && inRange(m.key)).reverse();
  const p = page(list, a, (m) => m.ts);
  const meta = boolArg(a.include_all_metadata);
  return { messages: p.items.map((m) => messageJSON(m, { metadata: meta })), has_more: p.has_more,
    pin_count: 0, channel_actions_ts: null, channel_actions_count: 0,
    response_metadata: { next_cursor: p.next_cursor } };
});

method('conversations.replies', 3, scopeFor('history'), (ctx, a) => {
  const c = needChannel(ctx, a.channel);
  if (!a.ts) missingArg('ts');
  const parent = threadParent(c, a.ts);
  if (!parent || (parent.deleted && !parent.tombstone)) fail('thread_not_found');
  const inRange = tsRange(a);
  const replies = parent.replies.filter((r) => !r.deleted && inRange(r.key));
  const p = page(replies, a, (m) => m.ts);
  const meta = boolArg(a.include_all_metadata);
  return { messages: [parent, ...p.items].map((m) => messageJSON(m, { metadata: meta })), has_more: p.has_more,
    response_metadata: { next_cursor: p.next_cursor } };
});

method('conversations.info', 3, scopeFor('read'), (ctx, a) => {
  const c = needChannel(ctx, a.channel, { member: false });
  const o = channelJSON(c, ctx.app.user.id);
  if (boolArg(a.include_num_members)) o.num_members = c.members.size;
  return { channel: o };
});

method('conversations.open', 3, (a) => (String(a.users || '').includes(',') ? 'mpim:write' : 'im:write'), (ctx, a) => {
  if (a.channel) {
    const c = needChannel(ctx, a.channel);
    return { no_op: true, already_open: true, channel: { id: c.id } };
  }
  if (!a.users) fail('users_list_not_supplied');
  const ids = String(a.users).split(',').map((s) => s.trim()).filter(Boolean);
  for (const id of ids) if (!users.has(id)) fail('user_not_found');
  const me = ctx.app.user.id;
  if (ids.length === 1) {
    const c = findIm(me, ids[0]);
    if (c) return { no_op: true, already_open: true, channel: { id: c.id } };
    return { channel: { id: makeChannel({ type: 'im', members: [me, ids[0]] }).id } };
  }
  const want = new Set([me, ...ids]);
  for (const c of channels.values()) {
    if (c.type === 'mpim' && c.members.size === want.size && [...want].every((x) => c.members.has(x))) {
      return { no_op: true, already_open: true, channel: { id: c.id } };
    }
  }
  return { channel: { id: makeChannel({ type: 'mpim', members: [...want] }).id } };
});

method('conversations.join', 3, 'channels:join', (ctx, a) => {
  const c = needChannel(ctx, a.channel, { member: false });
  if (c.type !== 'public') fail('method_not_supported_for_channel_type');
  const already = c.members.has(ctx.app.user.id);
  c.members.add(ctx.app.user.id);
  return { channel: channelJSON(c, ctx.app.user.id), ...(already ? { warning: 'already_in_channel' } : {}) };
});

// Channel names as Slack takes them: lower-case letters, digits, '-' and '_' (no spaces or
// periods), at most 80 characters, not only punctuation.
function checkChannelName(name) {
  if (name === undefined || name === '') fail('invalid_name_required');
  name = String(name);
  if (name.length > 80) fail('invalid_name_maxlength');
  if (!/^[a-z0-9_\-\u00C0-\uFFFF]+$/.test(name)) fail('invalid_name_specials');
  if (/^[_\-]+$/.test(name)) fail('invalid_name_punctuation');
  return name;
}
const manageScope = (a) => {
  const c = channels.get(String(a.channel || ''));
  return c && c.type === 'private' ? 'groups:write' : 'channels:manage';
};

method('conversations.create', 2, (a) => (boolArg(a.is_private) ? 'groups:write' : 'channels:manage'), (ctx, a) => {
  const name = checkChannelName(a.name);
  if ([...channels.values()].some((c) => c.name === name)) fail('name_taken');
  const c = makeChannel({ type: boolArg(a.is_private) ? 'private' : 'public', name, members: [ctx.app.user.id] });
  return { channel: channelJSON(c, ctx.app.user.id) };
});

method('conversations.invite', 3, manageScope, (ctx, a) => {
  const c = needChannel(ctx, a.channel, { member: false });
  if (c.type === 'im' || c.type === 'mpim') fail('method_not_supported_for_channel_type');
  if (!c.members.has(ctx.app.user.id)) fail('not_in_channel');
  if (c.archived) fail('is_archived');
  const ids = String(a.users || '').split(',').map((x) => x.trim()).filter(Boolean);
  if (!ids.length) fail('no_user');
  if (ids.length > 1000) fail('too_many_users');
  for (const id of ids) {
    if (!users.has(id) || users.get(id).deleted) fail('user_not_found');
    if (id === ctx.app.user.id) fail('cant_invite_self');
  }
  if (ids.every((id) => c.members.has(id))) fail('already_in_channel');
  for (const id of ids) c.members.add(id);
  return { channel: channelJSON(c, ctx.app.user.id) };
});

method('conversations.list', 2, (a) => {
  const t = String(a.types || 'public_channel').split(',')[0].trim();
  return { public_channel: 'channels:read', private_channel: 'groups:read', im: 'im:read', mpim: 'mpim:read' }[t] || 'channels:read';
}, (ctx, a) => {
  if (a.limit !== undefined && a.limit !== '' && Number(a.limit) > 1000) fail('invalid_limit');
  const map = { public_channel: 'public', private_channel: 'private', im: 'im', mpim: 'mpim' };
  const types = String(a.types || 'public_channel').split(',').map((x) => map[x.trim()]).filter(Boolean);
  const me = ctx.app.user.id;
  const list = [...channels.values()].filter((c) => types.includes(c.type)
    && (c.type === 'public' || c.members.has(me))
    && !(boolArg(a.exclude_archived) && c.archived)
    && ctx.token.scopes.has(`${TYPE_INFO[c.type].scope}:read`));
  const p = page(list, a, (c) => c.id);
  return { channels: p.items.map((c) => channelJSON(c, me)), response_metadata: { next_cursor: p.next_cursor } };
});

method('conversations.members', 4, scopeFor('read'), (ctx, a) => {
  const c = needChannel(ctx, a.channel, { member: false });
  const p = page([...c.members], a, (u) => u);
  return { members: p.items, response_metadata: { next_cursor: p.next_cursor } };
});

method('users.conversations', 3, (a) => {
  const t = String(a.types || 'public_channel').split(',')[0].trim();
  return { public_channel: 'channels:read', private_channel: 'groups:read', im: 'im:read', mpim: 'mpim:read' }[t] || 'channels:read';
}, (ctx, a) => {
  const map = { public_channel: 'public', private_channel: 'private', im: 'im', mpim: 'mpim' };
  const types = String(a.types || 'public_channel').split(',').map((s) => map[s.trim()]).filter(Boolean);
  const who = a.user ? String(a.user) : ctx.app.user.id;
  const list = [...channels.values()].filter((c) => types.includes(c.type) && c.members.has(who)
    && !(boolArg(a.exclude_archived) && c.archived)
    && ctx.token.scopes.has(`${TYPE_INFO[c.type].scope}:read`));
  const p = page(list, a, (c) => c.id);
  return { channels: p.items.map((c) => channelJSON(c, ctx.app.user.id)), response_metadata: { next_cursor: p.next_cursor } };
});

method('files.getUploadURLExternal', 4, 'files:write', (ctx, a) => {
  if (!a.filename) missingArg('filename');
  if (a.length === undefined || a.length === '') missingArg('length');
  const length = Number(a.length);
  if (!Number.isInteger(length) || length < 1) fail('invalid_arguments', { response_metadata: { messages: ['[ERROR] invalid length'] } });
  const f = { id: slackId('F'), name: String(a.filename), title: String(a.filename), user: ctx.app.user.id,
    created: Math.floor(now() / 1000), declaredLength: length, data: null, completed: false,
    channels: new Set(), mimetype: mimeOf(String(a.filename)), filetype: extOf(String(a.filename)) };
  files.set(f.id, f);
  const key = randHex(16);
  uploads.set(key, f.id);
  return { upload_url: `${serverBase}/upload/v1/${key}`, file_id: f.id };
});

method('files.completeUploadExternal', 4, 'files:write', (ctx, a) => {
  const list = jsonArg(a.files, 'files');
  if (!Array.isArray(list) || !list.length) missingArg('files');
  const fs = list.map((x) => {
    const f = files.get(String(x && x.id));
    if (!f || f.user !== ctx.app.user.id || f.completed) fail('file_not_found');
    if (!f.data) fail('file_upload_not_found');
    return [f, x];
  });
  let c = null;
  if (a.channel_id) c = postTarget(ctx, a.channel_id);
  let parent = null;
  if (c && a.thread_ts) { parent = threadParent(c, a.thread_ts); if (!parent) fail('invalid_thread_ts'); }
  for (const [f, x] of fs) { f.completed = true; if (x.title) f.title = String(x.title); if (c) f.channels.add(c.id); }
  if (c) {
    const text = a.initial_comment ? String(a.initial_comment) : '';
    storeMessage(c, ctx.app.user, { text, blocks: text ? richText(text) : [], subtype: 'file_share',
      files: fs.map(([f]) => f.id), parent });
  }
  return { files: fs.map(([f]) => ({ id: f.id, title: f.title })) };
});

const MIME = { txt: 'text/plain', md: 'text/markdown', json: 'application/json', png: 'image/png',
  jpg: 'image/jpeg', pdf: 'application/pdf', csv: 'text/csv', html: 'text/html', zip: 'application/zip' };
function extOf(name) { const m = /\.([A-Za-z0-9]+)$/.exec(name); return m ? m[1].toLowerCase() : 'binary'; }
function mimeOf(name) { return MIME[extOf(name)] || 'application/octet-stream'; }

// ---------------------------------------------------------------- HTTP plumbing

let serverBase = '';

function readBody(req, limit) {
  return new Promise((resolve) => {
    const chunks = []; let size = 0; let over = false;
    req.on('data', (c) => { size += c.length; if (size > limit) over = true; else chunks.push(c); });
    req.on('end', () => resolve({ body: Buffer.concat(chunks), over }));
    req.on('error', () => resolve({ body: Buffer.concat(chunks), over, error: true }));
  });
}

function writeResponse(res, status, headers, body) {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

// Parses the body of an API call: {args, json: bool, warning?} or throws SlackError.
function parseArgs(req, url, body) {
  const args = Object.fromEntries(url.searchParams);
  const ct = String(req.headers['content-type'] || '').toLowerCase();
  let json = false, warning;
  if (body.length && ct.startsWith('application/json')) {
    json = true;
    let o;
    try { o = JSON.parse(body.toString('utf8')); } catch { fail('invalid_json'); }
    if (!o || typeof o !== 'object' || Array.isArray(o)) fail('invalid_json');
    delete o.token;                       // JSON bodies carry the token only in the header
    Object.assign(args, o);
    if (!/charset=utf-8/.test(ct)) warning = 'missing_charset';
  } else if (body.length && ct.startsWith('multipart/form-data')) {
    for (const p of parseMultipart(body, ct)) if (!p.filename) args[p.name] = p.data.toString('utf8');
  } else if (body.length) {
    for (const [k, v] of new URLSearchParams(body.toString('utf8'))) args[k] = v;
  }
  return { args, json, warning };
}

function parseMultipart(body, ct) {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(ct);
  if (!m) return [];
  const delim = Buffer.from('--' + (m[1] || m[2]).trim());
  const parts = [];
  let at = body.indexOf(delim);
  while (at >= 0) {
    const start = at + delim.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(delim, start);
    if (next < 0) break;
    const part = body.subarray(start + 2, next - 2);     // skip CRLF after delim, before next
    const hEnd = part.indexOf('\r\n\r\n');
    if (hEnd >= 0) {
      const head = part.subarray(0, hEnd).toString('utf8');
      const name = (/name="([^"]*)"/i.exec(head) || [])[1] || '';
      const filename = (/filename="([^"]*)"/i.exec(head) || [])[1];
      parts.push({ name, filename, data: part.subarray(hEnd + 4) });
    }
    at = next;
  }
  return parts;
}

function tokenFrom(req, args) {
  const h = String(req.headers.authorization || '');
  const m = /^Bearer\s+(\S+)$/i.exec(h);
  if (m) return m[1];
  return args.token ? String(args.token) : '';
}

function resolveScope(spec, args) {
  return typeof spec.scope === 'function' ? spec.scope(args) : spec.scope;
}

// Answers one Web API call; returns {status, headers, body, logFields}.
async function apiCall(req, url, name, body) {
  const headers = { 'Content-Type': 'application/json; charset=utf-8', 'x-slack-req-id': randHex(16),
    'Access-Control-Allow-Origin': '*' };
  const entry = { t: performance.timeOrigin + performance.now(), method: name, http_method: req.method,
    status: 200, ok: false, error: null, ratelimited: false, app_id: null, channel: null };
  calls.push(entry);
  const answer = (obj, status = 200) => {
    entry.status = status; entry.ok = !!obj.ok; entry.error = obj.error || null;
    return { status, headers, body: JSON.stringify(obj) };
  };
  let parsed;
  try { parsed = parseArgs(req, url, body); } catch (e) { return answer({ ok: false, error: e.error }); }
  const { args } = parsed;
  entry.channel = args.channel || args.channel_id || null;
  const spec = methods[name];
  const tokenStr = tokenFrom(req, parsed.json ? Object.fromEntries(url.searchParams) : args);
  const tok = tokenStr ? tokens.get(tokenStr) : null;
  if (tok) { headers['x-oauth-scopes'] = [...tok.scopes].join(','); entry.app_id = tok.app.id; }
  if (!spec) return answer({ ok: false, error: 'unknown_method', req_method: name });
  if (!tokenStr) return answer({ ok: false, error: 'not_authed' });
  if (!tok) return answer({ ok: false, error: 'invalid_auth' });
  if (tok.revoked) return answer({ ok: false, error: 'token_revoked' });
  if (tok.kind !== spec.token) return answer({ ok: false, error: 'not_allowed_token_type' });
  const needed = resolveScope(spec, args);
  if (needed) {
    headers['x-accepted-oauth-scopes'] = needed;
    if (!tok.scopes.has(needed)) {
      return answer({ ok: false, error: 'missing_scope', needed, provided: [...tok.scopes].join(',') });
    }
  }
  const retryAfter = rateCheck(tok.app, name, spec, args);
  if (retryAfter) {
    entry.ratelimited = true;
    headers['Retry-After'] = String(retryAfter);
    return answer({ ok: false, error: 'ratelimited' }, 429);
  }
  try {
    const out = await spec.handler({ req, app: tok.app, token: tok }, args);
    const obj = { ok: true, ...out };
    if (parsed.warning) { obj.warning = parsed.warning; obj.response_metadata = { ...(obj.response_metadata || {}), warnings: [parsed.warning] }; }
    return answer(obj);
  } catch (e) {
    if (e instanceof SlackError) return answer({ ok: false, error: e.error, ...e.extra });
    if (e instanceof ControlError) return answer({ ok: false, error: 'invalid_arguments' });
    log('handler error', e && e.stack);
    return answer({ ok: false, error: 'internal_error' });
  }
}

async function handleApi(req, res, url) {
  const name = decodeURIComponent(url.pathname.slice('/api/'.length));
  const { body, over } = await readBody(req, 2 * 1024 * 1024);
  if (over) return writeResponse(res, 413, { 'Content-Type': 'text/plain' }, 'Request Entity Too Large');
  const out = await apiCall(req, url, name, body);
  writeResponse(res, out.status, out.headers, out.body);
}

async function handleUpload(req, res, url) {
  const key = url.pathname.slice('/upload/v1/'.length);
  const fileId = uploads.get(key);
  const { body, over } = await readBody(req, 100 * 1024 * 1024);
  if (req.method !== 'POST' || !fileId || over) {
    return writeResponse(res, fileId ? 400 : 404, { 'Content-Type': 'text/plain' }, fileId ? 'Bad Request' : 'Not Found');
  }
  const ct = String(req.headers['content-type'] || '');
  let data = body;
  if (/^multipart\/form-data/i.test(ct)) {
    const parts = parseMultipart(body, ct);
    const p = parts.find((x) => x.filename !== undefined) || parts.find((x) => x.name === 'body') || parts[0];
    data = p ? p.data : Buffer.alloc(0);
  }
  const f = files.get(fileId);
  f.data = Buffer.from(data);
  uploads.delete(key);
  writeResponse(res, 200, { 'Content-Type': 'text/plain; charset=utf-8' }, `OK - ${f.data.length}`);
}

const SIGN_IN_PAGE = '<!DOCTYPE html><html lang="en-US"><head><meta charset="utf-8"><title>Slack</title></head>' +
  '<body><h1>Sign in to Test Workspace</h1><form action="/signin" method="post">' +
  '<input type="email" name="email"><input type="password" name="password"><button>Sign in</button></form></body></html>\n';

function canSeeFile(tok, f) {
  if (!tok || tok.revoked || tok.kind !== 'bot' || !tok.scopes.has('files:read')) return false;
  const me = tok.app.user.id;
  if (f.user === me) return true;
  return [...f.channels].some((id) => channels.get(id)?.members.has(me));
}

function handleFileDownload(req, res, url) {
  const m = /^\/files-pri\/[A-Z0-9]+-(F[A-Z0-9]+)\/(?:download\/)?[^/]+$/.exec(url.pathname);
  const f = m ? files.get(m[1]) : null;
  const tok = tokens.get(tokenFrom(req, {}));
  if (!f || !f.data || !canSeeFile(tok, f)) {
    return writeResponse(res, 200, { 'Content-Type': 'text/html; charset=utf-8' }, SIGN_IN_PAGE);
  }
  res.writeHead(200, { 'Content-Type': f.mimetype, 'Content-Length': f.data.length,
    'Content-Disposition': `attachment; filename="${f.name.replace(/"/g, '')}"` });
  res.end(f.data);
}

// ---------------------------------------------------------------- control API

class ControlError extends Error { constructor(status, msg) { super(msg); this.status = status; } }
const need = (cond, msg, status = 400) => { if (!cond) throw new ControlError(status, msg); };
const needUser = (id) => { const u = users.get(String(id)); need(u, `unknown user ${id}`, 404); return u; };
const needChan = (id) => { const c = channels.get(String(id)); need(c, `unknown channel ${id}`, 404); return c; };
const needApp = (id) => { const a = apps.get(String(id)); need(a, `unknown app ${id}`, 404); return a; };
function needMsg(c, ts) {
  const m = c.byTs.get(String(ts));
  need(m && !m.deleted, `no message ${ts} in ${c.id}`, 404);
  return m;
}

function appInfo(a) {
  return { app_id: a.id, bot_id: a.bot_id, bot_user_id: a.user.id, name: a.name, team_id: team.id,
    bot_token: a.botToken.token, app_token: a.appToken.token, scopes: [...a.botToken.scopes],
    agents: a.agents, mode: a.mode, ignore_acks: a.ignoreAcks, queued: a.queue.length, inflight: a.inflight.size };
}
const chanInfo = (c) => ({ ...channelJSON(c), type: c.type, members: [...c.members] });
function controlMessage(m) {
  return { ...messageJSON(m), deleted: m.deleted, edits: m.edits, appends: m.appends,
    streaming_state: m.streaming_state || null, metadata: m.metadata || null };
}
function sockInfo(s) {
  return { id: s.id, app_id: s.app.id, opened_at: s.openedAt, hello_at: s.helloAt, closed_at: s.closedAt,
    close_code: s.closeCode, acks: s.acks, stray_acks: s.strayAcks };
}
function callCounts(list) {
  const counts = {};
  for (const c of list) {
    const k = counts[c.method] || (counts[c.method] = { calls: 0, ok: 0, ratelimited: 0 });
    k.calls++; if (c.ok) k.ok++; if (c.ratelimited) k.ratelimited++;
  }
  return counts;
}
function pickSockets(b) {
  return [...sockets].filter((s) => !s.closedAt && (!b.app_id || s.app.id === b.app_id) && (!b.conn_id || s.id === b.conn_id));
}

const control = [];
const ctl = (m, re, fn) => control.push({ m, re, fn });

ctl('GET', /^\/_test\/state$/, () => ({ team, users: [...users.values()], apps: [...apps.values()].map(appInfo),
  channels: [...channels.values()].map(chanInfo) }));
ctl('POST', /^\/_test\/users$/, (b) => { need(typeof b.name === 'string' && b.name, 'name is required'); return makeUser(b); });
ctl('POST', /^\/_test\/apps$/, (b) => appInfo(makeApp(b)));
ctl('POST', /^\/_test\/tokens$/, (b) => {
  const app = needApp(b.app_id);
  need(Array.isArray(b.scopes), 'scopes must be a list');
  return { token: makeToken('bot', app, b.scopes.map(String)).token };
});
ctl('POST', /^\/_test\/tokens\/revoke$/, (b) => {
  const t = tokens.get(String(b.token)); need(t, 'unknown token', 404); t.revoked = true; return { revoked: true };
});
ctl('POST', /^\/_test\/apps\/([^/]+)\/delivery$/, (b, id) => {
  const app = needApp(id);
  if (b.mode !== undefined) { need(['normal', 'hold', 'drop'].includes(b.mode), 'mode: normal, hold or drop'); app.mode = b.mode; }
  if (b.ignore_acks !== undefined) app.ignoreAcks = !!b.ignore_acks;
  if (b.agents !== undefined) app.agents = !!b.agents;
  flushQueue(app);
  return appInfo(app);
});
ctl('GET', /^\/_test\/apps\/([^/]+)\/envelopes$/, (b, id) => ({ envelopes: needApp(id).envelopes }));
ctl('POST', /^\/_test\/channels$/, (b) => chanInfo(makeChannel(b)));
ctl('POST', /^\/_test\/channels\/([^/]+)\/members$/, (b, id) => {
  const c = needChan(id); c.members.add(needUser(b.user).id); return chanInfo(c);
});
ctl('DELETE', /^\/_test\/channels\/([^/]+)\/members\/([^/]+)$/, (b, id, uid) => {
  const c = needChan(id); c.members.delete(uid); return chanInfo(c);
});
ctl('POST', /^\/_test\/messages$/, (b) => {
  const u = needUser(b.user), c = needChan(b.channel);
  need(typeof b.text === 'string', 'text is required');
  need(c.members.has(u.id), `${u.id} is not in ${c.id}`);
  let parent = null;
  if (b.thread_ts) { parent = threadParent(c, b.thread_ts); need(parent, 'no such thread_ts', 404); }
  let tsMicro;
  if (b.ts !== undefined) { tsMicro = parseTs(b.ts); need(tsMicro !== null, 'bad ts'); }
  const m = storeMessage(c, u, { text: b.text, blocks: richText(b.text), parent, client_msg_id: b.client_msg_id },
    { quiet: tsMicro !== undefined, tsMicro });
  return { ok: true, channel: c.id, ts: m.ts };
});
ctl('POST', /^\/_test\/messages\/edit$/, (b) => {
  const c = needChan(b.channel), m = needMsg(c, b.ts);
  need(typeof b.text === 'string', 'text is required');
  return controlMessage(editMessage(c, m, m.user, b.text));
});
ctl('POST', /^\/_test\/messages\/delete$/, (b) => { const c = needChan(b.channel); deleteMessage(c, needMsg(c, b.ts)); return { ok: true }; });
ctl('POST', /^\/_test\/messages\/stop-stream$/, (b) => {
  const c = needChan(b.channel), m = needMsg(c, b.ts);
  need(m.streaming_state === 'in_progress', 'not streaming');
  m.streaming_state = 'stopped';
  return controlMessage(m);
});
ctl('GET', /^\/_test\/messages$/, (b, q) => {
  const c = needChan(q.get('channel'));
  return { messages: c.messages.map(controlMessage), statuses: Object.fromEntries(c.statuses) };
});
ctl('POST', /^\/_test\/reactions$/, (b) => {
  const u = needUser(b.user), c = needChan(b.channel), m = needMsg(c, b.ts);
  need(typeof b.name === 'string' && b.name, 'name is required');
  try { setReaction(c, m, u.id, b.name.replace(/^:|:$/g, ''), !b.remove); } catch (e) {
    if (e instanceof SlackError) throw new ControlError(400, e.error);
    throw e;
  }
  return { ok: true };
});
ctl('POST', /^\/_test\/files$/, (b) => {
  const u = needUser(b.user), c = needChan(b.channel);
  need(typeof b.name === 'string' && b.name, 'name is required');
  need(typeof b.content_base64 === 'string', 'content_base64 is required');
  const f = { id: slackId('F'), name: b.name, title: b.name, user: u.id, created: Math.floor(now() / 1000),
    data: Buffer.from(b.content_base64, 'base64'), completed: true, channels: new Set([c.id]),
    mimetype: b.mimetype || mimeOf(b.name), filetype: extOf(b.name) };
  files.set(f.id, f);
  let parent = null;
  if (b.thread_ts) { parent = threadParent(c, b.thread_ts); need(parent, 'no such thread_ts', 404); }
  const text = b.text || '';
  const m = storeMessage(c, u, { text, blocks: text ? richText(text) : [], subtype: 'file_share', files: [f.id], parent });
  return { file: fileJSON(f), ts: m.ts };
});
ctl('GET', /^\/_test\/calls$/, (b, q) => {
  const list = q.get('method') ? calls.filter((c) => c.method === q.get('method')) : calls;
  return { calls: list, counts: callCounts(list) };
});
ctl('DELETE', /^\/_test\/calls$/, () => { calls = []; return { ok: true }; });
ctl('POST', /^\/_test\/reset$/, () => {
  calls = []; windows.clear(); buckets.clear();
  for (const a of apps.values()) a.envelopes = [];
  return { ok: true };
});
const rateInfo = () => ({ enabled: rate.enabled, scale: rate.scale, window_ms: rate.windowMs, post_burst: rate.postBurst,
  limits: rate.limits, tiers: Object.fromEntries(Object.entries(methods).map(([k, v]) => [k, v.tier])) });
ctl('GET', /^\/_test\/rate$/, rateInfo);
ctl('POST', /^\/_test\/rate$/, (b) => {
  if (b.enabled !== undefined) rate.enabled = !!b.enabled;
  if (b.scale !== undefined) { need(Number(b.scale) > 0, 'scale > 0'); rate.scale = Number(b.scale); }
  if (b.window_ms !== undefined) { need(Number(b.window_ms) > 0, 'window_ms > 0'); rate.windowMs = Number(b.window_ms); }
  if (b.post_burst !== undefined) rate.postBurst = Number(b.post_burst);
  if (b.limits !== undefined) { need(b.limits && typeof b.limits === 'object', 'limits: {method: n}'); rate.limits = { ...b.limits }; }
  windows.clear(); buckets.clear();
  return rateInfo();
});
ctl('GET', /^\/_test\/sockets$/, () => ({ connections: [...sockets].filter((s) => !s.closedAt).map(sockInfo),
  history: socketHistory.map(sockInfo) }));
ctl('POST', /^\/_test\/sockets\/drop$/, (b) => {
  const list = pickSockets(b);
  for (const s of list) {
    if (b.close_code) s.ws.close(Number(b.close_code));
    else s.ws.terminate();
  }
  return { dropped: list.length };
});
ctl('POST', /^\/_test\/sockets\/disconnect$/, (b) => {
  const list = pickSockets(b);
  for (const s of list) sendDisconnect(s, String(b.reason || 'refresh_requested'), b.close_after_ms);
  return { sent: list.length };
});

async function handleControl(req, res, url) {
  const { body } = await readBody(req, 200 * 1024 * 1024);
  let b = {};
  if (body.length) {
    try { b = JSON.parse(body.toString('utf8')) || {}; } catch { return sendControl(res, 400, { error: 'body is not JSON' }); }
  }
  for (const r of control) {
    if (r.m !== req.method) continue;
    const m = r.re.exec(url.pathname);
    if (!m) continue;
    try {
      const args = m.length > 1 ? m.slice(1).map(decodeURIComponent) : [url.searchParams];
      return sendControl(res, 200, await r.fn(b, ...args));
    } catch (e) {
      if (e instanceof ControlError) return sendControl(res, e.status, { error: e.message });
      if (e instanceof SlackError) return sendControl(res, 400, { error: e.error });
      log('control error', e && e.stack);
      return sendControl(res, 500, { error: String(e && e.message) });
    }
  }
  return sendControl(res, 404, { error: `no control route ${req.method} ${url.pathname}` });
}
function sendControl(res, status, obj) {
  writeResponse(res, status, { 'Content-Type': 'application/json' }, JSON.stringify(obj));
}

// ---------------------------------------------------------------- Socket Mode connections

const wss = new WebSocketServer({ noServer: true });
const sockets = new Set();
const socketHistory = [];
let socketSeq = 0;

function sendDisconnect(s, reason, closeAfterMs) {
  if (s.closedAt) return;
  s.ws.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: s.host } }));
  if (closeAfterMs !== undefined && closeAfterMs !== null) {
    setTimeout(() => { if (!s.closedAt) s.ws.close(1000); }, Number(closeAfterMs));
  }
}

function handleUpgrade(req, socket, head) {
  const url = new URL(req.url, 'http://localhost');
  socket.on('error', () => {});
  const refuse = (status, text) => socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n` +
    `Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
  if (!/^\/link\/?$/.test(url.pathname)) return refuse(404, 'Not Found');
  const t = tickets.get(url.searchParams.get('ticket') || '');
  if (!t || t.expires < now()) return refuse(401, 'invalid ticket');
  tickets.delete(url.searchParams.get('ticket'));
  wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, t.app));
}

function onConnection(ws, app) {
  const s = { id: `conn-${++socketSeq}`, app, ws, openedAt: now(), helloAt: null, closedAt: null, closeCode: null,
    acks: 0, strayAcks: 0, host: `applink-${socketSeq}`, timers: [] };
  socketHistory.push(s);
  const open = [...sockets].filter((x) => x.app === app && !x.closedAt).length;
  sockets.add(s);
  ws.on('error', () => {});
  ws.on('close', (code) => {
    s.closedAt = now(); s.closeCode = code;
    for (const t of s.timers) { clearTimeout(t); clearInterval(t); }
    sockets.delete(s);
  });
  if (open >= opt.maxConnections) {
    ws.send(JSON.stringify({ type: 'disconnect', reason: 'too_many_websockets', debug_info: { host: s.host } }));
    ws.close(1000);
    return;
  }
  ws.on('message', (data, isBinary) => {
    if (isBinary) return;
    let msg;
    try { msg = JSON.parse(data.toString('utf8')); } catch { log('bad frame from', s.id); return; }
    if (msg && typeof msg.envelope_id === 'string') onAck(s, msg.envelope_id);
  });
  ws.send(JSON.stringify({ type: 'hello', num_connections: open + 1,
    debug_info: { host: s.host, build_number: 118, approximate_connection_time: 18060 },
    connection_info: { app_id: app.id } }));
  s.helloAt = now();
  if (opt.pingMs > 0) s.timers.push(setInterval(() => { if (ws.readyState === 1) ws.ping(); }, opt.pingMs));
  if (opt.refreshMs > 0) {
    if (opt.refreshMs > 20000) s.timers.push(setTimeout(() => sendDisconnect(s, 'warning'), opt.refreshMs - 10000));
    s.timers.push(setTimeout(() => sendDisconnect(s, 'refresh_requested', 10000), opt.refreshMs));
  }
  flushQueue(app);
}

// ---------------------------------------------------------------- main

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  req.on('error', () => {});
  res.on('error', () => {});
  const p = url.pathname;
  let h;
  if (p.startsWith('/_test/')) h = handleControl;
  else if (p.startsWith('/api/')) h = handleApi;
  else if (p.startsWith('/upload/v1/')) h = handleUpload;
  else if (p.startsWith('/files-pri/') && (req.method === 'GET' || req.method === 'HEAD')) h = async () => handleFileDownload(req, res, url);
  else h = async () => writeResponse(res, 404, { 'Content-Type': 'text/plain' }, 'Not Found');
  h(req, res, url).catch((e) => {
    log('unhandled', e && e.stack);
    if (!res.headersSent) writeResponse(res, 500, { 'Content-Type': 'application/json' }, '{"error":"internal"}');
  });
});
server.on('upgrade', (req, socket, head) => {
  try { handleUpgrade(req, socket, head); } catch (e) { log('upgrade failed', e && e.stack); socket.destroy(); }
});
server.on('clientError', (err, socket) => { if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'); else socket.destroy(); });
process.stdout.on('error', () => {});
process.on('uncaughtException', (e) => { log('uncaught', e && e.stack); });

server.listen(opt.port, opt.host, () => {
  serverBase = `http://${opt.host}:${server.address().port}`;
  process.stdout.write(`PORT ${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
