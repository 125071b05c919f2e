import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { call, callError, connectToFirstFolder, folder } from './helpers';

interface ApplyResult {
  status: string;
  operation_id: string;
  files: { path: string; kind: string; before_version?: string; after_version?: string }[];
}

function sha256(bytes: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * Polls until `predicate` holds. The guard is generous: an open document learns about a change on disk from
 * VS Code's file watcher, which on a loaded machine can take seconds.
 */
async function waitFor(what: string, predicate: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('apply_patch inside VS Code', () => {
  let client: Client;
  let wsId: string;
  const decoder = new TextDecoder();

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await client?.close();
  });

  async function createFile(rel: string, content: string): Promise<vscode.Uri> {
    const uri = vscode.Uri.joinPath(folder(0).uri, ...rel.split('/'));
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(content));
    return uri;
  }

  it('updates an open, clean editor at once, and operation_status returns the record', async () => {
    // A file of the fixture, so it has been on disk (and watched) since the window opened, as a developer's is.
    const rel = 'src/util/math.ts';
    const uri = vscode.Uri.joinPath(folder(0).uri, ...rel.split('/'));
    const before = decoder.decode(await vscode.workspace.fs.readFile(uri));
    assert.ok(before.includes('  return a * b;'), 'the fixture is as expected');
    const after = before.replace('  return a * b;', '  return a * b; // patched over MCP');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    assert.equal(doc.getText(), before);
    assert.equal(doc.isDirty, false);

    const read = await call<{ version: string; dirty_in_editor: boolean }>(client, 'read', { workspace_id: wsId, path: rel });
    assert.equal(read.version, sha256(before));
    assert.equal(read.dirty_in_editor, false);
    const patch = ['*** Begin Patch', `*** Update File: ${rel}`, '@@ export function multiply(a: number, b: number): number {', '-  return a * b;', '+  return a * b; // patched over MCP', '*** End Patch'].join('\n');
    const r = await call<ApplyResult>(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [rel]: read.version }, operation_key: 'integration-live-1' });
    assert.equal(r.status, 'applied');
    assert.equal(r.files[0]?.after_version, sha256(after));

    await waitFor('the open editor shows the patched text', () => doc.getText() === after);
    assert.equal(doc.isClosed, false, 'the same document object, still open, holds the new text');
    assert.equal(doc.isDirty, false, 'the document reloaded from disk, it is not a pending edit');
    assert.equal(decoder.decode(await vscode.workspace.fs.readFile(uri)), after);

    const st = await call<{ status: string; operation_id: string; kind: string; workspace_id: string; files: { path: string }[]; events: { type: string }[] }>(client, 'operation_status', {
      operation_key: 'integration-live-1',
    });
    assert.equal(st.status, 'applied');
    assert.equal(st.operation_id, r.operation_id);
    assert.equal(st.kind, 'patch');
    assert.equal(st.workspace_id, wsId);
    assert.deepEqual(st.files.map((f) => f.path), [rel]);
    assert.deepEqual(st.events.map((e) => e.type), ['minted', 'finished']);
    const byId = await call<{ operation_key: string }>(client, 'operation_status', { operation_id: r.operation_id });
    assert.equal(byId.operation_key, 'integration-live-1');

    // The same key and arguments return the stored result without writing again.
    const mtime = (await vscode.workspace.fs.stat(uri)).mtime;
    const again = await call<ApplyResult>(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [rel]: read.version }, operation_key: 'integration-live-1' });
    assert.deepEqual(again, r);
    assert.equal((await vscode.workspace.fs.stat(uri)).mtime, mtime);
  });

  it('updates open, clean editors of files in folders created and filled at once, which the workspace watcher can miss', async function () {
    this.timeout(240_000);
    // VS Code's recursive watcher (@parcel/watcher, inotify) misses writes in about half of the folders created and
    // filled at once, as an agent's `*** Add File: docs/new/a.md` or a copied tree makes them
    // (parcel-bundler/watcher#243); a document open there follows the disk only through the watch CodeSpace keeps.
    const base = `fresh-${Date.now()}`;
    const docs: { rel: string; doc: vscode.TextDocument }[] = [];
    for (let i = 0; i < 6; i++) {
      const rel = `${base}/tree-${i}/notes/today.txt`;
      const abs = path.join(folder(0).uri.fsPath, ...rel.split('/'));
      fs.mkdirSync(path.dirname(abs), { recursive: true });
      fs.writeFileSync(abs, 'draft\n');
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(abs));
      await vscode.window.showTextDocument(doc, { preview: false, preserveFocus: true });
      docs.push({ rel, doc });
    }
    for (const { rel, doc } of docs) {
      assert.equal(doc.getText(), 'draft\n');
      const patch = ['*** Begin Patch', `*** Update File: ${rel}`, '@@', '-draft', '+final', '*** End Patch'].join('\n');
      const r = await call<ApplyResult>(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [rel]: sha256('draft\n') }, operation_key: `integration-${rel}` });
      assert.equal(r.status, 'applied');
    }
    for (const { rel, doc } of docs) {
      await waitFor(`the open editor of ${rel} shows the patched text`, () => doc.getText() === 'final\n', 30_000);
      assert.equal(doc.isDirty, false);
    }
  });

  it('refuses a target with unsaved edits (FILE_DIRTY_IN_EDITOR) and leaves the file on disk unchanged', async () => {
    const rel = 'src/dirty-target.ts';
    const content = 'export const value = 1;\n';
    const uri = await createFile(rel, content);
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc);
    assert.ok(await editor.edit((e) => e.insert(new vscode.Position(0, 0), '// typing…\n')), 'the edit applied');
    assert.equal(doc.isDirty, true);
    try {
      const patch = ['*** Begin Patch', `*** Update File: ${rel}`, '@@', '-export const value = 1;', '+export const value = 2;', '*** End Patch'].join('\n');
      const e = await callError(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [rel]: sha256(content) }, operation_key: 'integration-dirty-1' });
      assert.equal(e.code, 'FILE_DIRTY_IN_EDITOR');
      // Any answer of the session may also carry the report on an earlier edit (diagnostics_update); the refusal's own
      // details are the path.
      const details = { ...(e.details as Record<string, unknown>) };
      delete details.diagnostics_update;
      assert.deepEqual(details, { path: rel });
      assert.equal(decoder.decode(await vscode.workspace.fs.readFile(uri)), content, 'the file on disk is unchanged');
      assert.equal(doc.getText(), `// typing…\n${content}`, 'the buffer keeps the developer’s edit');
      const nf = await callError(client, 'operation_status', { operation_key: 'integration-dirty-1' });
      assert.equal(nf.code, 'OPERATION_NOT_FOUND', 'a refused patch is not recorded');
    } finally {
      await vscode.window.showTextDocument(doc);
      await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    }
    assert.equal(doc.isDirty, false, 'the editor was reverted');
  });
});
