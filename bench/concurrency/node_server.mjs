#!/usr/bin/env node
// The reference stack for bench/concurrency: what the Activepieces platform copilot's chat
// endpoint does (shared/spec/reference-copilot.md section 11), minus retrieval: a Node http
// server whose POST /v1/platform-copilot/chat takes {message, conversationHistory}, runs the
// `ai` package's streamText (tools read_file and list_directory, stepCountIs(5), a fixed system
// prompt) against an OpenAI-compatible model, merges toUIMessageStream() into
// createUIMessageStream and writes it with pipeUIMessageStreamToResponse.
//
// usage: node node_server.mjs --model-url http://127.0.0.1:PORT/v1 [--model m1] [--port 0]
//                             [--key KEY] [--repo DIR]
// Prints "listening on http://127.0.0.1:<port>" first; runs until SIGTERM/SIGINT.
import http from 'node:http';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  createUIMessageStream, pipeUIMessageStreamToResponse, stepCountIs, streamText, tool,
  UI_MESSAGE_STREAM_HEADERS,
} from 'ai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { z } from 'zod';

const { values: opt } = parseArgs({
  options: {
    'model-url': { type: 'string' },
    model: { type: 'string', default: 'm1' },
    port: { type: 'string', default: '0' },
    key: { type: 'string' },
    repo: { type: 'string', default: process.cwd() },
  },
});
if (!opt['model-url']) { console.error('node_server: --model-url is required'); process.exit(2); }

const provider = createOpenAICompatible({ name: 'bench', baseURL: opt['model-url'], apiKey: 'bench' });
const model = provider.chatModel(opt.model);
const repo = path.resolve(opt.repo);
const inRepo = p => { const full = path.resolve(repo, p); return full === repo || full.startsWith(repo + path.sep) ? full : null; };

const SYSTEM_PROMPT = `You are the codebase assistant, an expert on this repository.

## Your tools
read_file reads any repository file by path; list_directory browses directories. Use them whenever needed.

## Response format
Markdown with fenced code blocks; concise explanations but complete code. Give paths and line numbers.`;

const tools = {
  read_file: tool({
    description: 'Reads the complete content of a repository file',
    inputSchema: z.object({ filePath: z.string().describe('path relative to the repository root') }),
    execute: async ({ filePath }) => {
      const full = inRepo(filePath);
      if (!full) return { error: `File not found: ${filePath}`, filePath };
      try {
        const content = await fs.readFile(full, 'utf8');
        return { content, filePath, lineCount: content.split('\n').length };
      } catch { return { error: `File not found: ${filePath}`, filePath }; }
    },
  }),
  list_directory: tool({
    description: 'Lists files and directories at a repository path',
    inputSchema: z.object({ dirPath: z.string() }),
    execute: async ({ dirPath }) => {
      const full = inRepo(dirPath);
      if (!full) return { error: `Directory not found: ${dirPath}` };
      const entries = await fs.readdir(full, { withFileTypes: true });
      return { entries: entries.map(e => ({ name: e.name, type: e.isDirectory() ? 'dir' : 'file', path: path.join(dirPath, e.name) })), count: entries.length };
    },
  }),
};

const bodySchema = z.object({
  message: z.string().min(1),
  conversationHistory: z.array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() })).default([]),
  modelId: z.string().optional(),
  provider: z.string().optional(),
});

function sendJson(res, status, body) {
  const data = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) });
  res.end(data);
}

const server = http.createServer(async (req, res) => {
  if (req.method === 'GET' && req.url === '/healthz') return sendJson(res, 200, { status: 'ok' });
  if (req.method !== 'POST' || req.url !== '/v1/platform-copilot/chat') return sendJson(res, 404, { error: 'not_found', message: 'no route' });
  if (opt.key && req.headers.authorization !== `Bearer ${opt.key}`) return sendJson(res, 401, { error: 'unauthorized', message: 'missing or wrong API key' });
  let raw = '';
  for await (const part of req) raw += part;
  let body;
  try { body = bodySchema.parse(JSON.parse(raw)); } catch (e) { return sendJson(res, 400, { error: 'invalid_request', message: String(e.message).slice(0, 500) }); }

  const stream = createUIMessageStream({
    execute: async ({ writer }) => {
      const result = streamText({
        model,
        system: SYSTEM_PROMPT,
        messages: [...body.conversationHistory, { role: 'user', content: body.message }],
        tools,
        stopWhen: stepCountIs(5),
      });
      writer.merge(result.toUIMessageStream());
      await result.consumeStream();
    },
    onError: error => {
      console.error('chat error:', error?.message ?? error);
      return 'An error occurred while generating the response.';
    },
  });
  pipeUIMessageStreamToResponse({ response: res, stream, headers: UI_MESSAGE_STREAM_HEADERS });
});
server.keepAliveTimeout = 5000;
server.listen(Number(opt.port), '127.0.0.1', 4096, () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { server.close(); process.exit(0); });
