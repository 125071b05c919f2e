import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { call, callError, connectToFirstFolder, folder, typeScriptProject } from './helpers';

interface Range {
  start: { line: number; character: number };
  end: { line: number; character: number };
}
interface Loc {
  workspace_id: string;
  path: string;
  range: Range;
  context?: string;
}
interface Diag {
  path: string;
  range: Range;
  severity: string;
  message: string;
  source?: string;
  code?: string;
}
interface Update {
  workspace_id: string;
  path: string;
  version: string;
  settled: boolean;
  items: Omit<Diag, 'path'>[];
}
interface PatchResult {
  status: string;
  files: { path: string; kind: string; after_version?: string }[];
  diagnostics?: { pending: boolean; items: Diag[]; counts: Record<string, number>; truncated: boolean };
  patch?: string;
  expected_versions?: Record<string, string>;
}

/**
 * The editor tools against the TypeScript language features that ship with VS Code, on the fixture project
 * test/fixtures/lang-project (copied into the first folder, so the TypeScript server loads it as its own project).
 */
describe('editor tools inside VS Code (built-in TypeScript)', function () {
  this.timeout(180_000);
  let client: Client;
  let wsId: string;
  const dir = `lang-${process.pid}-${Date.now().toString(36)}`;
  const rel = (p: string): string => `${dir}/${p}`;
  let settleBefore: number | undefined;

  async function version(p: string): Promise<string> {
    return (await call<{ version: string }>(client, 'read', { workspace_id: wsId, path: p })).version;
  }

  async function patch(p: string, from: string, to: string, key: string): Promise<PatchResult> {
    const v = await version(p);
    return call<PatchResult>(client, 'apply_patch', {
      workspace_id: wsId,
      patch: `*** Begin Patch\n*** Update File: ${p}\n@@\n-${from}\n+${to}\n*** End Patch\n`,
      expected_versions: { [p]: v },
      operation_key: key,
    });
  }

  /** Diagnostics of the named files, polled until `done` holds (the TypeScript server loads its project once). */
  async function diagnosticsUntil(paths: string[], done: (d: Diag[]) => boolean, timeoutMs = 90_000): Promise<Diag[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const r = await call<{ diagnostics: Diag[] }>(client, 'diagnostics', { workspace_id: wsId, paths });
      if (done(r.diagnostics)) return r.diagnostics;
      if (Date.now() > deadline) assert.fail(`diagnostics never matched: ${JSON.stringify(r.diagnostics)}`);
      await new Promise((res) => setTimeout(res, 500));
    }
  }

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    await typeScriptProject(dir);
    // A generous settle for a loaded machine; the default applies to developers.
    const config = vscode.workspace.getConfiguration('codespace');
    settleBefore = config.inspect<number>('diagnostics.settleMs')?.globalValue;
    await config.update('diagnostics.settleMs', 15_000, vscode.ConfigurationTarget.Global);
    // The TypeScript server answers once it has loaded the project: wait for the broken file's errors.
    await diagnosticsUntil([rel('src/broken.ts')], (d) => d.filter((x) => x.severity === 'error').length >= 2);
  });

  after(async () => {
    await vscode.workspace.getConfiguration('codespace').update('diagnostics.settleMs', settleBefore, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await client?.close();
    fs.rmSync(path.join(folder(0).uri.fsPath, dir), { recursive: true, force: true });
  });

  it('diagnostics: the Problems of a file, 1-based, with source and code', async () => {
    const d = await diagnosticsUntil([rel('src/broken.ts')], (x) => x.length >= 2);
    const first = d.find((x) => x.range.start.line === 4);
    assert.ok(first, `an error on line 4: ${JSON.stringify(d)}`);
    assert.equal(first.severity, 'error');
    assert.equal(first.source, 'ts');
    assert.equal(first.code, '2345');
    assert.equal(first.path, rel('src/broken.ts'));
    // Column of '10' in: export const half: number = scale('10', 0.5);
    assert.equal(first.range.start.character, "export const half: number = scale(".length + 1);
    const clean = await call<{ diagnostics: Diag[]; settled: boolean }>(client, 'diagnostics', { workspace_id: wsId, paths: [rel('src/main.ts')] });
    assert.deepEqual(clean.diagnostics, []);
    // The developer has the broken file open: the workspace view includes it.
    await vscode.window.showTextDocument(vscode.Uri.file(path.join(folder(0).uri.fsPath, dir, 'src', 'broken.ts')), { preview: false });
    await diagnosticsUntil([rel('src/broken.ts')], (x) => x.length >= 2);
    const whole = await call<{ diagnostics: Diag[]; counts: { error: number } }>(client, 'diagnostics', { workspace_id: wsId });
    assert.ok(whole.diagnostics.some((x) => x.path === rel('src/broken.ts')), 'the workspace view includes the open broken file');
    assert.ok(whole.counts.error >= 2);
  });

  it('definition of an imported function lands in its file; references find every use', async () => {
    // main.ts line 3: "const total = add(1, 2);" — "add" starts at character 15.
    const def = await call<{ locations: Loc[]; outside: number }>(client, 'definition', { workspace_id: wsId, path: rel('src/main.ts'), line: 3, character: 15 });
    assert.equal(def.locations.length, 1, JSON.stringify(def));
    assert.equal(def.locations[0]?.path, rel('src/math.ts'));
    assert.equal(def.locations[0]?.range.start.line, 2);
    assert.equal(def.locations[0]?.context, 'export function add(a: number, b: number): number {');

    const refs = await call<{ locations: Loc[] }>(client, 'references', { workspace_id: wsId, path: rel('src/math.ts'), line: 2, character: 17 });
    const where = refs.locations.map((l) => `${l.path.slice(dir.length + 1)}:${l.range.start.line}`);
    assert.deepEqual(where, ['src/main.ts:1', 'src/main.ts:3', 'src/main.ts:4', 'src/math.ts:2', 'src/report.ts:1', 'src/report.ts:3']);

    // A library symbol: its declaration lies outside the workspace, so it is only counted.
    // main.ts line 5: "export const biggest = Math.max(total, 10);" — "max" at character 29, declared in lib.es5.d.ts.
    const lib = await call<{ locations: Loc[]; outside: number }>(client, 'definition', { workspace_id: wsId, path: rel('src/main.ts'), line: 5, character: 29 });
    assert.deepEqual(lib.locations, [], JSON.stringify(lib));
    assert.ok(lib.outside >= 1, 'the library declaration is counted, not shown');
  });

  it('hover, symbols and workspace_symbols', async () => {
    const hover = await call<{ contents: string; truncated: boolean }>(client, 'hover', { workspace_id: wsId, path: rel('src/main.ts'), line: 3, character: 16 });
    assert.match(hover.contents, /add\(a: number, b: number\): number/);
    assert.match(hover.contents, /Adds two numbers/);
    const syms = await call<{ symbols: { name: string; kind: string; selection_range: Range }[] }>(client, 'symbols', { workspace_id: wsId, path: rel('src/math.ts') });
    const add = syms.symbols.find((s) => s.name === 'add');
    assert.equal(add?.kind, 'Function');
    assert.deepEqual(add?.selection_range.start, { line: 2, character: 17 });
    const ws = await call<{ symbols: { name: string; location: Loc }[] }>(client, 'workspace_symbols', { workspace_id: wsId, query: 'scale' });
    // The TypeScript server names functions "scale()" here.
    assert.ok(ws.symbols.some((s) => s.name.startsWith('scale') && s.location.path === rel('src/math.ts')), JSON.stringify(ws));
  });

  it('positions past the file or line are INVALID_ARGUMENTS naming the field', async () => {
    const line = await callError(client, 'definition', { workspace_id: wsId, path: rel('src/main.ts'), line: 99, character: 1 });
    assert.equal(line.code, 'INVALID_ARGUMENTS');
    assert.equal(line.details?.field, 'line');
    const ch = await callError(client, 'hover', { workspace_id: wsId, path: rel('src/main.ts'), line: 3, character: 200 });
    assert.equal(ch.details?.field, 'character');
    const out = await callError(client, 'symbols', { workspace_id: wsId, path: '../outside.ts' });
    assert.equal(out.code, 'PATH_OUTSIDE_WORKSPACE');
  });

  it('a patch that introduces a type error answers without waiting; the error reaches the agent on its next result; the fix through diagnostics', async () => {
    const p = rel('src/report.ts');
    const started = Date.now();
    const broken = await patch(p, 'export const sum = add(4, 5);', 'export const sum: string = add(4, 5);', `${dir}-break`);
    console.log(`      [measure] apply_patch of a .ts file: ${Date.now() - started} ms`);
    assert.equal(broken.status, 'applied');
    assert.ok(broken.diagnostics, 'an applied patch of a file a language server reports on carries diagnostics');
    assert.equal(broken.diagnostics.pending, true, 'answered before the language server reported on the new content');
    const version = broken.files[0]?.after_version;
    // Any next result of this session carries the report once it is there: poll with a cheap call.
    const deadline = Date.now() + 90_000;
    let update: Update | undefined;
    while (!update) {
      const r = await call<{ diagnostics_update?: Update[] }>(client, 'read', { workspace_id: wsId, path: rel('src/math.ts') });
      update = r.diagnostics_update?.find((u) => u.path === p);
      if (!update && Date.now() > deadline) assert.fail('the report on the edited file never reached a result');
      if (!update) await new Promise((res) => setTimeout(res, 200));
    }
    console.log(`      [measure] edit → type error seen on a next result: ${Date.now() - started} ms`);
    assert.equal(update.version, version, 'tagged with the version the patch wrote');
    const err = update.items.find((d) => d.severity === 'error');
    assert.ok(err, `the new type error is reported: ${JSON.stringify(update)}`);
    assert.equal(err.code, '2322');
    assert.equal(err.range.start.line, 3);

    const t2 = Date.now();
    const fixed = await patch(p, 'export const sum: string = add(4, 5);', 'export const sum = add(4, 5);', `${dir}-fix`);
    assert.equal(fixed.diagnostics?.pending, true);
    // diagnostics waits (bounded) for the report on the fixed content; a late report on the broken one never counts:
    // while the editor has not yet reloaded the file it answers settled: false, and an agent asks again.
    const fixDeadline = Date.now() + 120_000;
    let after = await call<{ diagnostics: Diag[]; settled: boolean }>(client, 'diagnostics', { workspace_id: wsId, paths: [p], wait_ms: 30_000 });
    while (!after.settled && Date.now() < fixDeadline) after = await call<{ diagnostics: Diag[]; settled: boolean }>(client, 'diagnostics', { workspace_id: wsId, paths: [p], wait_ms: 30_000 });
    console.log(`      [measure] edit (fix) → diagnostics settled: ${Date.now() - t2} ms, settled: ${String(after.settled)}`);
    assert.equal(after.settled, true, JSON.stringify(after));
    assert.deepEqual(after.diagnostics, [], JSON.stringify(after));
  });

  it('a held patch, approved in the editor and resumed, carries diagnostics as a direct one does', async () => {
    const config = vscode.workspace.getConfiguration('codespace');
    await config.update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
    const p = rel('src/report.ts');
    try {
      const err = await callError(client, 'apply_patch', {
        workspace_id: wsId,
        patch: `*** Begin Patch\n*** Update File: ${p}\n@@\n-export const sum = add(4, 5);\n+export const sum: string = add(4, 5);\n*** End Patch\n`,
        expected_versions: { [p]: await version(p) },
        operation_key: `${dir}-held`,
      });
      assert.equal(err.code, 'APPROVAL_REQUIRED', err.message);
      const id = err.details?.approval_id;
      assert.equal(typeof id, 'string');
      await vscode.commands.executeCommand('codespace.openReview', id);
      const decision = await vscode.commands.executeCommand<{ ok: boolean }>('codespace.approveReview', id);
      assert.equal(decision.ok, true, JSON.stringify(decision));
      const resumed = await call<PatchResult>(client, 'operation_resume', { approval_id: id, wait_ms: 20_000 });
      assert.equal(resumed.status, 'applied');
      assert.ok(resumed.diagnostics, `a resumed patch of a file a language server reports on carries diagnostics: ${JSON.stringify(resumed)}`);
      assert.equal(resumed.diagnostics.pending, true);
      // And it is followed: the language server's report on what the resumed patch wrote reaches a next result.
      const deadline = Date.now() + 90_000;
      let update: Update | undefined;
      while (!update) {
        const r = await call<{ diagnostics_update?: Update[] }>(client, 'read', { workspace_id: wsId, path: rel('src/math.ts') });
        update = r.diagnostics_update?.find((u) => u.path === p);
        if (!update && Date.now() > deadline) assert.fail('the report on the resumed patch never reached a result');
        if (!update) await new Promise((res) => setTimeout(res, 200));
      }
      assert.equal(update.version, resumed.files[0]?.after_version, 'the report is about the version the resumed patch wrote');
    } finally {
      await config.update('approvals.patches', undefined, vscode.ConfigurationTarget.Global);
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      const now = (await call<{ content: string }>(client, 'read', { workspace_id: wsId, path: p })).content;
      if (now.includes('export const sum: string = add(4, 5);')) await patch(p, 'export const sum: string = add(4, 5);', 'export const sum = add(4, 5);', `${dir}-held-fix`);
    }
  });

  it('a background tab opened to check an edit is taken again by the next check of the file, and closed after it', async () => {
    const p = rel('src/linger.ts');
    const abs = path.join(folder(0).uri.fsPath, ...p.split('/'));
    fs.writeFileSync(abs, 'export const lingering: number = 1;\n');
    const key = vscode.Uri.file(abs).toString();
    const tabsOf = (): vscode.Tab[] => vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === key);
    const until = async (what: string, done: () => boolean): Promise<void> => {
      const deadline = Date.now() + 60_000;
      while (!done()) {
        if (Date.now() > deadline) assert.fail(`never: ${what}`);
        await new Promise((res) => setTimeout(res, 50));
      }
    };
    const first = await patch(p, 'export const lingering: number = 1;', 'export const lingering: number = "one";', `${dir}-linger-1`);
    assert.equal(first.diagnostics?.pending, true);
    await until('a background tab for the check', () => tabsOf().length === 1);
    // Edited again (the tab is still there, during the check or after it): the next check reuses it, no second tab.
    const second = await patch(p, 'export const lingering: number = "one";', 'export const lingering: number = 2;', `${dir}-linger-2`);
    assert.equal(second.diagnostics?.pending, true);
    const d = await call<{ diagnostics: Diag[]; settled: boolean }>(client, 'diagnostics', { workspace_id: wsId, paths: [p], wait_ms: 30_000 });
    assert.deepEqual(d.diagnostics, [], JSON.stringify(d));
    assert.ok(tabsOf().length <= 1, 'never two tabs of the file');
    // Nobody checks it any more: its tab goes, and the file stays as the last edit wrote it.
    await until('the background tab closed', () => tabsOf().length === 0);
    assert.equal(fs.readFileSync(abs, 'utf8'), 'export const lingering: number = 2;\n');
  });

  it('a file no language server reports on answers with no diagnostics and diagnostics never waits for it', async () => {
    const p = rel('notes.txt');
    fs.writeFileSync(path.join(folder(0).uri.fsPath, dir, 'notes.txt'), 'one\ntwo\n');
    const r = await patch(p, 'two', 'three', `${dir}-txt`);
    assert.equal(r.status, 'applied');
    assert.equal(r.diagnostics, undefined, JSON.stringify(r));
    const d = await call<{ diagnostics: Diag[]; settled: boolean }>(client, 'diagnostics', { workspace_id: wsId, paths: [p] });
    assert.deepEqual(d.diagnostics, []);
    assert.equal(d.settled, true);
  });

  it('rename_symbol: the rename becomes a patch that applies and leaves no diagnostics', async () => {
    const preview = await call<PatchResult>(client, 'rename_symbol', { workspace_id: wsId, path: rel('src/math.ts'), line: 2, character: 17, new_name: 'plus', operation_key: `${dir}-rename-preview`, check_only: true });
    assert.equal(preview.status, 'checked');
    assert.deepEqual(Object.keys(preview.expected_versions ?? {}).sort(), [rel('src/main.ts'), rel('src/math.ts'), rel('src/report.ts')]);
    assert.match(preview.patch ?? '', /\*\*\* Update File: .*math\.ts/);
    assert.equal(fs.readFileSync(path.join(folder(0).uri.fsPath, dir, 'src', 'math.ts'), 'utf8').includes('plus'), false, 'a preview writes nothing');

    const started = Date.now();
    // The answer's hint says what an agent does when the editor has not yet reloaded a file written a moment ago: call
    // again. So does this test, within a bound.
    const renameDeadline = Date.now() + 60_000;
    let done: PatchResult | undefined;
    let key = '';
    for (let attempt = 0; !done; attempt++) {
      key = `${dir}-rename-${attempt}`;
      try {
        done = await call<PatchResult>(client, 'rename_symbol', { workspace_id: wsId, path: rel('src/math.ts'), line: 2, character: 17, new_name: 'plus', operation_key: key });
      } catch (err) {
        if (!/VERSION_CONFLICT/.test(String(err)) || !/after the language server read it/.test(String(err)) || Date.now() > renameDeadline) throw err;
        await new Promise((res) => setTimeout(res, 500));
      }
    }
    console.log(`      [measure] rename_symbol over 3 files: ${Date.now() - started} ms`);
    assert.equal(done.status, 'applied', JSON.stringify(done));
    assert.equal(done.diagnostics?.pending, true);
    assert.equal(done.files.length, 3);
    const main = fs.readFileSync(path.join(folder(0).uri.fsPath, dir, 'src', 'main.ts'), 'utf8');
    assert.equal(main, "import { plus, scale } from './math';\n\nconst total = plus(1, 2);\nexport const doubled = scale(plus(total, 3), 2);\nexport const biggest = Math.max(total, 10);\n");
    const after = await diagnosticsUntil([rel('src/main.ts'), rel('src/math.ts'), rel('src/report.ts')], () => true);
    assert.deepEqual(after, []);
    // The rename is in the ledger like any patch.
    const status = await call<{ status: string }>(client, 'operation_status', { operation_key: key });
    assert.equal(status.status, 'applied');
  });

  it('rename_symbol refuses while a touched file has unsaved changes, and changes nothing', async () => {
    const uri = vscode.Uri.file(path.join(folder(0).uri.fsPath, dir, 'src', 'report.ts'));
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc);
    await editor.edit((e) => e.insert(new vscode.Position(0, 0), '// unsaved\n'));
    assert.equal(doc.isDirty, true);
    const before = fs.readFileSync(path.join(folder(0).uri.fsPath, dir, 'src', 'math.ts'), 'utf8');
    const err = await callError(client, 'rename_symbol', { workspace_id: wsId, path: rel('src/math.ts'), line: 2, character: 17, new_name: 'sum2', operation_key: `${dir}-rename-dirty` });
    assert.equal(err.code, 'FILE_DIRTY_IN_EDITOR', JSON.stringify(err));
    assert.equal(fs.readFileSync(path.join(folder(0).uri.fsPath, dir, 'src', 'math.ts'), 'utf8'), before);
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('editor_context: the active file, its selection and text; files outside are only "outside"', async () => {
    const uri = vscode.Uri.file(path.join(folder(0).uri.fsPath, dir, 'src', 'math.ts'));
    const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    editor.selection = new vscode.Selection(5, 16, 5, 21);
    const ctx = await call<{ active?: { outside: boolean; path?: string; selected_text?: string; selections?: Range[] }; visible: { outside: boolean }[] }>(client, 'editor_context', {});
    assert.equal(ctx.active?.outside, false);
    assert.equal(ctx.active?.path, rel('src/math.ts'));
    assert.equal(ctx.active?.selected_text, 'scale');
    assert.deepEqual(ctx.active?.selections?.[0], { start: { line: 6, character: 17 }, end: { line: 6, character: 22 } });

    const untitled = await vscode.workspace.openTextDocument({ content: 'private notes' });
    const u = await vscode.window.showTextDocument(untitled);
    u.selection = new vscode.Selection(0, 0, 0, 7);
    const outside = await call<{ active?: Record<string, unknown>; dirty: Record<string, unknown>[] }>(client, 'editor_context', {});
    assert.deepEqual(outside.active, { outside: true });
    assert.ok(!JSON.stringify(outside).includes('private'), 'no content of a document outside the workspace');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });
});
