// What the scripts that drive ai's AbstractChat share: the chat state a UI framework would keep
// (useChat's, in plain objects), the parts of a UI message, and a wait for a condition.
export const toolParts = (m) => (m?.parts ?? []).filter((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool');
export const text = (m) => (m?.parts ?? []).filter((p) => p.type === 'text').map((p) => p.text).join('');

export class State {
  constructor() { this.messages = []; this.status = 'ready'; this.error = undefined; }
  pushMessage(m) { this.messages = this.messages.concat(m); }
  popMessage() { this.messages = this.messages.slice(0, -1); }
  replaceMessage(i, m) { this.messages = [...this.messages.slice(0, i), structuredClone(m), ...this.messages.slice(i + 1)]; }
  snapshot(v) { return structuredClone(v); }
}

export async function until(cond, ms = 15000) {
  const end = Date.now() + ms;
  while (Date.now() < end) { if (cond()) return true; await new Promise((r) => setTimeout(r, 25)); }
  return cond();
}
