import * as assert from 'node:assert/strict';
import { ToolError } from '../../src/base/errors';
import { InMemoryLogger } from '../../src/base/logger';
import type { HostMessage } from '../../src/shared/panelProtocol';
import { MAX_NOTE_CHARS, parsePageMessage } from '../../src/shared/panelProtocol';
import { PanelController } from '../../src/vscode/panel/panelController';
import { panelHtml } from '../../src/vscode/panel/panelHtml';
import { FakeActivity, FakeApprovals, commandHold, patchHold } from './helpers/panelPorts';

describe('panel protocol: message validation', () => {
  it('accepts each well-formed message and rebuilds it from its checked fields', () => {
    const ok = [
      { type: 'ready' },
      { type: 'approve', requestId: 'r1', approvalId: 'a1' },
      { type: 'deny', requestId: 'r1', approvalId: 'a1', note: '' },
      { type: 'openReview', requestId: 'r1', approvalId: 'a1' },
      { type: 'openTerminal', requestId: 'r1', processId: 'p1' },
      { type: 'openPreview', requestId: 'r1', runId: 'run-1' },
    ];
    for (const m of ok) assert.deepEqual(parsePageMessage(m), { ok: true, message: m }, JSON.stringify(m));
  });

  it('refuses what is not a plain object', () => {
    const raws: unknown[] = [undefined, null, 'approve', 42, [], [{ type: 'ready' }], Object.create(null), new Date()];
    raws.forEach((raw, i) => assert.equal(parsePageMessage(raw).ok, false, `case ${i}`));
  });

  it('refuses unknown kinds, and says so to a well-formed request id', () => {
    for (const type of ['grant', 'Approve', '__proto__', 'constructor', 'toString', '', 7]) {
      const r = parsePageMessage({ type, requestId: 'r1', approvalId: 'a1' });
      assert.equal(r.ok, false, String(type));
      assert.ok(!r.ok && r.requestId === 'r1');
      assert.match(!r.ok ? r.error : '', /unknown message type/);
    }
  });

  it('refuses wrong types, missing fields, extra fields and out-of-bounds strings', () => {
    const bad: unknown[] = [
      { type: 'approve', requestId: 'r1' },
      { type: 'approve', requestId: 'r1', approvalId: 12 },
      { type: 'approve', requestId: 'r1', approvalId: ['a1'] },
      { type: 'approve', requestId: 'r1', approvalId: null },
      { type: 'approve', requestId: 'r1', approvalId: { toString: 'a1' } },
      { type: 'approve', requestId: 'r1', approvalId: '' },
      { type: 'approve', requestId: 'r1', approvalId: 'x'.repeat(201) },
      { type: 'approve', requestId: 'r1', approvalId: 'a\n1' },
      { type: 'approve', requestId: 'r1', approvalId: 'a1', by: 'agent' },
      { type: 'deny', requestId: 'r1', approvalId: 'a1' },
      { type: 'deny', requestId: 'r1', approvalId: 'a1', note: 5 },
      { type: 'deny', requestId: 'r1', approvalId: 'a1', note: 'n'.repeat(MAX_NOTE_CHARS + 1) },
      { type: 'openTerminal', requestId: 'r1', processId: 3 },
      { type: 'openPreview', requestId: 'r1', approvalId: 'a1' },
      { type: 'ready', requestId: 'r1' },
    ];
    for (const raw of bad) {
      const r = parsePageMessage(raw);
      assert.equal(r.ok, false, JSON.stringify(raw));
      assert.ok(!r.ok && r.requestId === 'r1', `a reply can still go to ${JSON.stringify(raw)}`);
    }
    for (const requestId of [undefined, 1, '', 'r 1', 'r'.repeat(65), '<script>']) {
      const r = parsePageMessage({ type: 'approve', requestId, approvalId: 'a1' });
      assert.equal(r.ok, false);
      assert.ok(!r.ok && r.requestId === undefined, `no reply to request id ${JSON.stringify(requestId)}`);
    }
  });
});

