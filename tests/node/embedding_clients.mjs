// The embedding test servers (tests/servers/embedding_server.py) read by the real clients: the
// `openai` package's embeddings.create against every flavor's OpenAI route (vectors, usage, and
// each refusal as an APIError with its status and the server's message), and the `ollama`
// package's show() and embed() against the Ollama flavor's own routes. Prints one JSON report;
// tests/embedding_fit_test.cpp checks it.
//   node embedding_clients.mjs FLAVOR PORT
import OpenAI from 'openai';
import { Ollama } from 'ollama';

const [flavor, port] = process.argv.slice(2);
const report = { flavor };
const long = 'word '.repeat(400);
const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'k', maxRetries: 0 });
try {
  const ok = await client.embeddings.create({ model: 'embed-small', input: ['alpha beta', 'gamma'] });
  report.ok = { count: ok.data.length, dim: ok.data[0].embedding.length, index1: ok.data[1].index,
                promptTokens: ok.usage?.prompt_tokens };
} catch (e) { report.okError = String(e.message); }
try {
  await client.embeddings.create({ model: 'embed-small', input: ['short', long] });
  report.long = 'accepted';
} catch (e) { report.long = { status: e.status, message: e.error?.message ?? e.message }; }
if (flavor === 'ollama') {
  const ollama = new Ollama({ host: `http://127.0.0.1:${port}` });
  const show = await ollama.show({ model: 'embed-small' });
  report.show = { contextLength: show.model_info?.['nomic-bert.context_length'], parameters: show.parameters ?? null };
  const cut = await ollama.embed({ model: 'embed-small', input: [long] });
  report.truncated = { count: cut.embeddings.length, promptEvalCount: cut.prompt_eval_count };
  try {
    await ollama.embed({ model: 'embed-small', input: [long], truncate: false });
    report.notTruncated = 'accepted';
  } catch (e) { report.notTruncated = { status: e.status_code, message: e.error ?? e.message }; }
  try { await ollama.embed({ model: 'other', input: ['x'] }); } catch (e) { report.unknownModel = { status: e.status_code, message: e.error ?? e.message }; }
}
console.log(JSON.stringify(report));
