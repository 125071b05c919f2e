import * as assert from 'node:assert/strict';
import type { RunnerEvent } from '../../src/kernel/runner/events';
import { MAX_ACTIVITY_SHOWN, MAX_STALE_SHOWN, buildPanelState } from '../../src/vscode/panel/panelModel';
import { commandHold, patchHold } from './helpers/panelPorts';

// As the runner summarises them: a patch's intent carries files, so its operation is reviewable.
const op = (run_id: string, tool: 'apply_patch' | 'exec_command', title: string, at = '2026-12-01T12:00:00.000Z') => ({
  run_id,
  tool,
  workspace_id: 'ws',
  title,
  at,
  ...(tool === 'apply_patch' ? { reviewable: true as const } : {}),
});

describe('panel view model', () => {
  it('shows pending holds newest first, then stale ones with their reason and nothing to approve; decided holds not at all', () => {
    const holds = [
      patchHold('h4', { state: 'stale', stale_reason: 'src/a.ts changed on disk' }),
      patchHold('h3'),
      commandHold('h2', { state: 'granted' }),
      patchHold('h1', { state: 'denied' }),
      commandHold('h0'),
    ];
    const s = buildPanelState({ pending: holds.filter((h) => h.state === 'pending'), holds, events: [] });
    assert.deepEqual(s.holds.map((h) => [h.approvalId, h.state]), [['h3', 'pending'], ['h0', 'pending'], ['h4', 'stale']]);
    assert.equal(s.pendingCount, 2);
    const stale = s.holds[2];
    assert.equal(stale?.staleReason, 'src/a.ts changed on disk');
    assert.equal(stale?.canApprove, false);
    assert.equal(stale?.canDeny, false);
    assert.equal(stale?.canReview, true, 'a stale patch can still be looked at');
    assert.equal(s.holds[0]?.canApprove, true);
    assert.equal(s.holds[0]?.canReview, true);
    assert.equal(s.holds[1]?.canReview, false, 'a command has no diff to review');
  });

  it('takes pending holds from pending() only: a hold list() still shows as pending but pending() omits is not offered', () => {
    const h = patchHold('h1');
    const s = buildPanelState({ pending: [], holds: [h], events: [] });
    assert.deepEqual(s.holds, []);
    assert.equal(s.pendingCount, 0);
  });

  it('shows every file of a patch with kind, counts and a move as source and destination, and the sensitive paths', () => {
    const h = patchHold('h1', {
      files: [
        { path: 'src/a.ts', kind: 'update', added: 3, removed: 1, sensitive: false },
        { path: 'old.ts', kind: 'move', move_to: 'new.ts', added: 0, removed: 0, sensitive: false },
        { path: '.vscode/tasks.json', kind: 'add', added: 12, removed: 0, sensitive: true },
      ],
      sensitive_paths: ['.vscode/tasks.json'],
      reason: 'sensitive',
    });
    const [v] = buildPanelState({ pending: [h], holds: [h], events: [] }).holds;
    assert.deepEqual(v?.files, [
      { path: 'src/a.ts', kind: 'update', added: 3, removed: 1, sensitive: false },
      { path: 'old.ts', kind: 'move', moveTo: 'new.ts', added: 0, removed: 0, sensitive: false },
      { path: '.vscode/tasks.json', kind: 'add', added: 12, removed: 0, sensitive: true },
    ]);
    assert.deepEqual(v?.sensitivePaths, ['.vscode/tasks.json']);
    assert.equal(v?.reason, 'sensitive');
    assert.equal(v?.title, 'apply_patch: 3 files (src/a.ts, old.ts, .vscode/tasks.json)', 'a title made from the hold when the runner reported none');
  });

  it('shows a command in full: every argument untruncated, cwd, each env change (set and unset, sorted), tty, occupancy', () => {
    const long = 'x'.repeat(5000);
    const h = commandHold('c1', { command: { argv: ['sh', '-c', long, ''], cwd: 'pkg/sub', tty: true, occupancy: 'shared', env_changes: { ZED: '1', ALPHA: null, MID: 'a b=c' } } });
    const [v] = buildPanelState({ pending: [h], holds: [h], events: [] }).holds;
    assert.deepEqual(v?.command, {
      argv: ['sh', '-c', long, ''],
      cwd: 'pkg/sub',
      tty: true,
      occupancy: 'shared',
      env: [
        { key: 'ALPHA', value: null },
        { key: 'MID', value: 'a b=c' },
        { key: 'ZED', value: '1' },
      ],
    });
  });

  it("titles a hold with its operation's title from the held event", () => {
    const h = commandHold('c1');
    const events: RunnerEvent[] = [{ type: 'operation.held', operation: op('r1', 'exec_command', 'exec_command: npm test'), hold: h }];
    const [v] = buildPanelState({ pending: [h], holds: [h], events }).holds;
    assert.equal(v?.title, 'exec_command: npm test');
  });

  it('lists operations newest first: held, granted, denied, stale, committed, failed, titled after their hold; prepared only while nothing followed', () => {
    const h = patchHold('h1');
    const events: RunnerEvent[] = [
      { type: 'operation.prepared', operation: op('r1', 'apply_patch', 'apply_patch: 1 file (src/a.ts)') },
      { type: 'operation.held', operation: op('r1', 'apply_patch', 'apply_patch: 1 file (src/a.ts)'), hold: h },
      { type: 'operation.granted', approval_id: 'h1', by: 'reviewer', at: '2026-12-01T12:00:01.000Z' },
      { type: 'operation.committed', operation: op('r1', 'apply_patch', 'apply_patch: 1 file (src/a.ts)'), status: 'applied', approval_id: 'h1', operation_id: 'o1' },
      { type: 'process.started', process_id: 'p1', workspace_id: 'ws', command: ['ls'], tty: false, started_at: '2026-12-01T12:00:02.000Z' },
      { type: 'operation.denied', approval_id: 'h9', by: 'reviewer', note: 'not this file', at: '2026-12-01T12:00:03.000Z' },
      { type: 'operation.stale', approval_id: 'h8', reason: 'src/b.ts changed', at: '2026-12-01T12:00:04.000Z' },
      { type: 'operation.failed', operation: op('r2', 'exec_command', 'exec_command: make'), code: 'WORKSPACE_BUSY', message: 'another command holds the workspace' },
      { type: 'operation.prepared', operation: op('r3', 'exec_command', 'exec_command: npm test') },
    ];
    const s = buildPanelState({ pending: [], holds: [], events });
    assert.deepEqual(
      s.activity.map((a) => [a.kind, a.title, a.detail]),
      [
        ['prepared', 'exec_command: npm test', undefined],
        ['failed', 'exec_command: make', 'WORKSPACE_BUSY: another command holds the workspace'],
        ['stale', 'approval h8', 'stale: src/b.ts changed'],
        ['denied', 'approval h9', 'denied by reviewer: not this file'],
        ['committed', 'apply_patch: 1 file (src/a.ts)', 'applied'],
        ['granted', 'apply_patch: 1 file (src/a.ts)', 'granted by reviewer'],
        ['held', 'apply_patch: 1 file (src/a.ts)', 'waiting for approval (confirm)'],
      ],
    );
    assert.equal(new Set(s.activity.map((a) => a.key)).size, s.activity.length, 'keys are unique');
  });

  it('offers Open Preview on a committed check_only apply_patch whose preview is still kept, and on nothing else', () => {
    const events: RunnerEvent[] = [
      { type: 'operation.committed', operation: op('kept', 'apply_patch', 'apply_patch: 1 file'), status: 'checked' },
      { type: 'operation.committed', operation: op('gone', 'apply_patch', 'apply_patch: 1 file'), status: 'checked' },
      { type: 'operation.committed', operation: op('applied', 'apply_patch', 'apply_patch: 1 file'), status: 'applied' },
      { type: 'operation.committed', operation: op('exec', 'exec_command', 'exec_command: ls'), status: 'checked', process_id: 'p1' },
    ];
    const s = buildPanelState({ pending: [], holds: [], events, previewAvailable: (id) => id !== 'gone' });
    const byRun = new Map(s.activity.map((a) => [a.runId, a.previewRunId]));
    assert.equal(byRun.get('kept'), 'kept');
    assert.equal(byRun.get('gone'), undefined);
    assert.equal(byRun.get('applied'), undefined);
    assert.equal(byRun.get('exec'), undefined);
  });

  it('follows processes from start to exit: state, exit code, signal, duration; running ones first', () => {
    const events: RunnerEvent[] = [
      { type: 'process.started', process_id: 'p1', workspace_id: 'ws', command: ['npm', 'test'], tty: false, started_at: '2026-12-01T12:00:00.000Z' },
      { type: 'process.started', process_id: 'p2', workspace_id: 'ws', command: ['sleep', '100'], tty: true, started_at: '2026-12-01T12:00:01.000Z' },
      { type: 'process.exited', process_id: 'p1', workspace_id: 'ws', termination: 'exited', exit_code: 3, ended_at: '2026-12-01T12:00:02.500Z' },
      { type: 'process.started', process_id: 'p3', workspace_id: 'ws', command: ['yes'], tty: false, started_at: '2026-12-01T12:00:03.000Z' },
      { type: 'process.exited', process_id: 'p3', workspace_id: 'ws', termination: 'terminated', signal: 'SIGTERM', ended_at: '2026-12-01T12:00:04.000Z' },
      // The start of p0 has rolled off the recent history.
      { type: 'process.exited', process_id: 'p0', workspace_id: 'ws', termination: 'exited', exit_code: 0, ended_at: '2026-12-01T11:59:00.000Z' },
    ];
    const s = buildPanelState({ pending: [], holds: [], events });
    assert.deepEqual(s.processes.map((p) => [p.processId, p.state]), [['p2', 'running'], ['p3', 'exited'], ['p1', 'exited'], ['p0', 'exited']]);
    const [p2, p3, p1, p0] = s.processes;
    assert.deepEqual(p2, { processId: 'p2', workspaceId: 'ws', command: ['sleep', '100'], tty: true, state: 'running', startedAt: '2026-12-01T12:00:01.000Z' });
    assert.equal(p1?.exitCode, 3);
    assert.equal(p1?.durationMs, 2500);
    assert.deepEqual(p1?.command, ['npm', 'test']);
    assert.equal(p3?.signal, 'SIGTERM');
    assert.equal(p3?.termination, 'terminated');
    assert.equal(p3?.exitCode, undefined);
    assert.equal(p3?.durationMs, 1000);
    assert.equal(p0?.command, undefined);
    assert.equal(p0?.durationMs, undefined, 'no duration without a known start');
    assert.deepEqual(s.activity, [], 'process events are not activity lines');
  });

  it('bounds what it sends: the latest activity lines and stale holds only', () => {
    const events: RunnerEvent[] = [];
    for (let i = 0; i < MAX_ACTIVITY_SHOWN + 50; i++) events.push({ type: 'operation.prepared', operation: op(`r${i}`, 'apply_patch', `t${i}`) });
    const stale = Array.from({ length: MAX_STALE_SHOWN + 5 }, (_, i) => patchHold(`s${i}`, { state: 'stale' }));
    const s = buildPanelState({ pending: [], holds: stale, events });
    assert.equal(s.activity.length, MAX_ACTIVITY_SHOWN);
    assert.equal(s.activity[0]?.runId, `r${MAX_ACTIVITY_SHOWN + 49}`, 'the newest first');
    assert.deepEqual(s.holds.map((h) => h.approvalId), stale.slice(0, MAX_STALE_SHOWN).map((h) => h.approval_id));
  });
});
