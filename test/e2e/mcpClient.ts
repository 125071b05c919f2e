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

/** How a held operation ended for the agent: its result, or what operation_resume answered instead. */
export type Decision = { ok: true; result: Json } | { ok: false; code: string; details?: Json };

/**
 * What an agent does after APPROVAL_REQUIRED: operation_resume until the hold is decided (a wait that ends while it
 * is still pending answers APPROVAL_CONFLICT with state pending: ask again). Never rejects, so it can run in the
 * background while the browser acts.
 */
export async function awaitDecision(client: Client, approvalId: string, deadlineMs = 170_000): Promise<Decision> {
  const deadline = Date.now() + deadlineMs;
  try {
    for (;;) {
      const r = (await client.callTool({ name: 'operation_resume', arguments: { approval_id: approvalId, wait_ms: 55_000 } })) as CallToolResult;
      if (!r.isError) return { ok: true, result: r.structuredContent as Json };
      const first = r.content[0];
      const error = (JSON.parse(first?.type === 'text' ? first.text : '{}') as { error?: { code: string; details?: Json } }).error ?? { code: 'UNPARSEABLE' };
      const stillPending = error.code === 'APPROVAL_CONFLICT' && error.details?.state === 'pending';
      if (!stillPending || Date.now() > deadline) return { ok: false, code: error.code, ...(error.details ? { details: error.details } : {}) };
    }
  } catch (err) {
    return { ok: false, code: 'CLIENT_ERROR', details: { message: err instanceof Error ? err.message : String(err) } };
  }
}
