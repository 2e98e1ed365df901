// Bundles the chat page into the folder named by the first argument: src/main.jsx (React and
// @ai-sdk/react's useChat) as app.js, its CSS with highlight.js's theme as app.css, a gzip of
// each, and index.html beside them. CMake runs it at build time (see CMakeLists.txt); the files are then
// embedded in the binary by src/api/web_assets.cpp. No network: node_modules comes from
// `npm ci` (scripts/install-deps.sh).
import { build } from 'esbuild';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';

const out = process.argv[2];
if (!out) {
  console.error('usage: node build.mjs OUT_DIR');
  process.exit(2);
}
if (!existsSync(new URL('./node_modules/react', import.meta.url))) {
  console.error('web/node_modules is missing: run scripts/install-deps.sh (npm ci --prefix web)');
  process.exit(1);
}
mkdirSync(out, { recursive: true });
await build({
  entryPoints: { app: 'src/main.jsx' },
  bundle: true,
  minify: true,
  format: 'iife',
  target: ['chrome109', 'firefox115', 'safari16'],
  outdir: out,
  jsx: 'automatic',
  define: { 'process.env.NODE_ENV': '"production"' },
  legalComments: 'none',
  logLevel: 'warning',
});
copyFileSync(new URL('./index.html', import.meta.url), `${out}/index.html`);
// Served instead of the bundle to browsers that accept gzip (a quarter of its size): the
// server has no compressor, so the compressed copy is made here, once.
for (const name of ['app.js', 'app.css'])
  writeFileSync(`${out}/${name}.gz`, gzipSync(readFileSync(`${out}/${name}`), { level: 9 }));
