#!/usr/bin/env node
/*
A protocol-level Mattermost test server (stand-in for a Mattermost 10.x server in the tests of
the chat bridge). REST under /api/v4 and the WebSocket at /api/v4/websocket behave as the real
server's code does (server/channels/{api4,app,web,wsapi}, app/platform/web_conn.go,
websocket_router.go, store/sqlstore/post_store.go): the same status codes, AppError bodies and
ids, event shapes, sequence numbers and reconnect rules. State lives in memory. It is checked
against the real @mattermost/client by tests/node/mattermost_client.mjs.

Listens on 127.0.0.1 at an ephemeral port and prints "PORT <n>" as the only line of stdout (the
tests may close stdout after reading it: nothing else is ever written there). Exits when stdin
closes. Run: node tests/servers/mattermost_server.mjs [options]; it loads `ws` from
tests/node/node_modules (npm ci --prefix tests/node), whatever the working directory.

Options
  --port N              listen port (default 0: ephemeral)
  --host H              listen address (default 127.0.0.1)
  --ping-ms N           WebSocket protocol ping interval (default 60000, the real pingInterval)
  --idle-ms N           drop a socket that sent no pong for N ms (default 100000, pongWaitTime);
                        like the real read deadline, only pongs reset it
  --auth-timeout-ms N   close a socket not authenticated after N ms (default 5000, authTicker)
  --resume-ms N         how long a closed header/cookie-authenticated connection can be resumed
                        with ?connection_id=&sequence_number= (default 300000)
  --rate-limit N        GCRA limiter, N requests per second per token (per IP without one);
                        off by default (0). Over it: 429, body "limit exceeded\n"
  --rate-burst B        the limiter's MaxBurst (default 100, Mattermost's default)
  --max-post-runes N    longest message (default 16383, PostMessageMaxRunesV2)
  --dedupe-ttl-ms N     pending_post_id de-duplication window (default 30000)
  --keepalive-ms N      close an idle kept-alive HTTP connection after N ms (default 60000,
                        ServiceSettings.IdleTimeout; Node's own default is 5000)
  --server-version V    reported version (default 10.5.0)
  --verbose             log requests and WebSocket faults to stderr (default: silent)

Every user is created by the control API and is a member of the one team ("Test Team", id in
GET /_test/state); a user gets a personal access token. Accepted: "Authorization: Bearer <t>"
or "Token <t>" (scheme case-insensitive), the MMAUTHTOKEN cookie (non-GET requests with a
cookie also need X-Requested-With: XMLHttpRequest, the CSRF rule), or ?access_token=<t>; as on
the real server a personal access token in the query string is refused with 401
api.context.token_provided.app_error (only OAuth tokens may go there).

Behaviour worth knowing (each from the real server's code):
  - REST routes: GET /users/me, /users/{id}, /users/username/{name}, /users/{id}/channels,
    /users/{id}/teams, /users/{id}/teams/{tid}/channels, /teams/{tid},
    /teams/{tid}/channels/name/{name}, /channels/{id}, /channels/{id}/posts (?since= or
    ?page=&per_page=), /posts/{id}, /posts/{id}/reactions, /files/{id}, /files/{id}/info,
    /system/ping; POST /posts, /reactions, /files (multipart or ?channel_id=&filename=),
    /channels, /channels/{id}/members, /teams/{tid}/members, /users/{id}/typing;
    PUT /posts/{id}/patch, /posts/{id}; DELETE /posts/{id},
    /users/{uid}/posts/{pid}/reactions/{emoji}. Anything else: 404 api.context.404.app_error.
  - O channels can be read (GET /channels/{id}, its posts) by any team member; posting,
    reacting, uploading and typing need membership, as do P/D/G channels. Events go to members.
    Any team member may add themselves or others to an O channel; a P channel takes members
    from its members only.
  - Patching a missing or deleted post: 403 api.context.permissions.app_error; deleting one:
    404 app.post.get.app_error. POST /reactions answers 200; POST /posts and /files 201.
  - A reply sets its root's update_at to its create_at; editing a reply bumps the root; a
    reaction bumps the reacted post itself (and sets has_reactions).
  - ?since=T lists rows with update_at > T (strictly): edit-history rows (their own id,
    original_id = the edited post, delete_at = update_at = the edit's time) and deleted rows
    included, plus those rows' roots (in "posts" only, not in "order"); newest first.
  - pending_post_id: keyed by the id alone for 30 s after the first post; a repeat answers the
    first post (201, no event) whose pending_post_id is then "" (it is not stored).
  - File ids a post cannot take (unknown, another user's, already on a post) are dropped.
  - posted: broadcast.team_id is "" (data.team_id holds it); data.mentions only in the copy
    of a mentioned user (every other member of a D/G channel counts); channel_display_name of
    a DM is "@sender". post_deleted carries the post as it was (delete_at 0), no delete_by.
  - Frames: hello and replies are compact JSON plus "\n"; events fanned out to a channel are
    {"event": "posted", "data": {...}, "broadcast": {...}, "seq": 3} (a space after the
    top-level colons and commas, no newline); JSON escapes <, >, & as \u003c, \u003e, \u0026.
  - A bad challenge token, a frame that is not JSON or has a field of the wrong type, or a
    binary frame: the socket is closed without a close frame or a reply. Missing seq: FAIL
    api.web_socket_router.bad_seq.app_error (no seq_reply); missing action: FAIL no_action;
    unknown action: FAIL bad_action (500). An unauthenticated socket gets no replies and no
    events; a challenge on an authenticated socket gets no reply.
  - Reconnect: with the token on the upgrade and ?connection_id=<known>&sequence_number=N the
    connection resumes (same connection_id, no hello; what it missed, and what was published
    while it was away, arrives with the next seq numbers). A challenge-authenticated client
    always gets a fresh connection: new connection_id, hello with seq 0, the gap's events lost.

Control API (no auth, JSON in and out, under /_test on the same port; errors are
{"error": "..."} with 400/404):
  GET    /_test/state                 {team: {...}, users: [...], channels: [...]}
  POST   /_test/users                 {username, is_bot?, token?, id?, in_team? (default true)}
                                      -> {id, username, token, is_bot}
  POST   /_test/channels              {name?, display_name?, type: O|P|D|G, members: [ids],
                                      team_id?, id?} -> the channel (REST shape) + "members";
                                      D with two members is named uid1__uid2 (sorted ids)
  POST   /_test/channels/{id}/members {user_id, system_post?, by_user_id?} -> adds it
                                      (broadcasts user_added; system_post also leaves the
                                      system_add_to_channel post that REST additions leave)
  DELETE /_test/channels/{id}/members/{user_id}  (broadcasts user_removed)
  POST   /_test/posts                 {user_id, channel_id, message, root_id?, file_ids?, props?,
                                      pending_post_id?, create_at?} -> the post, created exactly
                                      as a REST POST /posts by that user (same checks, same
                                      events); a refused one answers its AppError and status.
                                      create_at makes an old post.
  POST   /_test/posts/{id}/edit       {message, user_id?} -> the edited post (as the author, the
                                      same path as PUT /posts/{id}/patch)
  POST   /_test/posts/{id}/delete     {user_id?} -> {"status": "OK"} (as DELETE /posts/{id})
  GET    /_test/posts?channel_id=ID   {posts: [every row of the channel, edit-history and
                                      deleted rows included, oldest first (create_at, then
                                      insertion), REST shape plus "edits": [{t, message}] (each
                                      patch applied to that row, in order) and "reactions"]}
  POST   /_test/files                 {user_id, channel_id, name, content_base64, mime_type?,
                                      raw_name?} -> the file info (not attached to a post
                                      yet); the name goes through Go's filepath.Base as on the
                                      real server ("a/../b.txt" -> "b.txt"; ".." and "..\x"
                                      survive) unless raw_name keeps it verbatim
  POST   /_test/reactions             {user_id, post_id, emoji_name} -> the reaction
                                      (reaction_added as real); DELETE /_test/reactions with the
                                      same body removes it (reaction_removed)
  GET    /_test/typing?channel_id=ID  {typing: [{t, user_id, channel_id, parent_id, via:
                                      "rest"|"ws"}]} (all channels without channel_id)
  GET    /_test/log                   {requests: [{t, method, path, query, user_id, status,
                                      body, scripted?}]}: every /api/v4 request, WebSocket
                                      upgrades included (status 101); DELETE /_test/log clears
  POST   /_test/fail                  {method?, path: "<regex on the path>", status?, count: 1,
                                      body?: object|string, headers?: {}, delay_ms?: 0,
                                      drop?: bool, retry_after_s?: 1} -> {"id": n}: the next
                                      `count` matching /api/v4 requests (-1: until cleared) get
                                      that answer. 429 without a body is the real rate-limit
                                      answer (text/plain "limit exceeded\n", X-Ratelimit-*,
                                      Retry-After = retry_after_s). Another status without a body
                                      answers an AppError test.scripted_failure.app_error.
                                      delay_ms without status delays the real answer; drop
                                      destroys the TCP connection unanswered. DELETE clears all.
  POST   /_test/ws/drop               {user_id?, close_code?, refuse_ms?, forget?} -> {dropped:
                                      n}: destroys that user's sockets (all sockets without
                                      user_id) with no close frame, or sends a close frame with
                                      close_code; refuse_ms also answers WebSocket upgrades with
                                      HTTP 503 for that long; forget drops their connections
                                      from the hub, as resumeMs or a restart would: a reconnect
                                      gets a new connection id and a hello, and the events
                                      published meanwhile are lost
  POST   /_test/ws/send               {user_id, raw: "<text>"} sends that exact text frame to
                                      the user's authenticated sockets; {user_id, event, data,
                                      broadcast?} sends a well-formed event with the next seq
                                      -> {sent: n}
  GET    /_test/ws                    {connections: [open sockets], history: [every socket
                                      ever, with closed_at]}; each {user_id, connection_id,
                                      authenticated, auth: "header"|"cookie"|"challenge"|null,
                                      seq (next event seq), resumed, connected_at, closed_at,
                                      close_code, remote_addr, upgrade_query}
*/
import http from 'node:http';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(new URL('../node/package.json', import.meta.url));
const { WebSocketServer } = require('ws');

// ---------------------------------------------------------------- options

function parseOptions(argv) {
  const o = {
    port: 0, host: '127.0.0.1', pingMs: 60000, idleMs: 100000, authTimeoutMs: 5000,
    resumeMs: 300000, rateLimit: 0, rateBurst: 100, maxPostRunes: 16383, dedupeTtlMs: 30000,
    keepaliveMs: 60000,
    serverVersion: '10.5.0', verbose: false,
  };
  const num = {
    '--port': 'port', '--ping-ms': 'pingMs', '--idle-ms': 'idleMs',
    '--auth-timeout-ms': 'authTimeoutMs', '--resume-ms': 'resumeMs', '--rate-limit': 'rateLimit',
    '--rate-burst': 'rateBurst', '--max-post-runes': 'maxPostRunes',
    '--dedupe-ttl-ms': 'dedupeTtlMs', '--keepalive-ms': 'keepaliveMs',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (num[a]) o[num[a]] = Number(argv[++i]);
    else if (a === '--host') o.host = argv[++i];
    else if (a === '--server-version') o.serverVersion = argv[++i];
    else if (a === '--verbose') o.verbose = true;
    else { process.stderr.write(`mattermost_server: unknown option ${a}\n`); process.exit(2); }
  }
  return o;
}
const opt = parseOptions(process.argv.slice(2));
const log = (...a) => { if (opt.verbose) process.stderr.write(`mattermost_server: ${a.join(' ')}\n`); };

