import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { activateExtension, call, connectClient, connectionFromCommand, folder } from './helpers';

interface SearchResult {
  matches: { path: string; line: number; column: number; text: string }[];
  truncated: boolean;
  notes?: string[];
  engine: { kind: string; source: string; path?: string };
}

/** search in the real editor: VS Code's own ripgrep, and the folder's search.exclude, files.exclude and .gitignore. */
describe('search in VS Code', function () {
  this.timeout(120_000);
  let client: Client;
  let id: string;
  const base = 'searchcase';
  const token = 'zqxSearchToken';
  const files: Record<string, string> = {
    'hit.txt': `one\nfind ${token} here\n`,
    'excluded-by-search/x.txt': `${token}\n`,
    'excluded-by-files/x.txt': `${token}\n`,
    'gitignored/x.txt': `${token}\n`,
    '.gitignore': 'gitignored/\n',
  };
  const write = (rel: string, text: string) => vscode.workspace.fs.writeFile(vscode.Uri.joinPath(folder(0).uri, base, ...rel.split('/')), new TextEncoder().encode(text));

  before(async () => {
    await activateExtension();
    const { url, token: bearer } = await connectionFromCommand();
    client = await connectClient(url, bearer);
    const info = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    id = info.workspaces[0]!.id;
    for (const [rel, text] of Object.entries(files)) await write(rel, text);
  });
  after(async () => {
    await vscode.workspace.getConfiguration('search', folder(0).uri).update('exclude', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
    await vscode.workspace.getConfiguration('files', folder(0).uri).update('exclude', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
    await vscode.workspace.getConfiguration('search', folder(0).uri).update('useIgnoreFiles', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
    await vscode.workspace.fs.delete(vscode.Uri.joinPath(folder(0).uri, base), { recursive: true, useTrash: false });
    await client?.close();
  });

  const found = async (): Promise<string[]> => (await call<SearchResult>(client, 'search', { workspace_id: id, query: token, case_sensitive: true })).matches.map((m) => m.path).sort();

  it('finds a string with VS Code\'s own ripgrep, with line and column', async () => {
    const r = await call<SearchResult>(client, 'search', { workspace_id: id, query: token, case_sensitive: true, include: [`${base}/hit.txt`] });
    assert.deepEqual(r.matches.map((m) => [m.path, m.line, m.column, m.text]), [[`${base}/hit.txt`, 2, 6, `find ${token} here`]]);
    assert.equal(r.engine.source, 'vscode');
    // @vscode/ripgrep (VS Code 1.100) or @vscode/ripgrep-universal with a folder per platform (1.139).
    assert.match(r.engine.path ?? '', /@vscode[\\/](ripgrep[\\/]bin|ripgrep-universal[\\/]bin[\\/][a-z0-9]+-[a-z0-9]+)[\\/]rg(\.exe)?$/);
    assert.ok((r.engine.path ?? '').startsWith(vscode.env.appRoot), `${r.engine.path} is under ${vscode.env.appRoot}`);
  });

  it('shows a name with a backslash (or a newline, or blanks) exactly, with VS Code\'s ripgrep, as read takes it', async () => {
    const odd = ['odd/a\\b.txt', 'odd/back\\slash/in.txt', 'odd/new\nline.txt', 'odd/ lead.txt', 'odd/trail.txt '];
    for (const n of odd) {
      await fsp.mkdir(path.dirname(path.join(folder(0).uri.fsPath, base, n)), { recursive: true });
      await fsp.writeFile(path.join(folder(0).uri.fsPath, base, n), `odd ${token}\n`);
    }
    try {
      const r = await call<SearchResult>(client, 'search', { workspace_id: id, query: token, case_sensitive: true, include: [`${base}/odd/**`] });
      assert.deepEqual(r.matches.map((m) => m.path).sort(), odd.map((n) => `${base}/${n}`).sort());
      assert.equal(r.notes, undefined, 'nothing was left out');
      for (const m of r.matches) assert.equal((await call<{ content: string }>(client, 'read', { workspace_id: id, path: m.path })).content, `odd ${token}\n`);
    } finally {
      await fsp.rm(path.join(folder(0).uri.fsPath, base, 'odd'), { recursive: true, force: true });
    }
  });

  it('honours search.exclude, files.exclude and .gitignore as the editor\'s search does', async () => {
    assert.deepEqual(await found(), [`${base}/excluded-by-files/x.txt`, `${base}/excluded-by-search/x.txt`, `${base}/hit.txt`]);
    await vscode.workspace.getConfiguration('search', folder(0).uri).update('exclude', { '**/excluded-by-search': true }, vscode.ConfigurationTarget.WorkspaceFolder);
    await vscode.workspace.getConfiguration('files', folder(0).uri).update('exclude', { '**/excluded-by-files': true }, vscode.ConfigurationTarget.WorkspaceFolder);
    assert.deepEqual(await found(), [`${base}/hit.txt`]);
    await vscode.workspace.getConfiguration('search', folder(0).uri).update('useIgnoreFiles', false, vscode.ConfigurationTarget.WorkspaceFolder);
    assert.deepEqual(await found(), [`${base}/gitignored/x.txt`, `${base}/hit.txt`]);
  });
});
