// bench/bridge/load.mjs on Slack: the test server (tests/servers/slack_server.mjs, at Slack's
// published rate tiers unless SLACK_SERVER_ARGS says otherwise), the bridge's app "copilot", the
// user alice and a second app "watcher" in every channel. alice posts through the server's
// user-side route (/_test/messages: events as a Slack client's post); the watcher app sees the
// channels over its own Socket Mode connection, as any app in them would (the user's post, the
// bot's reply, each edit as message_changed). At the end the replies are counted from the
// server's record and the bridge app's Web API calls (and their 429s) from its call log.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { server, jsonCaller } from './harness_http.mjs';

const require = createRequire(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../tests/node/package.json'));
const WebSocket = require('ws');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// SLACK_SERVER_ARGS: options for the test server (for example "--rate-scale 2"); SLACK_NODE_ARGS:
// node options for it (for example --cpu-prof --cpu-prof-dir=D).
export async function startSlack(root) {
  const words = (v) => (v || '').split(' ').filter(Boolean);
  const sl = await server('node', [...words(process.env.SLACK_NODE_ARGS),
                                   path.join(root, 'tests/servers/slack_server.mjs'),
                                   ...words(process.env.SLACK_SERVER_ARGS)]);
  return new SlackPlatform(root, sl);
}

class SlackPlatform {
  constructor(root, sl) {
    this.sl = sl;
    this.base = `http://127.0.0.1:${sl.port}`;
    this.call = jsonCaller(this.base, 'application/json; charset=utf-8');
    this.name = 'slack';
    this.relayScript = path.join(root, 'bench/bridge/slack_relay.mjs');
    this.channels = [];
  }
  async botCalls() {
    return (await this.call('GET', '/_test/calls')).calls.filter((c) => c.app_id === this.bot.app_id);
  }
  async setup(n) {
    const call = this.call;
    this.bot = await call('POST', '/_test/apps', { name: 'copilot' });
    this.watcher = await call('POST', '/_test/apps', { name: 'watcher' });
    this.alice = await call('POST', '/_test/users', { name: 'alice' });
    const members = [this.alice.id, this.bot.bot_user_id, this.watcher.bot_user_id];
    for (let i = 0; i < n; ++i)
      this.channels.push((await call('POST', '/_test/channels', { type: 'public', name: 'c' + i, members })).id);
    const warmChannel = (await call('POST', '/_test/channels', { type: 'public', name: 'warmup', members })).id;
    this.harnessChannel = (await call('POST', '/_test/channels',
      { type: 'public', name: 'harness', members: [this.alice.id, this.watcher.bot_user_id] })).id;
    return { channels: this.channels, warmChannel };
  }
  platformConfig(access) {
    return { type: 'slack', url: this.base + '/api',
             bots: { copilot: { tokenEnv: 'SLACK_BOT_TOKEN', appTokenEnv: 'SLACK_APP_TOKEN' } }, access };
  }
  relayEnv() {
    return { SLACK_BOT_TOKEN: this.bot.bot_token, SLACK_APP_TOKEN: this.bot.app_token, SLACK_API_URL: this.base + '/api/' };
  }
  // own(ts, t) for alice's posts, reply(threadTs, replyTs, edited, text, t) for the bridge's
  // replies in a post's thread and their edits; every envelope acknowledged at once.
  async watch({ own, reply }) {
    const open = await this.call('POST', '/api/apps.connections.open', undefined, this.watcher.app_token);
    if (!open.ok) throw new Error('apps.connections.open: ' + open.error);
    const ws = this.ws = new WebSocket(open.url);
    await new Promise((r) => ws.on('message', function hello(raw) {
      if (JSON.parse(String(raw)).type === 'hello') { ws.off('message', hello); r(); }
    }));
    const seen = new Set();  // event ids: a redelivered envelope is the same event
    const alice = this.alice.id, botId = this.bot.bot_id;
    ws.on('message', (raw) => {
      const now = performance.now();
      let env;
      try { env = JSON.parse(String(raw)); } catch { return; }
      if (env.envelope_id) ws.send(JSON.stringify({ envelope_id: env.envelope_id }));
      if (env.type !== 'events_api' || seen.has(env.payload.event_id)) return;
      seen.add(env.payload.event_id);
      const ev = env.payload.event;
      if (ev.type !== 'message') return;
      if (!ev.subtype && ev.user === alice) return own(ev.ts, now);
      const m = ev.subtype === 'message_changed' ? ev.message : ev.subtype ? null : ev;
      if (!m || m.bot_id !== botId || !m.thread_ts || m.thread_ts === m.ts) return;
      reply(m.thread_ts, m.ts, ev.subtype === 'message_changed', m.text || '', now);
    });
  }
  async post(channel, text) {
    return (await this.call('POST', '/_test/messages', { user: this.alice.id, channel, text })).ts;
  }
  // The harness warms up in a channel the bridge is not in: alice's posts, the watcher app's
  // replies and edits over the Web API, `width` at a time, with the rate limits off meanwhile;
  // then the server's call log, rate windows and envelope logs are cleared.
  async warmHarness(rounds, width) {
    const call = this.call, channel = this.harnessChannel, token = this.watcher.bot_token;
    const rate = await call('GET', '/_test/rate');
    await call('POST', '/_test/rate', { enabled: false });
    for (let i = 0; i < rounds; ++i) {
      await Promise.all(Array.from({ length: width }, async (_, k) => {
        const q = await call('POST', '/_test/messages', { user: this.alice.id, channel, text: `warm ${i} ${k}` });
        const a = await call('POST', '/api/chat.postMessage', { channel, thread_ts: q.ts, text: 'Working…' }, token);
        await call('POST', '/api/chat.update', { channel, ts: a.ts, text: `an answer to warm ${i} ${k}` }, token);
      }));
    }
    await call('POST', '/_test/rate', { enabled: rate.enabled });
    await call('POST', '/_test/reset');
  }
  // After the bridge said it runs: its start-up calls (auth.test, the socket, the catch-up of
  // every tracked channel from conversations.history) until none came for 30 s (a paced
  // method can leave a gap of a quarter of its 60 s window between calls).
  async bridgeSettled() {
    let last = -1, quietSince = performance.now(), list = [];
    while (performance.now() - quietSince < 30000) {
      await sleep(500);
      list = await this.botCalls();
      if (list.length !== last) { last = list.length; quietSince = performance.now(); }
    }
    const span = list.length ? (list[list.length - 1].t - list[0].t) / 1000 : 0;
    const byMethod = {};
    for (const c of list) byMethod[c.method] = (byMethod[c.method] || 0) + 1;
    return { startup_web_api_calls: list.length, startup_ratelimited: list.filter((c) => c.ratelimited).length,
             startup_calls_span_s: +span.toFixed(1), startup_by_method: byMethod };
  }
  // Opens one kept-alive connection per user, and starts the call log afresh, before the clock.
  async beforeLoad() {
    await Promise.all(this.channels.map(() => this.call('GET', '/_test/rate')));
    await this.call('DELETE', '/_test/calls');
  }
  // thread ts -> the bridge app's replies in that thread, from the server's record.
  async replyCounts(channel) {
    const count = new Map();
    for (const m of (await this.call('GET', '/_test/messages?channel=' + channel)).messages)
      if (m.bot_id === this.bot.bot_id && !m.deleted && m.thread_ts && m.thread_ts !== m.ts)
        count.set(m.thread_ts, (count.get(m.thread_ts) || 0) + 1);
    return count;
  }
  // The bridge app's Web API calls since beforeLoad, per reply, and the share answered 429.
  async stats(replies) {
    const list = await this.botCalls();
    const byMethod = {};
    for (const c of list) {
      const k = byMethod[c.method] || (byMethod[c.method] = { calls: 0, ratelimited: 0 });
      ++k.calls;
      if (c.ratelimited) ++k.ratelimited;
    }
    const limited = list.filter((c) => c.ratelimited).length;
    return { web_api_calls: list.length, web_api_calls_per_reply: +(list.length / replies).toFixed(2),
             ratelimited: limited, ratelimited_share: +(limited / Math.max(1, list.length)).toFixed(4),
             web_api_by_method: byMethod };
  }
  async serverLog() { return this.call('GET', '/_test/calls'); }
  stop() {
    if (this.ws) this.ws.close();
    this.sl.proc.stdin.end();
  }
}
