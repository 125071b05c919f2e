/**
 * code_actions, apply_code_action, format and call_hierarchy over a language port double: what the language servers
 * offer becomes an ordinary apply_patch (versions, holds, ledger) through the one path rename_symbol takes, and every
 * bad input gets an error that names it.
 */
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CodeActionInfo, TextRange } from '../../src/features/editor/common/languageFeatures';
import { MAX_CODE_ACTIONS } from '../../src/features/editor/common/codeEdits';
import { FakeLanguage } from './helpers/fakeLanguage';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import type { FolderInfo } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import type { AssembleOptions, AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import type { Harness } from './helpers/workspaceFixture';
import { SpyWorkspaceFs, connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

const sha = (b: string | Uint8Array): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
const r = (line: number, character: number, endLine = line, endCharacter = character): TextRange => ({ start: { line, character }, end: { line: endLine, character: endCharacter } });

describe('code tools: quick fixes, formatting and call hierarchies as patches', () => {
  let base: string;
  let root: string;
  let fake: FakeLanguage;
  let assembled: AssembledServices;
  let storage: string;
  let h: Harness;
  let source: InMemoryWorkspaceSource;
  const folders = (): FolderInfo[] => [
    { root, name: 'proj', profile: 'exec' },
    { root: path.join(base, 'other'), name: 'other', profile: 'read-only' },
  ];
  const MAIN = 'const total = add(1, 2);\nexport const more = total;\n';
  const UGLY = 'export function f( a:number ){return a}\n';

  async function start(extra: Partial<AssembleOptions> = {}): Promise<void> {
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-code-storage-'));
    source = new InMemoryWorkspaceSource(folders());
    const fs = new SpyWorkspaceFs();
    assembled = await assembleServices(unitAssembleOptions(new WorkspaceRegistry(source), storage, { fs, language: fake, enabledToolGroups: () => ['code'], ...extra }));
    h = await connectHarness(folders(), { assembled, source, fs });
  }

  beforeEach(async () => {
    base = await makeTree({ 'proj/src/main.ts': MAIN, 'proj/src/ugly.ts': UGLY, 'other/x.ts': 'x\n', 'outside/lib.ts': 'export {};\n' }, 'codespace-code-');
    root = path.join(base, 'proj');
    fake = new FakeLanguage();
    await start();
  });
  afterEach(async () => {
    await h.close();
    await assembled.shutdown();
    await removeTree(base);
    await fsp.rm(storage, { recursive: true, force: true });
  });

  const at = (rel: string): string => path.join(root, ...rel.split('/'));
  /** The quick fix a TypeScript server offers for `add`: an import at the top of main.ts. */
  const importFix = (extra: Partial<CodeActionInfo> = {}): CodeActionInfo => ({
    title: "Add import from './math'",
    kind: 'quickfix',
    preferred: true,
    edit: { edits: [{ path: at('src/main.ts'), edits: [{ range: r(1, 1), newText: "import { add } from './math';\n\n" }], documentText: MAIN, dirty: false }], fileOperations: 0 },
    ...extra,
  });

  describe('code_actions', () => {
    it('lists what the servers offer for a position, what applying each does, and the diagnostics there', async () => {
      fake.diags = [
        { path: at('src/main.ts'), diagnostics: [
          { range: r(1, 15, 1, 18), severity: 'error', message: "Cannot find name 'add'.", code: '2304' },
          { range: r(2, 1, 2, 7), severity: 'warning', message: 'elsewhere' },
        ] },
      ];
      fake.actions = [importFix(), { title: 'Extract to function', kind: 'refactor.extract.function', preferred: false }, { title: 'Run a linter', preferred: false, command: { id: 'lint.run', title: 'Run' } }];
      const res = ok<{ actions: { title: string; applies: string; preferred?: boolean; kind?: string }[]; truncated: boolean; diagnostics: unknown[] }>(
        await h.call('code_actions', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 15 }),
      );
      assert.deepEqual(
        res.actions.map((a) => [a.title, a.applies, a.kind, a.preferred]),
        [
          ["Add import from './math'", 'edit', 'quickfix', true],
          ['Extract to function', 'edit', 'refactor.extract.function', undefined],
          ['Run a linter', 'command', undefined, undefined],
        ],
      );
      assert.deepEqual(res.diagnostics, [{ message: "Cannot find name 'add'.", range: r(1, 15, 1, 18), severity: 'error', code: '2304' }]);
      assert.equal(res.truncated, false);
      // The range is the position; the kind reaches the servers; the first report on a .ts file was waited for.
      assert.deepEqual(fake.actionRequests[0], { path: at('src/main.ts'), range: r(1, 15), resolve: true });
      assert.equal(fake.settleCalls[0]?.options.requireChange, false);
      await h.call('code_actions', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 1, end_line: 2, kind: 'quickfix' });
      assert.deepEqual(fake.actionRequests[1], { path: at('src/main.ts'), range: r(1, 1, 2, 27), kind: 'quickfix', resolve: true });
    });

    it(`bounds the list at ${MAX_CODE_ACTIONS} and says so`, async () => {
      fake.actions = Array.from({ length: MAX_CODE_ACTIONS + 3 }, (_, i) => ({ title: `fix ${i}`, preferred: false }));
      const res = ok<{ actions: unknown[]; truncated: boolean }>(await h.call('code_actions', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 1 }));
      assert.equal(res.actions.length, MAX_CODE_ACTIONS);
      assert.equal(res.truncated, true);
    });

    it('refuses a range past the file or ending before it starts, naming the field', async () => {
      const past = toolError(await h.call('code_actions', { workspace_id: 'proj', path: 'src/main.ts', line: 9, character: 1 }));
      assert.equal(past.code, 'INVALID_ARGUMENTS');
      assert.equal(past.details?.field, 'line');
      const backwards = toolError(await h.call('code_actions', { workspace_id: 'proj', path: 'src/main.ts', line: 2, character: 3, end_line: 1, end_character: 1 }));
      assert.equal(backwards.code, 'INVALID_ARGUMENTS');
      assert.match(backwards.message, /ends .* before it starts/);
      const escape = toolError(await h.call('code_actions', { workspace_id: 'proj', path: '../outside/lib.ts', line: 1, character: 1 }));
      assert.equal(escape.code, 'PATH_OUTSIDE_WORKSPACE');
      assert.equal(fake.actionRequests.length, 0, 'nothing was asked of the servers');
    });
  });

  describe('apply_code_action', () => {
    const apply = (extra: Record<string, unknown> = {}): ReturnType<Harness['call']> =>
      h.call('apply_code_action', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 15, title: "Add import from './math'", operation_key: 'fix-1', ...extra });

    it('writes the fix as a patch with the version it was computed on; the result carries the patch; a repeat writes nothing and the key finds the result', async () => {
      fake.actions = [importFix()];
      const res = ok<{ status: string; patch: string; expected_versions: Record<string, string>; files: { path: string; after_version: string }[] }>(await apply());
      assert.equal(res.status, 'applied');
      assert.deepEqual(res.expected_versions, { 'src/main.ts': sha(MAIN) });
      assert.match(res.patch, /^\*\*\* Begin Patch\n\*\*\* Update File: src\/main\.ts\n/);
      const now = await fsp.readFile(at('src/main.ts'), 'utf8');
      assert.equal(now, `import { add } from './math';\n\n${MAIN}`);
      assert.equal(res.files[0]?.after_version, sha(now));
      assert.equal(fake.actionRequests[0]?.resolve, true, 'the edit is resolved before it is applied');
      // Asked again after it was written, the server's edit no longer fits the disk: nothing is written twice, and the
      // operation_key finds what was done.
      assert.equal(toolError(await apply()).code, 'VERSION_CONFLICT');
      assert.equal(await fsp.readFile(at('src/main.ts'), 'utf8'), now, 'written once');
      assert.equal(ok<{ status: string }>(await h.call('operation_status', { operation_key: 'fix-1' })).status, 'applied');
    });

    it('check_only previews and writes nothing', async () => {
      fake.actions = [importFix()];
      const res = ok<{ status: string }>(await apply({ check_only: true }));
      assert.equal(res.status, 'checked');
      assert.equal(await fsp.readFile(at('src/main.ts'), 'utf8'), MAIN);
    });

    it('an action that also names a command: only its edit is written, and the result names the command not run', async () => {
      fake.actions = [importFix({ command: { id: '_typescript.applyCodeAction', title: '' } })];
      const res = ok<{ status: string; command_not_run?: string }>(await apply());
      assert.equal(res.status, 'applied');
      assert.equal(res.command_not_run, '_typescript.applyCodeAction');
    });

    it('an action that only runs a command is not run: UNAVAILABLE, command_only, nothing written', async () => {
      fake.actions = [{ title: "Add import from './math'", preferred: false, command: { id: 'ext.fix', title: 'Fix' } }];
      const err = toolError(await apply());
      assert.equal(err.code, 'UNAVAILABLE');
      assert.deepEqual(err.details, { reason: 'command_only', command: 'ext.fix' });
      assert.equal(await fsp.readFile(at('src/main.ts'), 'utf8'), MAIN);
    });

    it('an unknown title lists what is offered; two of one title ask for the kind; one with neither edit nor command is refused', async () => {
      fake.actions = [importFix({ title: 'Something else' })];
      const unknown = toolError(await apply());
      assert.equal(unknown.code, 'INVALID_ARGUMENTS');
      assert.equal(unknown.details?.field, 'title');
      assert.deepEqual(unknown.details?.offered, ['Something else']);
      fake.actions = [importFix(), importFix({ kind: 'quickfix.other' })];
      const twice = toolError(await apply());
      assert.equal(twice.details?.field, 'kind');
      fake.actions = [{ title: "Add import from './math'", preferred: false }];
      assert.match(toolError(await apply()).message, /has no edit to apply/);
    });

    it('refuses edits it cannot make safely: another workspace, unsaved changes, a file changed since, file operations', async () => {
      fake.actions = [importFix({ edit: { edits: [{ path: path.join(base, 'outside', 'lib.ts'), edits: [{ range: r(1, 1), newText: 'x' }], documentText: 'export {};\n', dirty: false }], fileOperations: 0 } })];
      assert.equal(toolError(await apply()).code, 'PATH_OUTSIDE_WORKSPACE');
      fake.actions = [importFix({ edit: { edits: [{ path: at('src/main.ts'), edits: [{ range: r(1, 1), newText: 'x' }], documentText: MAIN, dirty: true }], fileOperations: 0 } })];
      assert.equal(toolError(await apply()).code, 'FILE_DIRTY_IN_EDITOR');
      fake.actions = [importFix({ edit: { edits: [{ path: at('src/main.ts'), edits: [{ range: r(1, 1), newText: 'x' }], documentText: `// older\n${MAIN}`, dirty: false }], fileOperations: 0 } })];
      assert.equal(toolError(await apply()).code, 'VERSION_CONFLICT');
      fake.actions = [importFix({ edit: { edits: [], fileOperations: 1 } })];
      assert.match(toolError(await apply()).message, /creates, renames or deletes files/);
      assert.equal(await fsp.readFile(at('src/main.ts'), 'utf8'), MAIN, 'nothing was written');
    });

    it('is held like any patch when the developer confirms patches: the hold is an apply_patch hold with the patch', async () => {
      await h.close();
      await assembled.shutdown();
      await start({ approvalPolicy: () => ({ patches: 'confirm', commands: 'off', agentMayResolve: false }) });
      fake.actions = [importFix()];
      const err = toolError(await apply());
      assert.equal(err.code, 'APPROVAL_REQUIRED');
      assert.match(String(err.details?.patch), /Update File: src\/main\.ts/);
      assert.equal(assembled.approvals.list().find((v) => v.approval_id === err.details?.approval_id)?.tool, 'apply_patch');
      assert.equal(await fsp.readFile(at('src/main.ts'), 'utf8'), MAIN);
    });

    it('a read-only workspace refuses before the servers are asked', async () => {
      const err = toolError(await h.call('apply_code_action', { workspace_id: 'other', path: 'x.ts', line: 1, character: 1, title: 't', operation_key: 'k' }));
      assert.equal(err.code, 'READ_ONLY');
      assert.equal(fake.actionRequests.length, 0);
    });
  });

  describe('format', () => {
    const FORMATTED = 'export function f(a: number) {\n  return a;\n}\n';
    it('writes the formatter\'s edits as a patch; formatting a formatted file changes nothing', async () => {
      fake.formatAnswer = (p) => Promise.resolve({ path: p, edits: [{ range: r(1, 1, 2, 1), newText: FORMATTED }], documentText: UGLY, dirty: false });
      const res = ok<{ changed: boolean; status?: string; expected_versions?: Record<string, string> }>(await h.call('format', { workspace_id: 'proj', path: 'src/ugly.ts', operation_key: 'fmt-1' }));
      assert.equal(res.changed, true);
      assert.equal(res.status, 'applied');
      assert.deepEqual(res.expected_versions, { 'src/ugly.ts': sha(UGLY) });
      assert.equal(await fsp.readFile(at('src/ugly.ts'), 'utf8'), FORMATTED);
      fake.formatAnswer = (p) => Promise.resolve({ path: p, edits: [], documentText: FORMATTED, dirty: false });
      assert.deepEqual(ok(await h.call('format', { workspace_id: 'proj', path: 'src/ugly.ts', operation_key: 'fmt-2' })), { changed: false });
    });

    it('formats lines of a file: the range reaches the formatter; a range past the file or backwards is refused', async () => {
      let asked: TextRange | undefined;
      fake.formatAnswer = (p, range) => {
        asked = range;
        return Promise.resolve({ path: p, edits: [], documentText: MAIN, dirty: false });
      };
      await h.call('format', { workspace_id: 'proj', path: 'src/main.ts', start_line: 2, end_line: 2, operation_key: 'f' });
      assert.deepEqual(asked, r(2, 1, 2, 27));
      assert.equal(toolError(await h.call('format', { workspace_id: 'proj', path: 'src/main.ts', start_line: 2, end_line: 7, operation_key: 'f2' })).details?.field, 'line');
      assert.equal(toolError(await h.call('format', { workspace_id: 'proj', path: 'src/main.ts', start_line: 2, end_line: 1, operation_key: 'f3' })).details?.field, 'end_line');
    });

    it('no formatter edit (none installed, or nothing to change) is changed: false, and nothing is written', async () => {
      assert.deepEqual(ok(await h.call('format', { workspace_id: 'proj', path: 'src/main.ts', operation_key: 'f' })), { changed: false });
      assert.equal(await fsp.readFile(at('src/main.ts'), 'utf8'), MAIN);
    });
  });

  describe('call_hierarchy', () => {
    it('answers like references: calls inside the workspace with their sites; the rest counted as outside', async () => {
      const item = { name: 'add', kind: 'Function', location: { path: at('src/main.ts'), range: r(1, 15, 1, 18) } };
      fake.hierarchy = {
        items: [item],
        edges: [
          { item: { name: 'more', kind: 'Variable', detail: 'main.ts', location: { path: at('src/main.ts'), range: r(2, 14, 2, 18) } }, sites: [{ path: at('src/main.ts'), range: r(2, 21, 2, 26) }] },
          { item: { name: 'lib', kind: 'Function', location: { path: path.join(base, 'outside', 'lib.ts'), range: r(1, 1) } }, sites: [] },
        ],
      };
      const res = ok<{ items: { name: string; path: string }[]; calls: { name: string; path: string; context?: string; sites: TextRange[]; detail?: string }[]; outside: number; truncated: boolean }>(
        await h.call('call_hierarchy', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 15, direction: 'incoming' }),
      );
      assert.deepEqual(res.items.map((i) => [i.name, i.path]), [['add', 'src/main.ts']]);
      assert.deepEqual(res.calls.map((c) => [c.name, c.path, c.context, c.detail]), [['more', 'src/main.ts', 'export const more = total;', 'main.ts']]);
      assert.deepEqual(res.calls[0]?.sites, [r(2, 21, 2, 26)]);
      assert.equal(res.outside, 1);
      assert.equal(res.truncated, false);
      assert.ok(fake.calls.includes(`callHierarchy ${at('src/main.ts')} 1:15 incoming`));
    });

    it('refuses a direction it does not know and a position past the line', async () => {
      assert.equal(toolError(await h.call('call_hierarchy', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 1, direction: 'sideways' })).code, 'INVALID_ARGUMENTS');
      assert.equal(toolError(await h.call('call_hierarchy', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 99, direction: 'outgoing' })).details?.field, 'character');
    });
  });
});
