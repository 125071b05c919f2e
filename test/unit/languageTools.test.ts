import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DocumentSymbolNode, TextRange } from '../../src/features/editor/common/languageFeatures';
import { FakeLanguage } from './helpers/fakeLanguage';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import type { FolderInfo } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import { LANGUAGE_LIMITS } from '../../src/features/editor/common/language';
import type { AssembleOptions, AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import type { Harness } from './helpers/workspaceFixture';
import { SpyWorkspaceFs, connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

const sha = (b: string | Uint8Array): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
const range = (line: number, character: number, endLine = line, endCharacter = character + 1): TextRange => ({ start: { line, character }, end: { line: endLine, character: endCharacter } });

describe('editor tools (language features port)', () => {
  let base: string;
  let root: string;
  let root2: string;
  let outsideDir: string;
  let fake: FakeLanguage;
  let assembled: AssembledServices;
  let storage: string;
  let h: Harness;
  let settleMs = 1500;
  let source: InMemoryWorkspaceSource;
  /** The services of these tests: the fake language port, the settle of `settleMs`, and what a test adds. */
  const assembleWith = (fs: SpyWorkspaceFs, extra: Partial<AssembleOptions> = {}): Promise<AssembledServices> =>
    assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(source), storage, {
        fs,
        language: fake,
        diagnosticsSettleMs: () => settleMs,
        ...extra,
      }),
    );
  const folders = (): FolderInfo[] => [
    { root, name: 'proj', profile: 'exec' },
    { root: root2, name: 'other', profile: 'read-only' },
  ];

  const MATH = 'export function add(a: number, b: number): number {\n  return a + b;\n}\n';
  const MAIN = "import { add } from './math';\n\nconst total = add(1, 2);\nexport const more = add(total, add(3, 4));\n";

  beforeEach(async () => {
    base = await makeTree({
      'proj/src/math.ts': MATH,
      'proj/src/main.ts': MAIN,
      'proj/src/crlf.ts': 'const a = 1;\r\nconst b = a;\r\n',
      'proj/bin.dat': new Uint8Array([0, 1, 2]),
      'other/x.ts': 'x\n',
      'outside/lib.d.ts': 'declare function secretLib(): void;\n',
    }, 'codespace-lang-');
    root = path.join(base, 'proj');
    root2 = path.join(base, 'other');
    outsideDir = path.join(base, 'outside');
    await fsp.symlink(outsideDir, path.join(root, 'linked'));
    fake = new FakeLanguage();
    settleMs = 1500;
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-lang-storage-'));
    source = new InMemoryWorkspaceSource(folders());
    const fs = new SpyWorkspaceFs();
    assembled = await assembleWith(fs);
    h = await connectHarness(folders(), { assembled, source, fs });
  });
  afterEach(async () => {
    await h.close();
    await assembled.shutdown();
    await removeTree(base);
    await fsp.rm(storage, { recursive: true, force: true });
  });

  const at = (rel: string): string => path.join(root, ...rel.split('/'));

  it('lists the editor tools with output schemas; only rename_symbol may write', async () => {
    const { tools } = await h.client.listTools();
    for (const name of ['diagnostics', 'symbols', 'workspace_symbols', 'definition', 'references', 'hover', 'editor_context', 'rename_symbol']) {
      const t = tools.find((x) => x.name === name);
      assert.ok(t?.outputSchema, `${name} is listed with an output schema`);
      assert.equal(t.annotations?.readOnlyHint, name !== 'rename_symbol', name);
    }
  });

  it('answers UNAVAILABLE in a host without an editor', async () => {
    const plain = await connectHarness(folders());
    try {
      for (const [name, args] of [
        ['diagnostics', { workspace_id: 'proj' }],
        ['definition', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 1 }],
        ['editor_context', {}],
        ['rename_symbol', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 1, new_name: 'x', operation_key: 'k' }],
      ] as const) {
        const e = toolError(await plain.call(name, args));
        assert.equal(e.code, 'UNAVAILABLE', name);
      }
      // apply_patch works as before, without diagnostics.
      const r = ok<Record<string, unknown>>(await plain.call('apply_patch', { workspace_id: 'proj', patch: '*** Begin Patch\n*** Add File: n.txt\n+n\n*** End Patch\n', expected_versions: {}, operation_key: 'plain' }));
      assert.equal(r.status, 'applied');
      assert.equal('diagnostics' in r, false);
    } finally {
      await plain.close();
    }
  });

  it('answers hostile arguments with specific errors, never INTERNAL (with a language server behind)', async () => {
    fake.locations = [{ path: at('src/math.ts'), range: range(1, 1) }];
    const base: Record<string, Record<string, unknown>> = {
      diagnostics: { workspace_id: 'proj', paths: ['src/main.ts'] },
      symbols: { workspace_id: 'proj', path: 'src/main.ts' },
      workspace_symbols: { workspace_id: 'proj', query: 'a' },
      definition: { workspace_id: 'proj', path: 'src/main.ts', line: 3, character: 15 },
      references: { workspace_id: 'proj', path: 'src/main.ts', line: 3, character: 15 },
      hover: { workspace_id: 'proj', path: 'src/main.ts', line: 3, character: 15 },
      rename_symbol: { workspace_id: 'proj', path: 'src/main.ts', line: 3, character: 15, new_name: 'x', operation_key: 'h', check_only: true },
    };
    const hostile: Record<string, unknown[]> = {
      workspace_id: ['', 'nope', 42, null],
      path: ['../outside/lib.d.ts', '/etc/passwd', 'a\u0000b', 'linked/lib.d.ts', 'bin.dat', 'src', 'x'.repeat(5000), '%2e%2e/x'],
      paths: [[], ['../x'], Array.from({ length: 101 }, () => 'a'), ['linked/lib.d.ts'], 'src/main.ts'],
      line: [0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER + 2, '3'],
      character: [0, -1, 2.5, 1e308, 10_000],
      query: ['', 'q'.repeat(201)],
      new_name: ['', 'a\nb', 'n'.repeat(1001)],
      operation_key: ['', 'k'.repeat(201)],
    };
    let calls = 0;
    for (const [tool, valid] of Object.entries(base)) {
      for (const field of Object.keys(valid)) {
        for (const value of hostile[field] ?? []) {
          const r = await h.call(tool, { ...valid, [field]: value });
          calls++;
          if (!r.isError) continue;
          const e = toolError(r);
          assert.notEqual(e.code, 'INTERNAL', `${tool} ${field}=${JSON.stringify(value).slice(0, 50)}: ${e.message}`);
        }
      }
    }
    assert.ok(calls > 100);
    assert.ok(!fake.calls.some((c) => c.includes('passwd') || c.includes('outside')), 'no refused path reached the language server');
  });

  describe('definition and references', () => {
    it('keep locations inside the workspace with a context line; count the others; sort and dedupe', async () => {
      fake.locations = [
        { path: at('src/math.ts'), range: range(1, 17) },
        { path: path.join(outsideDir, 'lib.d.ts'), range: range(1, 18) },
        { path: path.join(root, 'linked', 'lib.d.ts'), range: range(1, 18) },
        { path: undefined, range: range(1, 1) },
        { path: at('src/main.ts'), range: range(4, 25) },
        { path: at('src/main.ts'), range: range(3, 15) },
        { path: at('src/main.ts'), range: range(3, 15) },
        { path: path.join(root2, 'x.ts'), range: range(1, 1) },
      ];
      const r = ok<{ locations: { workspace_id: string; path: string; range: TextRange; context?: string }[]; outside: number; truncated: boolean }>(
        await h.call('references', { workspace_id: 'proj', path: 'src/main.ts', line: 3, character: 15 }),
      );
      assert.deepEqual(
        r.locations.map((l) => `${l.workspace_id}:${l.path}:${l.range.start.line}`),
        ['other:x.ts:1', 'proj:src/main.ts:3', 'proj:src/main.ts:4', 'proj:src/math.ts:1'],
      );
      assert.equal(r.locations.find((l) => l.path === 'src/math.ts')?.context, 'export function add(a: number, b: number): number {');
      assert.equal(r.outside, 3, 'outside the folders, through a link out, and not a file');
      assert.equal(r.truncated, false);
      assert.ok(!JSON.stringify(r).includes('secretLib'), 'no text of a file outside');
      assert.deepEqual(fake.calls, [`references ${at('src/main.ts')} 3:15`]);
    });

    it('bound the result, with truncated', async () => {
      fake.locations = Array.from({ length: 250 }, (_, i) => ({ path: at('src/main.ts'), range: range(1, 1, 1, i + 2) }));
      const r = ok<{ locations: unknown[]; truncated: boolean }>(await h.call('definition', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 1 }));
      assert.equal(r.locations.length, LANGUAGE_LIMITS.maxLocations);
      assert.equal(r.truncated, true);
    });

    it('bound the context line', async () => {
      await fsp.writeFile(at('src/long.ts'), `${'x'.repeat(5000)}\n`);
      fake.locations = [{ path: at('src/long.ts'), range: range(1, 1) }];
      const r = ok<{ locations: { context?: string }[] }>(await h.call('definition', { workspace_id: 'proj', path: 'src/main.ts', line: 1, character: 1 }));
      assert.equal(r.locations[0]?.context?.length, LANGUAGE_LIMITS.maxContextChars + 1);
    });

    it('refuse positions beyond the file, naming the field, before asking the language server', async () => {
      const line = toolError(await h.call('definition', { workspace_id: 'proj', path: 'src/main.ts', line: 6, character: 1 }));
      assert.equal(line.code, 'INVALID_ARGUMENTS');
      assert.equal(line.details?.field, 'line');
      // Line 3 "const total = add(1, 2);" has 24 characters: 25 (just after the end) is fine, 26 is not.
      ok(await h.call('hover', { workspace_id: 'proj', path: 'src/main.ts', line: 3, character: 25 }));
      const ch = toolError(await h.call('hover', { workspace_id: 'proj', path: 'src/main.ts', line: 3, character: 26 }));
      assert.equal(ch.details?.field, 'character');
      const zero = toolError(await h.call('references', { workspace_id: 'proj', path: 'src/main.ts', line: 0, character: 1 }));
      assert.equal(zero.details?.field, 'line');
      assert.equal(fake.calls.filter((c) => c.startsWith('definition') || c.startsWith('references')).length, 0);
    });

    it('confine the queried path as read does', async () => {
      assert.equal(toolError(await h.call('definition', { workspace_id: 'proj', path: '../outside/lib.d.ts', line: 1, character: 1 })).code, 'PATH_OUTSIDE_WORKSPACE');
      assert.equal(toolError(await h.call('definition', { workspace_id: 'proj', path: 'linked/lib.d.ts', line: 1, character: 1 })).code, 'PATH_OUTSIDE_WORKSPACE');
      assert.equal(toolError(await h.call('symbols', { workspace_id: 'proj', path: 'bin.dat' })).code, 'NOT_TEXT');
      assert.equal(toolError(await h.call('symbols', { workspace_id: 'proj', path: 'nope.ts' })).code, 'NOT_FOUND');
      assert.equal(fake.calls.length, 0, 'the language server was never asked about a refused path');
    });
  });

  it('hover joins the texts and bounds them', async () => {
    fake.hovers = [{ contents: ['```ts\nfunction add(): number\n```', 'Adds.'], range: range(3, 15, 3, 18) }];
    const r = ok<{ contents: string; range: TextRange; truncated: boolean }>(await h.call('hover', { workspace_id: 'proj', path: 'src/main.ts', line: 3, character: 15 }));
    assert.equal(r.contents, '```ts\nfunction add(): number\n```\n\nAdds.');
    assert.deepEqual(r.range, range(3, 15, 3, 18));
    fake.hovers = [{ contents: ['y'.repeat(LANGUAGE_LIMITS.maxHoverChars + 10)] }];
    const big = ok<{ contents: string; truncated: boolean }>(await h.call('hover', { workspace_id: 'proj', path: 'src/main.ts', line: 3, character: 15 }));
    assert.equal(big.contents.length, LANGUAGE_LIMITS.maxHoverChars);
    assert.equal(big.truncated, true);
  });

  it('symbols: a tree bounded in depth and count, with total', async () => {
    const chain = (depth: number): DocumentSymbolNode => ({ name: `d${depth}`, kind: 'Namespace', range: range(1, 1), selectionRange: range(1, 1), children: depth < 12 ? [chain(depth + 1)] : [] });
    fake.symbolsTree = [chain(1)];
    const deep = ok<{ symbols: { children?: unknown[] }[]; total: number; truncated: boolean }>(await h.call('symbols', { workspace_id: 'proj', path: 'src/math.ts' }));
    let levels = 0;
    for (let n: { children?: unknown[] } | undefined = deep.symbols[0]; n; n = n.children?.[0] as { children?: unknown[] } | undefined) levels++;
    assert.equal(levels, LANGUAGE_LIMITS.maxSymbolDepth);
    assert.equal(deep.total, 12);
    assert.equal(deep.truncated, true);
    fake.symbolsTree = Array.from({ length: 1500 }, (_, i) => ({ name: `s${i}`, kind: 'Variable', range: range(1, 1), selectionRange: range(1, 1), children: [] }));
    const wide = ok<{ symbols: unknown[]; total: number; truncated: boolean }>(await h.call('symbols', { workspace_id: 'proj', path: 'src/math.ts' }));
    assert.equal(wide.symbols.length, LANGUAGE_LIMITS.maxSymbols);
    assert.equal(wide.total, 1500);
    assert.equal(wide.truncated, true);
  });

  it('workspace_symbols: only this workspace\'s symbols; others counted', async () => {
    fake.wsSymbols = [
      { name: 'add', kind: 'Function', containerName: 'math', location: { path: at('src/math.ts'), range: range(1, 17) } },
      { name: 'secretLib', kind: 'Function', location: { path: path.join(outsideDir, 'lib.d.ts'), range: range(1, 18) } },
      { name: 'x', kind: 'Variable', location: { path: path.join(root2, 'x.ts'), range: range(1, 1) } },
    ];
    const r = ok<{ symbols: { name: string; container?: string; location: { path: string } }[]; outside: number }>(await h.call('workspace_symbols', { workspace_id: 'proj', query: 'a' }));
    assert.deepEqual(r.symbols.map((s) => `${s.name}@${s.location.path}`), ['add@src/math.ts']);
    assert.equal(r.symbols[0]?.container, 'math');
    assert.equal(r.outside, 2);
  });

  describe('diagnostics', () => {
    beforeEach(() => {
      fake.diags = [
        { path: at('src/main.ts'), diagnostics: [{ range: range(4, 1), severity: 'warning', message: 'unused', source: 'ts', code: '6133' }] },
        { path: at('src/math.ts'), diagnostics: [{ range: range(2, 3), severity: 'error', message: 'm'.repeat(5000), source: 'ts', code: '2322' }] },
        { path: path.join(outsideDir, 'lib.d.ts'), diagnostics: [{ range: range(1, 1), severity: 'error', message: 'secretLib broken' }] },
        { path: path.join(root, 'linked', 'lib.d.ts'), diagnostics: [{ range: range(1, 1), severity: 'error', message: 'secretLib via link' }] },
        { path: path.join(root2, 'x.ts'), diagnostics: [{ range: range(1, 1), severity: 'error', message: 'other workspace' }] },
      ];
    });

    it('of the workspace: only its files, errors first, messages bounded, counted', async () => {
      const r = ok<{ diagnostics: { path: string; severity: string; message: string; code?: string }[]; counts: Record<string, number>; truncated: boolean; settled: boolean }>(
        await h.call('diagnostics', { workspace_id: 'proj' }),
      );
      assert.deepEqual(r.diagnostics.map((d) => `${d.severity}:${d.path}`), ['error:src/math.ts', 'warning:src/main.ts']);
      assert.equal(r.diagnostics[0]?.message.length, LANGUAGE_LIMITS.maxMessageChars + 1);
      assert.equal(r.diagnostics[0]?.code, '2322');
      assert.deepEqual(r.counts, { error: 1, warning: 1, information: 0, hint: 0 });
      assert.equal(r.truncated, false);
      assert.ok(!JSON.stringify(r).includes('secretLib') && !JSON.stringify(r).includes('other workspace'));
    });

    it('of named files: opened and settled first (without requiring a change), confined', async () => {
      const r = ok<{ diagnostics: { path: string }[]; settled: boolean }>(await h.call('diagnostics', { workspace_id: 'proj', paths: ['src/main.ts'] }));
      assert.deepEqual(r.diagnostics.map((d) => d.path), ['src/main.ts']);
      assert.equal(r.settled, true);
      assert.deepEqual(fake.settleCalls.map((c) => [c.paths, c.options.requireChange]), [[[at('src/main.ts')], false]]);
      // The wait is what is left of the 1500 ms setting once the paths are checked: never more.
      const waited = fake.settleCalls[0]?.options.timeoutMs ?? -1;
      assert.ok(waited >= 0 && waited <= 1500, `settle was given ${waited} ms`);
      fake.settled = false;
      assert.equal(ok<{ settled: boolean }>(await h.call('diagnostics', { workspace_id: 'proj', paths: ['src/main.ts'] })).settled, false);
      assert.equal(toolError(await h.call('diagnostics', { workspace_id: 'proj', paths: ['linked/lib.d.ts'] })).code, 'PATH_OUTSIDE_WORKSPACE');
      assert.equal(toolError(await h.call('diagnostics', { workspace_id: 'proj', paths: [] })).code, 'INVALID_ARGUMENTS');
    });

    it('bounded, with truncated; counts cover all', async () => {
      fake.diags = [{ path: at('src/main.ts'), diagnostics: Array.from({ length: 700 }, (_, i) => ({ range: range(1, 1), severity: i % 2 ? 'hint' : 'error', message: `d${i}` })) }];
      const r = ok<{ diagnostics: { severity: string }[]; counts: Record<string, number>; truncated: boolean }>(await h.call('diagnostics', { workspace_id: 'proj' }));
      assert.equal(r.diagnostics.length, LANGUAGE_LIMITS.maxDiagnostics);
      assert.equal(r.truncated, true);
      assert.deepEqual(r.counts, { error: 350, warning: 0, information: 0, hint: 350 });
      assert.equal(r.diagnostics.slice(0, 350).every((d) => d.severity === 'error'), true, 'errors first');
    });
  });

  describe('apply_patch diagnostics', () => {
    const breakPatch = '*** Begin Patch\n*** Update File: src/math.ts\n@@\n-  return a + b;\n+  return "a" + b;\n*** Add File: src/new.ts\n+export const n = 1;\n*** End Patch\n';

    it('an applied patch answers at once with what was known (pending) and hands the files to a settle that requires a change', async () => {
      fake.diags = [
        { path: at('src/math.ts'), diagnostics: [{ range: range(2, 3), severity: 'error', message: 'reported before the edit', source: 'ts', code: '2322' }] },
        { path: at('src/main.ts'), diagnostics: [{ range: range(1, 1), severity: 'warning', message: 'not touched' }] },
      ];
      const r = ok<{ status: string; diagnostics?: { pending: boolean; items: { path: string; code?: string }[] } }>(
        await h.call('apply_patch', { workspace_id: 'proj', patch: breakPatch, expected_versions: { 'src/math.ts': sha(MATH) }, operation_key: 'break' }),
      );
      assert.equal(r.status, 'applied');
      assert.deepEqual(r.diagnostics?.items.map((d) => `${d.path}:${d.code}`), ['src/math.ts:2322']);
      assert.equal(r.diagnostics?.pending, true);
      // The follow-up round starts after the answer.
      while (fake.settleCalls.length === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      assert.deepEqual(fake.settleCalls.map((c) => [c.paths, c.options.requireChange]), [[[at('src/math.ts'), at('src/new.ts')], true]]);
      // The ledger's record is the patch's result, without diagnostics.
      const status = ok<Record<string, unknown>>(await h.call('operation_status', { operation_key: 'break' }));
      assert.equal('diagnostics' in status, false);
    });

    it('follows at most 20 files of a large patch and says how many it left unchecked', async () => {
      const files = Array.from({ length: 25 }, (_, i) => `*** Add File: gen/f${String(i).padStart(2, '0')}.ts\n+export const v${i} = ${i};`).join('\n');
      const r = ok<{ status: string; diagnostics?: { unchecked?: number } }>(await h.call('apply_patch', { workspace_id: 'proj', patch: `*** Begin Patch\n${files}\n*** End Patch\n`, expected_versions: {}, operation_key: 'big' }));
      assert.equal(r.status, 'applied');
      assert.equal(r.diagnostics?.unchecked, 5);
      while (fake.settleCalls.length === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      assert.equal(fake.settleCalls[0]?.paths.length, 20);
    });

    it('check_only, failures and settleMs 0 get no diagnostics and follow nothing', async () => {
      const upd = (key: string, extra: Record<string, unknown> = {}) =>
        h.call('apply_patch', { workspace_id: 'proj', patch: '*** Begin Patch\n*** Update File: src/main.ts\n@@\n-const total = add(1, 2);\n+const total = add(2, 2);\n*** End Patch\n', expected_versions: { 'src/main.ts': sha(MAIN) }, operation_key: key, ...extra });
      const checked = ok<Record<string, unknown>>(await upd('preview', { check_only: true }));
      assert.equal(checked.status, 'checked');
      assert.equal('diagnostics' in checked, false);
      assert.equal(toolError(await h.call('apply_patch', { workspace_id: 'proj', patch: '*** Begin Patch\n*** Update File: src/main.ts\n@@\n-no such line\n+x\n*** End Patch\n', expected_versions: { 'src/main.ts': sha(MAIN) }, operation_key: 'bad' })).code, 'PATCH_CONTEXT_NOT_FOUND');
      settleMs = 0;
      const off = ok<Record<string, unknown>>(await upd('off'));
      assert.equal(off.status, 'applied');
      assert.equal('diagnostics' in off, false);
      assert.equal(fake.settleCalls.length, 0);
    });
  });

  describe('editor_context', () => {
    it('reports workspace files with paths and the selection; anything else only as outside', async () => {
      fake.state = {
        active: { path: at('src/main.ts'), selections: [range(3, 15, 3, 18)], selectedText: 'add' },
        visible: [
          { path: at('src/main.ts'), selections: [range(3, 15, 3, 18)] },
          { path: path.join(outsideDir, 'lib.d.ts'), selections: [range(1, 1)] },
          { path: path.join(root, 'linked', 'lib.d.ts'), selections: [range(1, 1)] },
          { path: undefined, selections: [range(1, 1)] },
        ],
        dirty: [at('src/math.ts'), path.join(outsideDir, 'lib.d.ts'), undefined],
      };
      const r = ok<{ active: Record<string, unknown>; visible: Record<string, unknown>[]; dirty: Record<string, unknown>[] }>(await h.call('editor_context', {}));
      assert.deepEqual(r.active, { outside: false, workspace_id: 'proj', path: 'src/main.ts', selections: [range(3, 15, 3, 18)], selected_text: 'add', selection_truncated: false });
      assert.deepEqual(r.visible, [{ outside: false, workspace_id: 'proj', path: 'src/main.ts', selections: [range(3, 15, 3, 18)] }, { outside: true }, { outside: true }, { outside: true }]);
      assert.deepEqual(r.dirty, [{ outside: false, workspace_id: 'proj', path: 'src/math.ts' }, { outside: true }, { outside: true }]);
    });

    it('never shows the selection of a file outside; bounds a large one', async () => {
      fake.state = { active: { path: path.join(root, 'linked', 'lib.d.ts'), selections: [range(1, 1, 1, 30)], selectedText: 'declare function secretLib' }, visible: [], dirty: [] };
      const out = ok<Record<string, unknown>>(await h.call('editor_context', {}));
      assert.deepEqual(out.active, { outside: true });
      fake.state = { active: { path: at('src/main.ts'), selections: [range(1, 1, 4, 1)], selectedText: 'z'.repeat(LANGUAGE_LIMITS.maxSelectionChars + 5) }, visible: [], dirty: [] };
      const big = ok<{ active: { selected_text: string; selection_truncated: boolean } }>(await h.call('editor_context', {}));
      assert.equal(big.active.selected_text.length, LANGUAGE_LIMITS.maxSelectionChars);
      assert.equal(big.active.selection_truncated, true);
    });
  });

  describe('rename_symbol', () => {
    /** The rename a TypeScript server would give for `add` → `newName` in math.ts and main.ts. */
    function renameAdd(options: { dirty?: string; documentText?: Record<string, string>; extra?: string } = {}) {
      fake.renameAnswer = (_p, _pos, newName) => {
        const edits = [
          { path: at('src/math.ts'), edits: [{ range: range(1, 17, 1, 20), newText: newName }] },
          { path: at('src/main.ts'), edits: [range(1, 10, 1, 13), range(3, 15, 3, 18), range(4, 21, 4, 24), range(4, 32, 4, 35)].map((r) => ({ range: r, newText: newName })) },
          ...(options.extra ? [{ path: options.extra, edits: [{ range: range(1, 1, 1, 2), newText: newName }] }] : []),
        ];
        return Promise.resolve({
          edits: edits.map((e) => ({ ...e, dirty: e.path === options.dirty, documentText: options.documentText?.[e.path] })),
          fileOperations: 0,
        });
      };
    }
    const args = (key: string, extra: Record<string, unknown> = {}) => ({ workspace_id: 'proj', path: 'src/math.ts', line: 1, character: 17, new_name: 'plus', operation_key: key, ...extra });

    it('turns the rename into one patch with every file\'s version, applied through the runner and the ledger', async () => {
      renameAdd({ documentText: { [at('src/math.ts')]: MATH } });
      const r = ok<{ status: string; files: { path: string; kind: string }[]; patch: string; expected_versions: Record<string, string>; diagnostics?: unknown }>(await h.call('rename_symbol', args('rn')));
      assert.equal(r.status, 'applied');
      assert.deepEqual(r.expected_versions, { 'src/math.ts': sha(MATH), 'src/main.ts': sha(MAIN) });
      assert.deepEqual(r.files.map((f) => `${f.kind}:${f.path}`), ['update:src/math.ts', 'update:src/main.ts']);
      assert.equal(await fsp.readFile(at('src/math.ts'), 'utf8'), MATH.replace('add', 'plus'));
      assert.equal(await fsp.readFile(at('src/main.ts'), 'utf8'), MAIN.replaceAll('add', 'plus'));
      assert.match(r.patch, /^\*\*\* Begin Patch\n\*\*\* Update File: src\/math\.ts\n@@\n-export function add/);
      assert.ok(r.diagnostics, 'like apply_patch, with diagnostics');
      assert.equal(ok<{ status: string }>(await h.call('operation_status', { operation_key: 'rn' })).status, 'applied');
      assert.deepEqual(fake.calls.filter((c) => c.startsWith('rename')), [`rename ${at('src/math.ts')} 1:17 plus`]);
    });

    it('check_only previews the patch and writes nothing', async () => {
      renameAdd();
      const r = ok<{ status: string; files: { diff?: string }[]; patch: string }>(await h.call('rename_symbol', args('preview', { check_only: true })));
      assert.equal(r.status, 'checked');
      assert.match(r.files[0]?.diff ?? '', /\+export function plus/);
      assert.equal(await fsp.readFile(at('src/math.ts'), 'utf8'), MATH);
    });

    it('refuses a dirty document, an editor copy that differs from disk, files outside, and a read-only workspace; writes nothing', async () => {
      renameAdd({ dirty: at('src/main.ts') });
      assert.equal(toolError(await h.call('rename_symbol', args('d1'))).code, 'FILE_DIRTY_IN_EDITOR');
      renameAdd({ documentText: { [at('src/main.ts')]: `${MAIN}// typed but the server saw this\n` } });
      assert.equal(toolError(await h.call('rename_symbol', args('d2'))).code, 'VERSION_CONFLICT');
      renameAdd({ extra: path.join(outsideDir, 'lib.d.ts') });
      assert.equal(toolError(await h.call('rename_symbol', args('d3'))).code, 'PATH_OUTSIDE_WORKSPACE');
      renameAdd({ extra: path.join(root2, 'x.ts') });
      const other = toolError(await h.call('rename_symbol', args('d4')));
      assert.equal(other.code, 'PATH_OUTSIDE_WORKSPACE');
      assert.equal(other.details?.workspace_id, 'other');
      fake.renameAnswer = () => Promise.resolve({ refused: 'You cannot rename this element.' });
      const refused = toolError(await h.call('rename_symbol', args('d5')));
      assert.equal(refused.code, 'INVALID_ARGUMENTS');
      assert.match(refused.message, /cannot rename this element/);
      fake.renameAnswer = () => Promise.resolve({ edits: [], fileOperations: 1 });
      assert.equal(toolError(await h.call('rename_symbol', args('d6'))).code, 'INVALID_ARGUMENTS');
      renameAdd();
      const ro = toolError(await h.call('rename_symbol', { ...args('d7'), workspace_id: 'other', path: 'x.ts', character: 1 }));
      assert.equal(ro.code, 'READ_ONLY');
      assert.equal(await fsp.readFile(at('src/math.ts'), 'utf8'), MATH);
      assert.equal(await fsp.readFile(at('src/main.ts'), 'utf8'), MAIN);
      assert.equal(toolError(await h.call('operation_status', { operation_key: 'd1' })).code, 'OPERATION_NOT_FOUND', 'nothing reached the ledger');
    });

    it('a file changed on disk after the rename was computed is VERSION_CONFLICT: nothing is written', async () => {
      fake.renameAnswer = async (_p, _pos, newName) => {
        // The server saw the old text; another writer changes main.ts right after (a concurrent edit).
        const edits = [
          { path: at('src/math.ts'), edits: [{ range: range(1, 17, 1, 20), newText: newName }], dirty: false, documentText: undefined },
          { path: at('src/main.ts'), edits: [{ range: range(3, 15, 3, 18), newText: newName }], dirty: false, documentText: undefined },
        ];
        await fsp.writeFile(at('src/main.ts'), `// concurrent\n${MAIN}`);
        return { edits, fileOperations: 0 };
      };
      const e = toolError(await h.call('rename_symbol', args('race')));
      assert.equal(e.code, 'VERSION_CONFLICT');
      assert.equal(e.details?.path, 'src/main.ts');
      assert.equal(await fsp.readFile(at('src/math.ts'), 'utf8'), MATH, 'all or nothing: the other file is untouched');
    });

    it('is held for approval like apply_patch, and operation_resume applies it', async () => {
      await assembled.shutdown();
      await h.close();
      await fsp.rm(storage, { recursive: true, force: true });
      storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-lang-storage-'));
      const fs = new SpyWorkspaceFs();
      assembled = await assembleWith(fs, { approvalPolicy: () => ({ patches: 'confirm', commands: 'off', agentMayResolve: true }) });
      h = await connectHarness(folders(), { assembled, source, fs });
      renameAdd();
      const held = toolError(await h.call('rename_symbol', args('held')));
      assert.equal(held.code, 'APPROVAL_REQUIRED');
      assert.match(String(held.details?.patch), /Update File: src\/main\.ts/);
      assert.equal(await fsp.readFile(at('src/math.ts'), 'utf8'), MATH);
      const id = String(held.details?.approval_id);
      ok(await h.call('approval_resolve', { approval_id: id, decision: 'grant' }));
      const resumed = ok<{ status: string }>(await h.call('operation_resume', { approval_id: id }));
      assert.equal(resumed.status, 'applied');
      assert.equal(await fsp.readFile(at('src/main.ts'), 'utf8'), MAIN.replaceAll('add', 'plus'));
    });
  });
});
