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
interface Action {
  title: string;
  kind?: string;
  applies: string;
  fixes?: { message: string; code?: string }[];
}
interface Applied {
  status: string;
  changed?: boolean;
  patch?: string;
  expected_versions?: Record<string, string>;
  command_not_run?: string;
}
interface AfterWriteResult {
  ok: boolean;
  message?: string;
  files?: { path: string }[];
}

/**
 * The code group (`codespace.tools.enabledGroups`) against the TypeScript language features that ship with VS Code:
 * TypeScript's "add missing import" quick fix and its formatter become patches with versions (and show in the review
 * after the write when that mode is on), and the call hierarchy answers like references. On a copy of
 * test/fixtures/lang-project in the first folder.
 */
describe('quick fixes, formatting and call hierarchies inside VS Code (built-in TypeScript)', function () {
  this.timeout(180_000);
  let client: Client;
  let wsId: string;
  const dir = `code-${process.pid}-${Date.now().toString(36)}`;
  const rel = (p: string): string => `${dir}/${p}`;
  const abs = (p: string): string => path.join(folder(0).uri.fsPath, dir, ...p.split('/'));
  const USES_ADD = 'export const seven = add(3, 4);\n';
  const UGLY = 'export function twice( n:number ){return n*2}\n';
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('codespace');

  /** The actions at a position, polled until one matches (the TypeScript server loads its project once). */
  async function actionsUntil(p: string, line: number, character: number, want: (a: Action) => boolean): Promise<Action[]> {
    const deadline = Date.now() + 90_000;
    for (;;) {
      const r = await call<{ actions: Action[] }>(client, 'code_actions', { workspace_id: wsId, path: p, line, character });
      if (r.actions.some(want)) return r.actions;
      if (Date.now() > deadline) assert.fail(`no such action: ${JSON.stringify(r.actions)}`);
      await new Promise((res) => setTimeout(res, 500));
    }
  }

  /** Calls a writing tool again while the editor has not yet reloaded a file written a moment ago (its hint says so). */
  async function writing(tool: string, args: Record<string, unknown>): Promise<Applied> {
    const deadline = Date.now() + 60_000;
    for (let attempt = 0; ; attempt++) {
      try {
        return await call<Applied>(client, tool, { ...args, operation_key: `${String(args.operation_key)}-${attempt}` });
      } catch (err) {
        if (!/VERSION_CONFLICT/.test(String(err)) || Date.now() > deadline) throw err;
        await new Promise((res) => setTimeout(res, 500));
      }
    }
  }

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    await typeScriptProject(dir);
    fs.writeFileSync(abs('src/usesAdd.ts'), USES_ADD);
    fs.writeFileSync(abs('src/ugly.ts'), UGLY);
    await config().update('tools.enabledGroups', ['code'], vscode.ConfigurationTarget.Global);
  });

  after(async () => {
    await config().update('tools.enabledGroups', undefined, vscode.ConfigurationTarget.Global);
    await config().update('approvals.patches', undefined, vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('codespace', folder(0).uri).update('review.mode', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
    await vscode.commands.executeCommand('codespace.clearAfterWriteReview', `workspace:${wsId}`);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await client?.close();
    fs.rmSync(path.join(folder(0).uri.fsPath, dir), { recursive: true, force: true });
  });

  it('turned on by the developer: the code tools are served', async () => {
    const deadline = Date.now() + 20_000;
    let names: string[] = [];
    while (Date.now() < deadline) {
      names = (await client.listTools()).tools.map((t) => t.name);
      if (names.includes('code_actions')) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    for (const n of ['code_actions', 'apply_code_action', 'format', 'call_hierarchy']) assert.ok(names.includes(n), `${n} is listed: ${names.join(', ')}`);
  });

  it('TypeScript\'s "add missing import" is applied as a patch with versions, shown in the review after the write', async () => {
    // Review after the write on the folder, with patches under confirm (which would hold them before the write).
    await config().update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('codespace', folder(0).uri).update('review.mode', 'after', vscode.ConfigurationTarget.WorkspaceFolder);
    // usesAdd.ts line 1: "export const seven = add(3, 4);" — "add" at character 22.
    const actions = await actionsUntil(rel('src/usesAdd.ts'), 1, 22, (a) => /^Add import from/.test(a.title));
    const fix = actions.find((a) => /^Add import from/.test(a.title)) as Action;
    assert.equal(fix.kind, 'quickfix');
    assert.equal(fix.applies === 'edit' || fix.applies === 'edit_and_command', true, fix.applies);

    const unknown = await callError(client, 'apply_code_action', { workspace_id: wsId, path: rel('src/usesAdd.ts'), line: 1, character: 22, title: 'Make it work', operation_key: `${dir}-nope` });
    assert.equal(unknown.code, 'INVALID_ARGUMENTS');
    assert.ok((unknown.details?.offered as string[]).includes(fix.title), JSON.stringify(unknown));

    const started = Date.now();
    const done = await writing('apply_code_action', { workspace_id: wsId, path: rel('src/usesAdd.ts'), line: 1, character: 22, title: fix.title, operation_key: `${dir}-import` });
    console.log(`      [measure] apply_code_action (add missing import): ${Date.now() - started} ms`);
    assert.equal(done.status, 'applied', JSON.stringify(done));
    assert.deepEqual(Object.keys(done.expected_versions ?? {}), [rel('src/usesAdd.ts')]);
    const text = fs.readFileSync(abs('src/usesAdd.ts'), 'utf8');
    assert.match(text, /^import \{ add \} from ['"]\.\/math['"];\n/);
    assert.ok(text.endsWith(USES_ADD));

    const review = await vscode.commands.executeCommand<AfterWriteResult>('codespace.reviewAfterWrite', `workspace:${wsId}`);
    assert.equal(review.ok, true, review.message);
    assert.ok(review.files?.some((f) => f.path === rel('src/usesAdd.ts')), JSON.stringify(review.files));
  });

  it('format applies the TypeScript formatter as a patch; a formatted file is left alone', async () => {
    const done = await writing('format', { workspace_id: wsId, path: rel('src/ugly.ts'), operation_key: `${dir}-format` });
    assert.equal(done.changed, true);
    assert.equal(done.status, 'applied', JSON.stringify(done));
    const text = fs.readFileSync(abs('src/ugly.ts'), 'utf8');
    assert.notEqual(text, UGLY);
    assert.match(text, /export function twice\(n: number\) \{/);
    const again = await writing('format', { workspace_id: wsId, path: rel('src/ugly.ts'), operation_key: `${dir}-format-again` });
    assert.equal(again.changed, false, JSON.stringify(again));
    assert.equal(again.status, undefined, 'nothing was applied');
    assert.equal(fs.readFileSync(abs('src/ugly.ts'), 'utf8'), text);
  });

  it('call_hierarchy: the callers of add across files, with their call sites; and what a function calls', async () => {
    // math.ts line 2: "export function add(a: number, b: number): number {" — "add" at character 17.
    const incoming = await call<{ items: { name: string }[]; calls: { name: string; path: string; sites: Range[] }[]; outside: number }>(client, 'call_hierarchy', {
      workspace_id: wsId,
      path: rel('src/math.ts'),
      line: 2,
      character: 17,
      direction: 'incoming',
    });
    assert.deepEqual(incoming.items.map((i) => i.name), ['add']);
    const files = new Set(incoming.calls.map((c) => c.path));
    // (usesAdd.ts calls add too, once the server has read the import the quick fix wrote: not waited for here.)
    assert.ok(files.has(rel('src/main.ts')) && files.has(rel('src/report.ts')), JSON.stringify(incoming));
    const main = incoming.calls.filter((c) => c.path === rel('src/main.ts')).flatMap((c) => c.sites.map((s) => s.start.line));
    assert.deepEqual([...new Set(main)].sort(), [3, 4]);
    // report.ts line 5: "export function describe(): string {" calls nothing of the project; main.ts's top level calls add.
    const outgoing = await call<{ calls: { name: string }[]; outside: number }>(client, 'call_hierarchy', { workspace_id: wsId, path: rel('src/math.ts'), line: 6, character: 17, direction: 'outgoing' });
    assert.deepEqual(outgoing.calls, [], 'scale calls nothing');
  });

  it('bad input: a position past the line, a file outside the workspace', async () => {
    assert.equal((await callError(client, 'code_actions', { workspace_id: wsId, path: rel('src/math.ts'), line: 2, character: 999 })).details?.field, 'character');
    assert.equal((await callError(client, 'format', { workspace_id: wsId, path: '../outside.ts', operation_key: `${dir}-out` })).code, 'PATH_OUTSIDE_WORKSPACE');
  });
});
