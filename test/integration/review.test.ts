import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as vscode from 'vscode';
import { headerPath } from '../../src/features/patches/common/parser';
import { fromProposalUri, toProposalUri } from '../../src/features/review/vscode/proposalUri';
import { REVIEW_SCHEME, fromReviewUri, toReviewUri } from '../../src/features/review/vscode/reviewDocuments';
import type { ReviewDocumentRef } from '../../src/features/review/vscode/reviewDocuments';
import type { ReviewCommentsForTests } from '../../src/features/review/vscode/reviewComments';
import { activateExtension, call, callError, connectToFirstFolder, folder } from './helpers';

// The review of held patches in VS Code's own diff editors, driven by a real MCP client against the real
// approvals service: apply_patch is held (codespace.approvals.patches = confirm), the reviewer decides with the
// review commands, and operation_resume returns what happened.

const SCHEME = 'codespace-review';
const STALE_MARK = '(stale — cannot be approved)';
const enc = new TextEncoder();
const dec = new TextDecoder();

interface Decision {
  ok: boolean;
  approval_id?: string;
  state?: string;
  code?: string;
  message?: string;
}

async function waitFor(what: string, predicate: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function allTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) => g.tabs);
}

/** The URIs a tab shows; a multi-file diff tab's input carries `textDiffs` (TabInputTextMultiDiff, proposed API). */
function tabUris(tab: vscode.Tab): vscode.Uri[] {
  const input = tab.input;
  if (input instanceof vscode.TabInputText) return [input.uri];
  if (input instanceof vscode.TabInputTextDiff) return [input.original, input.modified];
  const parts = (input as { textDiffs?: vscode.TabInputTextDiff[] } | undefined)?.textDiffs;
  return Array.isArray(parts) ? parts.flatMap((p) => [p.original, p.modified]) : [];
}

function isMulti(tab: vscode.Tab): boolean {
  return Array.isArray((tab.input as { textDiffs?: unknown } | undefined)?.textDiffs);
}

function ofHold(id: string): (tab: vscode.Tab) => boolean {
  return (tab) => tabUris(tab).some((u) => fromProposalUri(u)?.approvalId === id) || (isMulti(tab) && tab.label.startsWith(`CodeSpace review ${id.slice(0, 12)}`));
}

function proposalUri(id: string, side: 'before' | 'proposed', path: string): vscode.Uri {
  return toProposalUri({ approvalId: id, side, path });
}

