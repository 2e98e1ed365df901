// The chat page's root: sign-in with an API key (kept in sessionStorage, so it lasts as long as
// the tab), then the workspace: chat or search-only mode, the model picker, and the source view
// that every citation opens.
import { createRoot } from 'react-dom/client';
import { useCallback, useEffect, useState } from 'react';
import { api } from './api.js';
import { Chat } from './chat.jsx';
import { Search, SourceView } from './panels.jsx';
import 'highlight.js/styles/github.css';
import './app.css';

const KEY = 'pilotfish.apiKey';

function SignIn({ error, onSubmit }) {
  const [key, setKey] = useState('');
  return (
    <main className="signin">
      <h1>pilotfish</h1>
      <p>Ask questions about this server&apos;s repository. Sign in with an API key.</p>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onSubmit(key.trim());
        }}
      >
        <label htmlFor="api-key">API key</label>
        <input id="api-key" type="password" autoComplete="off" value={key} required
               onChange={(e) => setKey(e.target.value)} />
        <button type="submit">Sign in</button>
        {error && <p className="error" role="alert">{error}</p>}
      </form>
      <p className="hint">The key stays in this tab only and is sent to this server alone.</p>
    </main>
  );
}

function Workspace({ apiKey, info, onSignOut }) {
  const [mode, setMode] = useState('chat');
  const [model, setModel] = useState(info.defaultModel || '');
  const [source, setSource] = useState(null);
  const openSource = useCallback((c) => setSource(c), []);
  return (
    <div className="app">
      <header className="bar">
        <h1>pilotfish</h1>
        {info.repository && <span className="repo" title={info.repository}>{info.repository}</span>}
        <div className="modes" role="radiogroup" aria-label="Mode">
          {[['chat', 'Chat'], ['search', 'Search only']].map(([value, label]) => (
            <label key={value} className={mode === value ? 'on' : ''}>
              <input type="radio" name="mode" value={value} checked={mode === value}
                     onChange={() => setMode(value)} />
              {label}
            </label>
          ))}
        </div>
        {mode === 'chat' && (
          <label className="model">
            <span>Model</span>
            <select value={model} onChange={(e) => setModel(e.target.value)} disabled={!info.models.length}>
              {info.models.length ? (
                info.models.map((m) => <option key={m.id} value={m.id}>{m.id}</option>)
              ) : (
                <option value="">Retrieval only (no chat model)</option>
              )}
            </select>
          </label>
        )}
        {apiKey && <button type="button" className="signout" onClick={onSignOut}>Sign out</button>}
      </header>
      <main className="content">
        <Chat apiKey={apiKey} model={model} onCite={openSource} hidden={mode !== 'chat'} />
        {mode === 'search' && <Search apiKey={apiKey} onCite={openSource} />}
      </main>
      {source && <SourceView apiKey={apiKey} {...source} onClose={() => setSource(null)} />}
    </div>
  );
}

function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem(KEY) || '');
  const [info, setInfo] = useState(null);
  const [phase, setPhase] = useState('checking');
  const [error, setError] = useState('');
  const check = useCallback(async (k, typed) => {
    try {
      const answer = await api('/v1/platform-copilot/models', k);
      if (k) sessionStorage.setItem(KEY, k);
      setKey(k);
      setInfo(answer);
      setError('');
      setPhase('ready');
    } catch (e) {
      sessionStorage.removeItem(KEY);
      setPhase('signin');
      if (e.status === 401) setError(typed ? 'That key was not accepted.' : '');
      else setError(e.message);
    }
  }, []);
  useEffect(() => {
    check(key, false);
  }, []); // eslint-disable-line react-hooks/exhaustive-deps
  if (phase === 'checking') return <p className="status">Connecting to pilotfish…</p>;
  if (phase === 'signin') return <SignIn error={error} onSubmit={(k) => check(k, true)} />;
  return (
    <Workspace apiKey={key} info={info}
               onSignOut={() => {
                 sessionStorage.removeItem(KEY);
                 setKey('');
                 setPhase('signin');
               }} />
  );
}

createRoot(document.getElementById('root')).render(<App />);