// ---------------------------------------------------------------- helpers

const ID_ALPHABET = 'ybndrfg8ejkmcpqxot1uwisza345h769'; // model.NewId's base32 alphabet
// Random bytes come from a pool refilled 4 KiB at a time: one getrandom per 256 ids, not one each.
const idPool = Buffer.alloc(4096);
let idPoolAt = idPool.length;
function newId() {
  if (idPoolAt + 16 > idPool.length) { crypto.randomFillSync(idPool); idPoolAt = 0; }
  const b = idPool.subarray(idPoolAt, idPoolAt += 16);
  let bits = 0, value = 0, out = '';
  for (const byte of b) {
    value = (value << 8) | byte; bits += 8;
    while (bits >= 5) { out += ID_ALPHABET[(value >>> (bits - 5)) & 31]; bits -= 5; }
  }
  if (bits > 0) out += ID_ALPHABET[(value << (5 - bits)) & 31];
  return out.slice(0, 26);
}
const isValidId = (s) => typeof s === 'string' && /^[A-Za-z0-9]{26}$/.test(s);
const now = () => Date.now();
const runeCount = (s) => { let n = 0; for (const _ of s) n++; return n; };

// Go's encoding/json: struct fields in declaration order, map keys sorted, and <, >, &, U+2028,
// U+2029 escaped.
function sortDeep(v) {
  if (Array.isArray(v)) return v.map(sortDeep);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = sortDeep(v[k]);
    return o;
  }
  return v;
}
function goJSON(v) {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g,
    (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}

const MESSAGES = {
  'api.context.session_expired.app_error': 'Invalid or expired session, please login again.',
  'api.context.token_provided.app_error': 'Session is not OAuth but token was provided in the query string.',
  'api.context.permissions.app_error': 'You do not have the appropriate permissions.',
  'api.context.invalid_body_param.app_error': 'Invalid or missing {{.Name}} in request body.',
  'api.context.invalid_url_param.app_error': 'Invalid or missing {{.Name}} parameter in request URL.',
  'api.context.invalid_param.app_error': 'Invalid {{.Name}} parameter.',
  'api.context.404.app_error': 'Sorry, we could not find the page.',
  'api.context.request_body_too_large.app_error': 'The request body is too large.',
  'api.context.server_busy.app_error': 'Server is busy, non-critical services are temporarily unavailable.',
  'api.web_socket.connect.upgrade.app_error': 'Failed to upgrade websocket connection.',
  'app.post.get.app_error': 'Unable to get post.',
  'app.user.missing_account.const': 'Unable to find the user.',
  'app.user.get_by_username.app_error': 'Unable to find an existing account matching your username for this team. This team may require an invite from the team owner to join.',
  'app.channel.get.existing.app_error': 'Unable to find the existing channel.',
  'app.channel.get_by_name.missing.app_error': 'Channel does not exist.',
  'app.team.get.find.app_error': 'Unable to find the existing team.',
  'app.team.get_member.missing.app_error': 'No team member found for that user ID and team ID.',
  'app.file_info.get.app_error': 'Unable to get the file info.',
  'model.post.is_valid.message_length.app_error': 'Message property is longer than the maximum permitted length.',
  'model.post.is_valid.file_ids.app_error': 'Invalid file ids. Note that uploads are limited to 10 files maximum. Please use additional posts for more files.',
  'api.post.create_post.root_id.app_error': 'Invalid RootId parameter.',
  'api.post.create_post.channel_root_id.app_error': 'Invalid ChannelId for RootId parameter.',
  'api.post.update_post.permissions_details.app_error': 'Already deleted id={{.PostId}}.',
  'api.post.deduplicate_create_post.pending': 'Rejected post since another client is making the same request.',
  'api.reaction.save_reaction.invalid.app_error': 'Reaction is not valid.',
  'api.reaction.save_reaction.user_id.app_error': 'You are not allowed to save reaction for the other user.',
  'model.reaction.is_valid.emoji_name.app_error': 'Invalid emoji name.',
  'api.file.upload_file.read_request.app_error': 'Unable to upload file(s). Error reading or parsing request data.',
  'api.file.upload_file.incorrect_number_of_client_ids.app_error': 'Unable to upload file(s). Have {{.NumClientIds}} client_ids for {{.NumFiles}} files.',
  'api.file.upload_file.multiple_channel_ids.app_error': 'Unable to upload file(s). Multiple conflicting channel_ids.',
  'api.web_socket_router.no_action.app_error': 'No websocket action.',
  'api.web_socket_router.bad_seq.app_error': 'Invalid sequence for WebSocket message.',
  'api.web_socket_router.bad_action.app_error': 'Unknown WebSocket action.',
  'api.websocket_handler.invalid_param.app_error': 'Invalid {{.Name}} parameter.',
  'store.sql_channel.save_channel.exists.app_error': 'A channel with that name already exists on the same team.',
  'model.channel.is_valid.display_name.app_error': 'Invalid display name.',
  'model.channel.is_valid.name.app_error': 'Invalid channel name. User ids are not permitted in channel name for non-direct message channels.',
  'test.scripted_failure.app_error': 'Scripted failure from the test server.',
};

class AppError extends Error {
  constructor(status, id, params = null, detailed = '') {
    super(id);
    this.status = status; this.id = id; this.params = params; this.detailed = detailed;
  }
  json(requestId) {
    let msg = MESSAGES[this.id] || this.id;
    if (this.params) msg = msg.replace(/\{\{\.(\w+)\}\}/g, (_, k) => String(this.params[k] ?? ''));
    const o = { id: this.id, message: msg, detailed_error: this.detailed || '' };
    if (requestId) o.request_id = requestId;
    o.status_code = this.status;
    return o;
  }
}
const invalidBody = (name) => new AppError(400, 'api.context.invalid_body_param.app_error', { Name: name });
const invalidUrl = (name) => new AppError(400, 'api.context.invalid_url_param.app_error', { Name: name });
const permissionError = () => new AppError(403, 'api.context.permissions.app_error');

// ---------------------------------------------------------------- state

const startedAt = now();
const team = {
  id: newId(), create_at: startedAt, update_at: startedAt, delete_at: 0,
  display_name: 'Test Team', name: 'test-team', description: '', email: 'admin@example.com',
  type: 'O', company_name: '', allowed_domains: '', invite_id: newId(),
  allow_open_invite: false, last_team_icon_update: 0, scheme_id: null, group_constrained: null,
  policy_id: null, cloud_limits_archived: false,
};
const teamMembers = new Set();           // user ids
const users = new Map();                 // id -> user
const tokens = new Map();                // token -> user id
const channels = new Map();              // id -> channel (members: Set)
const postRows = [];                     // every row, in insertion order
const repliesOf = new Map();             // root id -> the rows that reply to it (live or not)
const posts = new Map();                 // id -> row
const reactions = new Map();             // `${post}|${user}|${emoji}` -> reaction
const files = new Map();                 // id -> {info, data}
const pendingPostIds = new Map();        // pending_post_id -> {postId, expires}
let requestLog = [];
let failRules = [];
let failRuleSeq = 0;
const typingLog = [];
let refuseUpgradesUntil = 0;

function serverVersionHeader() { return `${opt.serverVersion}.${opt.serverVersion}.testhash.false`; }

function userJSON(u) {
  const o = {
    id: u.id, create_at: u.create_at, update_at: u.update_at, delete_at: 0, username: u.username,
    auth_service: '', email: u.email, email_verified: true, nickname: '', first_name: '',
    last_name: '', position: '', roles: 'system_user',
    notify_props: { channel: 'true', comments: 'never', desktop: 'mention', desktop_sound: 'true',
      email: 'true', first_name: 'false', mention_keys: '', push: 'mention', push_status: 'away' },
    last_password_update: u.create_at, locale: 'en',
    timezone: { automaticTimezone: '', manualTimezone: '', useAutomaticTimezone: 'true' },
  };
  if (u.is_bot) { o.is_bot = true; o.bot_description = ''; }
  o.disable_welcome_email = false;
  return o;
}

function channelJSON(c) {
  return {
    id: c.id, create_at: c.create_at, update_at: c.update_at, delete_at: c.delete_at,
    team_id: c.team_id, type: c.type, display_name: c.display_name, name: c.name, header: '',
    purpose: '', last_post_at: c.last_post_at, total_msg_count: c.total_msg_count,
    extra_update_at: 0, creator_id: c.creator_id, scheme_id: null, props: null,
    group_constrained: null, shared: null, total_msg_count_root: c.total_msg_count_root,
    policy_id: null, last_root_post_at: c.last_root_post_at,
  };
}

function channelMemberJSON(c, uid) {
  return {
    channel_id: c.id, user_id: uid, roles: 'channel_user', last_viewed_at: 0, msg_count: 0,
    mention_count: 0, mention_count_root: 0, urgent_mention_count: 0, msg_count_root: 0,
    notify_props: { desktop: 'default', email: 'default', ignore_channel_mentions: 'default',
      mark_unread: 'all', push: 'default' },
    last_update_at: c.update_at, scheme_guest: false, scheme_user: true, scheme_admin: false,
    explicit_roles: '',
  };
}

function fileInfoJSON(f) {
  const i = f.info;
  const o = { id: i.id, user_id: i.user_id };
  if (i.post_id) o.post_id = i.post_id;
  Object.assign(o, {
    channel_id: i.channel_id, create_at: i.create_at, update_at: i.update_at,
    delete_at: i.delete_at, name: i.name, extension: i.extension, size: i.size,
    mime_type: i.mime_type, mini_preview: null, remote_id: '', archived: false,
  });
  return o;
}

function reactionJSON(r) {
  return { user_id: r.user_id, post_id: r.post_id, emoji_name: r.emoji_name,
    create_at: r.create_at, update_at: r.update_at, delete_at: r.delete_at, remote_id: '',
    channel_id: r.channel_id };
}

function activeReactions(postId) {
  return [...reactions.values()].filter((r) => r.post_id === postId && r.delete_at === 0)
    .sort((a, b) => a.create_at - b.create_at);
}

// A post row as the REST API and the events show it (PreparePostForClient).
function postJSON(p, extra = {}) {
  const o = {
    id: p.id, create_at: p.create_at, update_at: p.update_at, edit_at: p.edit_at,
    delete_at: p.delete_at, is_pinned: p.is_pinned, user_id: p.user_id, channel_id: p.channel_id,
    root_id: p.root_id, original_id: p.original_id, message: p.message, type: p.type,
    props: sortDeep(p.props), hashtags: p.hashtags, file_ids: [...p.file_ids],
    pending_post_id: extra.pending_post_id || '',
  };
  if (p.has_reactions) o.has_reactions = true;
  o.remote_id = '';
  o.reply_count = extra.reply_count || 0;
  o.last_reply_at = 0;
  o.participants = null;
  const md = {};
  if (p.delete_at === 0) {
    if (p.file_ids.length) md.files = p.file_ids.filter((id) => files.has(id)).map((id) => fileInfoJSON(files.get(id)));
    if (p.has_reactions) {
      const rs = activeReactions(p.id).map(reactionJSON);
      if (rs.length) md.reactions = rs;
    }
  }
  o.metadata = md;
  return o;
}

function replyCount(rootId) {
  return (repliesOf.get(rootId) || []).filter((r) => r.delete_at === 0).length;
}
// Every row goes into the table through here (at `at`, or at the end).
function insertRow(row, at = postRows.length) {
  postRows.splice(at, 0, row);
  if (row.root_id) {
    let list = repliesOf.get(row.root_id);
    if (!list) repliesOf.set(row.root_id, list = []);
    list.push(row);
  }
}

function isTeamMember(uid, teamId) { return teamId === team.id && teamMembers.has(uid); }
function isMember(c, uid) { return !!c && c.members.has(uid); }
function canReadChannel(c, uid) {
  if (!c) return false;
  if (isMember(c, uid)) return true;
  return c.type === 'O' && isTeamMember(uid, c.team_id);
}

function dmName(a, b) { return [a, b].sort().join('__'); }

// ---------------------------------------------------------------- WebSocket hub

const hub = new Set();        // logical connections registered (authenticated), active or not
const socketHistory = [];     // one entry per physical socket

function broadcastJSON(b) {
  return {
    omit_users: b.omit_users || null, user_id: b.user_id || '', channel_id: b.channel_id || '',
    team_id: b.team_id || '', connection_id: b.connection_id || '',
    omit_connection_id: b.omit_connection_id || '',
  };
}

// An event as the real server writes it: events fanned out by the hub are "precomputed"
// (`{"event": ..., "data": ..., "broadcast": ..., "seq": N}`, spaces, no newline); hello, an
// event a broadcast hook changed (mentions) and replies are plain json.Encoder output.
function encodeEvent(ev, seq, precomputed) {
  const data = sortDeep(ev.data || {});
  const bc = broadcastJSON(ev.broadcast || {});
  if (precomputed) {
    return `{"event": ${goJSON(ev.event)}, "data": ${goJSON(data)}, "broadcast": ${goJSON(bc)}, "seq": ${seq}}`;
  }
  return goJSON({ event: ev.event, data, broadcast: bc, seq }) + '\n';
}

function shouldSend(ev, conn) {
  const b = ev.broadcast || {};
  if (!conn.userId) return false;
  if (b.connection_id) return conn.connectionId === b.connection_id;
  if (b.omit_connection_id && conn.connectionId === b.omit_connection_id) return false;
  if (b.user_id) return conn.userId === b.user_id;
  if (b.omit_users && b.omit_users[conn.userId]) return false;
  if (b.channel_id) return isMember(channels.get(b.channel_id), conn.userId);
  if (b.team_id) return isTeamMember(conn.userId, b.team_id);
  return true;
}

function writeFrame(conn, text) {
  const ws = conn.ws;
  if (ws && ws.readyState === 1) ws.send(text);
}

// Sends one event on a connection, giving it the connection's next seq (the write pump).
function sendEvent(conn, ev, precomputed = true) {
  if (!conn.active) {
    conn.pending.push({ ev, precomputed });
    if (conn.pending.length > 256) { hub.delete(conn); log('dropped a full inactive connection', conn.connectionId); }
    return;
  }
  const seq = conn.seq++;
  const text = encodeEvent(ev, seq, precomputed);
  conn.deadQueue.push({ seq, text });
  if (conn.deadQueue.length > 128) conn.deadQueue.shift();
  writeFrame(conn, text);
}

function publish(ev) {
  for (const conn of hub) {
    if (!shouldSend(ev, conn)) continue;
    if (ev.mentions && ev.mentions.includes(conn.userId)) {
      // the add_mentions broadcast hook: only the mentioned user's copy names them
      const copy = { ...ev, data: { ...ev.data, mentions: goJSON([conn.userId]) } };
      sendEvent(conn, copy, false);
    } else {
      sendEvent(conn, ev, true);
    }
  }
}

function helloEvent(conn) {
  return {
    event: 'hello',
    data: { connection_id: conn.connectionId, server_version: serverVersionHeader() },
    broadcast: { user_id: conn.userId },
  };
}

function wsReply(conn, seqReply, status, data, err) {
  const o = { status };
  if (seqReply) o.seq_reply = seqReply;
  if (data) o.data = sortDeep(data);
  if (err) o.error = err.json('');
  writeFrame(conn, goJSON(o) + '\n');
}

function registerConn(conn) {
  hub.add(conn);
  conn.active = true;
}

setInterval(() => {
  const t = now();
  for (const conn of hub) if (!conn.active && t - conn.inactiveSince > opt.resumeMs) hub.delete(conn);
}, 10000).unref();

// ---------------------------------------------------------------- auth

function parseCookies(h) {
  const out = {};
  for (const part of (h || '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out[part.slice(0, i).trim()] = part.slice(i + 1).trim();
  }
  return out;
}

// app.ParseAuthTokenFromRequest: cookie first, then the Authorization header, then the query.
function parseAuthToken(req, query) {
  const cookies = parseCookies(req.headers.cookie);
  if (cookies.MMAUTHTOKEN) return { token: cookies.MMAUTHTOKEN, loc: 'cookie' };
  const h = req.headers.authorization || '';
  if (h.length > 6 && h.slice(0, 6).toUpperCase() === 'BEARER') return { token: h.slice(7).trim(), loc: 'header' };
  if (h.length > 5 && h.slice(0, 5).toLowerCase() === 'token') return { token: h.slice(6).trim(), loc: 'header' };
  const q = query.get('access_token');
  if (q) return { token: q.trim(), loc: 'query' };
  return { token: '', loc: null };
}

// ---------------------------------------------------------------- rate limiting (GCRA)

const gcraState = new Map();
function rateLimit(key) {
  const T = 1000 / opt.rateLimit;
  const limit = opt.rateBurst + 1;
  const dvt = T * limit;
  const t = now();
  let tat = gcraState.get(key) ?? t;
  if (t > tat) tat = t;
  const newTat = tat + T;
  const allowAt = newTat - dvt;
  const diff = t - allowAt;
  let limited = false, retryAfter = -1, ttl;
  if (diff < 0) {
    if (T <= dvt) retryAfter = -diff;
    ttl = tat - t; limited = true;
  } else {
    ttl = newTat - t; gcraState.set(key, newTat);
  }
  const next = dvt - ttl;
  let remaining = 0;
  if (next > -T) remaining = Math.floor(next / T);
  return { limited, limit, remaining, resetAfter: ttl, retryAfter };
}

function rateLimitHeaders(r) {
  const h = { 'X-Ratelimit-Limit': String(r.limit), 'X-Ratelimit-Remaining': String(r.remaining),
    'X-Ratelimit-Reset': String(Math.ceil(r.resetAfter / 1000)) };
  if (r.retryAfter >= 0) h['Retry-After'] = String(Math.ceil(r.retryAfter / 1000));
  return h;
}

// ---------------------------------------------------------------- posts

const HASHTAG = /^#\p{L}[\p{L}\p{N}\-_.]*[\p{L}\p{N}]$/u;
function parseHashtags(text) {
  const tags = [];
  for (let w of text.split(/\s+/)) {
    w = w.replace(/^[^\p{L}\p{N}\s#]+/u, '').replace(/[^\p{L}\p{N}\s]+$/u, '').replace(/^#{2,}/, '#');
    if (HASHTAG.test(w)) tags.push(w);
  }
  let s = tags.join(' ');
  if (s.length > 1000) { s = s.slice(0, 999); const i = s.lastIndexOf(' '); s = i > -1 ? s.slice(0, i) : ''; }
  return s;
}

// Who a post mentions (SendNotifications): the other member of a DM, every other member of a
// GM, @username of members, and @channel/@all/@here.
function mentionedUsers(post, channel) {
  const out = new Set();
  const others = [...channel.members].filter((id) => id !== post.user_id);
  if (channel.type === 'D' || channel.type === 'G') others.forEach((id) => out.add(id));
  const byName = new Map(others.map((id) => [users.get(id)?.username, id]));
  for (const m of post.message.matchAll(/@([a-z0-9.\-_]+)/gi)) {
    let name = m[1].toLowerCase();
    for (;;) {
      if (name === 'channel' || name === 'all' || name === 'here') { others.forEach((id) => out.add(id)); break; }
      if (byName.has(name)) { out.add(byName.get(name)); break; }
      if (!/[.\-_]$/.test(name)) break;
      name = name.slice(0, -1);
    }
  }
  return [...out];
}

function channelDisplayName(channel, sender) {
  if (channel.type === 'D') return '@' + sender.username;
  return channel.display_name;
}

function checkStringFields(body, names) {
  for (const n of names) if (body[n] !== undefined && body[n] !== null && typeof body[n] !== 'string') return false;
  return true;
}

function validPostBody(b) {
  if (b === null) return true;
  if (typeof b !== 'object' || Array.isArray(b)) return false;
  if (!checkStringFields(b, ['id', 'channel_id', 'message', 'root_id', 'pending_post_id', 'type', 'user_id', 'original_id', 'hashtags'])) return false;
  if (b.file_ids !== undefined && b.file_ids !== null && (!Array.isArray(b.file_ids) || b.file_ids.some((x) => typeof x !== 'string'))) return false;
  if (b.props !== undefined && b.props !== null && (typeof b.props !== 'object' || Array.isArray(b.props))) return false;
  for (const n of ['create_at', 'update_at', 'edit_at', 'delete_at']) if (b[n] !== undefined && b[n] !== null && !Number.isInteger(b[n])) return false;
  if (b.is_pinned !== undefined && b.is_pinned !== null && typeof b.is_pinned !== 'boolean') return false;
  return true;
}

// App.CreatePostAsUser + CreatePost, for REST POST /posts and POST /_test/posts.
// Returns {post, status, created}; throws AppError.
function createPost(user, body, { createAt = 0 } = {}) {
  body = body || {};
  const channelId = body.channel_id || '';
  const channel = channels.get(channelId);
  // userCreatePostPermissionCheckWithContext
  if (!isMember(channel, user.id)) throw permissionError();
  const fileIds = [...new Set(body.file_ids || [])];
  const type = body.type || '';
  if (type.startsWith('system_')) throw new AppError(400, 'api.context.invalid_param.app_error', { Name: 'post.type' });
  const pendingId = body.pending_post_id || '';
  if (pendingId) {
    const seen = pendingPostIds.get(pendingId);
    if (seen && seen.expires > now()) {
      if (seen.postId === '') throw new AppError(500, 'api.post.deduplicate_create_post.pending');
      // GetPostIfAuthorized: the first post, unless it is gone (500) or the user may not read
      // it (then the pending id is ignored)
      const first = posts.get(seen.postId);
      if (!first || first.delete_at !== 0) throw new AppError(500, 'api.post.deduplicate_create_post.failed_to_get');
      if (canReadChannel(channels.get(first.channel_id), user.id)) {
        return { post: first, json: postJSON(first), created: false };
      }
    }
    pendingPostIds.set(pendingId, { postId: '', expires: now() + opt.dedupeTtlMs });
  }
  try {
    const rootId = body.root_id || '';
    let root = null;
    if (rootId) {
      root = posts.get(rootId);
      if (!root || root.delete_at !== 0) throw new AppError(400, 'api.post.create_post.root_id.app_error');
      if (root.channel_id !== channelId) throw new AppError(400, 'api.post.create_post.channel_root_id.app_error');
      if (root.root_id !== '') throw new AppError(400, 'api.post.create_post.root_id.app_error');
    }
    const props = { ...(body.props || {}) };
    delete props.add_channel_member; delete props.force_notification;
    if (user.is_bot) props.from_bot = 'true';
    const message = body.message || '';
    const t = createAt || now();
    const post = {
      id: newId(), create_at: t, update_at: t, edit_at: 0, delete_at: 0, is_pinned: false,
      user_id: user.id, channel_id: channelId, root_id: rootId, original_id: '', message, type,
      props, hashtags: parseHashtags(message), file_ids: fileIds, has_reactions: false, edits: [],
    };
    // Post.IsValid (store Save)
    if (runeCount(message) > opt.maxPostRunes) {
      throw new AppError(400, 'model.post.is_valid.message_length.app_error',
        { Length: runeCount(message), MaxLength: opt.maxPostRunes });
    }
    if (runeCount(JSON.stringify(fileIds)) > 300) throw new AppError(400, 'model.post.is_valid.file_ids.app_error');
    insertRow(post);
    posts.set(post.id, post);
    channel.last_post_at = Math.max(channel.last_post_at, t);
    channel.total_msg_count++;
    if (!rootId) { channel.total_msg_count_root++; channel.last_root_post_at = Math.max(channel.last_root_post_at, t); }
    if (root) root.update_at = t; // SaveMultiple: UPDATE Posts SET UpdateAt = reply.CreateAt
    // attachFilesToPost: only this user's files not yet on a post; others are dropped
    post.file_ids = fileIds.filter((id) => {
      const f = files.get(id);
      if (!f || f.info.post_id || f.info.user_id !== user.id) return false;
      f.info.post_id = post.id; f.info.channel_id = channelId;
      return true;
    });
    if (pendingId) pendingPostIds.set(pendingId, { postId: post.id, expires: now() + opt.dedupeTtlMs });
    const json = postJSON(post, { pending_post_id: pendingId, reply_count: rootId ? replyCount(rootId) : 0 });
    // the posted event
    const data = {
      channel_display_name: channelDisplayName(channel, user), channel_name: channel.name,
      channel_type: channel.type, post: goJSON(json), sender_name: '@' + user.username,
      set_online: true, team_id: channel.team_id,
    };
    if (post.file_ids.length) {
      data.otherFile = 'true';
      if (post.file_ids.some((id) => files.get(id)?.info.mime_type.startsWith('image'))) data.image = 'true';
    }
    publish({ event: 'posted', data, broadcast: { channel_id: channelId }, mentions: mentionedUsers(post, channel) });
    return { post, json, created: true };
  } catch (e) {
    if (pendingId) pendingPostIds.delete(pendingId);
    throw e;
  }
}

// App.UpdatePost with the store's Update: the old version becomes a row of its own.
function updatePost(user, post, changes) {
  if (post.delete_at !== 0) throw new AppError(400, 'api.post.update_post.permissions_details.app_error', { PostId: post.id });
  const t = now();
  const old = { ...post, props: { ...post.props }, file_ids: [...post.file_ids], edits: [] };
  if (changes.message !== undefined && changes.message !== post.message) {
    if (runeCount(changes.message) > opt.maxPostRunes) {
      throw new AppError(400, 'model.post.is_valid.message_length.app_error',
        { Length: runeCount(changes.message), MaxLength: opt.maxPostRunes });
    }
    post.message = changes.message;
    post.edit_at = t;
    post.hashtags = parseHashtags(changes.message);
  }
  if (changes.is_pinned !== undefined) post.is_pinned = changes.is_pinned;
  if (changes.props !== undefined) {
    post.props = { ...(changes.props || {}) };
    delete post.props.add_channel_member; delete post.props.force_notification;
  }
  if (changes.message !== undefined) post.edits.push({ t, message: changes.message });
  post.update_at = t;
  old.id = newId();
  old.original_id = post.id;
  old.delete_at = t;
  old.update_at = t;
  const i = postRows.indexOf(post);
  insertRow(old, i + 1); // not significant, but keeps a post's history next to it
  posts.set(old.id, old);
  if (post.root_id) {
    const root = posts.get(post.root_id);
    if (root && root.update_at < t) root.update_at = t;
  }
  const json = postJSON(post);
  publish({ event: 'post_edited', data: { post: goJSON(json) }, broadcast: { channel_id: post.channel_id } });
  return json;
}

function patchPost(user, postId, patch) {
  const post = posts.get(postId);
  // postPatchChecks: a post that cannot be read is a permission error, not a 404
  if (!post || post.delete_at !== 0) throw permissionError();
  const channel = channels.get(post.channel_id);
  if (!isMember(channel, user.id) || post.user_id !== user.id) throw permissionError();
  return updatePost(user, post, patch);
}

function deletePost(user, postId) {
  const post = posts.get(postId);
  if (!post || post.delete_at !== 0) throw new AppError(404, 'app.post.get.app_error');
  const channel = channels.get(post.channel_id);
  if (!isMember(channel, user.id) || post.user_id !== user.id) throw permissionError();
  const before = postJSON(post);
  const t = now();
  for (const r of postRows) {
    if ((r.id === post.id || r.root_id === post.id) && r.delete_at === 0) {
      r.delete_at = t; r.update_at = t; r.props = { ...r.props, deleteBy: user.id };
      for (const id of r.file_ids) { const f = files.get(id); if (f) f.info.delete_at = t; }
    }
  }
  // the non-admin copy (ContainsSanitizedData): no delete_by; the post as it was before
  publish({ event: 'post_deleted', data: { post: goJSON(before) }, broadcast: { channel_id: post.channel_id } });
}

function saveReaction(user, body) {
  if (!body || typeof body !== 'object' || !isValidId(body.user_id) || !isValidId(body.post_id) ||
      typeof body.emoji_name !== 'string' || body.emoji_name === '' || body.emoji_name.length > 64) {
    throw new AppError(400, 'api.reaction.save_reaction.invalid.app_error');
  }
  if (body.user_id !== user.id) throw new AppError(403, 'api.reaction.save_reaction.user_id.app_error');
  const post = posts.get(body.post_id);
  if (!post || !isMember(channels.get(post.channel_id), user.id)) throw permissionError();
  if (post.delete_at !== 0) throw new AppError(404, 'app.post.get.app_error');
  if (!/^[a-zA-Z0-9\-+_]+$/.test(body.emoji_name)) throw new AppError(400, 'model.reaction.is_valid.emoji_name.app_error');
  const key = `${post.id}|${user.id}|${body.emoji_name}`;
  const t = now();
  let r = reactions.get(key);
  if (r) { r.update_at = t; r.delete_at = 0; } else {
    r = { user_id: user.id, post_id: post.id, emoji_name: body.emoji_name, create_at: t,
      update_at: t, delete_at: 0, channel_id: post.channel_id };
    reactions.set(key, r);
  }
  post.has_reactions = true;
  post.update_at = t; // updatePostForReactionsOnInsert bumps the reacted post itself
  const json = reactionJSON(r);
  publish({ event: 'reaction_added', data: { reaction: goJSON(json) }, broadcast: { channel_id: post.channel_id } });
  return json;
}

function removeReaction(user, userId, postId, emoji) {
  const post = posts.get(postId);
  if (!post || !isMember(channels.get(post.channel_id), user.id)) throw permissionError();
  if (userId !== user.id) throw permissionError();
  if (post.delete_at !== 0) throw new AppError(404, 'app.post.get.app_error');
  const r = reactions.get(`${postId}|${userId}|${emoji}`);
  const t = now();
  // the event carries the request's reaction after PreUpdate: only update_at is set
  const json = { user_id: userId, post_id: postId, emoji_name: emoji, create_at: 0,
    update_at: t, delete_at: 0, remote_id: '', channel_id: '' };
  if (r) { r.update_at = t; r.delete_at = t; }
  post.update_at = t;
  post.has_reactions = activeReactions(postId).length > 0;
  publish({ event: 'reaction_removed', data: { reaction: goJSON(json) }, broadcast: { channel_id: post.channel_id } });
}

function publishTyping(userId, channelId, parentId, via) {
  typingLog.push({ t: now(), user_id: userId, channel_id: channelId, parent_id: parentId, via });
  publish({ event: 'typing', data: { parent_id: parentId, user_id: userId },
    broadcast: { channel_id: channelId, omit_users: { [userId]: true } } });
}

// Go's mime.TypeByExtension (built-in table plus a Debian /etc/mime.types) for common names.
const MIME = {
  avif: 'image/avif', css: 'text/css; charset=utf-8', gif: 'image/gif', htm: 'text/html; charset=utf-8',
  html: 'text/html; charset=utf-8', jpeg: 'image/jpeg', jpg: 'image/jpeg',
  js: 'text/javascript; charset=utf-8', mjs: 'text/javascript; charset=utf-8', json: 'application/json',
  pdf: 'application/pdf', png: 'image/png', svg: 'image/svg+xml', wasm: 'application/wasm',
  webp: 'image/webp', xml: 'text/xml; charset=utf-8', txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8', csv: 'text/csv; charset=utf-8', zip: 'application/zip',
  gz: 'application/gzip', tar: 'application/x-tar', mp3: 'audio/mpeg', mp4: 'video/mp4',
  wav: 'audio/x-wav', bmp: 'image/bmp', tif: 'image/tiff', tiff: 'image/tiff',
};

// Go's filepath.Base on Linux: only '/' separates ("..\x" and ".." survive, as on the real
// server).
function goBase(p) {
  if (p === '') return '.';
  p = p.replace(/\/+$/, '');
  if (p === '') return '/';
  return p.slice(p.lastIndexOf('/') + 1);
}

function storeFile(user, channelId, name, data, mimeType, rawName = false) {
  const base = rawName ? name : goBase(name);
  const dot = base.lastIndexOf('.');
  const ext = dot >= 0 ? base.slice(dot + 1).toLowerCase() : '';
  const t = now();
  const info = { id: newId(), user_id: user.id, post_id: '', channel_id: channelId, create_at: t,
    update_at: t, delete_at: 0, name: base, extension: ext, size: data.length,
    mime_type: mimeType ?? (MIME[ext] || '') };
  const f = { info, data };
  files.set(info.id, f);
  return f;
}

function canReadFile(f, uid) {
  if (f.info.user_id === uid) return true;
  if (!f.info.post_id) return false;
  const p = posts.get(f.info.post_id);
  return !!p && isMember(channels.get(p.channel_id), uid);
}

// ---------------------------------------------------------------- REST routes

const routes = [];
const route = (method, pattern, handler, opts = {}) =>
  routes.push({ method, re: new RegExp('^/api/v4' + pattern + '$'), handler, session: opts.session ?? true });

function resolveUserId(ctx, id) { return id === 'me' ? ctx.user.id : id; }
function requireUserId(ctx, id) { const u = resolveUserId(ctx, id); if (!isValidId(u)) throw invalidUrl('user_id'); return u; }
function parseJSONBody(ctx, name) {
  try {
    const text = ctx.body.toString('utf8');
    return JSON.parse(text);
  } catch { throw invalidBody(name); }
}

route('GET', '/system/ping', () => ({ status: 200, body: { ActiveSearchBackend: 'database', AndroidLatestVersion: '', AndroidMinVersion: '', IosLatestVersion: '', IosMinVersion: '', status: 'OK' } }), { session: false });

route('GET', '/users/me', (ctx) => ({ status: 200, body: userJSON(ctx.user), newline: true }));
route('GET', '/users/username/([^/]+)', (ctx, name) => {
  name = decodeURIComponent(name);
  // model.IsValidUsername: lowercase letters, digits, . - _; 1 to 64; not a restricted name
  if (!/^[a-z0-9.\-_]{1,64}$/.test(name) || ['all', 'channel', 'matterbot', 'system'].includes(name)) throw invalidBody('username');
  const u = [...users.values()].find((x) => x.username === name);
  if (!u) throw new AppError(404, 'app.user.get_by_username.app_error');
  return { status: 200, body: userJSON(u), newline: true };
});
route('GET', '/users/([^/]+)', (ctx, id) => {
  const uid = requireUserId(ctx, id);
  const u = users.get(uid);
  if (!u) throw new AppError(404, 'app.user.missing_account.const');
  return { status: 200, body: userJSON(u), newline: true };
});
route('GET', '/users/([^/]+)/channels', (ctx, id) => {
  const uid = requireUserId(ctx, id);
  if (uid !== ctx.user.id) throw permissionError();
  const list = [...channels.values()].filter((c) => c.members.has(uid) && c.delete_at === 0).map(channelJSON);
  return { status: 200, body: list, newline: true };
});
route('GET', '/users/([^/]+)/teams', (ctx, id) => {
  const uid = requireUserId(ctx, id);
  if (uid !== ctx.user.id) throw permissionError();
  return { status: 200, body: teamMembers.has(uid) ? [team] : [], newline: true };
});
route('GET', '/users/([^/]+)/teams/([^/]+)/channels', (ctx, id, tid) => {
  const uid = requireUserId(ctx, id);
  if (uid !== ctx.user.id) throw permissionError();
  const list = [...channels.values()].filter((c) => c.members.has(uid) && (c.team_id === tid || c.team_id === '')).map(channelJSON);
  return { status: 200, body: list, newline: true };
});
route('POST', '/users/([^/]+)/typing', (ctx, id) => {
  const uid = requireUserId(ctx, id);
  let b;
  try { b = JSON.parse(ctx.body.toString('utf8')); } catch { throw invalidBody('typing_request'); }
  if (b === null || typeof b !== 'object' || !checkStringFields(b, ['channel_id', 'parent_id'])) throw invalidBody('typing_request');
  if (uid !== ctx.user.id) throw permissionError();
  if (!isMember(channels.get(b.channel_id), uid)) throw permissionError();
  publishTyping(uid, b.channel_id, b.parent_id || '', 'rest');
  return { status: 200, body: { status: 'OK' } };
});

route('GET', '/teams/([^/]+)', (ctx, tid) => {
  if (!isValidId(tid)) throw invalidUrl('team_id');
  if (tid !== team.id) throw new AppError(404, 'app.team.get.find.app_error');
  if (!teamMembers.has(ctx.user.id)) throw permissionError();
  return { status: 200, body: team, newline: true };
});
route('POST', '/teams/([^/]+)/members', (ctx, tid) => {
  if (!isValidId(tid)) throw invalidUrl('team_id');
  const b = parseJSONBody(ctx, 'team_member');
  if (!b || typeof b !== 'object' || b.team_id !== tid || !isValidId(b.user_id)) throw invalidBody('team_id');
  if (tid !== team.id) throw new AppError(404, 'app.team.get.find.app_error');
  if (!teamMembers.has(ctx.user.id)) throw permissionError();
  if (!users.has(b.user_id)) throw new AppError(404, 'app.user.missing_account.const');
  teamMembers.add(b.user_id);
  publish({ event: 'added_to_team', data: { team_id: tid, user_id: b.user_id }, broadcast: { user_id: b.user_id } });
  return { status: 201, body: { team_id: tid, user_id: b.user_id, roles: 'team_user', delete_at: 0, scheme_guest: false, scheme_user: true, scheme_admin: false, explicit_roles: '' }, newline: true };
});
route('GET', '/teams/([^/]+)/channels/name/([^/]+)', (ctx, tid, name) => {
  if (!isValidId(tid)) throw invalidUrl('team_id');
  name = decodeURIComponent(name);
  const c = [...channels.values()].find((x) => x.team_id === tid && x.name === name && x.delete_at === 0);
  if (!c || !canReadChannel(c, ctx.user.id)) throw new AppError(404, 'app.channel.get_by_name.missing.app_error');
  return { status: 200, body: channelJSON(c), newline: true };
});

route('POST', '/channels', (ctx) => {
  const b = parseJSONBody(ctx, 'channel');
  if (!b || typeof b !== 'object') throw invalidBody('channel');
  if ((b.type !== 'O' && b.type !== 'P') || b.team_id !== team.id || !teamMembers.has(ctx.user.id)) throw permissionError();
  if (typeof b.display_name !== 'string' || b.display_name.trim() === '') throw new AppError(400, 'model.channel.is_valid.display_name.app_error');
  if (typeof b.name !== 'string' || !/^[a-z0-9]+([a-z\-_0-9]+|(__)?)[a-z0-9]*$/.test(b.name) || b.name.length > 64) throw new AppError(400, 'model.channel.is_valid.name.app_error');
  if ([...channels.values()].some((c) => c.team_id === b.team_id && c.name === b.name)) throw new AppError(400, 'store.sql_channel.save_channel.exists.app_error');
  const c = makeChannel({ type: b.type, name: b.name, display_name: b.display_name, team_id: b.team_id, members: [ctx.user.id], creator_id: ctx.user.id });
  publish({ event: 'channel_created', data: { channel_id: c.id, team_id: c.team_id }, broadcast: { user_id: ctx.user.id } });
  return { status: 201, body: channelJSON(c), newline: true };
});
route('GET', '/channels/([^/]+)', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('channel_id');
  const c = channels.get(id);
  if (!c) throw new AppError(404, 'app.channel.get.existing.app_error');
  if (!canReadChannel(c, ctx.user.id)) throw permissionError();
  return { status: 200, body: channelJSON(c), newline: true };
});
route('POST', '/channels/([^/]+)/members', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('channel_id');
  const b = parseJSONBody(ctx, 'user_id');
  if (!b || typeof b !== 'object' || !isValidId(b.user_id)) throw invalidBody('user_id');
  const c = channels.get(id);
  if (!c) throw new AppError(404, 'app.channel.get.existing.app_error');
  // As addChannelMember: an open channel takes any team member adding themselves
  // (join_public_channels) or others (manage_public_channel_members, a team_user permission);
  // a private one needs a member (its channel roles).
  if (c.type === 'D' || c.type === 'G') throw permissionError();
  if (c.type === 'O' ? !isTeamMember(ctx.user.id, c.team_id) : !isMember(c, ctx.user.id)) throw permissionError();
  if (!users.has(b.user_id)) throw new AppError(404, 'app.user.missing_account.const');
  if (!teamMembers.has(b.user_id)) throw new AppError(404, 'app.team.get_member.missing.app_error');
  const added = !c.members.has(b.user_id);
  addMember(c, b.user_id);
  if (added) postAddedToChannel(c, ctx.user, users.get(b.user_id));
  return { status: 201, body: channelMemberJSON(c, b.user_id), newline: true };
});
route('GET', '/channels/([^/]+)/posts', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('channel_id');
  const q = ctx.query;
  const sinceStr = q.get('since') || '';
  let since = 0;
  if (sinceStr !== '') {
    if (!/^-?\d+$/.test(sinceStr)) throw invalidBody('since');
    since = Number(sinceStr);
  }
  const c = channels.get(id);
  if (!c) throw new AppError(404, 'app.channel.get.existing.app_error');
  if (!canReadChannel(c, ctx.user.id)) throw permissionError();
  const skipThreads = q.get('skipFetchThreads') === 'true' || q.get('skipFetchThreads') === '1';
  const rc = (p) => (skipThreads ? replyCount(p.root_id || p.id) : 0);
  const list = { order: [], posts: {}, next_post_id: '', prev_post_id: '' };
  if (since > 0) {
    // GetPostsSince: every row updated after `since` (edit-history and deleted rows included)
    // plus the roots of those rows; `order` lists only the updated rows; newest first
    const rows = postRows.filter((p) => p.channel_id === id && p.update_at > since).slice(0, 1000);
    const roots = rows.filter((p) => p.root_id).map((p) => posts.get(p.root_id)).filter(Boolean);
    const all = [...new Map([...rows, ...roots].map((p) => [p.id, p])).values()]
      .sort((a, b) => b.create_at - a.create_at);
    for (const p of all) {
      list.posts[p.id] = postJSON(p, { reply_count: rc(p) });
      if (p.update_at > since) list.order.push(p.id);
    }
  } else {
    const page = Math.max(0, parseInt(q.get('page') || '0', 10) || 0);
    let perPage = parseInt(q.get('per_page') || '60', 10);
    if (Number.isNaN(perPage) || perPage < 0) perPage = 60;
    perPage = Math.min(perPage, 200);
    const live = postRows.filter((p) => p.channel_id === id && p.delete_at === 0)
      .sort((a, b) => b.create_at - a.create_at);
    const pageRows = live.slice(page * perPage, page * perPage + perPage);
    for (const p of pageRows) { list.posts[p.id] = postJSON(p, { reply_count: rc(p) }); list.order.push(p.id); }
    const rootIds = new Set();
    for (const p of pageRows) { rootIds.add(p.id); if (p.root_id) rootIds.add(p.root_id); }
    for (const p of live) {
      if (list.posts[p.id]) continue;
      if (rootIds.has(p.id) || (!skipThreads && rootIds.has(p.root_id))) list.posts[p.id] = postJSON(p, { reply_count: rc(p) });
    }
    if (pageRows.length) {
      const first = pageRows[0], last = pageRows[pageRows.length - 1];
      const newer = live.filter((p) => p.create_at > first.create_at).sort((a, b) => a.create_at - b.create_at)[0];
      const older = live.find((p) => p.create_at < last.create_at);
      list.next_post_id = newer ? newer.id : '';
      list.prev_post_id = older ? older.id : '';
    }
  }
  const sorted = {};
  for (const k of Object.keys(list.posts).sort()) sorted[k] = list.posts[k];
  list.posts = sorted;
  list.first_inaccessible_post_time = 0;
  return { status: 200, body: list, newline: true };
});

route('POST', '/posts', (ctx) => {
  let b;
  try { b = JSON.parse(ctx.body.toString('utf8')); } catch { throw invalidBody('post'); }
  if (!validPostBody(b)) throw invalidBody('post');
  const r = createPost(ctx.user, b);
  return { status: 201, body: r.json, newline: true };
});
route('GET', '/posts/([^/]+)', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('post_id');
  const p = posts.get(id);
  if (!p || p.delete_at !== 0) throw new AppError(404, 'app.post.get.app_error');
  if (!canReadChannel(channels.get(p.channel_id), ctx.user.id)) throw permissionError();
  return { status: 200, body: postJSON(p), newline: true };
});
route('PUT', '/posts/([^/]+)/patch', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('post_id');
  let b;
  try { b = JSON.parse(ctx.body.toString('utf8')); } catch { throw invalidBody('post'); }
  if (b !== null && (typeof b !== 'object' || Array.isArray(b) || !checkStringFields(b, ['message']) ||
      (b.props != null && (typeof b.props !== 'object' || Array.isArray(b.props))) ||
      (b.is_pinned != null && typeof b.is_pinned !== 'boolean'))) throw invalidBody('post');
  b = b || {};
  const patch = {};
  if (typeof b.message === 'string') patch.message = b.message;
  if (b.props != null) patch.props = b.props;
  if (typeof b.is_pinned === 'boolean') patch.is_pinned = b.is_pinned;
  return { status: 200, body: patchPost(ctx.user, id, patch), newline: true };
});
route('PUT', '/posts/([^/]+)', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('post_id');
  let b;
  try { b = JSON.parse(ctx.body.toString('utf8')); } catch { throw invalidBody('post'); }
  if (!validPostBody(b)) throw invalidBody('post');
  b = b || {};
  if (b.id !== id) throw invalidBody('id');
  const post = posts.get(id);
  if (!post || post.delete_at !== 0) throw permissionError();
  if (!isMember(channels.get(post.channel_id), ctx.user.id) || post.user_id !== ctx.user.id) throw permissionError();
  // updatePost replaces the message, is_pinned and the props (SafeUpdate false)
  return { status: 200, body: updatePost(ctx.user, post, { message: b.message || '', is_pinned: !!b.is_pinned, props: b.props || {} }), newline: true };
});
route('DELETE', '/posts/([^/]+)', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('post_id');
  deletePost(ctx.user, id);
  return { status: 200, body: { status: 'OK' } };
});
route('GET', '/posts/([^/]+)/reactions', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('post_id');
  const p = posts.get(id);
  if (!p || !isMember(channels.get(p.channel_id), ctx.user.id)) throw permissionError();
  return { status: 200, body: activeReactions(id).map(reactionJSON) };
});
route('POST', '/reactions', (ctx) => {
  let b;
  try { b = JSON.parse(ctx.body.toString('utf8')); } catch { throw invalidBody('reaction'); }
  // saveReaction answers 200 (json.NewEncoder(w).Encode without WriteHeader)
  return { status: 200, body: saveReaction(ctx.user, b), newline: true };
});
route('DELETE', '/users/([^/]+)/posts/([^/]+)/reactions/([^/]+)', (ctx, uid, pid, emoji) => {
  uid = requireUserId(ctx, uid);
  if (!isValidId(pid)) throw invalidUrl('post_id');
  emoji = decodeURIComponent(emoji);
  if (!/^[a-zA-Z0-9\-+_]+$/.test(emoji) || emoji.length > 64) throw invalidUrl('emoji_name');
  removeReaction(ctx.user, uid, pid, emoji);
  return { status: 200, body: { status: 'OK' } };
});

