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
  const base = `http://127.0.0.1:${mm.port}`;
  const call = jsonCaller(base);
  let bot, alice, bob, harnessChannel, channels = [];
  const sockets = [];
  return {
    name: 'mm',
    relayScript: path.join(root, 'bench/bridge/node_relay.mjs'),
    async setup(n) {
      bot = await call('POST', '/_test/users', { username: 'copilot', is_bot: true });
      alice = await call('POST', '/_test/users', { username: 'alice' });
      for (let i = 0; i < n; ++i)
        channels.push((await call('POST', '/_test/channels',
          { name: 'c' + i, type: 'O', members: [bot.id, alice.id] })).id);
      const warmChannel = (await call('POST', '/_test/channels',
        { name: 'warmup', type: 'O', members: [bot.id, alice.id] })).id;
      bob = await call('POST', '/_test/users', { username: 'bob' });
      harnessChannel = (await call('POST', '/_test/channels',
        { name: 'harness', type: 'O', members: [alice.id, bob.id] })).id;
      return { channels, warmChannel };
    },
    platformConfig(access) {
      return { url: base, bots: { copilot: { tokenEnv: 'MM_TOKEN' } }, access };
    },
    relayEnv() { return { MM_TOKEN: bot.token, MM_URL: base }; },
    // Watches as alice: own(postId, t) for her posts' `posted` events, reply(rootId, replyId,
    // edited, text, t) for the bot's replies and their edits. Also bob's socket, for the harness.
    async watch({ own, reply }) {
      const ws = new WebSocket(`ws://127.0.0.1:${mm.port}/api/v4/websocket`,
                               { headers: { Authorization: 'Bearer ' + alice.token } });
      await new Promise((r) => ws.on('open', r));
      ws.on('message', (raw) => {
        const now = performance.now();
        let ev;
        try { ev = JSON.parse(String(raw)); } catch { return; }
        if (ev.event !== 'posted' && ev.event !== 'post_edited') return;
        const post = JSON.parse(ev.data.post);
        if (post.user_id === alice.id && ev.event === 'posted') return own(post.id, now);
        if (post.user_id !== bot.id || !post.root_id) return;
        reply(post.root_id, post.id, ev.event === 'post_edited', post.message, now);
      });
      const harnessWatch = new WebSocket(`ws://127.0.0.1:${mm.port}/api/v4/websocket`,
                                         { headers: { Authorization: 'Bearer ' + bob.token } });
      await new Promise((r) => harnessWatch.on('open', r));
      harnessWatch.on('message', (raw) => { try { JSON.parse(JSON.parse(String(raw)).data.post || '{}'); } catch {} });
      sockets.push(ws, harnessWatch);
    },
    async post(channel, message) {
      return (await call('POST', '/_test/posts', { user_id: alice.id, channel_id: channel, message })).id;
    },
    // The harness warms itself up before anything is measured, in a channel the bot is not in:
    // posts, replies and edits, `width` at a time.
    async warmHarness(rounds, width) {
      for (let i = 0; i < rounds; ++i) {
        await Promise.all(Array.from({ length: width }, async (_, k) => {
          const q = await call('POST', '/_test/posts', { user_id: alice.id, channel_id: harnessChannel, message: `warm ${i} ${k}` });
          const a = await call('POST', '/api/v4/posts', { channel_id: harnessChannel, root_id: q.id, message: 'Working…' }, bob.token);
          await call('PUT', `/api/v4/posts/${a.id}/patch`, { message: `an answer to warm ${i} ${k}` }, bob.token);
        }));
      }
    },
    async bridgeSettled() { return {}; },
    // Opens one kept-alive connection per user before the clock starts.
    async beforeLoad() { await Promise.all(channels.map(() => call('GET', '/api/v4/system/ping'))); },
    // root post id -> the bot's replies to it, over REST.
    async replyCounts(channel) {
      const rows = (await call('GET', '/_test/posts?channel_id=' + channel)).posts;
      const count = new Map();
      for (const row of rows)
        if (row.user_id === bot.id && row.delete_at === 0 && row.original_id === '' && row.root_id)
          count.set(row.root_id, (count.get(row.root_id) || 0) + 1);
      return count;
    },
    async stats() { return {}; },
    async serverLog() { return call('GET', '/_test/log'); },
    stop() {
      for (const s of sockets) s.close();
      mm.proc.stdin.end();
    },
  };
}
