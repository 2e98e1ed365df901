// bench/bridge/load.mjs on Mattermost: the test server (tests/servers/mattermost_server.mjs), a
// bot and the user alice in every channel, alice's posts over REST, the channels watched over
// alice's WebSocket, the replies counted at the end from the server's own record.
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { server, jsonCaller } from './harness_http.mjs';

const require = createRequire(path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../tests/node/package.json'));
const WebSocket = require('ws');

// MM_NODE_ARGS: extra node options for the test server (for example --cpu-prof --cpu-prof-dir=D).
export async function startMattermost(root) {
  const mm = await server('node', [...(process.env.MM_NODE_ARGS || '').split(' ').filter(Boolean),
                                   path.join(root, 'tests/servers/mattermost_server.mjs')]);
  return new MattermostPlatform(root, mm);
}

class MattermostPlatform {
  constructor(root, mm) {
    this.mm = mm;
    this.base = `http://127.0.0.1:${mm.port}`;
    this.call = jsonCaller(this.base);
    this.name = 'mm';
    this.relayScript = path.join(root, 'bench/bridge/node_relay.mjs');
    this.channels = [];
    this.sockets = [];
  }
  async setup(n) {
    const call = this.call;
    this.bot = await call('POST', '/_test/users', { username: 'copilot', is_bot: true });
    this.alice = await call('POST', '/_test/users', { username: 'alice' });
    const members = [this.bot.id, this.alice.id];
    for (let i = 0; i < n; ++i)
      this.channels.push((await call('POST', '/_test/channels', { name: 'c' + i, type: 'O', members })).id);
    const warmChannel = (await call('POST', '/_test/channels', { name: 'warmup', type: 'O', members })).id;
    this.bob = await call('POST', '/_test/users', { username: 'bob' });
    this.harnessChannel = (await call('POST', '/_test/channels',
      { name: 'harness', type: 'O', members: [this.alice.id, this.bob.id] })).id;
    return { channels: this.channels, warmChannel };
  }
  platformConfig(access) {
    return { url: this.base, bots: { copilot: { tokenEnv: 'MM_TOKEN' } }, access };
  }
  relayEnv() { return { MM_TOKEN: this.bot.token, MM_URL: this.base }; }
  async socket(token) {
    const ws = new WebSocket(`ws://127.0.0.1:${this.mm.port}/api/v4/websocket`,
                             { headers: { Authorization: 'Bearer ' + token } });
    await new Promise((r) => ws.on('open', r));
    this.sockets.push(ws);
    return ws;
  }
  // Watches as alice: own(postId, t) for her posts' `posted` events, reply(rootId, replyId,
  // edited, text, t) for the bot's replies and their edits. Also bob's socket, for the harness.
  async watch({ own, reply }) {
    const ws = await this.socket(this.alice.token);
    const alice = this.alice.id, bot = this.bot.id;
    ws.on('message', (raw) => {
      const now = performance.now();
      let ev;
      try { ev = JSON.parse(String(raw)); } catch { return; }
      if (ev.event !== 'posted' && ev.event !== 'post_edited') return;
      const post = JSON.parse(ev.data.post);
      if (post.user_id === alice && ev.event === 'posted') return own(post.id, now);
      if (post.user_id !== bot || !post.root_id) return;
      reply(post.root_id, post.id, ev.event === 'post_edited', post.message, now);
    });
    const harnessWatch = await this.socket(this.bob.token);
    harnessWatch.on('message', (raw) => { try { JSON.parse(JSON.parse(String(raw)).data.post || '{}'); } catch {} });
  }
  async post(channel, message) {
    return (await this.call('POST', '/_test/posts', { user_id: this.alice.id, channel_id: channel, message })).id;
  }
  // The harness warms itself up before anything is measured, in a channel the bot is not in:
  // posts, replies and edits, `width` at a time.
  async warmHarness(rounds, width) {
    const call = this.call, channel = this.harnessChannel, token = this.bob.token;
    for (let i = 0; i < rounds; ++i) {
      await Promise.all(Array.from({ length: width }, async (_, k) => {
        const q = await call('POST', '/_test/posts', { user_id: this.alice.id, channel_id: channel, message: `warm ${i} ${k}` });
        const a = await call('POST', '/api/v4/posts', { channel_id: channel, root_id: q.id, message: 'Working…' }, token);
        await call('PUT', `/api/v4/posts/${a.id}/patch`, { message: `an answer to warm ${i} ${k}` }, token);
      }));
    }
  }
  async bridgeSettled() { return {}; }
  // Opens one kept-alive connection per user before the clock starts.
  async beforeLoad() { await Promise.all(this.channels.map(() => this.call('GET', '/api/v4/system/ping'))); }
  // root post id -> the bot's replies to it, over REST.
  async replyCounts(channel) {
    const rows = (await this.call('GET', '/_test/posts?channel_id=' + channel)).posts;
    const count = new Map();
    for (const row of rows)
      if (row.user_id === this.bot.id && row.delete_at === 0 && row.original_id === '' && row.root_id)
        count.set(row.root_id, (count.get(row.root_id) || 0) + 1);
    return count;
  }
  async stats() { return {}; }
  async serverLog() { return this.call('GET', '/_test/log'); }
  stop() {
    for (const s of this.sockets) s.close();
    this.mm.proc.stdin.end();
  }
}