describe('patch review in the diff editor', function () {
  this.timeout(120_000);
  let client: Client;
  let wsId: string;
  let n = 0;
  const root = (): vscode.Uri => folder(0).uri;

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await client?.close();
  });

  async function write(rel: string, text: string): Promise<vscode.Uri> {
    const uri = vscode.Uri.joinPath(root(), ...rel.split('/'));
    await vscode.workspace.fs.writeFile(uri, enc.encode(text));
    return uri;
  }
  async function readDisk(rel: string): Promise<string | undefined> {
    try {
      return dec.decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(root(), ...rel.split('/'))));
    } catch {
      return undefined;
    }
  }
  async function read(uri: vscode.Uri): Promise<string> {
    return dec.decode(await vscode.workspace.fs.readFile(uri));
  }

  /**
   * Sends the patch (with the versions of the files it changes, read first as an agent does); with
   * approvals.patches = confirm it is held, and the error names the hold.
   */
  async function hold(patch: string, existing: string[]): Promise<string> {
    const expected_versions: Record<string, string> = {};
    // The version of a file is the sha256 of its bytes (docs/TOOLS.md): `read` refuses a binary file, so it is computed
    // here from the bytes on disk, for text and binary alike.
    for (const rel of existing) expected_versions[rel] = `sha256:${createHash('sha256').update(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(root(), rel))).digest('hex')}`;
    const err = await callError(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions, operation_key: `review-test-${Date.now()}-${++n}` });
    assert.equal(err.code, 'APPROVAL_REQUIRED', err.message);
    const id = err.details?.approval_id;
    assert.equal(typeof id, 'string', 'the error names the hold');
    return id as string;
  }
  async function resume(id: string): Promise<CallToolResult> {
    return (await client.callTool({ name: 'operation_resume', arguments: { approval_id: id, wait_ms: 20_000 } })) as CallToolResult;
  }
  function resumeError(r: CallToolResult): { code: string; message: string; details?: Record<string, unknown> } {
    assert.equal(r.isError, true, 'operation_resume fails');
    const first = r.content[0];
    assert.ok(first?.type === 'text');
    return (JSON.parse(first.text) as { error: { code: string; message: string; details?: Record<string, unknown> } }).error;
  }

  it('holds a two-file patch, opens it without taking focus, shows disk against proposal, and applies what is approved', async () => {
    const dir = `review-${Date.now()}`;
    await write(`${dir}/a.ts`, 'export const a = 1;\n');
    const id = await hold(['*** Begin Patch', `*** Update File: ${dir}/a.ts`, '-export const a = 1;', '+export const a = 2;', `*** Add File: ${dir}/b.ts`, '+export const b = 1;', '*** End Patch'].join('\n'), [`${dir}/a.ts`]);

    // The hold opens by itself (codespace.review.openOnHold), one pinned diff per file.
    await waitFor('both files of the hold are open in diff editors', () => allTabs().filter(ofHold(id)).filter((t) => t.input instanceof vscode.TabInputTextDiff).length === 2);
    const diffs = allTabs().filter(ofHold(id));
    assert.ok(diffs.every((t) => !t.isPreview), 'opened pinned, not in preview mode');
    const update = diffs.find((t) => t.label.startsWith(`${dir}/a.ts`));
    const add = diffs.find((t) => t.label.startsWith(`${dir}/b.ts`));
    assert.ok(update && add, `tabs: ${diffs.map((t) => t.label).join(', ')}`);
    assert.ok(add.label.includes('added'));
    const u = update.input as vscode.TabInputTextDiff;
    const a = add.input as vscode.TabInputTextDiff;
    assert.equal(await read(u.original), 'export const a = 1;\n', 'left: the file on disk');
    assert.equal(await read(u.modified), 'export const a = 2;\n', 'right: the proposal');
    assert.equal(await read(a.original), '', 'an added file is diffed against empty');
    assert.equal(await read(a.modified), 'export const b = 1;\n');
    assert.equal((await vscode.workspace.fs.stat(u.original)).permissions, vscode.FilePermission.Readonly, 'the left side is read-only');
    assert.equal((await vscode.workspace.fs.stat(u.modified)).permissions, undefined, 'the proposal of a pending hold is writable');
    await assert.rejects(Promise.resolve(vscode.workspace.fs.writeFile(u.original, enc.encode('x'))), (e: vscode.FileSystemError) => e.code === 'NoPermissions');

    // Next / Previous File step through the hold in per-file diff editors.
    await vscode.commands.executeCommand('vscode.diff', u.original, u.modified, update.label);
    assert.deepEqual(await vscode.commands.executeCommand('codespace.nextReviewFile'), { index: 1, path: `${dir}/b.ts` });
    assert.equal((vscode.window.tabGroups.activeTabGroup.activeTab?.input as vscode.TabInputTextDiff).modified.toString(), a.modified.toString(), 'the next file is shown');
    assert.deepEqual(await vscode.commands.executeCommand('codespace.nextReviewFile'), { index: 1, path: `${dir}/b.ts` }, 'the last file stays');
    assert.deepEqual(await vscode.commands.executeCommand('codespace.previousReviewFile'), { index: 0, path: `${dir}/a.ts` });
    assert.equal(allTabs().filter(ofHold(id)).length, 2, 'stepping reuses the open diff editors');

    // Open Review shows the hold as one unit in the multi-file diff editor.
    const opened = await vscode.commands.executeCommand<{ approval_id: string; files: number }>('codespace.openReview', id);
    assert.deepEqual(opened, { approval_id: id, files: 2 });
    await waitFor('the multi-file review lists both files', () => {
      const t = allTabs().find((x) => isMulti(x) && ofHold(id)(x));
      return t !== undefined && tabUris(t).length === 4;
    });
    const multi = allTabs().find((x) => isMulti(x) && ofHold(id)(x)) as vscode.Tab;
    assert.deepEqual(tabUris(multi).map((x) => x.toString()), [u.original, u.modified, a.original, a.modified].map((x) => x.toString()));
    assert.equal(vscode.window.tabGroups.activeTabGroup.activeTab, multi, 'the review is the active tab');

    assert.equal(await readDisk(`${dir}/a.ts`), 'export const a = 1;\n', 'nothing is applied while the hold waits');
    const decision = await vscode.commands.executeCommand<Decision>('codespace.approveReview', id);
    assert.equal(decision.ok, true, JSON.stringify(decision));
    const r = await resume(id);
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    const result = r.structuredContent as { status: string; reviewer_changes?: unknown };
    assert.equal(result.status, 'applied');
    assert.equal(result.reviewer_changes, undefined, 'the reviewer changed nothing');
    assert.equal(await readDisk(`${dir}/a.ts`), 'export const a = 2;\n');
    assert.equal(await readDisk(`${dir}/b.ts`), 'export const b = 1;\n');
    await waitFor('the approved hold closes its tabs (all of them, in every group)', () => allTabs().filter(ofHold(id)).length === 0);
  });

  it('applies the reviewer’s edit of the proposal, from a saved document and from the multi-file editor', async () => {
    const dir = `review-edit-${Date.now()}`;
    await write(`${dir}/a.ts`, 'export const a = 1;\n');
    const id = await hold(['*** Begin Patch', `*** Update File: ${dir}/a.ts`, '-export const a = 1;', '+export const a = 2;', `*** Add File: ${dir}/b.ts`, '+export const b = 1;', '*** End Patch'].join('\n'), [`${dir}/a.ts`]);
    await waitFor('the hold is open', () => allTabs().filter(ofHold(id)).length === 2);

    // 1. An edit of the proposed document, saved: the provider hands it to the approvals service.
    const aUri = proposalUri(id, 'proposed', `${dir}/a.ts`);
    const doc = await vscode.workspace.openTextDocument(aUri);
    assert.equal(doc.getText(), 'export const a = 2;\n');
    const edit = new vscode.WorkspaceEdit();
    edit.replace(aUri, new vscode.Range(0, 0, doc.lineCount, 0), 'export const a = 3; // reviewer\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(await doc.save(), 'the proposal of a pending hold saves');
    assert.equal(await read(aUri), 'export const a = 3; // reviewer\n', 'the proposal now reads as the reviewer left it');

    // 2. Typing in the right side of the multi-file diff editor (left unsaved: Approve saves it).
    await vscode.commands.executeCommand('codespace.openReview', id);
    const bUri = proposalUri(id, 'proposed', `${dir}/b.ts`);
    const bBefore = proposalUri(id, 'before', `${dir}/b.ts`);
    await waitFor('the multi-file editor shows b.ts', () => vscode.window.visibleTextEditors.some((e) => e.document.uri.toString() === bUri.toString()));
    const right = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === bUri.toString()) as vscode.TextEditor;
    await right.edit((b) => b.insert(new vscode.Position(1, 0), 'export const c = 1;\n'));
    assert.equal(right.document.getText(), 'export const b = 1;\nexport const c = 1;\n', 'the right side of the multi-file diff editor takes edits');
    assert.ok(right.document.isDirty);
    const left = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === bBefore.toString());
    assert.ok(left, 'the left side of b.ts is shown too');
    await left.edit((b) => b.insert(new vscode.Position(0, 0), 'nope'));
    assert.equal(left.document.getText(), '', 'the left side does not');

    const decision = await vscode.commands.executeCommand<Decision>('codespace.approveReview', id);
    assert.equal(decision.ok, true, JSON.stringify(decision));
    assert.equal(right.document.isDirty, false, 'approving saved the unsaved edit first');
    const r = await resume(id);
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    const result = r.structuredContent as { status: string; reviewer_changes?: unknown };
    assert.equal(result.status, 'applied');
    assert.ok(result.reviewer_changes, `resume reports the reviewer's changes: ${JSON.stringify(result)}`);
    assert.equal(await readDisk(`${dir}/a.ts`), 'export const a = 3; // reviewer\n', 'the saved edit is what was applied');
    assert.equal(await readDisk(`${dir}/b.ts`), 'export const b = 1;\nexport const c = 1;\n', 'the edit made in the multi-file editor is applied');
    await waitFor('the tabs close', () => allTabs().filter(ofHold(id)).length === 0);
  });

  it('keeps a reviewer\'s unsaved edit of one file savable while another file of the hold changes', async () => {
    const dir = `review-two-edits-${Date.now()}`;
    await write(`${dir}/a.ts`, 'export const a = 1;\n');
    await write(`${dir}/b.ts`, 'export const b = 1;\n');
    const id = await hold(['*** Begin Patch', `*** Update File: ${dir}/a.ts`, '-export const a = 1;', '+export const a = 2;', `*** Update File: ${dir}/b.ts`, '-export const b = 1;', '+export const b = 2;', '*** End Patch'].join('\n'), [`${dir}/a.ts`, `${dir}/b.ts`]);
    await waitFor('the hold is open', () => allTabs().filter(ofHold(id)).length === 2);

    // The reviewer edits b.ts and leaves it unsaved, then edits and saves a.ts: the hold changes (a's reviewed
    // content), but b.ts's proposal did not, so its unsaved edit must still save (no "the file is newer").
    const bUri = proposalUri(id, 'proposed', `${dir}/b.ts`);
    const bDoc = await vscode.workspace.openTextDocument(bUri);
    const bEdit = new vscode.WorkspaceEdit();
    bEdit.replace(bUri, new vscode.Range(0, 0, bDoc.lineCount, 0), 'export const b = 3; // reviewer\n');
    assert.ok(await vscode.workspace.applyEdit(bEdit));
    assert.ok(bDoc.isDirty);
    const aUri = proposalUri(id, 'proposed', `${dir}/a.ts`);
    const aDoc = await vscode.workspace.openTextDocument(aUri);
    const aEdit = new vscode.WorkspaceEdit();
    aEdit.replace(aUri, new vscode.Range(0, 0, aDoc.lineCount, 0), 'export const a = 3; // reviewer\n');
    assert.ok(await vscode.workspace.applyEdit(aEdit));
    assert.ok(await aDoc.save(), 'a.ts saves');
    assert.equal(await read(aUri), 'export const a = 3; // reviewer\n');
    assert.ok(bDoc.isDirty, 'the other file\'s edit is still there, unsaved');

    const decision = await vscode.commands.executeCommand<Decision>('codespace.approveReview', id);
    assert.equal(decision.ok, true, JSON.stringify(decision));
    const r = await resume(id);
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    assert.equal(await readDisk(`${dir}/a.ts`), 'export const a = 3; // reviewer\n');
    assert.equal(await readDisk(`${dir}/b.ts`), 'export const b = 3; // reviewer\n', 'the unsaved edit was saved by Approve and applied');
    await waitFor('the tabs close', () => allTabs().filter(ofHold(id)).length === 0);
  });

  it('shows a deleted file against empty and names both paths of a move', async () => {
    const dir = `review-move-${Date.now()}`;
    await write(`${dir}/gone.ts`, 'export const gone = 1;\n');
    await write(`${dir}/old.ts`, 'export const m = 1;\n');
    const id = await hold(['*** Begin Patch', `*** Delete File: ${dir}/gone.ts`, `*** Update File: ${dir}/old.ts`, `*** Move to: ${dir}/new.ts`, '-export const m = 1;', '+export const m = 2;', '*** End Patch'].join('\n'), [`${dir}/gone.ts`, `${dir}/old.ts`]);
    await waitFor('both files are open', () => allTabs().filter(ofHold(id)).length === 2);
    const tabs = allTabs().filter(ofHold(id));
    const del = tabs.find((t) => t.label.startsWith(`${dir}/gone.ts`));
    const move = tabs.find((t) => t.label.startsWith(`${dir}/old.ts → ${dir}/new.ts`));
    assert.ok(del && move, `tabs: ${tabs.map((t) => t.label).join(', ')}`);
    assert.ok(del.label.includes('deleted'));
    const d = del.input as vscode.TabInputTextDiff;
    const m = move.input as vscode.TabInputTextDiff;
    assert.equal(await read(d.original), 'export const gone = 1;\n');
    assert.equal(await read(d.modified), '', 'a deleted file is shown against empty');
    assert.equal((await vscode.workspace.fs.stat(d.modified)).permissions, vscode.FilePermission.Readonly, 'a deletion has nothing to edit');
    assert.deepEqual(fromProposalUri(m.original), { approvalId: id, side: 'before', path: `${dir}/old.ts` }, 'left: the source');
    assert.deepEqual(fromProposalUri(m.modified), { approvalId: id, side: 'proposed', path: `${dir}/new.ts` }, 'right: the destination');
    assert.equal(fromProposalUri(d.original)?.path, fromProposalUri(d.modified)?.path, 'both sides of a file that stays share its path (the multi-file editor flags differing paths as renames)');
    assert.equal(await read(m.original), 'export const m = 1;\n');
    assert.equal(await read(m.modified), 'export const m = 2;\n');

    // The right side of a move is its destination, and takes edits like any proposal.
    const moved = await vscode.workspace.openTextDocument(m.modified);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(m.modified, new vscode.Position(1, 0), '// reviewed\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    assert.ok(await moved.save(), 'the edit of a move destination saves');
    assert.equal(await read(m.modified), 'export const m = 2;\n// reviewed\n');

    // Deny without a note (an empty note), from the command a menu runs.
    const decision = await vscode.commands.executeCommand<Decision>('codespace.denyReview', id, '');
    assert.equal(decision.ok, true, JSON.stringify(decision));
    assert.equal(resumeError(await resume(id)).code, 'APPROVAL_DENIED');
    assert.equal(await readDisk(`${dir}/gone.ts`), 'export const gone = 1;\n');
    assert.equal(await readDisk(`${dir}/old.ts`), 'export const m = 1;\n');
    assert.equal(await readDisk(`${dir}/new.ts`), undefined);
    await waitFor('the tabs close', () => allTabs().filter(ofHold(id)).length === 0);
  });

  it('a binary file a held patch deletes or moves is said to be binary on each side, cannot be edited, and is applied byte for byte', async () => {
    const dir = `review-binary-${Date.now()}`;
    const gone = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0xff, 0x0a]);
    const pic = new Uint8Array([0x00, 0x00, 0x07, 0x80, 0x81]);
    await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(root(), dir, 'gone.bin'), gone);
    await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(root(), dir, 'pic.bin'), pic);
    const id = await hold(['*** Begin Patch', `*** Delete File: ${dir}/gone.bin`, `*** Update File: ${dir}/pic.bin`, `*** Move to: ${dir}/moved.bin`, '*** End Patch'].join('\n'), [`${dir}/gone.bin`, `${dir}/pic.bin`]);
    const left = await read(proposalUri(id, 'before', `${dir}/gone.bin`));
    assert.match(left, new RegExp(`^Binary file, not shown as text: ${dir}/gone\\.bin\nsize: 8 bytes\nsha256: [0-9a-f]{64}\n$`));
    assert.equal(await read(proposalUri(id, 'proposed', `${dir}/gone.bin`)), `No file: ${dir}/gone.bin is not on this side.\n`);
    const movedRight = proposalUri(id, 'proposed', `${dir}/moved.bin`);
    assert.match(await read(movedRight), new RegExp(`^Binary file, not shown as text: ${dir}/moved\\.bin\nsize: 5 bytes\n`));
    assert.equal((await vscode.workspace.fs.stat(movedRight)).permissions, vscode.FilePermission.Readonly, 'a binary proposal takes no edit');
    await assert.rejects(Promise.resolve(vscode.workspace.fs.writeFile(movedRight, enc.encode('text'))), /binary/);

    const decision = await vscode.commands.executeCommand<Decision>('codespace.approveReview', id);
    assert.equal(decision.ok, true, JSON.stringify(decision));
    const r = await resume(id);
    assert.equal(r.isError, undefined, JSON.stringify(r.content));
    await assert.rejects(Promise.resolve(vscode.workspace.fs.stat(vscode.Uri.joinPath(root(), dir, 'gone.bin'))));
    assert.deepEqual(Buffer.from(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(root(), dir, 'moved.bin'))), Buffer.from(pic), 'the moved bytes, exactly');
    await vscode.workspace.fs.delete(vscode.Uri.joinPath(root(), dir), { recursive: true });
  });

  it('shows every legal name of a held patch exactly (backslash, newline, #, ?, %, blanks) and applies it there', async () => {
    const dir = `review-names-${Date.now()}`;
    const names = ['a\\b.txt', 'new\nline.txt', '#x?y%2e.txt', ' lead and trail .txt'];
    for (const name of names) await write(`${dir}/${name}`, `old ${JSON.stringify(name)}\n`);
    const patch = ['*** Begin Patch'];
    for (const name of names) patch.push(`*** Update File: ${headerPath(`${dir}/${name}`)}`, `-old ${JSON.stringify(name)}`, `+new ${JSON.stringify(name)}`);
    patch.push('*** End Patch');
    const id = await hold(patch.join('\n'), names.map((name) => `${dir}/${name}`));

    await waitFor('every file of the hold is open in a diff editor', () => allTabs().filter(ofHold(id)).filter((t) => t.input instanceof vscode.TabInputTextDiff).length === names.length);
    const shown = new Map<string, vscode.TabInputTextDiff>();
    for (const t of allTabs().filter(ofHold(id))) {
      const input = t.input as vscode.TabInputTextDiff;
      const ref = fromProposalUri(input.modified);
      assert.ok(ref, input.modified.toString());
      shown.set(ref.path, input);
    }
    assert.deepEqual([...shown.keys()].sort(), names.map((name) => `${dir}/${name}`).sort(), 'each file under its own name, exactly');
    for (const name of names) {
      const input = shown.get(`${dir}/${name}`) as vscode.TabInputTextDiff;
      assert.equal(await read(input.original), `old ${JSON.stringify(name)}\n`, 'left: the file on disk');
      assert.equal(await read(input.modified), `new ${JSON.stringify(name)}\n`, 'right: the proposal');
    }
    const decision = await vscode.commands.executeCommand<Decision>('codespace.approveReview', id);
    assert.equal(decision.ok, true, JSON.stringify(decision));
    const r = await resume(id);
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    for (const name of names) assert.equal(await readDisk(`${dir}/${name}`), `new ${JSON.stringify(name)}\n`);
    await waitFor('the approved hold closes its tabs', () => allTabs().filter(ofHold(id)).length === 0);
  });

  it('denies with a note: nothing is written and the agent gets APPROVAL_DENIED with the note', async () => {
    const rel = `review-deny-${Date.now()}.ts`;
    await write(rel, 'export const d = 1;\n');
    const id = await hold(['*** Begin Patch', `*** Update File: ${rel}`, '-export const d = 1;', '+export const d = 2;', '*** End Patch'].join('\n'), [rel]);
    await waitFor('the hold is open', () => allTabs().filter(ofHold(id)).length === 1);

    const decision = await vscode.commands.executeCommand<Decision>('codespace.denyReview', id, 'keep d at 1, change the caller');
    assert.equal(decision.ok, true, JSON.stringify(decision));
    const err = resumeError(await resume(id));
    assert.equal(err.code, 'APPROVAL_DENIED');
    assert.ok(JSON.stringify(err).includes('keep d at 1, change the caller'), `the note reaches the agent: ${JSON.stringify(err)}`);
    assert.equal(await readDisk(rel), 'export const d = 1;\n', 'the file is untouched');
    await waitFor('the denied hold closes its tab', () => allTabs().filter(ofHold(id)).length === 0);
  });

  it('goes stale when the file changes on disk while pending: marked, cannot be approved, the edit stays', async () => {
    const rel = `review-stale-${Date.now()}.ts`;
    await write(rel, 'export const s = 1;\n');
    const id = await hold(['*** Begin Patch', `*** Update File: ${rel}`, '-export const s = 1;', '+export const s = 2;', '*** End Patch'].join('\n'), [rel]);
    await waitFor('the hold is open', () => allTabs().filter(ofHold(id)).length === 1);

    await write(rel, 'export const s = 10; // edited by the developer\n');
    // The watcher revalidates the hold while it is pending; its tab is reopened under the stale title.
    await waitFor('the tab says the hold is stale', () => allTabs().some((t) => ofHold(id)(t) && t.label.includes(STALE_MARK)));

    const decision = await vscode.commands.executeCommand<Decision>('codespace.approveReview', id);
    assert.equal(decision.ok, false);
    assert.equal(decision.state, 'stale');
    assert.equal(decision.code, 'STALE');
    assert.equal(await readDisk(rel), 'export const s = 10; // edited by the developer\n', 'the developer’s edit stays');
    const err = resumeError(await resume(id));
    assert.notEqual(err.code, 'APPROVAL_REQUIRED', JSON.stringify(err));
    assert.equal(await readDisk(rel), 'export const s = 10; // edited by the developer\n');
  });

  it('with openOnHold off opens nothing by itself; closing a review tab decides nothing', async () => {
    const config = vscode.workspace.getConfiguration('codespace');
    await config.update('review.openOnHold', false, vscode.ConfigurationTarget.Global);
    try {
      const rel = `review-quiet-${Date.now()}.ts`;
      await write(rel, 'export const q = 1;\n');
      const id = await hold(['*** Begin Patch', `*** Update File: ${rel}`, '-export const q = 1;', '+export const q = 2;', '*** End Patch'].join('\n'), [rel]);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(allTabs().filter(ofHold(id)).length, 0, 'no tab opened by itself');

      assert.deepEqual(await vscode.commands.executeCommand('codespace.openReview', id), { approval_id: id, files: 1 });
      const tab = allTabs().find(ofHold(id));
      assert.ok(tab && tab.input instanceof vscode.TabInputTextDiff, 'a one-file hold opens in the diff editor');
      await vscode.window.tabGroups.close(tab);
      await new Promise((r) => setTimeout(r, 300));

      const decision = await vscode.commands.executeCommand<Decision>('codespace.approveReview', id);
      assert.equal(decision.ok, true, `the hold was still pending after its tab closed: ${JSON.stringify(decision)}`);
      const r = await resume(id);
      assert.equal((r.structuredContent as { status?: string } | undefined)?.status, 'applied', JSON.stringify(r.content));
      assert.equal(await readDisk(rel), 'export const q = 2;\n');
    } finally {
      await config.update('review.openOnHold', undefined, vscode.ConfigurationTarget.Global);
    }
  });

  it('opens a check_only preview read-only in the same diff view, picked from the recent previews', async () => {
    const rel = `review-preview-${Date.now()}.ts`;
    await write(rel, 'export const p = 1;\n');
    const version = (await call<{ version: string }>(client, 'read', { workspace_id: wsId, path: rel })).version;
    const patch = ['*** Begin Patch', `*** Update File: ${rel}`, '-export const p = 1;', '+export const p = 2;', '*** End Patch'].join('\n');
    const checked = await call<{ status: string }>(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [rel]: version }, check_only: true, operation_key: `review-preview-${++n}` });
    assert.equal(checked.status, 'checked', 'a preview is never held');

    // Without an argument the command offers the kept previews, newest first; the reviewer takes the first. The pick
    // shows up when the workbench gets to it (a while, on a loaded machine): accept until the command answers, and
    // open it again if it closed without a choice (the workbench lost focus, say).
    let opened: { run_id: string; files: number } | undefined;
    for (let attempt = 0; attempt < 5 && !opened; attempt++) {
      let settled = false;
      const opening = Promise.resolve(vscode.commands.executeCommand<{ run_id: string; files: number } | undefined>('codespace.openPreview')).then((v) => {
        settled = true;
        opened = v;
      });
      for (let i = 0; i < 80 && !settled; i++) {
        await new Promise((r) => setTimeout(r, 250));
        if (!settled) await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      }
      await opening;
    }
    assert.equal(opened?.files, 1);
    const tab = allTabs().find((t) => tabUris(t).some((u) => fromProposalUri(u)?.previewId !== undefined && fromProposalUri(u)?.path === rel));
    assert.ok(tab, `a preview tab is open: ${allTabs().map((t) => t.label).join(', ')}`);
    assert.ok(tab.label.includes('preview'));
    const d = tab.input as vscode.TabInputTextDiff;
    assert.equal(await read(d.original), 'export const p = 1;\n');
    assert.equal(await read(d.modified), 'export const p = 2;\n');
    assert.equal((await vscode.workspace.fs.stat(d.modified)).permissions, vscode.FilePermission.Readonly, 'a preview is read-only');
    await assert.rejects(Promise.resolve(vscode.workspace.fs.writeFile(d.modified, enc.encode('x'))), (e: vscode.FileSystemError) => e.code === 'NoPermissions');
    assert.equal(await readDisk(rel), 'export const p = 1;\n');
    await vscode.window.tabGroups.close(tab);
  });

  // Approve, Deny and Request Changes from either side of a held patch's diff, for every kind of change: the
  // commands take the document of the side (as the editor's title bar and context menu pass it), the side with no
  // file on it (an added file's before, a deleted file's proposal) too. Each case holds its own patch, decides once.
  describe('every kind of change x Approve / Deny / Request Changes x either side', () => {
    const CRLF = 'a\r\nb\r\nc';
    interface Kind {
      readonly name: string;
      readonly setup: Record<string, string>;
      readonly patch: (d: string) => string[];
      /** The path each side shows (null: the side has no file) and a line there. */
      readonly before: { path: (d: string) => string; has: boolean; line: number; quoted: string };
      readonly proposed: { path: (d: string) => string; has: boolean; line: number; quoted: string };
      /** The files on disk after the patch is applied (null: no file). */
      readonly applied: (d: string) => Record<string, string | null>;
    }
    const kinds: Kind[] = [
      {
        name: 'a changed file with CRLF and no final newline',
        setup: { 'upd.txt': CRLF },
        patch: (d) => [`*** Update File: ${d}/upd.txt`, '@@', ' a', '-b', '+B'],
        before: { path: (d) => `${d}/upd.txt`, has: true, line: 2, quoted: 'b' },
        proposed: { path: (d) => `${d}/upd.txt`, has: true, line: 2, quoted: 'B' },
        applied: (d) => ({ [`${d}/upd.txt`]: 'a\r\nB\r\nc' }),
      },
      {
        name: 'an added file',
        setup: {},
        patch: (d) => [`*** Add File: ${d}/add.txt`, '+x', '+y'],
        before: { path: (d) => `${d}/add.txt`, has: false, line: 1, quoted: '' },
        proposed: { path: (d) => `${d}/add.txt`, has: true, line: 1, quoted: 'x' },
        applied: (d) => ({ [`${d}/add.txt`]: 'x\ny\n' }),
      },
      {
        name: 'a deleted file (CRLF, no final newline)',
        setup: { 'del.txt': CRLF },
        patch: (d) => [`*** Delete File: ${d}/del.txt`],
        before: { path: (d) => `${d}/del.txt`, has: true, line: 3, quoted: 'c' },
        proposed: { path: (d) => `${d}/del.txt`, has: false, line: 1, quoted: '' },
        applied: (d) => ({ [`${d}/del.txt`]: null }),
      },
      {
        name: 'a moved and changed file',
        setup: { 'src.txt': 'm\nn\n' },
        patch: (d) => [`*** Update File: ${d}/src.txt`, `*** Move to: ${d}/dst.txt`, '@@', ' m', '-n', '+N'],
        before: { path: (d) => `${d}/src.txt`, has: true, line: 2, quoted: 'n' },
        proposed: { path: (d) => `${d}/dst.txt`, has: true, line: 2, quoted: 'N' },
        applied: (d) => ({ [`${d}/src.txt`]: null, [`${d}/dst.txt`]: 'm\nN\n' }),
      },
    ];
    let count = 0;

    for (const kind of kinds) {
      for (const action of ['approve', 'deny', 'request'] as const) {
        for (const side of ['before', 'proposed'] as const) {
          it(`${action} ${kind.name}, from the ${side} side`, async () => {
            const comments = ((await activateExtension()) as unknown as { reviewCommentsForTests: ReviewCommentsForTests }).reviewCommentsForTests;
            const d = `review-kinds-${Date.now()}-${count++}`;
            for (const [name, text] of Object.entries(kind.setup)) await write(`${d}/${name}`, text);
            const before = Object.fromEntries(Object.keys(kind.applied(d)).map((p) => [p, null as string | null]));
            for (const p of Object.keys(before)) before[p] = (await readDisk(p)) ?? null;
            const id = await hold(['*** Begin Patch', ...kind.patch(d), '*** End Patch'].join('\n'), Object.keys(kind.setup).map((name) => `${d}/${name}`));
            const at = kind[side];
            const uri = proposalUri(id, side, at.path(d));
            let expected: Record<string, string | null> = before;
            if (action === 'approve') {
              const decision = await vscode.commands.executeCommand<Decision>('codespace.approveReview', uri);
              assert.equal(decision.ok, true, JSON.stringify(decision));
              const r = await resume(id);
              assert.notEqual(r.isError, true, JSON.stringify(r.content));
              assert.equal((r.structuredContent as { status?: string }).status, 'applied');
              expected = kind.applied(d);
            } else if (action === 'deny') {
              const decision = await vscode.commands.executeCommand<Decision>('codespace.denyReview', uri, 'not this way');
              assert.equal(decision.ok, true, JSON.stringify(decision));
              assert.equal(resumeError(await resume(id)).code, 'APPROVAL_DENIED');
            } else {
              // A comment on this side; a side with no file takes none (the other side's comment is sent from here).
              const other = side === 'before' ? 'proposed' : 'before';
              await comments.add(uri, at.line, at.line, '    indented \u{1F600}\t');
              const commented = at.has ? { side, ...at } : { side: other, ...kind[other] };
              if (!at.has) {
                assert.deepEqual(comments.drafts(`approval:${id}`), [], 'the side with no file takes no comment');
                await comments.add(proposalUri(id, other, commented.path(d)), commented.line, commented.line, '    indented \u{1F600}\t');
              }
              const sent = await vscode.commands.executeCommand<{ ok: boolean; comments?: number }>('codespace.requestChanges', uri);
              assert.equal(sent.ok, true, JSON.stringify(sent));
              const r = await resume(id);
              assert.notEqual(r.isError, true, JSON.stringify(r.content));
              assert.deepEqual(r.structuredContent, {
                status: 'changes_requested',
                comments: [{ path: commented.path(d), side: commented.side === 'before' ? 'old' : 'new', range: { start_line: commented.line, end_line: commented.line }, quoted: commented.quoted, body: '    indented \u{1F600}\t' }],
              });
            }
            for (const [p, text] of Object.entries(expected)) assert.equal((await readDisk(p)) ?? null, text, `${p} after ${action}`);
            await vscode.commands.executeCommand('workbench.action.closeAllEditors');
            await vscode.workspace.fs.delete(vscode.Uri.joinPath(root(), d), { recursive: true, useTrash: false });
          });
        }
      }
    }
  });
});

