// The search-only mode (GET /v1/search: the ranked places, no model) and the source view a
// citation opens (GET /v1/file: exactly the cited lines, under the tools' path rules).
import { useEffect, useRef, useState } from 'react';
import { api } from './api.js';
import { highlightLine, languageOf } from './markdown.js';

function CiteLink({ path, start, end, onCite }) {
  return (
    <a href={`#source=${encodeURIComponent(path)}:${start}-${end}`} className="cite"
       onClick={(e) => { e.preventDefault(); onCite({ path, start, end }); }}>
      <code>{path}:{start}-{end}</code>
    </a>
  );
}

export function Search({ apiKey, onCite }) {
  const [query, setQuery] = useState('');
  const [results, setResults] = useState(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const run = async () => {
    if (!query.trim()) return;
    setBusy(true);
    setError('');
    try {
      const answer = await api(`/v1/search?q=${encodeURIComponent(query.trim())}&limit=10`, apiKey);
      setResults(answer.results);
    } catch (e) {
      setError(e.message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="search" aria-label="Search the repository">
      <form role="search" onSubmit={(e) => { e.preventDefault(); run(); }}>
        <label htmlFor="search-query" className="sr-only">Search the repository</label>
        <input id="search-query" type="search" placeholder="A name, an error message, a concept…"
               value={query} onChange={(e) => setQuery(e.target.value)} />
        <button type="submit" disabled={busy || !query.trim()}>{busy ? 'Searching…' : 'Search'}</button>
      </form>
      {error && <p className="error" role="alert">{error}</p>}
      {results && (
        <ol className="results" aria-label={`${results.length} results`}>
          {results.length === 0 && <li className="empty">Nothing in the index matches.</li>}
          {results.map((r) => (
            <li key={`${r.path}:${r.startLine}`}>
              <CiteLink path={r.path} start={r.startLine} end={r.endLine} onCite={onCite} />
              {(r.symbol || r.headingPath) && <span className="what"> {r.chunkType} {r.symbol || r.headingPath}</span>}
              <pre><code>{r.content.split('\n').slice(0, 6).join('\n')}</code></pre>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

export function SourceView({ apiKey, path, start, end, onClose }) {
  const [file, setFile] = useState(null);
  const [error, setError] = useState('');
  const close = useRef(null);
  useEffect(() => {
    setFile(null);
    setError('');
    api(`/v1/file?path=${encodeURIComponent(path)}&start=${start}&end=${end}`, apiKey).then(setFile, (e) => setError(e.message));
  }, [apiKey, path, start, end]);
  useEffect(() => {
    const before = document.activeElement;
    close.current?.focus();
    const onKey = (e) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => {
      window.removeEventListener('keydown', onKey);
      before?.focus?.();
    };
  }, [onClose]);
  const language = languageOf(path);
  return (
    // eslint-disable-next-line jsx-a11y/click-events-have-key-events, jsx-a11y/no-static-element-interactions
    <div className="overlay" onClick={onClose}>
      {/* eslint-disable-next-line jsx-a11y/click-events-have-key-events, jsx-a11y/no-static-element-interactions */}
      <div className="source" role="dialog" aria-modal="true" aria-labelledby="source-title" onClick={(e) => e.stopPropagation()}>
        <header>
          <h2 id="source-title"><code>{path}:{start}-{end}</code></h2>
          <button type="button" ref={close} onClick={onClose}>Close</button>
        </header>
        {error && <p className="error" role="alert">{error}</p>}
        {!error && !file && <p className="status">Loading…</p>}
        {file && (
          <ol className="lines" start={file.startLine} aria-label={`Lines ${file.startLine} to ${file.endLine}`}>
            {file.content.replace(/\n$/, '').split('\n').map((line, i) => (
              // eslint-disable-next-line react/no-array-index-key
              <li key={i}><code className="hljs" dangerouslySetInnerHTML={{ __html: highlightLine(line, language) || ' ' }} /></li>
            ))}
          </ol>
        )}
        {file?.truncated && <p className="hint">Cut at the file viewer&apos;s limit.</p>}
      </div>
    </div>
  );
}
