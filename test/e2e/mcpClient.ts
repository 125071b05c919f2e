// What the end-to-end tests share: getting the connection settings the way a user does (palette command, then the
// clipboard) and a real MCP SDK client over HTTP with the token.
import * as assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Workbench } from './index';

export type Json = Record<string, unknown>;

/** Runs "CodeSpace: Copy Connection Settings" in the workbench and reads URL and token from the clipboard. */
export async function copyConnectionSettings(wb: Workbench): Promise<{ url: string; token: string }> {
  const { page } = wb;
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(wb.url).origin });
  await page.evaluate(() => navigator.clipboard.writeText(''));
  await wb.runCommand('CodeSpace: Copy Connection Settings');
  let text = '';
  // Up to a minute: after a reload on a loaded machine the command waits for the extension to activate.
  for (const deadline = Date.now() + 60_000; !/Token: \S+/.test(text) && Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 200));
    text = await page.evaluate(() => navigator.clipboard.readText());
  }
  const url = /^URL: (\S+)$/m.exec(text)?.[1] ?? '';
  const token = /^Token: (\S+)$/m.exec(text)?.[1] ?? '';
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/, 'the clipboard holds the endpoint URL');
  assert.ok(token.length >= 40, 'the clipboard holds the token');
  return { url, token };
}

export async function connect(url: string, token: string, name = 'e2e-agent'): Promise<Client> {
  const client = new Client({ name, version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

export async function call<T = Json>(client: Client, name: string, args: Json): Promise<T> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name} failed: ${r.content[0]?.type === 'text' ? r.content[0].text : '?'}`);
  return r.structuredContent as T;
}

export async function callError(client: Client, name: string, args: Json): Promise<{ code: string; details?: Json }> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(r.isError, true, `${name} should fail`);
  const first = r.content[0];
  assert.ok(first?.type === 'text');
  return (JSON.parse(first.text) as { error: { code: string } }).error;
}
