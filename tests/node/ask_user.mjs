// ask_user over HTTP with the real ai 6 client: AbstractChat (the logic under useChat) opts in
// with {askUser: true}, gets the question as a client-side tool call (no output from the server),
// answers it with addToolOutput from onToolCall, and sendAutomaticallyWhen sends the
// continuation; without the opt-in the model is not offered the tool.
// Prints one JSON report; tests/ask_user_test.cpp checks it.
//   node ask_user.mjs ai-6-325 URL KEY optin|plain
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { State, text, toolParts, until } from './chat_state.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const [pkg, base, key, mode] = process.argv.slice(2);
const ai = await import(path.join(here, 'node_modules', pkg, 'dist', 'index.mjs'));
const api = `${base}/v1/platform-copilot/chat`;
const headers = { Authorization: `Bearer ${key}` };
const report = { mode, calls: [] };
try {
  const state = new State();
  let requests = 0;
  const transport = new ai.DefaultChatTransport({
    api, headers, body: mode === 'optin' ? { askUser: true } : {},
    fetch: (url, init) => { requests += 1; return fetch(url, init); },
  });
  const chat = new ai.AbstractChat({
    state,
    transport,
    sendAutomaticallyWhen: ai.lastAssistantMessageIsCompleteWithToolCalls,
    onToolCall: ({ toolCall }) => {
      report.calls.push({ name: toolCall.toolName, input: toolCall.input });
      if (toolCall.toolName === 'ask_user') {
        // As a page would once the person picked: not awaited inside onToolCall.
        chat.addToolOutput({ tool: 'ask_user', toolCallId: toolCall.toolCallId, output: toolCall.input.choices[1] });
      }
    },
    onError: (e) => { report.error = String(e.message); },
  });
  await chat.sendMessage({ text: 'pick a store' });
  await until(() => state.status === 'ready' && text(state.messages.at(-1)).length > 0);
  await new Promise((r) => setTimeout(r, 300));  // a further automatic send would show by now
  const last = state.messages.at(-1);
  const part = toolParts(last)[0];
  report.after = { state: part?.state, output: part?.output, errorText: part?.errorText, text: text(last),
                   messages: state.messages.length, requests };
} catch (e) {
  report.failure = String(e && e.stack || e);
}
console.log(JSON.stringify(report));
