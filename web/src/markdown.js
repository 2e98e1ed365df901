// The answer's Markdown as safe HTML: marked (GitHub flavour), code blocks highlighted by
// highlight.js, everything passed through DOMPurify (a model's text is untrusted), then every
// citation (`path:start-end`, as the system prompt asks the model to write them) made a link
// the page opens in its source view.
import { Marked } from 'marked';
import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import ruby from 'highlight.js/lib/languages/ruby';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

for (const [name, lang] of Object.entries({ bash, c, cpp, css, go, java, javascript, json, markdown,
  python, ruby, rust, sql, typescript, xml, yaml })) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'console'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs', 'cjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['rs'], { languageName: 'rust' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['h', 'hpp', 'cc', 'cxx'], { languageName: 'cpp' });

const EXTENSION_LANGUAGE = { md: 'markdown', mjs: 'javascript', cjs: 'javascript' };

// The highlight.js language for a file name, or null.
export function languageOf(path) {
  const ext = (path.split('.').pop() || '').toLowerCase();
  const name = EXTENSION_LANGUAGE[ext] || ext;
  return hljs.getLanguage(name) ? name : null;
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]);
}

// One line of a file, highlighted as its language (or escaped).
export function highlightLine(line, language) {
  if (!language) return escapeHtml(line);
  return hljs.highlight(line, { language, ignoreIllegals: true }).value;
}

const marked = new Marked({ gfm: true });
marked.use({
  renderer: {
    code({ text, lang }) {
      const language = (lang || '').trim().split(/\s+/)[0].toLowerCase();
      const known = language && hljs.getLanguage(language);
      const body = known ? hljs.highlight(text, { language, ignoreIllegals: true }).value : escapeHtml(text);
      return `<pre><code class="hljs${known ? ` language-${language}` : ''}">${body}</code></pre>\n`;
    },
  },
});

// A citation: a relative path with an extension or a folder, a colon, a line or a range.
const CITATION = /(?<![\w/.-])((?:[\w@+-]+\/)*[\w@+-]+(?:\.[\w-]+)+|(?:[\w@+-]+\/)+[\w@+-]+):(\d+)(?:-(\d+))?(?![\w-])/g;

// The citations of a text: {path, start, end, index, length} each.
export function citations(text) {
  const out = [];
  for (const m of text.matchAll(CITATION)) {
    const start = Number(m[2]);
    const end = m[3] ? Number(m[3]) : start;
    if (start < 1 || end < start) continue;
    out.push({ path: m[1], start, end, index: m.index, length: m[0].length });
  }
  return out;
}

function citationLink(doc, c, label) {
  const a = doc.createElement('a');
  a.href = `#source=${encodeURIComponent(c.path)}:${c.start}-${c.end}`;
  a.className = 'cite';
  a.dataset.path = c.path;
  a.dataset.start = String(c.start);
  a.dataset.end = String(c.end);
  a.title = `Open ${c.path} lines ${c.start}–${c.end}`;
  a.append(label);
  return a;
}

// Citations in text nodes and inline code become links; code blocks and links stay as they are.
function linkCitations(root) {
  const doc = root.ownerDocument;
  const walker = doc.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n);
  for (const node of texts) {
    const parent = node.parentElement;  // null at the fragment's top level
    if (parent?.closest('pre, a')) continue;
    const inCode = parent?.tagName === 'CODE';
    const found = citations(node.data);
    if (!found.length) continue;
    if (inCode) {
      // `src/a.ts:1-4` as inline code: the whole code element is the link.
      const code = parent;
      if (found.length === 1 && found[0].length === node.data.trim().length) {
        const link = citationLink(doc, found[0], '');
        code.replaceWith(link);
        link.append(code);
      }
      continue;
    }
    const frag = doc.createDocumentFragment();
    let at = 0;
    for (const c of found) {
      frag.append(node.data.slice(at, c.index));
      frag.append(citationLink(doc, c, node.data.slice(c.index, c.index + c.length)));
      at = c.index + c.length;
    }
    frag.append(node.data.slice(at));
    node.replaceWith(frag);
  }
}

DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A' && node.getAttribute('href') && !node.classList.contains('cite')) {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer');
  }
});

// The HTML of an answer's Markdown, safe to set as innerHTML. Never throws: text the renderer
// cannot take is shown as it came.
export function renderMarkdown(text) {
  try {
    const html = DOMPurify.sanitize(marked.parse(text), { USE_PROFILES: { html: true } });
    const template = document.createElement('template');
    template.innerHTML = html;
    linkCitations(template.content);
    return template.innerHTML;
  } catch (e) {
    console.error('pilotfish: could not render an answer', e);
    return `<pre>${escapeHtml(text)}</pre>`;
  }
}
