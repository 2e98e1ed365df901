// The chat page in real Chromium (Debian's, driven by puppeteer-core; never a downloaded
// browser), against real `pilotfish serve` processes this script starts and restarts:
// sign-in (a wrong key, then the right one, kept across a reload), tokens arriving, a
// citation opened in the source view, tool steps folded, stop, search-only mode, a phone-sized
// screen, a server restart in the middle of a stream, a server without any chat model, and
// axe-core's accessibility rules. Screenshots go to $PF_ARTIFACTS.
//
// Environment (set by tests/web_page_test.cpp): PILOTFISH_BIN, PF_DB, PF_REPO, PF_CONFIG (a
// model a:m and the key PF_KEY), PF_CONFIG_NO_MODEL (the same key, no chat model), PF_KEY,
// PF_ARTIFACTS, CHROMIUM (default /usr/bin/chromium).
// Prints one JSON line: {"passed": [...], "failed": [{"name", "error"}], "figures": {...}}; exits
// 1 when anything failed.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import assert from 'node:assert/strict';
import puppeteer from 'puppeteer-core';

const require = createRequire(import.meta.url);
const axeSource = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const env = process.env;
const artifacts = env.PF_ARTIFACTS || '/tmp/pilotfish-web';
mkdirSync(artifacts, { recursive: true });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}

// `pilotfish serve` on a fixed port, so that a restarted one is found where the page looks.
async function startServer(port, config) {
  const child = spawn(env.PILOTFISH_BIN, ['serve', '--listen', `127.0.0.1:${port}`, '--db', env.PF_DB,
    '--repo', env.PF_REPO, '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stderr.on('data', (d) => { log += d; });
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('listening on')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`pilotfish serve exited (${code}): ${log}`)));
  });
  child.log = () => log;
  return child;
}

async function stopServer(child, signal = 'SIGTERM') {
  if (child.exitCode !== null) return;
  const done = new Promise((r) => child.on('exit', r));
  child.kill(signal);
  await done;
}

const results = { passed: [], failed: [], figures: {} };
async function step(name, fn) {
  try {
    await fn();
    results.passed.push(name);
  } catch (e) {
    results.failed.push({ name, error: String(e?.stack || e) });
  }
}

async function shot(page, name) {
  await page.screenshot({ path: `${artifacts}/${name}.png`, fullPage: false });
}

// axe-core's WCAG 2.1 AA rules on the page as it is now; serious or critical findings fail.
async function accessible(page, label) {
  await page.evaluate(axeSource);
  const found = await page.evaluate(async () => {
    const r = await window.axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  writeFileSync(`${artifacts}/axe-${label}.json`, JSON.stringify(found, null, 2));
  const bad = found.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, [], `${label}: ${JSON.stringify(bad)}`);
  results.figures[`axe_${label}_minor`] = found.length;
}

async function signIn(page, url, key) {
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForSelector('#api-key');
  await page.type('#api-key', key);
  await page.click('.signin button[type=submit]');
  await page.waitForSelector('#question');
}

// The last answer's text (of the answer after the first `after` ones, when given: a new
// answer, not the one before it), and whether an answer is still coming (Stop is shown).
const lastAnswer = (page, after = 0) => page.evaluate((after) => {
  const all = document.querySelectorAll('.msg.assistant');
  if (all.length <= after) return '';
  return [...all[all.length - 1].querySelectorAll('.md')].map((m) => m.textContent).join('');
}, after);
const answers = (page) => page.$$eval('.msg.assistant', (a) => a.length);
const streaming = (page) => page.evaluate(() => !!document.querySelector('button.stop'));

// Asks; returns how many answers there were before, for lastAnswer.
async function ask(page, text) {
  const before = await answers(page);
  await page.click('#question');
  await page.type('#question', text);
  await page.keyboard.press('Enter');
  return before;
}

// Waits until pred(page) holds; fails with what was seen.
async function until(page, pred, what, ms = 20000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred(page)) return;
    await sleep(25);
  }
  throw new Error(`timed out waiting for ${what}; answer: ${await lastAnswer(page)}`);
}

