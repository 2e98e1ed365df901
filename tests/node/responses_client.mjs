// The test model server's Responses API and Azure OpenAI routes, read by the real `openai` npm
// client (6.49.0), which stands for the hosted APIs: client.responses.create with stream (its
// typed events, a function call assembled, the follow-up with its output), the client's own
// stream helper (which checks the events add up), and AzureOpenAI on a deployment's chat
// completions and on the Responses API, then without the key. Prints one JSON report;
// tests/responses_chat_test.cpp checks it.
//   node responses_client.mjs BASE_URL KEY
import OpenAI, { AzureOpenAI } from 'openai';

const [base, key] = process.argv.slice(2);
const report = {};
try {
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: key, maxRetries: 0 });
  const types = [];
  let text = '', call = null;
  const stream = await client.responses.create({
    model: 'gpt-5', stream: true, instructions: 'Be brief.', store: false,
    input: [{ role: 'user', content: 'first: call a tool' }],
    tools: [{ type: 'function', name: 'read_file', description: 'Read', parameters: { type: 'object' }, strict: false }],
  });
  for await (const ev of stream) {
    types.push(ev.type);
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.output_item.done' && ev.item.type === 'function_call') call = ev.item;
  }
  report.first = { types, text, call: call && { name: call.name, call_id: call.call_id, arguments: call.arguments } };
  const helper = client.responses.stream({
    model: 'gpt-5', input: [{ role: 'user', content: 'first: call a tool' }, { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
                            { type: 'function_call_output', call_id: call.call_id, output: '{"ok":true}' }],
  });
  const final = await helper.finalResponse();
  report.second = { status: final.status, text: final.output_text };
  try {
    await client.responses.create({ model: 'gpt-5', input: [{ type: 'function_call_output', call_id: 'nope', output: 'x' }] });
  } catch (e) { report.orphan = { status: e.status, message: e.message }; }
  const azure = new AzureOpenAI({ endpoint: base, apiKey: key, apiVersion: '2024-10-21', deployment: 'prod-4o', maxRetries: 0 });
  const chat = await azure.chat.completions.create({ model: 'prod-4o', messages: [{ role: 'user', content: 'azure chat' }], stream: true });
  let azureText = '';
  for await (const chunk of chat) azureText += chunk.choices[0]?.delta?.content ?? '';
  report.azureChat = azureText;
  const azureResponses = new AzureOpenAI({ endpoint: base, apiKey: key, apiVersion: '2025-03-01-preview', maxRetries: 0 });
  const r = await azureResponses.responses.create({ model: 'prod-4o', input: 'azure responses' });
  report.azureResponses = { status: r.status, text: r.output_text };
  try {
    const wrong = new AzureOpenAI({ endpoint: base, apiKey: 'wrong', apiVersion: '2024-10-21', deployment: 'prod-4o', maxRetries: 0 });
    await wrong.chat.completions.create({ model: 'prod-4o', messages: [{ role: 'user', content: 'x' }] });
  } catch (e) { report.azureWrongKey = { status: e.status, message: e.message }; }
} catch (e) {
  report.failure = String(e && e.stack || e);
}
console.log(JSON.stringify(report));
