#!/usr/bin/env node
// The comparison for bench/bridge/load.mjs: the same relaying as `pilotfish bridge` does in that
// benchmark, written the way a Node bridge (copilot-bridge) writes it, on the real
// @mattermost/client (Client4 + WebSocketClient): for each post in a configured channel, a
// "Working..." placeholder in the post's thread, the model's streamed answer (OpenAI SSE, read
// with fetch) edited in at most every 500 ms, a final edit, and one answer at a time per channel.
// No retrieval, no state store, no replay: it is the floor of relaying, not a bridge.
//
// usage: MM_URL=http://127.0.0.1:P MM_TOKEN=... MODEL_URL=http://127.0.0.1:Q/v1 CHANNELS=a,b,c
//        node bench/bridge/node_relay.mjs    (prints "bridge running" once connected)
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(path.join(root, 'tests/node/package.json'));
const { Client4, WebSocketClient } = require('@mattermost/client');
globalThis.WebSocket = require('ws');
if (typeof globalThis.CloseEvent === 'undefined') {
  globalThis.CloseEvent = class CloseEvent extends Event {
    constructor(type, init = {}) { super(type); this.code = init.code ?? 0; this.reason = init.reason ?? ''; }
  };
}
console.log = () => {};  // the client logs every connect

const client = new Client4();
client.setUrl(process.env.MM_URL);
client.setToken(process.env.MM_TOKEN);
const channels = new Set(process.env.CHANNELS.split(','));
const me = await client.getMe();
const queues = new Map();  // channel -> promise chain: one answer at a time per channel

async function answer(post) {
  const reply = await client.createPost({ channel_id: post.channel_id, root_id: post.id,
                                          message: '\u23F3 Working\u2026' });
  const res = await fetch(process.env.MODEL_URL + '/chat/completions', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: post.message }] }),
  });
  let text = '', buffer = '', last = Date.now(), pending = null;
  const flush = async () => { pending = null; last = Date.now(); await client.patchPost({ id: reply.id, message: text }); };
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let at;
    while ((at = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      if (!event.startsWith('data: ') || event === 'data: [DONE]') continue;
      const delta = JSON.parse(event.slice(6)).choices?.[0]?.delta?.content;
      if (!delta) continue;
      text += delta;
      if (!pending) pending = new Promise((r) => setTimeout(r, Math.max(0, 500 - (Date.now() - last)))).then(flush);
    }
  }
  if (pending) await pending;
  await client.patchPost({ id: reply.id, message: text });
}

const ws = new WebSocketClient();
ws.addMessageListener((msg) => {
  if (msg.event !== 'posted') return;
  const post = JSON.parse(msg.data.post);
  if (post.user_id === me.id || !channels.has(post.channel_id)) return;
  const prev = queues.get(post.channel_id) || Promise.resolve();
  queues.set(post.channel_id, prev.then(() => answer(post)).catch((e) => process.stderr.write(String(e) + '\n')));
});
ws.addFirstConnectListener(() => process.stdout.write('bridge running\n'));
ws.initialize(process.env.MM_URL.replace(/^http/, 'ws') + '/api/v4/websocket', process.env.MM_TOKEN);
process.on('SIGTERM', () => process.exit(0));
