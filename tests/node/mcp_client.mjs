// The real MCP client (@modelcontextprotocol/sdk) against pilotfish's MCP server, over stdio
// (`pilotfish mcp`) or Streamable HTTP (`pilotfish serve` at /mcp). Prints one JSON report of
// what the client saw; tests/mcp_server_test.cpp checks it.
//   node mcp_client.mjs stdio PILOTFISH_BIN DB
//   node mcp_client.mjs http URL KEY
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [mode, a, b] = process.argv.slice(2);
const transport = mode === 'stdio'
  ? new StdioClientTransport({ command: a, args: ['mcp', '--db', b], stderr: 'ignore' })
  : new StreamableHTTPClientTransport(new URL(a + '/mcp'),
      { requestInit: { headers: { Authorization: 'Bearer ' + b } } });
const client = new Client({ name: 'pilotfish-test', version: '1.0.0' });
const report = {};
try {
  await client.connect(transport);
  report.server = client.getServerVersion();
  report.sessionId = transport.sessionId ?? null;
  report.tools = (await client.listTools()).tools.map((t) => t.name);
  const text = (r) => r.content.map((c) => c.text).join('');
  const search = await client.callTool({ name: 'search_code', arguments: { query: 'retryWithBackoff' } });
  report.search = { isError: search.isError, text: text(search) };
  const read = await client.callTool({ name: 'read_file', arguments: { path: 'src/retry.ts', startLine: 1, endLine: 2 } });
  report.read = { isError: read.isError, text: text(read) };
  const escape = await client.callTool({ name: 'read_file', arguments: { path: '../../etc/passwd' } });
  report.escape = { isError: escape.isError, text: text(escape) };
  const status = await client.callTool({ name: 'index_status', arguments: {} });
  report.status = JSON.parse(text(status));
  const list = await client.callTool({ name: 'list_directory', arguments: {} });
  report.list = text(list);
  const grep = await client.callTool({ name: 'grep', arguments: { pattern: 'export function' } });
  report.grep = text(grep);
  try {
    await client.callTool({ name: 'no_such_tool', arguments: {} });
    report.unknown = 'no error';
  } catch (e) {
    report.unknown = String(e.message);
  }
  await client.ping();
  report.ping = true;
  if (mode !== 'stdio') await transport.terminateSession();
  await client.close();
} catch (e) {
  report.failure = String(e && e.stack || e);
}
console.log(JSON.stringify(report));
