/**
 * Approval holds through the real stack (assembleServices on a temp workspace, a real MCP client): the hold
 * state machine (pending → granted / denied / stale → consumed), binding to the request and the files'
 * versions, resume idempotency, the ambiguous case after a crash, persistence across a restart, the reviewer's
 * edits, who may decide, and the runner applying each kind flag (profile, Restricted Mode, occupancy).
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import type { ApprovalPolicy } from '../../src/kernel/approvals/approvalService';
import { DEFAULT_APPROVAL_POLICY, MAX_PENDING } from '../../src/kernel/approvals/approvalService';
import type { RunnerEvent } from '../../src/kernel/runner/events';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256, v4a } from './helpers/patchWorld';
import { toolError } from './helpers/workspaceFixture';

const A = 'alpha\nbeta\n';
const B = 'one\ntwo\n';

function twoFilePatch(): Record<string, unknown> {
  return {
    patch: v4a('*** Update File: a.txt', '@@', ' alpha', '-beta', '+BETA', '*** Add File: docs/new.md', '+# New', '+text'),
    expected_versions: { 'a.txt': sha256(A) },
    operation_key: 'two-files',
  };
}

describe('approval holds', function () {
  this.timeout(60_000);
  let policy: ApprovalPolicy;
  let w: PatchWorld;
  const open = async (options: Parameters<typeof openPatchWorld>[1] = {}): Promise<PatchWorld> => {
    w = await openPatchWorld({ 'a.txt': A, 'b.txt': B, '.vscode/settings.json': '{}\n' }, { profile: 'exec', approvals: () => policy, ...options });
    return w;
  };
  const resume = (approvalId: string, waitMs = 0) => w.call('operation_resume', { approval_id: approvalId, wait_ms: waitMs });
  const held = async (args: Record<string, unknown>): Promise<string> => {
    const e = toolError(await w.call('apply_patch', { workspace_id: WS_ID, ...args }));
    assert.equal(e.code, 'APPROVAL_REQUIRED', e.message);
    return e.details?.approval_id as string;
  };

  beforeEach(() => {
    policy = { ...DEFAULT_APPROVAL_POLICY, patches: 'confirm' };
  });
  afterEach(async () => {
    await w?.dispose();
  });

  it('holds a patch, writes nothing, and returns the same hold for a retry of the same request', async () => {
    await open();
    const id = await held(twoFilePatch());
    assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), A);
    await assert.rejects(fsp.stat(w.abs('docs/new.md')));
    assert.equal(await held(twoFilePatch()), id, 'a retry joins the pending hold');
    const hold = w.assembled.approvals.get(id);
    assert.equal(hold?.state, 'pending');
    assert.deepEqual(
      hold?.files?.map((f) => [f.path, f.kind, f.added, f.removed, f.before_version]),
      [
        ['a.txt', 'update', 1, 1, sha256(A)],
        ['docs/new.md', 'add', 2, 0, undefined],
      ],
    );
    const proposal = await w.assembled.approvals.proposal(id);
    assert.equal(new TextDecoder().decode(proposal[0]?.before), A);
    assert.equal(new TextDecoder().decode(proposal[0]?.proposed), 'alpha\nBETA\n');
    assert.equal(proposal[1]?.before, undefined);
  });

  it('pending → granted → consumed: resume applies once, a repeat returns the stored result, the key replays', async () => {
    await open();
    const id = await held(twoFilePatch());
    const pending = toolError(await resume(id, 50));
    assert.equal(pending.code, 'APPROVAL_CONFLICT');
    assert.equal(pending.details?.state, 'pending');
    const waiting = resume(id, 20_000);
    await new Promise((r) => setTimeout(r, 100));
    await w.assembled.approvals.resolve(id, 'grant', { by: 'reviewer' });
    const first = await waiting;
    assert.equal(first.isError, undefined, JSON.stringify(first.content));
    const r = first.structuredContent as { status: string; files: { path: string; after_version?: string }[] };
    assert.equal(r.status, 'applied');
    assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), 'alpha\nBETA\n');
    assert.equal(await fsp.readFile(w.abs('docs/new.md'), 'utf8'), '# New\ntext\n');
    assert.equal(w.assembled.approvals.get(id)?.state, 'consumed');
    const again = await resume(id);
    assert.deepEqual(again.structuredContent, first.structuredContent);
    const writes = w.writes().length;
    const replay = await w.apply(twoFilePatch());
    assert.deepEqual(replay, first.structuredContent, 'the original request with its key returns the stored result');
    assert.equal(w.writes().length, writes, 'nothing was written again');
  });

  it('deny is terminal: the agent gets APPROVAL_DENIED with the note, the hold cannot be decided again', async () => {
    await open();
    const id = await held(twoFilePatch());
    await w.assembled.approvals.resolve(id, 'deny', { by: 'reviewer', note: 'keep beta lowercase' });
    const e = toolError(await resume(id));
    assert.equal(e.code, 'APPROVAL_DENIED');
    assert.equal(e.details?.note, 'keep beta lowercase');
    assert.match(e.message, /keep beta lowercase/);
    await assert.rejects(w.assembled.approvals.resolve(id, 'grant', { by: 'reviewer' }), /APPROVAL_CONFLICT|already decided/);
    assert.equal(toolError(await resume(id)).code, 'APPROVAL_DENIED');
    assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), A);
    assert.deepEqual(w.writes(), []);
  });

  it('Request Changes: the resume is a changes_requested result with the comments, stable across repeats and a restart; nothing written', async () => {
    await open();
    const dirs = { tmp: w.tmp, root: w.root, storage: w.storage };
    const id = await held(twoFilePatch());
    const comments = [
      { path: 'docs/new.md', range: { start_line: 2, end_line: 2 }, quoted: 'text', body: '  Say what the text is.  ' },
      { path: 'a.txt', range: { start_line: 1, end_line: 2 }, quoted: 'alpha\nBETA', body: 'Keep beta lowercase.' },
      { path: 'a.txt', side: 'old' as const, range: { start_line: 2, end_line: 2 }, quoted: 'beta', body: '\tOn the old side.\r\n' },
    ];
    const waiting = resume(id, 20_000);
    await new Promise((r) => setTimeout(r, 50));
    const decided = await w.assembled.approvals.requestChanges(id, comments, { note: 'two things' });
    assert.equal(decided.state, 'denied');
    const first = await waiting;
    assert.equal(first.isError, undefined, JSON.stringify(first.content));
    const expected = {
      status: 'changes_requested',
      comments: [
        { path: 'a.txt', side: 'old', range: { start_line: 2, end_line: 2 }, quoted: 'beta', body: '\tOn the old side.\r\n' },
        { path: 'a.txt', side: 'new', range: { start_line: 1, end_line: 2 }, quoted: 'alpha\nBETA', body: 'Keep beta lowercase.' },
        { path: 'docs/new.md', side: 'new', range: { start_line: 2, end_line: 2 }, quoted: 'text', body: '  Say what the text is.  ' },
      ],
      reviewer_note: 'two things',
    };
    assert.deepEqual(first.structuredContent, expected, 'comments in file, side and line order, bodies exactly as written');
    assert.deepEqual((await resume(id)).structuredContent, expected, 'a repeat answers the same');
    await assert.rejects(w.assembled.approvals.resolve(id, 'grant', { by: 'reviewer' }), /APPROVAL_CONFLICT|already decided/);
    await assert.rejects(w.assembled.approvals.requestChanges(id, comments), /already decided/);
    assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), A);
    await assert.rejects(fsp.stat(w.abs('docs/new.md')));
    assert.deepEqual(w.writes(), []);
    await w.close();
    w = await openPatchWorld({}, { profile: 'exec', approvals: () => policy, dirs });
    assert.deepEqual((await resume(id)).structuredContent, expected, 'the ledger keeps the comments across a restart');
  });

  it('Request Changes refuses bad comments through one check, and leaves the hold pending', async () => {
    await open();
    const id = await held(twoFilePatch());
    const ok = { path: 'a.txt', range: { start_line: 1, end_line: 1 }, quoted: 'alpha', body: 'why?' };
    const cases: [unknown[], RegExp][] = [
      [[], /at least one comment/],
      [[{ ...ok, path: 'b.txt' }], /not a file under review/],
      [[{ ...ok, path: '../a.txt' }], /workspace-relative path/],
      [[{ ...ok, range: { start_line: 3, end_line: 2 } }], /end_line/],
      [[{ ...ok, range: { start_line: 0, end_line: 1 } }], /start_line/],
      [[{ ...ok, body: '   ' }], /body is empty/],
      [[{ ...ok, body: ' \t\r\n ' }], /body is empty/],
      [[{ ...ok, body: 'x'.repeat(4001) }], /at most 4000/],
      [[{ ...ok, body: '\u{20000}'.repeat(4001) }], /4001 characters; at most 4000/],
      [[{ ...ok, side: 'left' }], /side must be "old" or "new"/],
    ];
    for (const [bad, message] of cases) {
      await assert.rejects(w.assembled.approvals.requestChanges(id, bad as never), (err: { code?: string; message: string }) => {
        assert.equal(err.code, 'INVALID_ARGUMENTS');
        assert.match(err.message, message);
        return true;
      });
    }
    assert.equal(w.assembled.approvals.get(id)?.state, 'pending');
    const quoted = 'q'.repeat(5000);
    await w.assembled.approvals.requestChanges(id, [{ ...ok, quoted }]);
    const r = (await resume(id)).structuredContent as { comments: { quoted: string }[] };
    assert.equal(r.comments[0]?.quoted.length, 4000, 'a long quote is cut');
    assert.ok(r.comments[0]?.quoted.endsWith('…'));
  });

  it('Request Changes: a body of 4000 non-BMP characters is whole, and a quote of them is cut between characters', async () => {
    await open();
    const id = await held(twoFilePatch());
    const body = '  \u{1F600}\u{20000}'.repeat(1000);
    await w.assembled.approvals.requestChanges(id, [{ path: 'a.txt', range: { start_line: 1, end_line: 1 }, quoted: '\u{1F600}'.repeat(4100), body }]);
    const r = (await resume(id)).structuredContent as { comments: { quoted: string; body: string }[] };
    assert.equal(r.comments[0]?.body, body, 'the body reaches the agent exactly');
    assert.equal(r.comments[0]?.quoted, `${'\u{1F600}'.repeat(3999)}…`, 'cut at a character, not inside a surrogate pair');
  });

  it('a bound file that changes while pending makes the hold stale; a stale hold cannot be granted', async () => {
    await open();
    const id = await held(twoFilePatch());
    await fsp.writeFile(w.abs('a.txt'), 'alpha\nchanged by the developer\n');
    await assert.rejects(w.assembled.approvals.resolve(id, 'grant', { by: 'reviewer' }), (err: { code?: string }) => err.code === 'VERSION_CONFLICT');
    assert.equal(w.assembled.approvals.get(id)?.state, 'stale');
    assert.match(w.assembled.approvals.get(id)?.stale_reason ?? '', /a\.txt/);
    assert.equal(toolError(await resume(id)).code, 'VERSION_CONFLICT');
    assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), 'alpha\nchanged by the developer\n');
    await assert.rejects(fsp.stat(w.abs('docs/new.md')));
  });

  it('revalidate marks a pending hold stale when an added file appears on disk', async () => {
    await open();
    const id = await held(twoFilePatch());
    await w.assembled.approvals.revalidate(id);
    assert.equal(w.assembled.approvals.get(id)?.state, 'pending');
    await fsp.mkdir(w.abs('docs'));
    await fsp.writeFile(w.abs('docs/new.md'), 'mine\n');
    await w.assembled.approvals.revalidate();
    assert.equal(w.assembled.approvals.get(id)?.state, 'stale');
  });

  it('applies what the reviewer edited, and tells the agent exactly what changed (reviewer_changes, final versions)', async () => {
    await open();
    const id = await held(twoFilePatch());
    const reviewed = 'alpha\nBeta (reviewed)\n';
    w.assembled.approvals.setReviewed(id, 'a.txt', new TextEncoder().encode(reviewed));
    await w.assembled.approvals.resolve(id, 'grant', { by: 'reviewer', note: 'tweaked the wording' });
    const r = (await resume(id)).structuredContent as {
      status: string;
      files: { path: string; after_version?: string }[];
      reviewer_changes?: { path: string; diff: string }[];
      reviewer_note?: string;
    };
    assert.equal(r.status, 'applied');
    assert.equal(await fsp.readFile(w.abs('a.txt'), 'utf8'), reviewed);
    assert.equal(r.files.find((f) => f.path === 'a.txt')?.after_version, sha256(reviewed));
    assert.equal(r.reviewer_changes?.length, 1);
    assert.equal(r.reviewer_changes?.[0]?.path, 'a.txt');
    assert.match(r.reviewer_changes?.[0]?.diff ?? '', /-BETA\n\+Beta \(reviewed\)/);
    assert.equal(r.reviewer_note, 'tweaked the wording');
    assert.equal(await fsp.readFile(w.abs('docs/new.md'), 'utf8'), '# New\ntext\n', 'unedited files get the proposal');
  });

  it('refuses edits of a file the hold deletes, of paths it does not touch, and after the decision', async () => {
    await open();
    const id = await held({ patch: v4a('*** Delete File: b.txt', '*** Update File: a.txt', '@@', '-beta', '+gamma'), expected_versions: { 'a.txt': sha256(A), 'b.txt': sha256(B) }, operation_key: 'del' });
    const bytes = new TextEncoder().encode('x');
    assert.throws(() => w.assembled.approvals.setReviewed(id, 'b.txt', bytes), /cannot be edited/);
    assert.throws(() => w.assembled.approvals.setReviewed(id, 'other.txt', bytes), /cannot be edited/);
    await w.assembled.approvals.resolve(id, 'deny', { by: 'reviewer' });
    assert.throws(() => w.assembled.approvals.setReviewed(id, 'a.txt', bytes), /no longer be edited/);
  });

  it('only the developer decides by default; the agent may resolve only when the operator allows it', async () => {
    await open();
    const id = await held(twoFilePatch());
    const e = toolError(await w.call('approval_resolve', { approval_id: id, decision: 'grant' }));
    assert.equal(e.code, 'PERMISSION_DENIED');
    assert.equal(w.assembled.approvals.get(id)?.state, 'pending');
    policy = { ...policy, agentMayResolve: true };
    const r = await w.call('approval_resolve', { approval_id: id, decision: 'grant' });
    assert.equal((r.structuredContent as { state: string }).state, 'granted');
    assert.equal((r.structuredContent as { decided_by: string }).decided_by, 'agent');
    assert.equal(((await resume(id)).structuredContent as { status: string }).status, 'applied');
  });

  it('under "sensitive" (the default) holds only patches touching sensitive paths', async () => {
    policy = DEFAULT_APPROVAL_POLICY;
    await open();
    const normal = await w.apply<{ status: string }>(twoFilePatch());
    assert.equal(normal.status, 'applied');
    const id = await held({ patch: v4a('*** Update File: .vscode/settings.json', '@@', '-{}', '+{"task.allowAutomaticTasks": "on"}'), expected_versions: { '.vscode/settings.json': sha256('{}\n') }, operation_key: 'sens' });
    const hold = w.assembled.approvals.get(id);
    assert.equal(hold?.reason, 'sensitive');
    assert.deepEqual(hold?.sensitive_paths, ['.vscode/settings.json']);
    assert.equal(hold?.files?.[0]?.sensitive, true);
    // A move onto a sensitive path counts too.
    const moved = await held({ patch: v4a('*** Update File: b.txt', '*** Move to: .git/hooks/pre-commit'), expected_versions: { 'b.txt': sha256(B) }, operation_key: 'mv' });
    assert.deepEqual(w.assembled.approvals.get(moved)?.sensitive_paths, ['.git/hooks/pre-commit']);
  });

  it('never holds a check_only preview; the runner keeps its content for the panel', async () => {
    await open();
    const events: RunnerEvent[] = [];
    const sub = w.assembled.runner.onEvent((e) => events.push(e));
    const r = await w.apply<{ status: string }>({ ...twoFilePatch(), check_only: true, operation_key: 'preview' });
    sub.dispose();
    assert.equal(r.status, 'checked');
    const committed = events.find((e) => e.type === 'operation.committed');
    assert.ok(committed && committed.type === 'operation.committed');
    assert.equal(committed.status, 'checked');
    assert.equal(committed.operation.reviewable, true, "the patch's intent carries files: the editor offers its preview");
    const preview = w.assembled.runner.preview(committed.operation.run_id);
    assert.equal(new TextDecoder().decode(preview?.[0]?.proposed), 'alpha\nBETA\n');
  });

  it('a hold never raises a permission: read-only and Restricted Mode refuse before anything is held', async () => {
    await open({ profile: 'read-only' });
    assert.equal(toolError(await w.call('apply_patch', { workspace_id: WS_ID, ...twoFilePatch() })).code, 'READ_ONLY');
    assert.equal(toolError(await w.call('approval_create', { workspace_id: WS_ID, request: twoFilePatch() })).code, 'READ_ONLY');
    assert.equal(w.assembled.approvals.list().length, 0);
    await w.dispose();
    await open({ trusted: false });
    assert.equal(toolError(await w.call('approval_create', { workspace_id: WS_ID, request: { command: ['true'] } })).code, 'EXEC_DISABLED');
    assert.equal(toolError(await w.call('apply_patch', { workspace_id: WS_ID, ...twoFilePatch() })).code, 'READ_ONLY');
    assert.equal(w.assembled.approvals.list().length, 0);
  });

  it('approval_create opens a hold even when approvals are off, and validates the request like the tool would', async () => {
    policy = { ...DEFAULT_APPROVAL_POLICY, patches: 'off' };
    await open();
    const r = await w.call('approval_create', { workspace_id: WS_ID, request: twoFilePatch() });
    const hold = r.structuredContent as { approval_id: string; state: string; reason: string; tool: string };
    assert.deepEqual([hold.state, hold.reason, hold.tool], ['pending', 'explicit', 'apply_patch']);
    const bad = toolError(await w.call('approval_create', { workspace_id: WS_ID, request: { ...twoFilePatch(), approved: true } }));
    assert.equal(bad.code, 'INVALID_ARGUMENTS');
    assert.match(String(bad.details?.field), /^request/);
    const preview = toolError(await w.call('approval_create', { workspace_id: WS_ID, request: { ...twoFilePatch(), check_only: true } }));
    assert.equal(preview.code, 'INVALID_ARGUMENTS');
  });

  it('holds commands under commands: confirm, showing argv, cwd and environment changes; nothing starts until granted', async () => {
    policy = { ...DEFAULT_APPROVAL_POLICY, commands: 'confirm' };
    await open();
    const e = toolError(await w.call('exec_command', { workspace_id: WS_ID, command: ['sh', '-c', 'echo $((6*7)) > out.txt; rm -rf "$HOME/x" && echo `id`'], occupancy: 'shared' }));
    assert.equal(e.code, 'APPROVAL_REQUIRED');
    const id = e.details?.approval_id as string;
    assert.deepEqual(w.assembled.supervisor.list(), []);
    const hold = w.assembled.approvals.get(id);
    assert.deepEqual(hold?.command?.argv, ['sh', '-c', 'echo $((6*7)) > out.txt; rm -rf "$HOME/x" && echo `id`']);
    assert.equal(hold?.command?.cwd, '');
    await w.assembled.approvals.resolve(id, 'deny', { by: 'reviewer', note: 'not rm -rf' });
    assert.equal(toolError(await resume(id)).code, 'APPROVAL_DENIED');
    assert.deepEqual(w.assembled.supervisor.list(), []);

    const e2 = toolError(await w.call('exec_command', { workspace_id: WS_ID, command: ['sh', '-c', 'echo granted > out.txt'] }));
    const id2 = e2.details?.approval_id as string;
    await w.assembled.approvals.resolve(id2, 'grant', { by: 'reviewer' });
    const started = (await resume(id2)).structuredContent as { process_id: string; dispatch_status: string };
    assert.equal(started.dispatch_status, 'confirmed');
    for (let i = 0; i < 200 && w.assembled.supervisor.status(started.process_id).state !== 'exited'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await fsp.readFile(w.abs('out.txt'), 'utf8'), 'granted\n');
    assert.deepEqual((await resume(id2)).structuredContent, started, 'a repeat returns the stored result and starts nothing');
    assert.equal(w.assembled.supervisor.list().length, 1);
  });

  it('a granted resume while the workspace is busy answers WORKSPACE_BUSY and stays granted for a later resume', async () => {
    let busy = true;
    await open({ occupant: (id) => (busy && id === WS_ID ? { process_id: 'p_busy', command: ['npm', 'test'] } : undefined) });
    const id = await held(twoFilePatch());
    await w.assembled.approvals.resolve(id, 'grant', { by: 'reviewer' });
    assert.equal(toolError(await resume(id)).code, 'WORKSPACE_BUSY');
    assert.equal(w.assembled.approvals.get(id)?.state, 'granted');
    busy = false;
    assert.equal(((await resume(id)).structuredContent as { status: string }).status, 'applied');
  });

  it('holds persist across a restart; a resume cut off by a crash is APPROVAL_AMBIGUOUS and never runs again', async () => {
    await open();
    const dirs = { tmp: w.tmp, root: w.root, storage: w.storage };
    const id = await held(twoFilePatch());
    const cmd = (await w.call('approval_create', { workspace_id: WS_ID, tool: 'exec_command', request: { command: ['sh', '-c', 'echo ran >> ran.txt'] } })).structuredContent as { approval_id: string };
    await w.assembled.approvals.resolve(cmd.approval_id, 'grant', { by: 'reviewer' });
    // The crash: the resume was recorded as started, then the extension host died before the outcome.
    await w.assembled.approvals.beginResume(cmd.approval_id);
    await w.close();

    w = await openPatchWorld({}, { profile: 'exec', approvals: () => policy, dirs });
    assert.equal(w.assembled.approvals.get(id)?.state, 'pending', 'the pending hold survived');
    const proposal = await w.assembled.approvals.proposal(id);
    assert.equal(new TextDecoder().decode(proposal[0]?.proposed), 'alpha\nBETA\n', 'its content is planned again');
    assert.equal(w.assembled.approvals.get(cmd.approval_id)?.state, 'ambiguous');
    const e = toolError(await resume(cmd.approval_id));
    assert.equal(e.code, 'APPROVAL_AMBIGUOUS');
    assert.match(e.hint ?? '', /Do not start the command again/);
    assert.deepEqual(w.assembled.supervisor.list(), [], 'nothing was respawned');
    await assert.rejects(fsp.stat(w.abs('ran.txt')));
  });

  it('concurrent resumes of one granted command start it once; racing decisions leave exactly one', async () => {
    policy = { ...DEFAULT_APPROVAL_POLICY, commands: 'confirm' };
    await open();
    const e = toolError(await w.call('exec_command', { workspace_id: WS_ID, command: ['sh', '-c', 'echo once >> once.txt'], occupancy: 'shared' }));
    const id = e.details?.approval_id as string;
    const decisions = await Promise.allSettled([
      w.assembled.approvals.resolve(id, 'grant', { by: 'reviewer' }),
      w.assembled.approvals.resolve(id, 'deny', { by: 'reviewer', note: 'late' }),
      w.assembled.approvals.resolve(id, 'grant', { by: 'reviewer' }),
    ]);
    assert.equal(decisions.filter((d) => d.status === 'fulfilled').length, 1, 'one decision wins, the others are refused');
    assert.ok(['granted', 'denied'].includes(w.assembled.approvals.get(id)?.state ?? ''));

    const e2 = toolError(await w.call('exec_command', { workspace_id: WS_ID, command: ['sh', '-c', 'echo once >> once.txt'], cwd: '', occupancy: 'shared' }));
    const id2 = e2.details?.approval_id as string;
    assert.notEqual(id2, id);
    await w.assembled.approvals.resolve(id2, 'grant', { by: 'reviewer' });
    const results = await Promise.all(Array.from({ length: 8 }, () => resume(id2, 1000)));
    const started = results.filter((r) => !r.isError).map((r) => (r.structuredContent as { process_id: string }).process_id);
    const refused = results.filter((r) => r.isError).map((r) => toolError(r).code);
    assert.ok(started.length >= 1);
    assert.equal(new Set(started).size, 1, 'every answer names the same process');
    assert.ok(refused.every((c) => c === 'APPROVAL_CONFLICT'), refused.join(','));
    assert.equal(w.assembled.supervisor.list().length, 1, 'one process was started');
    for (let i = 0; i < 200 && w.assembled.supervisor.status(started[0] as string).state !== 'exited'; i++) await new Promise((r) => setTimeout(r, 20));
    assert.equal(await fsp.readFile(w.abs('once.txt'), 'utf8'), 'once\n');
  });

  it('reports each step on the event stream', async () => {
    await open();
    const events: string[] = [];
    const sub = w.assembled.runner.onEvent((e) => events.push(e.type));
    const id = await held(twoFilePatch());
    await w.assembled.approvals.resolve(id, 'grant', { by: 'reviewer' });
    await resume(id);
    sub.dispose();
    assert.deepEqual(events, ['operation.prepared', 'operation.held', 'operation.granted', 'operation.committed']);
    assert.ok(w.assembled.runner.recent().length >= 4);
  });

  it('caps pending holds, so an agent cannot bury the reviewer', async () => {
    await open();
    for (let i = 0; i < MAX_PENDING; i++) await held({ ...twoFilePatch(), operation_key: `k${i}` });
    const e = toolError(await w.call('apply_patch', { workspace_id: WS_ID, ...twoFilePatch(), operation_key: 'one-too-many' }));
    assert.equal(e.code, 'APPROVAL_CONFLICT');
    assert.equal(w.assembled.approvals.pending().length, MAX_PENDING);
  });

  it('checks each kind\'s profile in the runner: input to a process needs exec, ending one never does', async () => {
    await open();
    const started = (await w.call('exec_command', { workspace_id: WS_ID, command: ['cat'], occupancy: 'shared' })).structuredContent as { process_id: string };
    assert.equal((await w.call('write_stdin', { process_id: started.process_id, data: 'hi\n' })).isError, undefined);
    // The developer withdraws trust while the command runs.
    w.harness.source.set([{ root: w.root, name: WS_ID, profile: 'exec' }], false);
    assert.equal(toolError(await w.call('write_stdin', { process_id: started.process_id, data: 'more\n' })).code, 'EXEC_DISABLED');
    assert.equal(toolError(await w.call('process_resize', { process_id: started.process_id, rows: 10, cols: 10 })).code, 'EXEC_DISABLED');
    const ended = (await w.call('terminate_process', { process_id: started.process_id })).structuredContent as { state: string };
    assert.equal(ended.state, 'exited');
    assert.equal(toolError(await w.call('write_stdin', { process_id: 'p_0000000000000000', data: 'x' })).code, 'PROCESS_NOT_FOUND');
  });

  it('workspace_info reports the real approval settings', async () => {
    policy = { patches: 'confirm', commands: 'confirm', agentMayResolve: false };
    await open();
    const info = (await w.call('workspace_info', { workspace_id: WS_ID })).structuredContent as { execution: { approvals: unknown } };
    assert.deepEqual(info.execution.approvals, { patches: 'confirm', commands: 'confirm', agent_may_resolve: false });
  });
});
