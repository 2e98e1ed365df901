#!/usr/bin/env node
// The comparison for bench/bridge/load.mjs --platform slack: the same relaying as `pilotfish
// bridge` does in that benchmark, written the way a Node bridge writes it for Slack, on the real
// @slack/bolt (an App in Socket Mode; its WebClient with the default retry policy, which waits
// out a 429's Retry-After and retries): for each user message in a configured channel, a
// "Working..." placeholder in the message's thread (chat.postMessage), the model's streamed
// answer (OpenAI SSE, read with fetch) edited in by chat.update at most every 500 ms (as
// node_relay.mjs does on Mattermost), a final edit, and one answer at a time per channel.
// No retrieval, no state store, no replay, no pacing of its own: the floor of relaying.
//
// usage: SLACK_API_URL=http://127.0.0.1:P/api/ SLACK_BOT_TOKEN=xoxb-... SLACK_APP_TOKEN=xapp-...
//        MODEL_URL=http://127.0.0.1:Q/v1 CHANNELS=C1,C2 node bench/bridge/slack_relay.mjs
//        (prints "bridge running" once connected)
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const require = createRequire(path.join(root, 'tests/node/package.json'));
const { App, LogLevel } = require('@slack/bolt');

const silent = { debug() {}, info() {}, warn() {}, error() {}, setLevel() {}, getLevel: () => LogLevel.ERROR, setName() {} };
const app = new App({ token: process.env.SLACK_BOT_TOKEN, appToken: process.env.SLACK_APP_TOKEN, socketMode: true,
  logger: silent, logLevel: LogLevel.ERROR, clientOptions: { slackApiUrl: process.env.SLACK_API_URL, logger: silent } });
const channels = new Set(process.env.CHANNELS.split(','));
const queues = new Map();  // channel -> promise chain: one answer at a time per channel

async function answer(client, message) {
  const reply = await client.chat.postMessage({ channel: message.channel, thread_ts: message.ts,
                                               text: '\u23F3 Working\u2026' });
  const res = await fetch(process.env.MODEL_URL + '/chat/completions', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: message.text }] }),
  });
  let text = '', buffer = '', last = Date.now(), pending = null;
  const update = () => client.chat.update({ channel: message.channel, ts: reply.ts, text });
  const flush = async () => { pending = null; last = Date.now(); await update(); };
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
  await update();
}

// Bolt acknowledges each envelope before the listener runs; the listener only queues the answer.
app.message(async ({ message, client }) => {
  if (message.subtype || message.bot_id || !channels.has(message.channel)) return;
  const prev = queues.get(message.channel) || Promise.resolve();
  queues.set(message.channel, prev.then(() => answer(client, message))
    .catch((e) => process.stderr.write(`slack_relay: ${e && e.message}\n`)));
});
await app.start();
process.stdout.write('bridge running\n');
process.on('SIGTERM', () => process.exit(0));
