/**
 * Diagnostics that never hold up an edit: apply_patch answers without waiting for the language servers, the report
 * on what it wrote reaches the session on its next result (any tool) or through `diagnostics`, a report about an
 * older version of a file is never delivered as current, and a file no language server reports on is never waited
 * on. The language port is a double whose `settle` answers only when the test says so: a call that returned while
 * a settle was still unanswered provably did not wait for it (no timing involved).
 */
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { EditorDiagnostic, FileDiagnostics, SettleOptions } from '../../src/features/editor/common/languageFeatures';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import type { ToolOutcome } from '../../src/kernel/dispatch';
import type { AssembleOptions, AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import { makeTree, removeTree } from './helpers/workspaceFixture';
import { InertLanguage } from './helpers/reportingLanguage';
import { MAX_FOLLOWED_FILE_BYTES } from '../../src/features/editor/common/diagnosticsFeed';

const sha = (b: string): string => 'sha256:' + createHash('sha256').update(b).digest('hex');
const typeError = (line: number): EditorDiagnostic => ({ range: { start: { line, character: 14 }, end: { line, character: 17 } }, severity: 'error', message: "Type 'number' is not assignable to type 'string'.", source: 'ts', code: '2322' });

/** A settle the test answers: it records the call and waits until `answer` is called. */
interface OpenSettle {
  readonly paths: readonly string[];
  readonly options: SettleOptions;
  answer(files: FileDiagnostics[], settled?: boolean): void;
  /** A server reports on the new content while the wait goes on (what `onReport` is told). */
  report(path: string, diagnostics: EditorDiagnostic[]): void;
}

/** A language port that reports on `.ts` files only and answers every settle only when told. */
class HeldLanguage extends InertLanguage {
  /** What the editor holds now, by absolute path. */
  current = new Map<string, EditorDiagnostic[]>();
  settles: OpenSettle[] = [];
  private arrived: (() => void) | undefined;

  reportsOn(p: string): boolean {
    return p.endsWith('.ts');
  }
  diagnostics(paths?: readonly string[]): Promise<FileDiagnostics[]> {
    return Promise.resolve((paths ?? [...this.current.keys()]).map((p) => ({ path: p, diagnostics: this.current.get(p) ?? [] })));
  }
  settle(paths: readonly string[], options: SettleOptions): Promise<{ settled: boolean; files: FileDiagnostics[] }> {
    return new Promise((resolve) => {
      this.settles.push({ paths, options, answer: (files, settled = true) => resolve({ settled, files }), report: (p, d) => options.onReport?.(p, d) });
      this.arrived?.();
    });
  }
  private handedOut = 0;
  /** The next settle asked for, in order (each is handed out once). */
  async nextSettle(): Promise<OpenSettle> {
    while (this.settles.length <= this.handedOut) await new Promise<void>((resolve) => (this.arrived = resolve));
    return this.settles[this.handedOut++] as OpenSettle;
  }
}

interface Update {
  workspace_id: string;
  path: string;
  version: string;
  settled: boolean;
  counts: Record<string, number>;
  items: { range: unknown; severity: string; code?: string }[];
}

describe('diagnostics without the wait (the feed behind apply_patch)', () => {
  let root: string;
  let storage: string;
  let lang: HeldLanguage;
  let assembled: AssembledServices;
  const TS = 'export const label: string = "x";\n';
  const at = (rel: string): string => path.join(root, ...rel.split('/'));

  async function call(name: string, args: Record<string, unknown>, session = 'S1'): Promise<Record<string, unknown>> {
    const out: ToolOutcome = await assembled.dispatcher.call(name, args, new AbortController().signal, { session });
    if (out.kind !== 'result') assert.fail(`${name}: ${JSON.stringify(out)}`);
    return out.value;
  }
  async function patch(rel: string, from: string, to: string, key: string, session = 'S1'): Promise<Record<string, unknown> & { files: { after_version?: string }[] }> {
    const before = await fsp.readFile(at(rel), 'utf8');
    const r = await call(
      'apply_patch',
      { workspace_id: 'proj', patch: `*** Begin Patch\n*** Update File: ${rel}\n@@\n-${from}\n+${to}\n*** End Patch\n`, expected_versions: { [rel]: sha(before) }, operation_key: key },
      session,
    );
    assert.equal(r.status, 'applied', JSON.stringify(r));
    return r as Record<string, unknown> & { files: { after_version?: string }[] };
  }

  /** Calls the tool until a result carries diagnostics_update (the round ends on its own time), yielding to I/O. */
  async function nextUpdate(name: string, args: Record<string, unknown>): Promise<Update[]> {
    for (;;) {
      const update = (await call(name, args)).diagnostics_update as Update[] | undefined;
      if (update) return update;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }

  /** The services over the test folder, with the held language port; `extra` adds or overrides options. */
  function assemble(extra: Partial<AssembleOptions> = {}): Promise<AssembledServices> {
    return assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: 'proj', profile: 'exec' }])), storage, {
        language: lang,
        diagnosticsSettleMs: () => 5000,
        ...extra,
      }),
    );
  }

  beforeEach(async () => {
    root = await makeTree({ 'src/a.ts': TS, 'notes.txt': 'one\ntwo\n', 'README.md': '# t\n' }, 'codespace-feed-');
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-feed-storage-'));
    lang = new HeldLanguage();
    assembled = await assemble();
  });
  afterEach(async () => {
    for (const s of lang.settles) s.answer([], false);
    await assembled.shutdown();
    await removeTree(root);
    await fsp.rm(storage, { recursive: true, force: true });
  });

  it('apply_patch answers while the language servers have not reported; the next result of the session carries their report, once', async () => {
    lang.current.set(at('src/a.ts'), [{ ...typeError(1), message: 'an old problem' }]);
    const r = await patch('src/a.ts', 'export const label: string = "x";', 'export const label: string = 42;', 'k1');
    // Answered with the settle still unanswered: it did not wait.
    const d = r.diagnostics as { pending: boolean; items: { message: string }[]; counts: Record<string, number> };
    assert.equal(d.pending, true);
    assert.deepEqual(d.items.map((i) => i.message), ['an old problem'], 'what was known, marked pending');
    const round = await lang.nextSettle();
    assert.deepEqual(round.paths, [at('src/a.ts')]);
    assert.equal(round.options.requireChange, true);
    // Nothing reported yet: a result in between carries nothing.
    assert.equal((await call('workspace_info', {})).diagnostics_update, undefined);
    lang.current.set(at('src/a.ts'), [typeError(1)]);
    round.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    // Any tool's next result of the same session carries it (the round ends asynchronously: poll the observable).
    const update = await nextUpdate('read', { workspace_id: 'proj', path: 'notes.txt' });
    assert.equal(update.length, 1);
    assert.equal(update[0]?.path, 'src/a.ts');
    assert.equal(update[0]?.version, r.files[0]?.after_version, 'tagged with the version the edit wrote');
    assert.equal(update[0]?.settled, true);
    assert.deepEqual(update[0]?.items.map((i) => i.code), ['2322']);
    assert.equal(update[0]?.counts.error, 1);
    // Delivered once; another session never gets it.
    assert.equal((await call('workspace_info', {})).diagnostics_update, undefined);
    assert.equal((await call('workspace_info', {}, 'S2')).diagnostics_update, undefined);
  });

  it('what a server reports on the new content reaches the next result before the round settles; the settled report follows only when it differs', async () => {
    const r = await patch('src/a.ts', 'export const label: string = "x";', 'export const label: string = 42;', 'e1');
    const round = await lang.nextSettle();
    assert.equal((await call('workspace_info', {})).diagnostics_update, undefined);
    // The server has checked the new content; the round still waits for its quiet period (the settle is unanswered).
    round.report(at('src/a.ts'), [typeError(1)]);
    const early = await nextUpdate('read', { workspace_id: 'proj', path: 'notes.txt' });
    assert.equal(early.length, 1);
    assert.equal(early[0]?.settled, false, 'what is known so far, not the settled report');
    assert.equal(early[0]?.version, r.files[0]?.after_version);
    assert.deepEqual(early[0]?.items.map((i) => i.code), ['2322']);
    assert.equal(lang.settles.length, 1, 'still the same round');
    // It settles on the same report: nothing new to say, so nothing comes again.
    round.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    await call('diagnostics', { workspace_id: 'proj', paths: ['src/a.ts'] });
    assert.equal((await call('workspace_info', {})).diagnostics_update, undefined);

    // Next edit: the early report says one thing, the settled one another; the session gets both, in order.
    await patch('src/a.ts', 'export const label: string = 42;', 'export const label: string = 43;', 'e2');
    const second = await lang.nextSettle();
    second.report(at('src/a.ts'), []);
    const first = await nextUpdate('workspace_info', {});
    assert.deepEqual([first[0]?.settled, first[0]?.items.length], [false, 0]);
    second.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    const settled = await nextUpdate('workspace_info', {});
    assert.deepEqual([settled[0]?.settled, settled[0]?.items.map((i) => i.code)], [true, ['2322']]);

    // An early report not yet taken is replaced by the settled one: the session gets one report.
    await patch('src/a.ts', 'export const label: string = 43;', 'export const label: string = 44;', 'e3');
    const third = await lang.nextSettle();
    third.report(at('src/a.ts'), []);
    third.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    // diagnostics waits (bounded) until the feed has taken the answer in; with wait_ms 0 it would depend on whether
    // the feed's round had run yet.
    const taken = await call('diagnostics', { workspace_id: 'proj', paths: ['src/a.ts'], wait_ms: 10_000 });
    assert.deepEqual((taken.diagnostics as { code?: string }[]).map((d) => d.code), ['2322']);
    assert.equal((await call('workspace_info', {})).diagnostics_update, undefined, 'taken by diagnostics, once');
  });

  it('an early report about content edited again meanwhile is never delivered', async () => {
    await patch('src/a.ts', 'export const label: string = "x";', 'export const label: string = 42;', 'f1');
    const round = await lang.nextSettle();
    await patch('src/a.ts', 'export const label: string = 42;', 'export const label: string = "y";', 'f2');
    round.report(at('src/a.ts'), [typeError(1)]);
    round.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    const again = await lang.nextSettle();
    assert.equal((await call('workspace_info', {})).diagnostics_update, undefined, 'neither the early nor the settled report of the older content');
    again.answer([{ path: at('src/a.ts'), diagnostics: [] }]);
    const update = await nextUpdate('workspace_info', {});
    assert.deepEqual([update[0]?.settled, update[0]?.items], [true, []]);
  });

  it('a file over the follow limit is not followed: the edit says it is unchecked, and diagnostics checks it on request', async () => {
    const big = `${'export const filler: number = 1;\n'.repeat(Math.ceil((MAX_FOLLOWED_FILE_BYTES + 1) / 33))}export const label: string = "x";\n`;
    await fsp.writeFile(at('src/big.ts'), big);
    const r = await patch('src/big.ts', 'export const label: string = "x";', 'export const label: string = 42;', 'big');
    assert.deepEqual(r.diagnostics, { pending: false, items: [], counts: { error: 0, warning: 0, information: 0, hint: 0 }, truncated: false, unchecked: 1 });
    // A file just under the limit is followed as usual.
    await fsp.writeFile(at('src/edge.ts'), `${'x'.repeat(MAX_FOLLOWED_FILE_BYTES - 34)}\nexport const label: string = "x";\n`);
    const edge = await patch('src/edge.ts', 'export const label: string = "x";', 'export const label: string = 42;', 'edge');
    assert.equal((edge.diagnostics as { pending: boolean }).pending, true);
    const round = await lang.nextSettle();
    assert.deepEqual(round.paths, [at('src/edge.ts')], 'only the file within the limit was handed to the servers');
    round.answer([{ path: at('src/edge.ts'), diagnostics: [] }]);
    // Asked for, the large file is checked (a settle of its own, not a followed report).
    const asking = call('diagnostics', { workspace_id: 'proj', paths: ['src/big.ts'], wait_ms: 1000 });
    const check = await lang.nextSettle();
    assert.deepEqual([check.paths, check.options.requireChange], [[at('src/big.ts')], false]);
    check.answer([{ path: at('src/big.ts'), diagnostics: [typeError(1)] }]);
    assert.deepEqual(((await asking).diagnostics as { code?: string }[]).map((d) => d.code), ['2322']);
  });

  it('a file type no language server reports on is never followed: no settle, no field, and diagnostics answers without waiting', async () => {
    const r = await patch('notes.txt', 'two', 'three', 'txt');
    assert.equal('diagnostics' in r, false);
    const md = await patch('README.md', '# t', '# title', 'md');
    assert.equal('diagnostics' in md, false);
    const d = await call('diagnostics', { workspace_id: 'proj', paths: ['notes.txt', 'README.md'] });
    assert.equal(d.settled, true);
    assert.deepEqual(d.diagnostics, []);
    assert.equal(lang.settles.length, 0, 'no wait was ever asked of the language port');
  });

  it('diagnostics waits (bounded) for an edited file\'s report and takes it; wait_ms 0 answers at once with settled: false', async () => {
    await patch('src/a.ts', 'export const label: string = "x";', 'export const label: string = 42;', 'k2');
    const round = await lang.nextSettle();
    const now = await call('diagnostics', { workspace_id: 'proj', paths: ['src/a.ts'], wait_ms: 0 });
    assert.equal(now.settled, false, 'still pending, and it said so without waiting');
    const waiting = call('diagnostics', { workspace_id: 'proj', paths: ['src/a.ts'] });
    round.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    const d = (await waiting) as { diagnostics: { path: string; code?: string }[]; settled: boolean };
    assert.equal(d.settled, true);
    assert.deepEqual(d.diagnostics.map((x) => `${x.path}:${x.code}`), ['src/a.ts:2322']);
    // Taken by diagnostics: the next result does not repeat it.
    assert.equal((await call('workspace_info', {})).diagnostics_update, undefined);
    assert.equal(lang.settles.length, 1, 'the edited file was not checked a second time');
  });

  it('a report about an older version is dropped: a file edited again mid-round is followed again, and only the newer report arrives', async () => {
    await patch('src/a.ts', 'export const label: string = "x";', 'export const label: string = 42;', 'v1');
    const first = await lang.nextSettle();
    const second = await patch('src/a.ts', 'export const label: string = 42;', 'export const label: string = "y";', 'v2');
    // The late report of the first round, about the content the second edit replaced.
    first.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    const again = await lang.nextSettle();
    assert.equal((await call('workspace_info', {})).diagnostics_update, undefined, 'the stale report was not delivered');
    again.answer([{ path: at('src/a.ts'), diagnostics: [] }]);
    const update = await nextUpdate('workspace_info', {});
    assert.equal(update[0]?.version, second.files[0]?.after_version);
    assert.deepEqual(update[0]?.items, []);
  });

  it('a report that did not settle is followed again when diagnostics can wait: asking again never spins on the same answer', async () => {
    const r = await patch('src/a.ts', 'export const label: string = "x";', 'export const label: string = 42;', 'u1');
    const first = await lang.nextSettle();
    // The editor had not caught up with the write within the round: unsettled, with what it held (the old report).
    first.answer([{ path: at('src/a.ts'), diagnostics: [] }], false);
    const update = await nextUpdate('workspace_info', {});
    assert.equal(update[0]?.settled, false);
    // wait_ms 0 answers at once with what is known, and starts nothing.
    assert.equal((await call('diagnostics', { workspace_id: 'proj', paths: ['src/a.ts'], wait_ms: 0 })).settled, false);
    assert.equal(lang.settles.length, 1);
    // A caller who can wait gets a new check of the version the edit wrote, not the unsettled answer again.
    const waiting = call('diagnostics', { workspace_id: 'proj', paths: ['src/a.ts'], wait_ms: 30_000 });
    const again = await lang.nextSettle();
    assert.deepEqual(again.paths, [at('src/a.ts')]);
    assert.equal(again.options.requireChange, true, 'still the check of the content the edit wrote');
    again.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    const d = (await waiting) as { diagnostics: { code?: string }[]; settled: boolean };
    assert.equal(d.settled, true);
    assert.deepEqual(d.diagnostics.map((x) => x.code), ['2322']);
    assert.ok(r.files[0]?.after_version);
  });

  it('a report is dropped when the file changed on disk after the edit (the developer typed and saved)', async () => {
    await patch('src/a.ts', 'export const label: string = "x";', 'export const label: string = 42;', 'd1');
    const round = await lang.nextSettle();
    await fsp.writeFile(at('src/a.ts'), 'export const label = "saved by the developer";\n');
    round.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    // diagnostics waits for the round to end, then checks the file as it is now (no report of the old version).
    const checking = call('diagnostics', { workspace_id: 'proj', paths: ['src/a.ts'], wait_ms: 30_000 });
    const fresh = await lang.nextSettle();
    assert.equal(fresh.options.requireChange, false);
    fresh.answer([{ path: at('src/a.ts'), diagnostics: [] }]);
    assert.deepEqual((await checking).diagnostics, []);
    assert.equal((await call('workspace_info', {})).diagnostics_update, undefined);
  });

  it('a held patch resumed with operation_resume is followed like apply_patch', async () => {
    await assembled.shutdown();
    assembled = await assemble({ approvalPolicy: () => ({ patches: 'confirm', commands: 'off', agentMayResolve: true }) });
    const held = await assembled.dispatcher.call(
      'apply_patch',
      { workspace_id: 'proj', patch: '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-export const label: string = "x";\n+export const label: string = 42;\n*** End Patch\n', expected_versions: { 'src/a.ts': sha(TS) }, operation_key: 'held' },
      new AbortController().signal,
      { session: 'S1' },
    );
    assert.equal(held.kind, 'error');
    const approvalId = (held as { body: { details?: { approval_id?: string } } }).body.details?.approval_id;
    assert.ok(approvalId);
    await call('approval_resolve', { approval_id: approvalId, decision: 'grant' });
    const resumed = await call('operation_resume', { approval_id: approvalId, wait_ms: 0 });
    assert.equal(resumed.status, 'applied');
    assert.equal((resumed.diagnostics as { pending: boolean }).pending, true);
    const round = await lang.nextSettle();
    round.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    const update = await nextUpdate('workspace_info', {});
    assert.deepEqual(update[0]?.items.map((i) => i.code), ['2322']);
  });

  it('a held patch resumed through the runner itself (no operation_resume tool: any front end) carries diagnostics', async () => {
    await assembled.shutdown();
    assembled = await assemble({ approvalPolicy: () => ({ patches: 'confirm', commands: 'off', agentMayResolve: true }) });
    const held = await assembled.dispatcher.call(
      'apply_patch',
      { workspace_id: 'proj', patch: '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-export const label: string = "x";\n+export const label: string = 42;\n*** End Patch\n', expected_versions: { 'src/a.ts': sha(TS) }, operation_key: 'held-runner' },
      new AbortController().signal,
      { session: 'S1' },
    );
    const approvalId = (held as { body: { details?: { approval_id?: string } } }).body.details?.approval_id;
    assert.ok(approvalId);
    await assembled.approvals.resolve(approvalId, 'grant', { by: 'reviewer' });
    const resumed = (await assembled.runner.resume(approvalId, 0, new AbortController().signal, { session: 'S1' })) as { status: string; diagnostics?: { pending: boolean } };
    assert.equal(resumed.status, 'applied');
    assert.equal(resumed.diagnostics?.pending, true, 'the after-commit work of apply_patch ran for the resumed hold');
    // The stored outcome never carries them: a repeat answers anew.
    assert.equal((assembled.approvals.stored(approvalId).result as { diagnostics?: unknown }).diagnostics, undefined);
    const round = await lang.nextSettle();
    assert.deepEqual(round.paths, [at('src/a.ts')]);
    round.answer([{ path: at('src/a.ts'), diagnostics: [typeError(1)] }]);
    const update = await nextUpdate('workspace_info', {});
    assert.deepEqual(update[0]?.items.map((i) => i.code), ['2322']);
  });
});
