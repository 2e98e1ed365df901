// The conversation: an unmodified useChat on pilotfish's AI SDK stream (POST
// /v1/platform-copilot/chat with the key and the picked model), answers as Markdown with
// citation links, tool steps folded, a stop button that aborts the request (the server then
// cancels the model's), and a retry after a failure or a lost connection.
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { memo, useEffect, useMemo, useRef, useState } from 'react';
import { describeChatError } from './api.js';
import { renderMarkdown } from './markdown.js';

// Answer HTML, re-rendered only when its text changed; clicks on citations open the source.
const Markdown = memo(function Markdown({ text, onCite }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return (
    // Clicks bubble from the citation links, which are real, focusable anchors.
    // eslint-disable-next-line jsx-a11y/click-events-have-key-events, jsx-a11y/no-static-element-interactions
    <div className="md" dangerouslySetInnerHTML={{ __html: html }}
         onClick={(e) => {
           const a = e.target.closest('a.cite');
           if (!a) return;
           e.preventDefault();
           onCite({ path: a.dataset.path, start: Number(a.dataset.start), end: Number(a.dataset.end) });
         }} />
  );
});

const STATES = {
  'input-streaming': 'preparing',
  'input-available': 'running',
  'approval-requested': 'waiting for approval',
  'output-available': 'done',
  'output-error': 'failed',
  'output-denied': 'denied',
};

function ToolStep({ part }) {
  const name = part.type === 'dynamic-tool' ? part.toolName : part.type.slice('tool-'.length);
  const show = (v) => (typeof v === 'string' ? v : JSON.stringify(v, null, 2));
  return (
    <details className="tool">
      <summary>
        <span className="tool-name">{name}</span> <span className="tool-state">{STATES[part.state] || part.state}</span>
      </summary>
      {part.input !== undefined && <pre className="tool-io"><code>{show(part.input)}</code></pre>}
      {part.output !== undefined && <pre className="tool-io"><code>{show(part.output)}</code></pre>}
      {part.errorText && <p className="error">{part.errorText}</p>}
    </details>
  );
}

function Message({ message, onCite }) {
  const mine = message.role === 'user';
  return (
    <article className={`msg ${mine ? 'user' : 'assistant'}`} aria-label={mine ? 'You asked' : 'pilotfish answered'}>
      {message.parts.map((part, i) => {
        if (part.type === 'text')
          return mine ? <p key={i} className="user-text">{part.text}</p> : <Markdown key={i} text={part.text} onCite={onCite} />;
        if (part.type.startsWith('tool-') || part.type === 'dynamic-tool') return <ToolStep key={i} part={part} />;
        return null; // step boundaries; reasoning is never shown
      })}
    </article>
  );
}

export function Chat({ apiKey, model, onCite, hidden }) {
  const modelRef = useRef(model);
  modelRef.current = model;
  const transport = useMemo(
    () =>
      new DefaultChatTransport({
        api: '/v1/platform-copilot/chat',
        headers: () => (apiKey ? { Authorization: `Bearer ${apiKey}` } : {}),
        body: () => (modelRef.current ? { modelId: modelRef.current } : {}),
      }),
    [apiKey],
  );
  const { messages, sendMessage, status, stop, error, regenerate } = useChat({ transport });
  const [input, setInput] = useState('');
  const busy = status === 'submitted' || status === 'streaming';
  const end = useRef(null);
  useEffect(() => {
    end.current?.scrollIntoView({ block: 'end' });
  }, [messages, status]);
  const ask = () => {
    const text = input.trim();
    if (!text || busy) return;
    sendMessage({ text });
    setInput('');
  };
  return (
    <section className="chat" aria-label="Conversation" hidden={hidden}>
      <div className="log" role="log" aria-live="polite" aria-busy={busy}>
        {messages.length === 0 && (
          <p className="empty">Ask where something is, how it works, or why it fails. Answers cite the lines they rely on.</p>
        )}
        {messages.map((m) => <Message key={m.id} message={m} onCite={onCite} />)}
        {status === 'submitted' && <p className="status">Searching the repository…</p>}
        {error && (
          <div className="error" role="alert">
            <span>❌ {describeChatError(error)}</span>
            <button type="button" onClick={() => regenerate()}>Retry</button>
          </div>
        )}
        <div ref={end} />
      </div>
      <form className="ask" onSubmit={(e) => { e.preventDefault(); ask(); }}>
        <label htmlFor="question" className="sr-only">Question about the repository</label>
        <textarea id="question" rows={2} placeholder="Ask about the code…" value={input}
                  onChange={(e) => setInput(e.target.value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter' && !e.shiftKey) {
                      e.preventDefault();
                      ask();
                    }
                  }} />
        {busy ? (
          <button type="button" className="stop" onClick={() => stop()}>Stop</button>
        ) : (
          <button type="submit" disabled={!input.trim()}>Ask</button>
        )}
      </form>
    </section>
  );
}