describe('panel protocol: the host', () => {
  let approvals: FakeApprovals;
  let activity: FakeActivity;
  let log: InMemoryLogger;
  let commands: { command: string; args: unknown[] }[];
  /** What a command answers (undefined when not set). */
  const commandResults = new Map<string, unknown>();
  let failingCommands: Set<string>;
  let controller: PanelController;
  let posted: HostMessage[];
  let badges: number[];
  let token: number;

  beforeEach(() => {
    approvals = new FakeApprovals();
    activity = new FakeActivity();
    log = new InMemoryLogger();
    commands = [];
    failingCommands = new Set();
    controller = new PanelController({
      approvals,
      activity,
      log,
      debounceMs: 20,
      executeCommand: (command, ...args) => {
        commands.push({ command, args });
        return failingCommands.has(command) ? Promise.reject(new Error(`command '${command}' not found`)) : Promise.resolve(commandResults.get(command));
      },
    });
    posted = [];
    badges = [];
    token = controller.attach({ post: (m) => void posted.push(m), setBadge: (n) => void badges.push(n) });
  });
  afterEach(() => controller.dispose());

  const states = () => posted.filter((m) => m.type === 'state');
  const replies = () => posted.filter((m) => m.type === 'reply');
  const ready = () => controller.handleMessage({ type: 'ready' }, token);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('queues state until the page says ready, then sends it at once; each ready gets it again', async () => {
    approvals.add(patchHold('h1'));
    await sleep(40);
    assert.deepEqual(states(), [], 'nothing before ready');
    assert.equal(badges.at(-1), 1, 'the badge counts pending holds even before the page is up');
    await ready();
    assert.equal(states().length, 1);
    const first = states()[0];
    assert.ok(first?.type === 'state');
    assert.deepEqual(first.state.holds.map((h) => h.approvalId), ['h1']);
    assert.equal(first.state.pendingCount, 1);
    await ready();
    assert.equal(states().length, 2, 'a reloaded page gets the state again');
  });

  it('sends one state for a burst of changes, and none to a page torn down while hidden', async () => {
    await ready();
    posted.length = 0;
    approvals.add(patchHold('h1'));
    approvals.add(patchHold('h2'));
    activity.emit({ type: 'process.started', process_id: 'p1', workspace_id: 'ws', command: ['ls'], tty: false, started_at: new Date().toISOString() });
    await sleep(60);
    assert.equal(states().length, 1, 'debounced');
    controller.unready(token);
    approvals.add(patchHold('h3'));
    await sleep(60);
    assert.equal(states().length, 1, 'queued while hidden');
    assert.equal(badges.at(-1), 3);
    await ready();
    const last = states().at(-1);
    assert.ok(last?.type === 'state');
    assert.equal(last.state.pendingCount, 3);
  });

  it('grants a pending hold for the reviewer and replies ok', async () => {
    approvals.add(patchHold('h1'));
    await ready();
    const reply = await controller.handleMessage({ type: 'approve', requestId: 'r1', approvalId: 'h1' }, token);
    assert.deepEqual(reply, { type: 'reply', requestId: 'r1', ok: true });
    assert.deepEqual(replies(), [reply]);
    assert.deepEqual(approvals.resolutions, [{ approvalId: 'h1', decision: 'grant', by: 'reviewer' }]);
    await sleep(40);
    const last = states().at(-1);
    assert.ok(last?.type === 'state');
    assert.equal(last.state.pendingCount, 0, 'the new state follows the change');
  });

  it('denies with the note, trimmed', async () => {
    approvals.add(commandHold('c1'));
    const reply = await controller.handleMessage({ type: 'deny', requestId: 'r1', approvalId: 'c1', note: '  use npm ci  ' }, token);
    assert.equal(reply?.type === 'reply' && reply.ok, true);
    assert.deepEqual(approvals.resolutions, [{ approvalId: 'c1', decision: 'deny', by: 'reviewer', note: 'use npm ci' }]);
  });

  it('Request Changes runs the command with the hold and the note; no comments yet is a reply that says so', async () => {
    approvals.add(patchHold('rc1'));
    commandResults.set('codespace.requestChanges', { ok: false, code: 'NO_COMMENTS' });
    const none = await controller.handleMessage({ type: 'requestChanges', requestId: 'r1', approvalId: 'rc1', note: 'see comments' }, token);
    assert.ok(none?.type === 'reply' && !none.ok && /no line comments yet/.test(none.error ?? ''), JSON.stringify(none));
    commandResults.set('codespace.requestChanges', { ok: true, comments: 2 });
    const sent = await controller.handleMessage({ type: 'requestChanges', requestId: 'r2', approvalId: 'rc1', note: 'see comments' }, token);
    assert.deepEqual(sent, { type: 'reply', requestId: 'r2', ok: true });
    assert.deepEqual(commands.filter((c) => c.command === 'codespace.requestChanges').map((c) => c.args), [['rc1', 'see comments'], ['rc1', 'see comments']]);
    commandResults.clear();
    const forged = await controller.handleMessage({ type: 'requestChanges', requestId: 'r3', approvalId: 'nope', note: '' }, token);
    assert.ok(forged?.type === 'reply' && !forged.ok);
    assert.equal(commands.filter((c) => c.command === 'codespace.requestChanges').length, 2, 'a forged id runs nothing');
  });

  it('does nothing for a forged, stale or already decided approval id, and replies why', async () => {
    approvals.add(patchHold('stale1', { state: 'stale', stale_reason: 'src/a.ts changed' }));
    approvals.add(patchHold('done1', { state: 'granted' }));
    approvals.add(patchHold('real'));
    const cases: [string, 'approve' | 'deny', RegExp][] = [
      ['forged-id', 'approve', /no approval forged-id/],
      ['forged-id', 'deny', /no approval forged-id/],
      ['stale1', 'approve', /stale: src\/a.ts changed/],
      ['stale1', 'deny', /stale/],
      ['done1', 'approve', /granted, not pending/],
      ['REAL', 'approve', /no approval REAL/],
    ];
    for (const [id, type, why] of cases) {
      const msg = type === 'deny' ? { type, requestId: 'r1', approvalId: id, note: '' } : { type, requestId: 'r1', approvalId: id };
      const reply = await controller.handleMessage(msg, token);
      assert.ok(reply?.type === 'reply' && !reply.ok, `${type} ${id} is refused`);
      assert.match(reply.error ?? '', why);
    }
    assert.deepEqual(approvals.resolutions, [], 'nothing was resolved');
    assert.equal(approvals.pending().length, 1);
    assert.ok(log.lines.some((l) => l.startsWith('[debug]') && l.includes('no approval forged-id')), 'refusals are logged at debug');
  });

  it('does nothing for malformed messages: replies ok:false when it can, stays silent when it cannot', async () => {
    approvals.add(patchHold('h1'));
    const withId = [
      { type: 'approve', requestId: 'r1', approvalId: 7 },
      { type: 'approve', requestId: 'r2', approvalId: 'h1', by: 'agent' },
      { type: 'grant', requestId: 'r3', approvalId: 'h1' },
      { type: 'deny', requestId: 'r4', approvalId: 'h1', note: null },
    ];
    for (const m of withId) {
      const reply = await controller.handleMessage(m, token);
      assert.ok(reply?.type === 'reply' && !reply.ok && reply.requestId === m.requestId && typeof reply.error === 'string', JSON.stringify(m));
    }
    for (const m of [null, 'approve', { type: 'approve', approvalId: 'h1' }, { type: 'approve', requestId: 5, approvalId: 'h1' }]) {
      assert.equal(await controller.handleMessage(m, token), undefined);
    }
    assert.equal(replies().length, withId.length);
    assert.deepEqual(approvals.resolutions, []);
    assert.deepEqual(commands, []);
  });

  it('ignores messages from a disposed webview: no action, no reply', async () => {
    approvals.add(patchHold('h1'));
    controller.detach(token);
    assert.equal(await controller.handleMessage({ type: 'approve', requestId: 'r1', approvalId: 'h1' }, token), undefined);
    const next = controller.attach({ post: (m) => void posted.push(m), setBadge: () => undefined });
    assert.equal(await controller.handleMessage({ type: 'approve', requestId: 'r2', approvalId: 'h1' }, token), undefined, 'the old view is still gone');
    assert.deepEqual(approvals.resolutions, []);
    assert.deepEqual(replies(), []);
    assert.ok(log.lines.some((l) => l.startsWith('[debug]') && l.includes('disposed view')));
    const reply = await controller.handleMessage({ type: 'approve', requestId: 'r3', approvalId: 'h1' }, next);
    assert.equal(reply?.type === 'reply' && reply.ok, true, 'the new view is heard');
  });

  it('replies ok:false with the reason when the grant itself fails', async () => {
    approvals.add(patchHold('h1'));
    approvals.resolve = () => Promise.reject(new ToolError('VERSION_CONFLICT', 'src/a.ts changed since the hold was made'));
    const reply = await controller.handleMessage({ type: 'approve', requestId: 'r1', approvalId: 'h1' }, token);
    assert.deepEqual(reply, { type: 'reply', requestId: 'r1', ok: false, error: 'VERSION_CONFLICT: src/a.ts changed since the hold was made' });
  });

  it('opens the review of a pending or stale patch hold, and of nothing else', async () => {
    approvals.add(commandHold('c1'));
    approvals.add(patchHold('s1', { state: 'stale' }));
    approvals.add(patchHold('d1', { state: 'denied' }));
    approvals.add(patchHold('h1'));
    for (const id of ['h1', 's1']) {
      const r = await controller.handleMessage({ type: 'openReview', requestId: 'r1', approvalId: id }, token);
      assert.equal(r?.type === 'reply' && r.ok, true, id);
    }
    for (const id of ['c1', 'd1', 'nope']) {
      const r = await controller.handleMessage({ type: 'openReview', requestId: 'r1', approvalId: id }, token);
      assert.equal(r?.type === 'reply' && r.ok, false, id);
    }
    assert.deepEqual(commands, [
      { command: 'codespace.openReview', args: ['h1'] },
      { command: 'codespace.openReview', args: ['s1'] },
    ]);
  });

  it('shows the terminal of a known process only, and reports a failing command in the reply', async () => {
    activity.emit({ type: 'process.started', process_id: 'p1', workspace_id: 'ws', command: ['ls'], tty: false, started_at: new Date().toISOString() });
    const unknown = await controller.handleMessage({ type: 'openTerminal', requestId: 'r1', processId: 'p2' }, token);
    assert.ok(unknown?.type === 'reply' && !unknown.ok);
    assert.match(unknown.error ?? '', /no agent process p2/);
    assert.deepEqual(commands, []);
    const ok = await controller.handleMessage({ type: 'openTerminal', requestId: 'r2', processId: 'p1' }, token);
    assert.equal(ok?.type === 'reply' && ok.ok, true);
    assert.deepEqual(commands, [{ command: 'codespace.showProcessTerminal', args: ['p1'] }]);
    failingCommands.add('codespace.showProcessTerminal');
    const failed = await controller.handleMessage({ type: 'openTerminal', requestId: 'r3', processId: 'p1' }, token);
    assert.deepEqual(failed, { type: 'reply', requestId: 'r3', ok: false, error: "command 'codespace.showProcessTerminal' not found" });
  });

  it('opens a kept check_only preview by run id, and refuses other run ids', async () => {
    const operation = { run_id: 'run-1', tool: 'apply_patch' as const, workspace_id: 'ws', title: 'apply_patch: 1 file', at: new Date().toISOString(), reviewable: true as const };
    activity.emit({ type: 'operation.committed', operation, status: 'checked' });
    activity.emit({ type: 'operation.committed', operation: { ...operation, run_id: 'run-2' }, status: 'applied' });
    activity.previews.add('run-1');
    for (const runId of ['run-2', 'run-3']) {
      const r = await controller.handleMessage({ type: 'openPreview', requestId: 'r1', runId }, token);
      assert.equal(r?.type === 'reply' && r.ok, false, runId);
    }
    const r = await controller.handleMessage({ type: 'openPreview', requestId: 'r1', runId: 'run-1' }, token);
    assert.equal(r?.type === 'reply' && r.ok, true);
    assert.deepEqual(commands, [{ command: 'codespace.openPreview', args: ['run-1'] }]);
  });
});

describe('panel page HTML', () => {
  it('has a strict CSP with the nonce, and loads only the given script and stylesheet', () => {
    const html = panelHtml({ cspSource: 'https://x.vscode-cdn.net', scriptUri: 'https://x.vscode-cdn.net/dist/webview/panel.js', styleUri: 'https://x.vscode-cdn.net/media/panel.css', nonce: 'abc+/=' });
    assert.ok(html.includes(`content="default-src 'none'; style-src https://x.vscode-cdn.net; script-src 'nonce-abc+/='; font-src https://x.vscode-cdn.net"`));
    assert.deepEqual([...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]), ['<script nonce="abc+/=" src="https://x.vscode-cdn.net/dist/webview/panel.js">']);
    assert.ok(!/style=/.test(html), 'no inline style');
  });
});