route('POST', '/files', async (ctx) => {
  const ct = ctx.req.headers['content-type'] || '';
  if (ctx.body.length === 0) throw new AppError(400, 'api.file.upload_file.read_request.app_error', null, 'Content-Length should not be 0');
  if (!/^multipart\/form-data/i.test(ct)) {
    // uploadFileSimple: ?channel_id=&filename=, the body is the file
    const channelId = ctx.query.get('channel_id') || '';
    const filename = ctx.query.get('filename') || '';
    if (!isValidId(channelId)) throw invalidUrl('channel_id');
    if (!filename) throw invalidUrl('filename');
    if (!isMember(channels.get(channelId), ctx.user.id)) throw permissionError();
    const f = storeFile(ctx.user, channelId, filename, ctx.body);
    const clientId = ctx.query.get('client_id') || '';
    const resp = { file_infos: [fileInfoJSON(f)] };
    if (clientId) resp.client_ids = [clientId];
    return { status: 201, body: resp, newline: true };
  }
  let form;
  try {
    form = await new Request('http://localhost/', { method: 'POST', headers: { 'content-type': ct }, body: ctx.body }).formData();
  } catch (e) {
    throw new AppError(400, 'api.file.upload_file.read_request.app_error', null, String(e.message || e));
  }
  let channelId = ctx.query.get('channel_id') || '';
  const clientIds = [];
  const parts = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') {
      if (name === 'channel_id') {
        if (channelId && value && channelId !== value) throw new AppError(400, 'api.file.upload_file.multiple_channel_ids.app_error');
        if (value) channelId = value;
      } else if (name === 'client_ids') clientIds.push(value);
      else throw invalidBody(name);
    } else parts.push(value);
  }
  if (clientIds.length && clientIds.length !== parts.length) {
    throw new AppError(400, 'api.file.upload_file.incorrect_number_of_client_ids.app_error', { NumClientIds: clientIds.length, NumFiles: parts.length });
  }
  // no file part: the real handler never looks at channel_id and answers an empty list
  if (!parts.length) return { status: 201, body: { file_infos: [], client_ids: [] }, newline: true };
  if (!channelId) throw invalidBody('channel_id');
  if (!isValidId(channelId)) throw invalidUrl('channel_id');
  if (!isMember(channels.get(channelId), ctx.user.id)) throw permissionError();
  const infos = [];
  for (const p of parts) {
    const data = Buffer.from(await p.arrayBuffer());
    infos.push(fileInfoJSON(storeFile(ctx.user, channelId, p.name || 'file', data)));
  }
  return { status: 201, body: { file_infos: infos, client_ids: clientIds }, newline: true };
});
route('GET', '/files/([^/]+)', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('file_id');
  const f = files.get(id);
  if (!f || f.info.delete_at !== 0) throw new AppError(404, 'app.file_info.get.app_error');
  if (!canReadFile(f, ctx.user.id)) throw permissionError();
  let ct = f.info.mime_type || 'application/octet-stream';
  if (/^(application\/javascript|application\/ecmascript|text\/javascript|text\/ecmascript|application\/x-javascript|text\/html)/.test(ct)) ct = 'text/plain';
  const media = /^(image\/jpeg|image\/png|image\/bmp|image\/gif|image\/tiff|video\/avi|video\/mpeg|video\/mp4|audio\/mpeg|audio\/wav)/.test(ct);
  const download = ['true', '1', 't', 'T', 'TRUE', 'True'].includes(ctx.query.get('download') || '') || !media;
  const fname = encodeURIComponent(f.info.name);
  return {
    status: 200, raw: f.data, contentType: ct,
    headers: { 'Cache-Control': 'private, no-cache', 'X-Frame-Options': 'DENY',
      'Content-Security-Policy': "Frame-ancestors 'none'",
      'Content-Disposition': `${download ? 'attachment' : 'inline'};filename="${fname}"; filename*=UTF-8''${fname}`,
      'Last-Modified': new Date(f.info.update_at).toUTCString() },
  };
});
route('GET', '/files/([^/]+)/info', (ctx, id) => {
  if (!isValidId(id)) throw invalidUrl('file_id');
  const f = files.get(id);
  if (!f || f.info.delete_at !== 0) throw new AppError(404, 'app.file_info.get.app_error');
  if (!canReadFile(f, ctx.user.id)) throw permissionError();
  return { status: 200, body: fileInfoJSON(f) };
});