describe('proposal URIs', () => {
  it('round-trip holds and previews, and name a move by its destination on the right', () => {
    const refs = [
      { approvalId: 'ap_1', side: 'before', path: 'src/a.ts' },
      { approvalId: 'Id/with:odd chars.~ü', side: 'proposed', path: 'dir with space/ü.ts' },
      { previewId: 'run-7', side: 'proposed', path: '.vscode/settings.json' },
      { approvalId: 'ap_2', side: 'before', path: 'odd/a\\b #?%2e\n\t .txt' },
      { previewId: 'run-8', side: 'proposed', path: ' lead/trail /\u{1F600}cafe\u0301.txt' },
    ] as const;
    for (const ref of refs) {
      const uri = toProposalUri(ref);
      assert.equal(uri.scheme, SCHEME);
      assert.deepEqual(fromProposalUri(vscode.Uri.parse(uri.toString())), ref, uri.toString());
    }
  });

  it('rejects anything malformed', () => {
    for (const text of [
      'file://approval.before.ap_1/a.ts',
      'codespace-review://other.before.ap_1/a.ts',
      'codespace-review://approval.after.ap_1/a.ts',
      'codespace-review://work.baseline.ap_1/a.ts',
      'codespace-review://approval.before./a.ts',
      'codespace-review://approval.before.ap_1/',
      'codespace-review://approval.before.ap_1/../a.ts',
      'codespace-review://approval.before.ap_1/a//b.ts',
      'codespace-review://approval.before.ap_1/a.ts?x=1',
      'codespace-review://approval.before.ap_1/a.ts#x',
      'codespace-review://approval.before.ap%201/a.ts',
      'codespace-review://approval.before.ap~00/a.ts',
      'codespace-review://approval.before.~0061p/a.ts',
      'codespace-review://approval/ap_1/before/a.ts',
    ]) {
      assert.equal(fromProposalUri(vscode.Uri.parse(text)), undefined, text);
    }
    assert.throws(() => toProposalUri({ approvalId: 'ap_1', side: 'before', path: '../etc/passwd' }));
    assert.throws(() => toProposalUri({ approvalId: '', side: 'before', path: 'a.ts' }));
  });

  it('is one scheme and one codec for every review document: each kind round-trips, and one kind is never read as another', () => {
    const refs: ReviewDocumentRef[] = [
      { kind: 'approval', side: 'before', id: 'ap_1', path: '/src/a.ts' },
      { kind: 'preview', side: 'proposed', id: 'run-7', path: '/b.ts' },
      { kind: 'work', side: 'binary-baseline', id: 'wk_Odd id/ü', path: vscode.Uri.file('/tmp/some root/a #?.bin').path },
      { kind: 'frozen', side: 'base', id: '0123456789abcdef0123456789abcdef01234567', path: vscode.Uri.file('/tmp/top/x.txt').path },
      { kind: 'after', side: 'none', id: 'rv_1', path: vscode.Uri.file('/tmp/root/gone.ts').path },
    ];
    for (const ref of refs) {
      const uri = toReviewUri(ref);
      assert.equal(uri.scheme, REVIEW_SCHEME);
      assert.deepEqual(fromReviewUri(vscode.Uri.parse(uri.toString())), ref, uri.toString());
    }
    // A hold's document is no preview's, and a work's document is no hold's.
    assert.equal(fromProposalUri(toReviewUri({ kind: 'work', side: 'before', id: 'ap_1', path: '/a.ts' })), undefined);
    assert.deepEqual(fromProposalUri(toReviewUri({ kind: 'preview', side: 'before', id: 'ap_1', path: '/a.ts' })), { previewId: 'ap_1', side: 'before', path: 'a.ts' });
    assert.throws(() => toReviewUri({ kind: 'work', side: 'Base', id: 'w', path: '/a' }), /invalid side/);
    assert.throws(() => toReviewUri({ kind: 'work', side: 'base', id: 'w\0', path: '/a' }), /invalid work id/);
    assert.throws(() => toReviewUri({ kind: 'after', side: 'base', id: 'r', path: 'a' }), /invalid path/);
  });
});
