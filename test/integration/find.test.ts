import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as vscode from 'vscode';
import { compileGlob } from '../../src/base/glob';
import { activateExtension, call, connectClient, connectionFromCommand, folder } from './helpers';

/**
 * find in the real editor: the linear matcher against VS Code's own `workspace.findFiles` (ripgrep plus VS Code's
 * glob), and patterns that make a backtracking glob regex run for minutes, while other calls keep being answered.
 */
describe('find in VS Code', function () {
  this.timeout(120_000);
  let client: Client;
  let id: string;
  const base = 'globcase';
  const names = [
    'a.ts', 'b.js', 'ab.ts', 'abc.md', 'x/a.ts', 'x/y/b.ts', 'x/y/z/c.ts', 'test_1_2.py', 'lib/test_a_b.py', '[id].tsx',
    'a-b.txt', 'aXb.txt', 'deep/a/b/c/d.ts', 'q/axbxc', 'q/abc', `long/${'a'.repeat(200)}`,
  ];

  before(async () => {
    await activateExtension();
    const { url, token } = await connectionFromCommand();
    client = await connectClient(url, token);
    const info = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    id = info.workspaces[0]!.id;
    for (const n of names) await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(folder(0).uri, base, ...n.split('/')), new Uint8Array());
  });
  after(async () => {
    await vscode.workspace.fs.delete(vscode.Uri.joinPath(folder(0).uri, base), { recursive: true, useTrash: false });
    await client?.close();
  });

  const editorFind = async (pattern: string): Promise<string[]> => {
    const uris = await vscode.workspace.findFiles(new vscode.RelativePattern(folder(0), pattern), null);
    return uris.map((u) => vscode.workspace.asRelativePath(u, false)).filter((p) => p.startsWith(`${base}/`)).sort();
  };

  it('matches what workspace.findFiles matches', async () => {
    const patterns = [
      '**/*.ts', '*/*.ts', '**/x/**/*.ts', '**/*.{ts,js}', '**/?.ts', '**/[ab].ts', '**/[!a]*.ts', '**/test_*_*.py', '**/*a*b*',
      '**/q/a*b*c', '**/[[]id[]].tsx', '**/a?b.txt', '**/deep/**', '**/long/*a*a*a*a', '**/{x,deep}/**/*.ts',
    ];
    for (const p of patterns) {
      const pattern = `${base}/${p}`;
      const expected = await editorFind(pattern);
      const ours = await call<{ paths: string[] }>(client, 'find', { workspace_id: id, pattern });
      assert.deepEqual(ours.paths, expected, `find ${pattern}`);
      const match = compileGlob(pattern);
      assert.deepEqual(names.map((n) => `${base}/${n}`).filter((n) => match(n)).sort(), expected, `compileGlob ${pattern}`);
    }
  });

  it('lists every legal name exactly as it is on disk (backslash, newline, blanks, metacharacters), as read takes it', async () => {
    const odd = ['a\\b.txt', 'back\\slash/in.txt', 'new\nline.txt', ' lead.txt', 'trail.txt ', '[x]*?{y}.txt', '-dash.txt', '#hash.txt', '%2e%2e.txt', 'caf\u00e9.txt', 'cafe\u0301.txt', '\u{1F600}.txt'];
    const dir = `${base}-names`;
    const root = folder(0).uri.fsPath;
    for (const n of odd) {
      await fsp.mkdir(path.dirname(path.join(root, dir, n)), { recursive: true });
      await fsp.writeFile(path.join(root, dir, n), `text of ${JSON.stringify(n)}\n`);
    }
    try {
      const expected = odd.map((n) => `${dir}/${n}`).sort();
      for (const pattern of [`${dir}/**`, `**/${dir}/**/*`]) {
        const r = await call<{ paths: string[] }>(client, 'find', { workspace_id: id, pattern });
        assert.deepEqual(r.paths.filter((p) => p.startsWith(`${dir}/`)), expected, pattern);
      }
      const txt = await call<{ paths: string[] }>(client, 'find', { workspace_id: id, pattern: '**/*.txt' });
      assert.ok(txt.paths.includes(`${dir}/a\\b.txt`), 'a backslash name matches **/*.txt');
      for (const n of odd) {
        const r = await call<{ content: string }>(client, 'read', { workspace_id: id, path: `${dir}/${n}` });
        assert.equal(r.content, `text of ${JSON.stringify(n)}\n`, n);
      }
    } finally {
      await fsp.rm(path.join(root, dir), { recursive: true, force: true });
    }
  });

  it('answers patterns that stall a backtracking glob regex, and keeps answering other calls', async () => {
    const hostile: [string, string[]][] = [
      [`${base}/**/${'*'.repeat(900)}x`, [`${base}/[id].tsx`]],
      [`${base}/long/${Array.from({ length: 16 }, () => '*a').join('')}*b`, []],
    ];
    for (const [pattern, expected] of hostile) {
      // A backtracking glob regex (VS Code's glob.ts, or the one the Node adapter used) takes minutes on these. In the
      // editor, findFiles hands them to ripgrep, which does not backtrack; this pins that down.
      const [r, info] = await Promise.all([
        client.callTool({ name: 'find', arguments: { workspace_id: id, pattern } }) as Promise<CallToolResult>,
        call<{ workspaces: unknown[] }>(client, 'workspace_info', {}),
      ]);
      assert.ok(!r.isError, JSON.stringify(r.content));
      assert.deepEqual((r.structuredContent as { paths: string[] }).paths, expected, pattern);
      assert.ok(info.workspaces.length >= 1);
    }
  });
});