// ---------------------------------------------------------------- HTTP plumbing

function baseHeaders(reqId, method) {
  const h = { 'X-Request-Id': reqId, 'X-Version-Id': serverVersionHeader(), 'Permissions-Policy': '',
    'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };
  if (method === 'GET') h.Expires = '0';
  return h;
}

function writeResponse(res, status, headers, body) {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(status, { ...headers, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req, limit) {
  return new Promise((resolve) => {
    const chunks = []; let size = 0; let over = false;
    req.on('data', (c) => { size += c.length; if (size > limit) over = true; else chunks.push(c); });
    req.on('end', () => resolve({ body: Buffer.concat(chunks), over }));
    req.on('error', () => resolve({ body: Buffer.concat(chunks), over, error: true }));
  });
}

function logBody(req, body) {
  if (!body.length) return null;
  const ct = req.headers['content-type'] || '';
  if (/^multipart\//i.test(ct)) return `<multipart/form-data, ${body.length} bytes>`;
  const text = body.toString('utf8');
  try { return JSON.parse(text); } catch { return text.length > 65536 ? text.slice(0, 65536) + '…' : text; }
}

function rateLimitAnswer(res, reqId, headers) {
  const body = 'limit exceeded\n';
  writeResponse(res, 429, { ...headers, 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' }, body);
}

function matchFailRule(method, path) {
  for (const r of failRules) {
    if (r.method && r.method.toUpperCase() !== method) continue;
    if (!r.re.test(path)) continue;
    if (r.count > 0) r.count--;
    if (r.count === 0) failRules = failRules.filter((x) => x !== r);
    return r;
  }
  return null;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Answers a scripted failure; returns false if the rule only delays the real answer.
async function applyFailRule(rule, req, res, socket, reqId, entry) {
  if (rule.delay_ms) await sleep(rule.delay_ms);
  if (rule.drop) { entry.status = 0; entry.scripted = 'drop'; (socket || req.socket).destroy(); return true; }
  if (!rule.status) return false;
  entry.status = rule.status; entry.scripted = true;
  const headers = { ...baseHeaders(reqId, req.method), ...(rule.headers || {}) };
  if (socket) {
    // a WebSocket upgrade refused by the script
    const body = typeof rule.body === 'string' ? rule.body : goJSON(rule.body ?? new AppError(rule.status, 'test.scripted_failure.app_error').json(reqId));
    const ct = typeof rule.body === 'string' ? 'text/plain; charset=utf-8' : 'application/json';
    socket.end(`HTTP/1.1 ${rule.status} ${http.STATUS_CODES[rule.status] || 'Error'}\r\nContent-Type: ${ct}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
    return true;
  }
  if (rule.status === 429 && rule.body === undefined) {
    const ra = String(rule.retry_after_s ?? 1);
    rateLimitAnswer(res, reqId, { ...baseHeaders(reqId, req.method), 'X-Ratelimit-Limit': '1', 'X-Ratelimit-Remaining': '0', 'X-Ratelimit-Reset': ra, 'Retry-After': ra, ...(rule.headers || {}) });
    return true;
  }
  if (typeof rule.body === 'string') {
    writeResponse(res, rule.status, { 'Content-Type': 'text/plain; charset=utf-8', ...headers }, rule.body);
  } else {
    const body = rule.body ?? new AppError(rule.status, 'test.scripted_failure.app_error').json(reqId);
    writeResponse(res, rule.status, { 'Content-Type': 'application/json', ...headers }, goJSON(body));
  }
  return true;
}

async function handleApi(req, res, url) {
  const reqId = newId();
  const path = url.pathname;
  const entry = { t: performance.timeOrigin + performance.now(), method: req.method, path,
    query: Object.fromEntries(url.searchParams), user_id: null, status: 0, body: null };
  requestLog.push(entry);
  const limit = path === '/api/v4/files' ? 100 * 1024 * 1024 : 300000 + 512;
  const { body, over } = await readBody(req, limit);
  entry.body = logBody(req, body);
  const rule = matchFailRule(req.method, path);
  if (rule && await applyFailRule(rule, req, res, null, reqId, entry)) return;

  const headers = baseHeaders(reqId, req.method);
  const { token, loc } = parseAuthToken(req, url.searchParams);
  if (opt.rateLimit > 0) {
    const r = rateLimit(token || req.socket.remoteAddress);
    Object.assign(headers, rateLimitHeaders(r));
    if (r.limited) { entry.status = 429; rateLimitAnswer(res, reqId, headers); return; }
  }
  const fail = (err) => {
    entry.status = err.status;
    writeResponse(res, err.status, { ...headers, 'Content-Type': 'application/json' }, goJSON(err.json(reqId)));
  };
  let match = null, args = [];
  for (const r of routes) {
    if (r.method !== req.method) continue;
    const m = r.re.exec(path);
    if (m) { match = r; args = m.slice(1); break; }
  }
  if (!match && /^\/api\/v4\/websocket\/?$/.test(path) && req.method === 'GET') {
    return fail(new AppError(400, 'api.web_socket.connect.upgrade.app_error', { BlockedOrigin: '' }));
  }
  if (!match) {
    const e = new AppError(404, 'api.context.404.app_error', null,
      `There doesn't appear to be an api call for the url='${path}'.  Typo? are you missing a team_id or user_id as part of the url?`);
    return fail(e);
  }
  let user = null;
  if (token) {
    const uid = tokens.get(token);
    if (!uid) {
      if (match.session) return fail(new AppError(401, 'api.context.session_expired.app_error'));
    } else if (loc === 'query') {
      return fail(new AppError(401, 'api.context.token_provided.app_error'));
    } else if (loc === 'cookie' && req.method !== 'GET' && req.headers['x-requested-with'] !== 'XMLHttpRequest' && !req.headers['x-csrf-token']) {
      return fail(new AppError(401, 'api.context.session_expired.app_error'));
    } else user = users.get(uid);
  }
  if (match.session && !user) return fail(new AppError(401, 'api.context.session_expired.app_error'));
  entry.user_id = user ? user.id : null;
  if (over) return fail(new AppError(413, 'api.context.request_body_too_large.app_error'));
  try {
    const out = await match.handler({ req, res, url, query: url.searchParams, user, body, reqId }, ...args);
    entry.status = out.status;
    if (out.raw) {
      writeResponse(res, out.status, { ...headers, ...(out.headers || {}), 'Content-Type': out.contentType }, out.raw);
    } else {
      const text = goJSON(out.body) + (out.newline ? '\n' : '');
      writeResponse(res, out.status, { ...headers, 'Content-Type': 'application/json' }, text);
    }
  } catch (e) {
    if (e instanceof AppError) return fail(e);
    log('handler error', e && e.stack);
    return fail(new AppError(500, 'app.unknown.error', null, String(e)));
  }
}

// ---------------------------------------------------------------- control API

function makeChannel(spec) {
  const t = now();
  const members = [...new Set(spec.members || [])];
  let name = spec.name, display = spec.display_name;
  if (spec.type === 'D') {
    if (!name && members.length === 2) name = dmName(members[0], members[1]);
    display = display ?? '';
  } else if (spec.type === 'G') {
    if (!name) name = crypto.createHash('sha1').update([...members].sort().join(',')).digest('hex');
    display = display ?? members.map((id) => users.get(id)?.username).filter(Boolean).sort().join(', ');
  }
  const c = {
    id: spec.id || newId(), create_at: t, update_at: t, delete_at: 0,
    team_id: spec.type === 'D' || spec.type === 'G' ? '' : (spec.team_id || team.id),
    type: spec.type, display_name: display ?? name, name, creator_id: spec.creator_id || '',
    last_post_at: t, total_msg_count: 0, total_msg_count_root: 0, last_root_post_at: t,
    members: new Set(members),
  };
  channels.set(c.id, c);
  return c;
}

function addMember(c, uid) {
  if (c.members.has(uid)) return;
  c.members.add(uid);
  c.update_at = now();
  publish({ event: 'user_added', data: { team_id: c.team_id, user_id: uid }, broadcast: { channel_id: c.id } });
}

// PostAddToChannelMessage: the system post a member addition leaves in the channel.
function postAddedToChannel(c, by, added) {
  const t = now();
  const post = {
    id: newId(), create_at: t, update_at: t, edit_at: 0, delete_at: 0, is_pinned: false,
    user_id: by.id, channel_id: c.id, root_id: '', original_id: '',
    message: `${added.username} added to the channel by ${by.username}.`, type: 'system_add_to_channel',
    props: { addedUserId: added.id, addedUsername: added.username, userId: by.id, username: by.username },
    hashtags: '', file_ids: [], has_reactions: false, edits: [],
  };
  insertRow(post); posts.set(post.id, post);
  c.last_post_at = t;
  publish({ event: 'posted', data: { channel_display_name: c.display_name, channel_name: c.name,
    channel_type: c.type, post: goJSON(postJSON(post)), sender_name: '@' + by.username,
    set_online: true, team_id: c.team_id }, broadcast: { channel_id: c.id } });
}

class ControlError extends Error { constructor(status, msg) { super(msg); this.status = status; } }
const need = (cond, msg, status = 400) => { if (!cond) throw new ControlError(status, msg); };
function needUser(id) { const u = users.get(id); need(u, `unknown user ${id}`, 404); return u; }

function connInfo(s) {
  return { user_id: s.conn.userId || null, connection_id: s.conn.connectionId,
    authenticated: !!s.conn.userId, auth: s.conn.auth || null, seq: s.conn.seq, resumed: s.resumed,
    connected_at: s.connected_at, closed_at: s.closed_at, close_code: s.close_code,
    remote_addr: s.remote_addr, upgrade_query: s.upgrade_query };
}

async function handleControl(req, res, url) {
  const { body } = await readBody(req, 200 * 1024 * 1024);
  let b = {};
  if (body.length) {
    try { b = JSON.parse(body.toString('utf8')); } catch { return sendControl(res, 400, { error: 'body is not JSON' }); }
  }
  b = b || {};
  const p = url.pathname, m = req.method;
  let mm;
  try {
    if (m === 'GET' && p === '/_test/state') {
      return sendControl(res, 200, { team, users: [...users.values()].map((u) => ({ id: u.id, username: u.username, token: u.token, is_bot: u.is_bot, in_team: teamMembers.has(u.id) })),
        channels: [...channels.values()].map((c) => ({ ...channelJSON(c), members: [...c.members] })) });
    }
    if (m === 'POST' && p === '/_test/users') {
      need(typeof b.username === 'string' && b.username, 'username is required');
      need(![...users.values()].some((u) => u.username === b.username), 'username taken');
      const id = b.id || newId();
      need(isValidId(id) && !users.has(id), 'bad or duplicate id');
      const token = b.token || newId();
      need(!tokens.has(token), 'token taken');
      const t = now();
      const u = { id, username: b.username, is_bot: !!b.is_bot, token, create_at: t, update_at: t,
        email: b.is_bot ? `${b.username}@localhost` : `${b.username}@example.com` };
      users.set(id, u); tokens.set(token, id);
      if (b.in_team !== false) teamMembers.add(id);
      return sendControl(res, 200, { id, username: u.username, token, is_bot: u.is_bot });
    }
    if (m === 'POST' && p === '/_test/channels') {
      need(['O', 'P', 'D', 'G'].includes(b.type), 'type must be O, P, D or G');
      const members = b.members || [];
      members.forEach(needUser);
      if (b.type === 'D') need(members.length === 2 || members.length === 1, 'a D channel has two members');
      if (b.type !== 'D' && b.type !== 'G') need(typeof b.name === 'string' && b.name, 'name is required');
      if (b.id) need(isValidId(b.id) && !channels.has(b.id), 'bad or duplicate id');
      const c = makeChannel({ ...b, members });
      return sendControl(res, 200, { ...channelJSON(c), members: [...c.members] });
    }
    if ((mm = /^\/_test\/channels\/([^/]+)\/members$/.exec(p)) && m === 'POST') {
      const c = channels.get(mm[1]); need(c, 'unknown channel', 404);
      const added = needUser(b.user_id);
      const isNew = !c.members.has(added.id);
      addMember(c, added.id);
      if (isNew && b.system_post) postAddedToChannel(c, needUser(b.by_user_id || added.id), added);
      return sendControl(res, 200, { ...channelJSON(c), members: [...c.members] });
    }
    if ((mm = /^\/_test\/channels\/([^/]+)\/members\/([^/]+)$/.exec(p)) && m === 'DELETE') {
      const c = channels.get(mm[1]); need(c, 'unknown channel', 404);
      if (c.members.has(mm[2])) {
        publish({ event: 'user_removed', data: { channel_id: c.id, remover_id: mm[2], user_id: mm[2] }, broadcast: { channel_id: c.id } });
        c.members.delete(mm[2]);
        publish({ event: 'user_removed', data: { channel_id: c.id, remover_id: mm[2] }, broadcast: { user_id: mm[2] } });
      }
      return sendControl(res, 200, { ...channelJSON(c), members: [...c.members] });
    }
    if (m === 'POST' && p === '/_test/posts') {
      const u = needUser(b.user_id);
      try {
        const r = createPost(u, b, { createAt: Number.isInteger(b.create_at) ? b.create_at : 0 });
        return sendControl(res, 200, r.json);
      } catch (e) { if (e instanceof AppError) return sendControl(res, e.status, e.json(newId())); throw e; }
    }
    if ((mm = /^\/_test\/posts\/([^/]+)\/(edit|delete)$/.exec(p)) && m === 'POST') {
      const post = posts.get(mm[1]); need(post, 'unknown post', 404);
      const u = needUser(b.user_id || post.user_id);
      try {
        if (mm[2] === 'edit') {
          need(typeof b.message === 'string', 'message is required');
          return sendControl(res, 200, patchPost(u, post.id, { message: b.message }));
        }
        deletePost(u, post.id);
        return sendControl(res, 200, { status: 'OK' });
      } catch (e) { if (e instanceof AppError) return sendControl(res, e.status, e.json(newId())); throw e; }
    }
    if (m === 'GET' && p === '/_test/posts') {
      const cid = url.searchParams.get('channel_id');
      const rows = postRows.map((r, i) => [r, i]).filter(([r]) => !cid || r.channel_id === cid)
        .sort((a, c) => a[0].create_at - c[0].create_at || a[1] - c[1])
        .map(([r]) => ({ ...postJSON(r), edits: r.edits, reactions: [...reactions.values()].filter((x) => x.post_id === r.id).map(reactionJSON) }));
      return sendControl(res, 200, { posts: rows });
    }
    if (m === 'POST' && p === '/_test/files') {
      const u = needUser(b.user_id);
      need(channels.has(b.channel_id), 'unknown channel', 404);
      need(typeof b.name === 'string' && b.name, 'name is required');
      const f = storeFile(u, b.channel_id, b.name, Buffer.from(b.content_base64 || '', 'base64'), b.mime_type, !!b.raw_name);
      return sendControl(res, 200, fileInfoJSON(f));
    }
    if (p === '/_test/reactions' && (m === 'POST' || m === 'DELETE')) {
      const u = needUser(b.user_id);
      try {
        if (m === 'POST') return sendControl(res, 200, saveReaction(u, { user_id: u.id, post_id: b.post_id, emoji_name: b.emoji_name }));
        removeReaction(u, u.id, b.post_id, b.emoji_name);
        return sendControl(res, 200, { status: 'OK' });
      } catch (e) { if (e instanceof AppError) return sendControl(res, e.status, e.json(newId())); throw e; }
    }
    if (m === 'GET' && p === '/_test/typing') {
      const cid = url.searchParams.get('channel_id');
      return sendControl(res, 200, { typing: typingLog.filter((t) => !cid || t.channel_id === cid) });
    }
    if (p === '/_test/log') {
      if (m === 'DELETE') { requestLog = []; return sendControl(res, 200, { status: 'OK' }); }
      if (m === 'GET') return sendControl(res, 200, { requests: requestLog });
    }
    if (p === '/_test/fail') {
      if (m === 'DELETE') { failRules = []; return sendControl(res, 200, { status: 'OK' }); }
      if (m === 'POST') {
        need(typeof b.path === 'string', 'path (a regex) is required');
        let re;
        try { re = new RegExp(b.path); } catch (e) { throw new ControlError(400, 'bad path regex: ' + e.message); }
        need(b.status || b.delay_ms || b.drop, 'one of status, delay_ms, drop is required');
        const rule = { id: ++failRuleSeq, method: b.method || '', re, status: b.status || 0,
          count: b.count === undefined ? 1 : b.count, body: b.body, headers: b.headers,
          delay_ms: b.delay_ms || 0, drop: !!b.drop, retry_after_s: b.retry_after_s };
        need(rule.count !== 0, 'count must be positive or -1');
        failRules.push(rule);
        return sendControl(res, 200, { id: rule.id });
      }
    }
    if (m === 'POST' && p === '/_test/ws/drop') {
      let n = 0;
      for (const s of socketHistory) {
        if (s.closed_at !== null || !s.ws) continue;
        if (b.user_id && s.conn.userId !== b.user_id) continue;
        n++;
        if (b.close_code) {
          try { s.ws.close(b.close_code); } catch (e) { throw new ControlError(400, 'bad close_code: ' + e.message); }
        } else s.ws.terminate();
        // as after resumeMs or a restart: a reconnect cannot resume it (new id, new hello)
        if (b.forget) hub.delete(s.conn);
      }
      if (b.refuse_ms) refuseUpgradesUntil = now() + b.refuse_ms;
      return sendControl(res, 200, { dropped: n });
    }
    if (m === 'POST' && p === '/_test/ws/send') {
      needUser(b.user_id);
      let n = 0;
      for (const s of socketHistory) {
        if (s.closed_at !== null || s.conn.userId !== b.user_id || !s.conn.active || s.conn.ws !== s.ws) continue;
        n++;
        if (typeof b.raw === 'string') s.ws.send(b.raw);
        else {
          need(typeof b.event === 'string', 'raw or event is required');
          sendEvent(s.conn, { event: b.event, data: b.data || {}, broadcast: b.broadcast || {} }, false);
        }
      }
      return sendControl(res, 200, { sent: n });
    }
    if (m === 'GET' && p === '/_test/ws') {
      return sendControl(res, 200, { connections: socketHistory.filter((s) => s.closed_at === null).map(connInfo),
        history: socketHistory.map(connInfo) });
    }
    return sendControl(res, 404, { error: `no control route ${m} ${p}` });
  } catch (e) {
    if (e instanceof ControlError) return sendControl(res, e.status, { error: e.message });
    log('control error', e && e.stack);
    return sendControl(res, 500, { error: String(e && e.message) });
  }
}

function sendControl(res, status, obj) {
  writeResponse(res, status, { 'Content-Type': 'application/json' }, JSON.stringify(obj));
}

// ---------------------------------------------------------------- WebSocket connections

const wss = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 }); // SocketMaxMessageSizeKb

function upgradeRefused(socket, status, obj, reqId) {
  const body = goJSON(obj);
  socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\nX-Request-Id: ${reqId}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

async function handleUpgrade(req, socket, head) {
  const url = new URL(req.url, 'http://localhost');
  const reqId = newId();
  if (!/^\/api\/v4\/websocket\/?$/.test(url.pathname)) { socket.destroy(); return; }
  const entry = { t: performance.timeOrigin + performance.now(), method: 'GET', path: url.pathname,
    query: Object.fromEntries(url.searchParams), user_id: null, status: 0, body: null };
  requestLog.push(entry);
  socket.on('error', () => {});
  const rule = matchFailRule('GET', url.pathname);
  if (rule && await applyFailRule(rule, req, null, socket, reqId, entry)) return;
  if (now() < refuseUpgradesUntil) {
    entry.status = 503; entry.scripted = 'refuse';
    return upgradeRefused(socket, 503, new AppError(503, 'api.context.server_busy.app_error').json(reqId), reqId);
  }
  const { token, loc } = parseAuthToken(req, url.searchParams);
  let userId = null;
  if (token) {
    const uid = tokens.get(token);
    if (uid && loc === 'query') {
      entry.status = 401;
      return upgradeRefused(socket, 401, new AppError(401, 'api.context.token_provided.app_error').json(reqId), reqId);
    }
    if (uid) userId = uid; // a bad token on the upgrade leaves the socket unauthenticated
  }
  entry.user_id = userId;
  entry.status = 101;
  wss.handleUpgrade(req, socket, head, (ws) => onConnection(ws, req, url, userId, loc));
}

function onConnection(ws, req, url, userId, authLoc) {
  const q = url.searchParams;
  const s = { ws, conn: null, resumed: false, connected_at: now(), closed_at: null, close_code: null,
    remote_addr: `${req.socket.remoteAddress}:${req.socket.remotePort}`,
    upgrade_query: Object.fromEntries(q) };
  socketHistory.push(s);
  const reqConnId = q.get('connection_id') || '';
  let conn = null;
  if (reqConnId && userId) {
    // PopulateWebConnConfig: resume a connection of this user the hub still holds
    if (!isValidId(reqConnId)) { log('invalid connection id', reqConnId); s.conn = { connectionId: reqConnId, seq: 0 }; ws.terminate(); return; }
    const old = [...hub].find((c) => c.connectionId === reqConnId && c.userId === userId);
    if (old) {
      const seqVal = q.get('sequence_number');
      if (seqVal === null || seqVal === '' || !/^\d+$/.test(seqVal)) {
        log('bad sequence_number', seqVal); s.conn = old; ws.terminate(); return;
      }
      if (old.ws && old.ws.readyState <= 1) { old.ws.terminate(); }
      conn = old;
      conn.ws = ws; conn.seq = Number(seqVal); conn.auth = authLoc; s.resumed = true;
    }
  }
  if (!conn) {
    conn = { connectionId: newId(), userId: null, auth: null, ws, seq: 0, active: false,
      deadQueue: [], pending: [], inactiveSince: 0 };
  }
  s.conn = conn;
  let authTimer = null, idleTimer = null;
  const resetIdle = () => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => { log('no pong, dropping', conn.connectionId); ws.terminate(); }, opt.idleMs);
  };
  resetIdle();
  const pingTimer = setInterval(() => { if (ws.readyState === 1) ws.ping(); }, opt.pingMs);
  ws.on('pong', resetIdle);

  if (s.resumed) {
    conn.active = true;
    const seq = conn.seq;
    if (seq !== 0) {
      const idx = conn.deadQueue.findIndex((e) => e.seq === seq);
      if (idx >= 0) {
        for (const e of conn.deadQueue.slice(idx)) { writeFrame(conn, e.text); }
        conn.seq = conn.deadQueue[conn.deadQueue.length - 1].seq + 1;
      } else if (conn.deadQueue.length && conn.deadQueue[conn.deadQueue.length - 1].seq !== seq - 1) {
        // the wanted seq is gone: a new connection id and a new hello
        conn.deadQueue = []; conn.connectionId = newId(); conn.seq = 0;
        sendEvent(conn, helloEvent(conn), false);
      }
    }
    const pending = conn.pending; conn.pending = [];
    for (const p of pending) sendEvent(conn, p.ev, p.precomputed);
  } else if (userId) {
    conn.userId = userId; conn.auth = authLoc;
    registerConn(conn);
    sendEvent(conn, helloEvent(conn), false);
  } else {
    authTimer = setTimeout(() => { if (!conn.userId) { log('not authenticated in time'); ws.terminate(); } }, opt.authTimeoutMs);
  }

  ws.on('message', (data, isBinary) => {
    if (isBinary) { log('binary frame (msgpack) not supported, closing'); ws.terminate(); return; }
    const text = data.toString('utf8');
    let r;
    try { r = JSON.parse(text); } catch { log('websocket.Decode: not JSON, closing:', JSON.stringify(text.slice(0, 200))); ws.terminate(); return; }
    // json.Decoder into model.WebSocketRequest: a wrong type is a decode error, which closes
    if (r !== null && (typeof r !== 'object' || Array.isArray(r) ||
        (r.seq != null && !Number.isSafeInteger(r.seq)) || (r.action != null && typeof r.action !== 'string') ||
        (r.data != null && (typeof r.data !== 'object' || Array.isArray(r.data))))) {
      log('websocket.Decode: bad request, closing:', JSON.stringify(text.slice(0, 200))); ws.terminate(); return;
    }
    r = r || {};
    const seq = r.seq || 0, action = r.action || '', d = r.data || {};
    if (action.startsWith('custom_')) return; // for plugins only
    const authed = !!conn.userId && conn.active;
    const err = (status, id, params) => { if (authed) wsReply(conn, seq, 'FAIL', null, new AppError(status, id, params)); };
    if (action === '') return err(400, 'api.web_socket_router.no_action.app_error');
    if (seq <= 0) return err(400, 'api.web_socket_router.bad_seq.app_error');
    if (action === 'authentication_challenge') {
      if (conn.userId) return; // already authenticated: no answer
      const uid = typeof d.token === 'string' ? tokens.get(d.token) : undefined;
      if (!uid) { log('authentication_challenge with a bad token, closing'); ws.terminate(); return; }
      conn.userId = uid; conn.auth = 'challenge';
      clearTimeout(authTimer);
      registerConn(conn);
      sendEvent(conn, helloEvent(conn), false);
      wsReply(conn, seq, 'OK');
      return;
    }
    if (!authed) return; // the not_authenticated error goes to a hub the socket is not in
    switch (action) {
      case 'ping':
        return wsReply(conn, seq, 'OK', { node_id: '', server_time: now(), text: 'pong', version: opt.serverVersion });
      case 'user_typing': {
        const cid = d.channel_id;
        if (typeof cid !== 'string' || !isValidId(cid) || !isMember(channels.get(cid), conn.userId)) {
          return err(400, 'api.websocket_handler.invalid_param.app_error', { Name: 'channel_id' });
        }
        publishTyping(conn.userId, cid, typeof d.parent_id === 'string' ? d.parent_id : '', 'ws');
        return wsReply(conn, seq, 'OK');
      }
      case 'user_update_active_status':
        if (typeof d.user_is_active !== 'boolean') return err(400, 'api.websocket_handler.invalid_param.app_error', { Name: 'user_is_active' });
        return wsReply(conn, seq, 'OK');
      case 'get_statuses': {
        const st = {};
        for (const c of hub) if (c.active) st[c.userId] = 'online';
        return wsReply(conn, seq, 'OK', st);
      }
      case 'get_statuses_by_ids': {
        if (!Array.isArray(d.user_ids)) return err(400, 'api.websocket_handler.invalid_param.app_error', { Name: 'user_ids' });
        const st = {};
        for (const id of d.user_ids) st[id] = [...hub].some((c) => c.active && c.userId === id) ? 'online' : 'offline';
        return wsReply(conn, seq, 'OK', st);
      }
      case 'posted_notify_ack':
        return wsReply(conn, seq, 'OK');
      default:
        return err(500, 'api.web_socket_router.bad_action.app_error');
    }
  });
  ws.on('error', (e) => log('socket error', e.message));
  ws.on('close', (code) => {
    s.closed_at = now(); s.close_code = code;
    clearTimeout(authTimer); clearTimeout(idleTimer); clearInterval(pingTimer);
    if (conn.ws === ws) {
      conn.ws = null;
      if (hub.has(conn)) { conn.active = false; conn.inactiveSince = now(); }
    }
  });
}

// ---------------------------------------------------------------- main

const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://localhost');
  req.on('error', () => {});
  res.on('error', () => {});
  const h = url.pathname.startsWith('/_test/') || url.pathname === '/_test' ? handleControl : handleApi;
  h(req, res, url).catch((e) => {
    log('unhandled', e && e.stack);
    if (!res.headersSent) writeResponse(res, 500, { 'Content-Type': 'application/json' }, '{"error":"internal"}');
  });
});
server.keepAliveTimeout = opt.keepaliveMs;  // Go's http.Server IdleTimeout
server.headersTimeout = Math.max(60000, opt.keepaliveMs + 1000);
server.on('upgrade', (req, socket, head) => {
  handleUpgrade(req, socket, head).catch((e) => { log('upgrade failed', e && e.stack); socket.destroy(); });
});
server.on('clientError', (err, socket) => { if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'); else socket.destroy(); });
process.stdout.on('error', () => {});
process.on('uncaughtException', (e) => { log('uncaught', e && e.stack); });

server.listen(opt.port, opt.host, () => {
  process.stdout.write(`PORT ${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
