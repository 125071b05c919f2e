/**
 * Containment checks inside VS Code, through a real MCP client: the one path check of every path-taking tool (the
 * same hostile set as the unit test, found in the same catalogue), a named pipe that no longer stalls the editor,
 * names listed consistently by find and search, a stale version reported as stale, and credentials redacted from a
 * real command's output.
 */
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { constants, promises as fsp, openSync, closeSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as vscode from 'vscode';
import { fakeSecrets } from '../unit/helpers/fakeSecrets';
import { HOSTILE_PATHS, argsFor, makeHostilePaths, pathTools } from '../unit/helpers/pathToolArgs';
import { OPT_IN_GROUPS } from '../../src/app/catalogue';
import { call, callError, connectToFirstFolder, folder } from './helpers';

const sha256 = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`;
const marker = (kind: string): string => `[REDACTED:${kind}]`;

describe('containment inside VS Code', function () {
  this.timeout(180_000);
  let client: Client;
  let wsId: string;
  let root: string;
  let outside: string;
  let hostile: { dispose(): Promise<void> };
  const dir = `contain-${process.pid}-${Date.now().toString(36)}`;
  const rel = (p: string): string => `${dir}/${p}`;

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    root = await fsp.realpath(folder(0).uri.fsPath);
    outside = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-contain-out-'));
    await fsp.writeFile(path.join(outside, 'secret.txt'), 'secret\n');
    await fsp.mkdir(path.join(root, dir));
    await fsp.writeFile(path.join(root, dir, 'ok.txt'), 'x\n');
    await fsp.writeFile(path.join(root, dir, 'plain.ts'), 'export function plain(a: number): number {\n  return a + 1;\n}\n');
    hostile = await makeHostilePaths(path.join(root, dir), outside);
    // Every group, those served only on request included: each path-taking tool is tested.
    await vscode.workspace.getConfiguration('codespace').update('tools.enabledGroups', [...OPT_IN_GROUPS], vscode.ConfigurationTarget.Global);
    const want = pathTools().map((t) => t.tool.name);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const listed = new Set((await client.listTools()).tools.map((t) => t.name));
      if (want.every((n) => listed.has(n))) break;
      assert.ok(Date.now() < deadline, `not served: ${want.filter((n) => !listed.has(n)).join(', ')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    // Should a reader still wait on the pipe (the check failed), a writer that opens and closes it releases it.
    try {
      closeSync(openSync(path.join(root, dir, 'fifo'), constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // No reader waiting: nothing to release.
    }
    await hostile?.dispose();
    await vscode.workspace.getConfiguration('codespace').update('tools.enabledGroups', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await client?.close();
    await fsp.rm(path.join(root, dir), { recursive: true, force: true });
    await fsp.rm(outside, { recursive: true, force: true });
  });

  for (const entry of HOSTILE_PATHS) {
    it(`${entry.name}: the same answer from every path-taking tool`, async () => {
      for (const { tool, expect } of pathTools()) {
        const want = expect === 'file' ? entry.file : entry.folder;
        const r = (await client.callTool({ name: tool.name, arguments: argsFor(tool, wsId, rel(entry.name)) })) as CallToolResult;
        if (!r.isError) {
          assert.equal(want, 'ok', `${tool.name} on ${entry.name}: expected ${want}, got a result`);
          continue;
        }
        if (want === 'ok') continue;
        const first = r.content[0];
        const e = (JSON.parse(first?.type === 'text' ? first.text : '{}') as { error: { code: string; message: string; details?: { kind?: string } } }).error;
        assert.equal(e.code, want, `${tool.name} on ${entry.name}: ${e.message}`);
        if (entry.kind) assert.match(`${e.message} ${String(e.details?.kind)}`, entry.kind);
      }
    });
  }

  it('diagnostics of a named pipe answers at once and stalls nothing: hover, symbols, diagnostics and the editor\'s own file reads go on', async () => {
    const fifoCalls = Array.from({ length: 4 }, () => callError(client, 'diagnostics', { workspace_id: wsId, paths: [rel('fifo')] }));
    const ordinary = Promise.all([
      call(client, 'symbols', { workspace_id: wsId, path: rel('plain.ts') }),
      call(client, 'hover', { workspace_id: wsId, path: rel('plain.ts'), line: 1, character: 17 }),
      call(client, 'diagnostics', { workspace_id: wsId, paths: [rel('plain.ts')] }),
      // What Quick Open and every editor do: read a file through the editor's file service.
      vscode.workspace.fs.readFile(vscode.Uri.file(path.join(root, dir, 'ok.txt'))),
      vscode.workspace.openTextDocument(vscode.Uri.file(path.join(root, dir, 'ok.txt'))),
    ]);
    for (const e of await Promise.all(fifoCalls)) {
      assert.equal(e.code, 'NOT_TEXT');
      assert.match(e.message, /named pipe/);
    }
    await ordinary;
    // Nothing was opened on the pipe: no editor document for it.
    assert.ok(!vscode.workspace.textDocuments.some((d) => d.uri.fsPath.endsWith(`${dir}/fifo`)));
    // A folder and a missing file say so, where they used to answer an empty "ok".
    assert.equal((await callError(client, 'diagnostics', { workspace_id: wsId, paths: [rel('folder')] })).code, 'IS_DIRECTORY');
    assert.equal((await callError(client, 'diagnostics', { workspace_id: wsId, paths: [rel('missing.ts')] })).code, 'NOT_FOUND');
  });

  it('a name with a backslash is listed by every find glob and by search, and read takes it, consistently', async () => {
    await fsp.mkdir(path.join(root, dir, 'names'));
    await fsp.writeFile(path.join(root, dir, 'names', 'a\\b.txt'), 'needle\n');
    await fsp.writeFile(path.join(root, dir, 'names', 'plain-b.txt'), 'needle\n');
    for (const pattern of [rel('names/*'), `**/${dir}/names/*b.txt`, rel('**')]) {
      const r = await call<{ paths: string[] }>(client, 'find', { workspace_id: wsId, pattern });
      const listed = r.paths.filter((p) => p.startsWith(rel('names/')));
      assert.deepEqual(listed, [rel('names/a\\b.txt'), rel('names/plain-b.txt')], pattern);
    }
    const s = await call<{ matches: { path: string }[]; notes?: string[] }>(client, 'search', { workspace_id: wsId, query: 'needle', include: [rel('names/*')] });
    assert.deepEqual(s.matches.map((m) => m.path).sort(), [rel('names/a\\b.txt'), rel('names/plain-b.txt')]);
    assert.equal((await call<{ content: string }>(client, 'read', { workspace_id: wsId, path: rel('names/a\\b.txt') })).content, 'needle\n');
  });

  it('a patch with a stale expected version whose context is gone: VERSION_CONFLICT with the current version', async () => {
    const file = rel('cfg.json');
    await fsp.writeFile(path.join(root, file), '{\n  "port": 3000,\n  "debug": false\n}\n');
    const { version } = await call<{ version: string }>(client, 'read', { workspace_id: wsId, path: file });
    const now = '{\n  "port": 8080,\n  "debug": false\n}\n';
    await fsp.writeFile(path.join(root, file), now);
    const e = await callError(client, 'apply_patch', {
      workspace_id: wsId,
      patch: `*** Begin Patch\n*** Update File: ${file}\n@@\n   "port": 3000,\n-  "debug": false\n+  "debug": true\n*** End Patch\n`,
      expected_versions: { [file]: version },
      operation_key: `stale-${dir}`,
    });
    assert.equal(e.code, 'VERSION_CONFLICT', e.message);
    assert.equal(e.details?.current, sha256(now));
    assert.equal(await fsp.readFile(path.join(root, file), 'utf8'), now);
  });

  it('exec_command: tokens printed in pieces come back from read_process as markers', async () => {
    const secrets = fakeSecrets();
    const gh = secrets['github-token'] as string;
    const npm = secrets['npm-token'] as string;
    const script = 'printf "%s" "$1"; sleep 0.3; printf "%s" "$2"; sleep 0.3; printf "%s" "$3"; sleep 0.3; printf "%s\\n" "$4"';
    const { process_id } = await call<{ process_id: string }>(client, 'exec_command', {
      workspace_id: wsId,
      command: ['sh', '-c', script, 'sh', `token=${gh.slice(0, 10)}`, `${gh.slice(10)} npm=${npm.slice(0, 3)}`, npm.slice(3, 20), `${npm.slice(20)} done`],
      cwd: dir,
    });
    let cursor = 0;
    let text = '';
    const deadline = Date.now() + 60_000;
    for (;;) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id, cursor, max_bytes: 8, wait_ms: 2000 });
      text += r.chunk;
      cursor = r.cursor;
      if (r.eof) break;
      assert.ok(Date.now() < deadline, `no eof; so far ${JSON.stringify(text)}`);
    }
    assert.equal(text, `token=${marker('github-token')} npm=${marker('npm-token')} done\n`);
    assert.equal(cursor, Buffer.byteLength(`token=${gh} npm=${npm} done\n`), 'cursors count the raw bytes');
  });
});
