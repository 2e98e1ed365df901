// pilotfish serve as an OpenAI model, read by the real `openai` npm client (6.49.0): the model
// list, a completion, a streamed completion (raw chunks and the client's own stream helper,
// which checks the chunks add up), and errors the client raises as its APIError classes.
// Prints one JSON report; tests/openai_api_test.cpp checks it.
//   node openai_client.mjs URL KEY answer|errors|failure|cut REPOSITORY
import OpenAI from 'openai';

const [base, key, mode, repo] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0, timeout: 30000 });
const report = { mode };
const caught = async (f) => {
  try { await f(); return { ok: true }; } catch (e) {
    return { name: e.constructor.name, status: e.status, message: e.message, code: e.code, type: e.type };
  }
};
const ask = (text) => [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: text }];

try {
  if (mode === 'answer') {
    report.models = (await client.models.list()).data.map((m) => m.id);
    const c = await client.chat.completions.create({ model: 'pilotfish', messages: ask('where is the readme?') });
    report.whole = { object: c.object, id: c.id, model: c.model, text: c.choices[0].message.content,
                     role: c.choices[0].message.role, finish: c.choices[0].finish_reason };
    const stream = await client.chat.completions.create({
      model: `pilotfish:${repo}`, messages: [{ role: 'user', content: [{ type: 'text', text: 'stream please' }] }], stream: true });
    const deltas = [];
    let finish = null, role = null, ids = new Set();
    for await (const chunk of stream) {
      ids.add(chunk.id);
      const d = chunk.choices[0]?.delta ?? {};
      if (d.role) role = d.role;
      if (d.content) deltas.push(d.content);
      if (chunk.choices[0]?.finish_reason) finish = chunk.choices[0].finish_reason;
    }
    report.streamed = { deltas, text: deltas.join(''), finish, role, ids: ids.size };
    const runner = client.chat.completions.stream({ model: 'pilotfish', messages: ask('TOOLS: look it up') });
    const final = await runner.finalChatCompletion();
    report.helper = { text: final.choices[0].message.content, finish: final.choices[0].finish_reason };
  } else if (mode === 'errors') {
    const wrong = new OpenAI({ baseURL: `${base}/v1`, apiKey: 'not-a-key', maxRetries: 0 });
    report.wrongKey = await caught(() => wrong.chat.completions.create({ model: 'pilotfish', messages: ask('x') }));
    report.unknownModel = await caught(() => client.chat.completions.create({ model: 'gpt-4o', messages: ask('x') }));
    report.twoChoices = await caught(() => client.chat.completions.create({ model: 'pilotfish', n: 2, messages: ask('x') }));
    report.clientTools = await caught(() => client.chat.completions.create({
      model: 'pilotfish', messages: ask('x'),
      tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] }));
    report.notUser = await caught(() => client.chat.completions.create({
      model: 'pilotfish', messages: [{ role: 'user', content: 'a' }, { role: 'assistant', content: 'b' }] }));
  } else {
    const [streamed, whole] = mode === 'cut' ? ['CUT now', 'CUT again'] : ['BREAK now', 'FAIL now'];
    report.streamFailure = await caught(async () => {
      const s = await client.chat.completions.create({ model: 'pilotfish', messages: ask(streamed), stream: true });
      report.before = [];
      for await (const chunk of s) if (chunk.choices[0]?.delta?.content) report.before.push(chunk.choices[0].delta.content);
    });
    report.wholeFailure = await caught(() => client.chat.completions.create({ model: 'pilotfish', messages: ask(whole) }));
  }
} catch (e) {
  report.failure = String(e && e.stack || e);
}
console.log(JSON.stringify(report));
