import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as vscode from 'vscode';

export const EXTENSION_ID = 'codespace.codespace-vscode';

export interface CodeSpaceApi {
  endpointUrl(): string | undefined;
}

export async function activateExtension(): Promise<CodeSpaceApi> {
  const ext = vscode.extensions.getExtension<CodeSpaceApi>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} is installed`);
  return ext.activate();
}

/** Gets URL and token the way a user does: the Copy Connection Settings command and the clipboard. */
export async function connectionFromCommand(): Promise<{ url: string; token: string }> {
  const result = await vscode.commands.executeCommand<{ url: string } | undefined>('codespace.copyConnectionSettings');
  assert.ok(result?.url, 'the command returns the endpoint URL');
  const text = await vscode.env.clipboard.readText();
  const token = /^Token: (\S+)$/m.exec(text)?.[1];
  assert.ok(token, 'the clipboard holds the token');
  return { url: result.url, token };
}

export async function connectClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'integration-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/**
 * connectClient right after the server was stopped and started again on the same port, checked with a first
 * `workspace_info`. fetch (undici, Node 24 in newer VS Code) may hand out a pooled keep-alive socket of the stopped
 * server before it has seen that socket close (nodejs/undici#3492): the request then fails with "other side closed"
 * without reaching the new server, for the connection or for the first call after it, once per stale socket in the
 * pool. An agent simply connects again; so does this, a few times, and only for that error.
 */
export async function connectAfterRestart(url: string, token: string): Promise<Client> {
  for (let attempt = 1; ; attempt++) {
    let client: Client | undefined;
    try {
      client = await connectClient(url, token);
      await client.callTool({ name: 'workspace_info', arguments: {} });
      return client;
    } catch (err) {
      await client?.close().catch(() => undefined);
      const chain: string[] = [];
      for (let e: unknown = err; e instanceof Error && chain.length < 5; e = (e as { cause?: unknown }).cause) chain.push(`${e.message} ${String((e as { code?: unknown }).code ?? '')}`);
      if (!/other side closed|UND_ERR_SOCKET/.test(chain.join(' ')) || attempt >= 4) throw err;
    }
  }
}

export async function call<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (r.isError) throw new Error(`${name} failed: ${r.content[0]?.type === 'text' ? r.content[0].text : '?'}`);
  return r.structuredContent as T;
}

export async function callError(client: Client, name: string, args: Record<string, unknown>): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  assert.equal(r.isError, true, `${name} was expected to fail`);
  const first = r.content[0];
  assert.ok(first?.type === 'text');
  return (JSON.parse(first.text) as { error: { code: string; message: string } }).error;
}

export function folder(index: number): vscode.WorkspaceFolder {
  const f = vscode.workspace.workspaceFolders?.[index];
  assert.ok(f, `workspace folder ${index} is open`);
  return f;
}

/** Activates the extension, connects a client as a user would, and returns it with the first folder's id. */
export async function connectToFirstFolder(): Promise<{ client: Client; wsId: string }> {
  await activateExtension();
  const { url, token } = await connectionFromCommand();
  const client = await connectClient(url, token);
  const info = await call<{ workspaces: { id: string; name: string }[] }>(client, 'workspace_info', {});
  const first = info.workspaces.find((w) => w.name === folder(0).name);
  assert.ok(first, 'the first folder is served');
  return { client, wsId: first.id };
}

/** Polls `probe` every 50 ms until it returns a value (not undefined), or fails naming `what` after `ms`. */
export async function pollFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Activates the built-in TypeScript language features and copies test/fixtures/lang-project into `dir` of the first
 * folder, so the TypeScript server loads it as a project of its own.
 */
export async function typeScriptProject(dir: string): Promise<void> {
  const ts = vscode.extensions.getExtension('vscode.typescript-language-features');
  assert.ok(ts, 'the built-in TypeScript language features are installed');
  await ts.activate();
  assert.equal(ts.isActive, true, 'and active');
  const repo = vscode.extensions.getExtension(EXTENSION_ID)?.extensionPath;
  assert.ok(repo);
  fs.cpSync(path.join(repo, 'test', 'fixtures', 'lang-project'), path.join(folder(0).uri.fsPath, dir), { recursive: true });
}