const browser = await puppeteer.launch({
  executablePath: env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
});
const port = await freePort();
const url = `http://127.0.0.1:${port}/`;
let server = await startServer(port, env.PF_CONFIG);
const page = await browser.newPage();
await page.setViewport({ width: 1280, height: 800 });

try {
  await step('a wrong key is refused, the right one signs in and lasts a reload', async () => {
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForSelector('#api-key');
    await shot(page, 'signin-desktop');
    await accessible(page, 'signin');
    await page.type('#api-key', 'not-the-key');
    await page.click('.signin button[type=submit]');
    await page.waitForSelector('.signin .error');
    const error = await page.$eval('.signin .error', (e) => e.textContent);
    assert.match(error, /not accepted/);
    await page.$eval('#api-key', (e) => { e.value = ''; });
    await page.type('#api-key', env.PF_KEY);
    await page.click('.signin button[type=submit]');
    await page.waitForSelector('#question');
    const models = await page.$$eval('.model option', (os) => os.map((o) => o.value));
    assert.deepEqual(models, ['a:m']);
    assert.equal(await page.evaluate(() => sessionStorage.getItem('pilotfish.apiKey')), env.PF_KEY);
    assert.equal(await page.evaluate(() => localStorage.length), 0, 'the key must not outlive the tab');
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('#question');
  });

  await step('tokens arrive one by one, with a folded tool step and a citation link', async () => {
    const before = await ask(page, 'where is retryWithBackoff?');
    const lengths = new Set();
    const t0 = Date.now();
    let first = 0;
    await until(page, async (p) => {
      const n = (await lastAnswer(p, before)).length;
      if (n > 0) {
        if (!first) first = Date.now() - t0;
        lengths.add(n);
      }
      return n > 0 && !(await streaming(p));
    }, 'the answer to finish');
    results.figures.first_text_ms = first;
    assert.ok(lengths.size >= 3, `the answer came in ${lengths.size} pieces; it must stream`);
    const text = await lastAnswer(page);
    assert.match(text, /retryWithBackoff/);
    const tool = await page.$eval('.msg.assistant details.tool', (d) => ({ open: d.open, name: d.querySelector('.tool-name').textContent }));
    assert.deepEqual(tool, { open: false, name: 'read_file' });
    const cite = await page.$eval('.msg.assistant a.cite', (a) => ({ path: a.dataset.path, start: a.dataset.start, end: a.dataset.end }));
    assert.deepEqual(cite, { path: 'src/retry.ts', start: '2', end: '3' });
    assert.equal(await page.$$eval('.msg.assistant pre code.hljs .hljs-keyword', (e) => e.length > 0), true,
      'the code block is highlighted');
    await shot(page, 'answer-desktop');
    await accessible(page, 'answer');
  });

  await step('a citation opens exactly its lines', async () => {
    await page.click('.msg.assistant a.cite');
    await page.waitForSelector('[role=dialog] .lines li');
    const view = await page.$eval('[role=dialog]', (d) => ({
      title: d.querySelector('h2').textContent,
      start: d.querySelector('ol.lines').start,
      lines: [...d.querySelectorAll('ol.lines li')].map((li) => li.textContent),
    }));
    assert.equal(view.title, 'src/retry.ts:2-3');
    assert.equal(view.start, 2);
    assert.equal(view.lines.length, 2);
    assert.match(view.lines[0], /^export function retryWithBackoff/);
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Close');
    await shot(page, 'source-desktop');
    await accessible(page, 'source');
    await page.keyboard.press('Escape');
    await page.waitForSelector('[role=dialog]', { hidden: true });
  });

  await step('stop ends the stream and no more text comes', async () => {
    const before = await ask(page, 'tell me a long story');
    await until(page, async (p) => (await lastAnswer(p, before)).includes('word3'), 'word3');
    await page.click('button.stop');
    await page.waitForSelector('button[type=submit]');
    const at = await lastAnswer(page);
    await sleep(1200);
    assert.equal(await lastAnswer(page), at, 'text kept coming after stop');
    assert.ok(!at.includes('word199'));
  });

  await step('search-only mode lists places that open in the source view', async () => {
    const messages = await page.$$eval('.msg', (m) => m.length);
    await page.click('.modes input[value=search]');
    await page.waitForSelector('#search-query');
    assert.equal(await page.$('.model select'), null, 'no model picker without a model to use');
    await page.type('#search-query', 'retryWithBackoff');
    await page.keyboard.press('Enter');
    await page.waitForSelector('.results a.cite');
    const first = await page.$eval('.results a.cite', (a) => a.textContent);
    assert.equal(first, 'src/retry.ts:1-4');
    await shot(page, 'search-desktop');
    await accessible(page, 'search');
    await page.click('.results a.cite');
    await page.waitForSelector('[role=dialog] .lines li');
    assert.equal(await page.$$eval('[role=dialog] .lines li', (l) => l.length), 4);
    await page.click('[role=dialog] header button');
    await page.click('.modes input[value=chat]');
    await page.waitForSelector('#question');
    assert.equal(await page.$$eval('.msg', (m) => m.length), messages, 'the conversation was lost');
  });

  await step('a server restart mid-stream is an error the reader can retry', async () => {
    const messages = await page.$$eval('.msg', (m) => m.length);
    const before = await ask(page, 'restart story');
    await until(page, async (p) => (await lastAnswer(p, before)).includes('word3'), 'word3');
    await stopServer(server, 'SIGKILL');
    await page.waitForSelector('.chat .error button', { timeout: 20000 });
    const error = await page.$eval('.chat .error', (e) => e.textContent);
    assert.match(error, /lost|failed|network/i, error);
    server = await startServer(port, env.PF_CONFIG);
    await page.click('.chat .error button');
    await until(page, async (p) => (await lastAnswer(p)).includes('You said') && !(await streaming(p)), 'the retried answer');
    assert.equal(await page.$('.chat .error'), null);
    assert.equal(await page.$$eval('.msg', (m) => m.length), messages + 2, 'the conversation was not kept');
  });

  await step('on a phone-sized screen everything fits and works', async () => {
    const phone = await browser.newPage();
    await phone.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
    await signIn(phone, url, env.PF_KEY);
    await shot(phone, 'start-phone');
    const before = await ask(phone, 'what does the README say?');
    await until(phone, async (p) => (await lastAnswer(p, before)).includes('You said') && !(await streaming(p)), 'an answer');
    const fit = await phone.evaluate(() => {
      const box = (sel) => {
        const r = document.querySelector(sel).getBoundingClientRect();
        return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
      };
      return { scroll: document.documentElement.scrollWidth, width: innerWidth, height: innerHeight,
        question: box('#question'), button: box('.ask button') };
    });
    assert.ok(fit.scroll <= fit.width, `the page scrolls sideways: ${fit.scroll} > ${fit.width}`);
    for (const b of [fit.question, fit.button])
      assert.ok(b.left >= 0 && b.right <= fit.width && b.bottom <= fit.height, JSON.stringify(fit));
    await shot(phone, 'answer-phone');
    await accessible(phone, 'phone');
    await phone.close();
  });

  await step('without a chat model the answer is the retrieval, with citations', async () => {
    await stopServer(server);
    server = await startServer(port, env.PF_CONFIG_NO_MODEL);
    const p = await browser.newPage();
    await p.setViewport({ width: 1280, height: 800 });
    await signIn(p, url, env.PF_KEY);
    assert.equal(await p.$eval('.model select', (s) => s.disabled), true);
    assert.match(await p.$eval('.model option', (o) => o.textContent), /Retrieval only/);
    await ask(p, 'retryWithBackoff');
    await until(p, async (x) => (await lastAnswer(x)).includes('No chat model') && !(await streaming(x)), 'the retrieval answer');
    const cite = await p.$eval('.msg.assistant a.cite', (a) => a.dataset.path);
    assert.equal(cite, 'src/retry.ts');
    await shot(p, 'retrieval-only-desktop');
    await p.close();
  });
} finally {
  await browser.close();
  await stopServer(server);
}
console.log(JSON.stringify(results));
process.exit(results.failed.length ? 1 : 0);
