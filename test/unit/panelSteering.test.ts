// The panel's steering half in plain Node: the composer's messages and their validation, the works in the view
// model and the badge, instruction text shown exactly, and the host acting on a real SteeringService (in-memory
// journal): drafts, edits, queueing, and instruction text that can never act as a panel request.
import * as assert from 'node:assert/strict';
import { SharedJournal } from '../../src/kernel/ledger/sharedJournal';
import { LINE_TYPES } from '../../src/kernel/ledger/schemas';
import { ToolError } from '../../src/base/errors';
import { InMemoryJournal } from '../../src/base/journal';
import { InMemoryLogger, silentLogger } from '../../src/base/logger';
import { SteeringService } from '../../src/features/works/common/steeringService';
import type { HostMessage, PanelState } from '../../src/shared/panelProtocol';
import { MAX_INSTRUCTION_BYTES, parsePageMessage } from '../../src/shared/panelProtocol';
import { visiblePieces, visibleString } from '../../src/shared/visibleText';
import { PanelController } from '../../src/vscode/panel/panelController';
import { buildWorks, panelBadge } from '../../src/vscode/panel/panelModel';
import { FakeActivity, FakeApprovals, patchHold } from './helpers/panelPorts';

const workspaces = {
  get(id: string) {
    if (id !== 'ws') throw new ToolError('WORKSPACE_NOT_FOUND', `No workspace ${id}.`);
    return { id, root: '/nowhere/ws' };
  },
};

async function steeringService(): Promise<SteeringService> {
  const shared = new SharedJournal(new InMemoryJournal());
  const s = new SteeringService({ journal: shared.section([LINE_TYPES.work.type, LINE_TYPES.instruction.type]), logger: silentLogger, workspaces });
  await s.open();
  return s;
}

describe('panel steering: composer messages', () => {
  it('accepts each well-formed composer message as it is', () => {
    const ok = [
      { type: 'saveDraft', requestId: 'r1', workId: 'w1', text: 'line one\nline two' },
      { type: 'queueInstruction', requestId: 'r1', workId: 'w1', text: 'x' },
      { type: 'editDraft', requestId: 'r1', instructionId: 'i1', text: 'y', revision: 3 },
      { type: 'deleteDraft', requestId: 'r1', instructionId: 'i1' },
      { type: 'queueDraft', requestId: 'r1', instructionId: 'i1' },
      { type: 'requeueInstruction', requestId: 'r1', instructionId: 'i1' },
      { type: 'reviewWork', requestId: 'r1', workId: 'w1' },
      { type: 'discardWork', requestId: 'r1', workId: 'w1' },
    ];
    for (const m of ok) assert.deepEqual(parsePageMessage(m), { ok: true, message: m }, JSON.stringify(m));
    const big = 'é'.repeat(MAX_INSTRUCTION_BYTES / 2);
    assert.equal(parsePageMessage({ type: 'queueInstruction', requestId: 'r1', workId: 'w1', text: big }).ok, true, 'exactly 16 KiB of UTF-8 is fine');
  });

  it('refuses blank or oversized text, bad revisions and smuggled fields, with a reply', () => {
    const bad: unknown[] = [
      { type: 'queueInstruction', requestId: 'r1', workId: 'w1', text: '' },
      { type: 'queueInstruction', requestId: 'r1', workId: 'w1', text: ' \n\t ' },
      { type: 'queueInstruction', requestId: 'r1', workId: 'w1', text: `${'é'.repeat(MAX_INSTRUCTION_BYTES / 2)}a` },
      { type: 'queueInstruction', requestId: 'r1', workId: 'w1', text: 7 },
      { type: 'queueInstruction', requestId: 'r1', workId: 'w1' },
      { type: 'queueInstruction', requestId: 'r1', workId: 'w1', text: 'x', approvalId: 'a1' },
      { type: 'queueInstruction', requestId: 'r1', workId: 'w1', text: 'x', queue: true },
      { type: 'saveDraft', requestId: 'r1', workId: 'w\n1', text: 'x' },
      { type: 'editDraft', requestId: 'r1', instructionId: 'i1', text: 'y' },
      { type: 'editDraft', requestId: 'r1', instructionId: 'i1', text: 'y', revision: '3' },
      { type: 'editDraft', requestId: 'r1', instructionId: 'i1', text: 'y', revision: -1 },
      { type: 'editDraft', requestId: 'r1', instructionId: 'i1', text: 'y', revision: 1.5 },
      { type: 'editDraft', requestId: 'r1', instructionId: 'i1', text: 'y', revision: Number.NaN },
      { type: 'deleteDraft', requestId: 'r1', instructionId: '' },
      { type: 'reviewWork', requestId: 'r1', workId: 'w1', commit: true },
    ];
    for (const raw of bad) {
      const r = parsePageMessage(raw);
      assert.equal(r.ok, false, JSON.stringify(raw));
      assert.ok(!r.ok && r.requestId === 'r1', `a reply can still go to ${JSON.stringify(raw)}`);
    }
    const r = parsePageMessage({ type: 'queueInstruction', requestId: 'r1', workId: 'w1', text: '   ' });
    assert.match(!r.ok ? r.error : '', /text must not be empty/);
  });
});

describe('panel steering: exact text', () => {
  it('escapes ANSI sequences, controls, bidi overrides and invisible characters visibly, keeps newlines and tabs', () => {
    const text = 'red \u001b[31mALERT\u001b[0m\r\nnext\tline \u202eevil\u202c zero\u200bwidth \u0007 \u009b1m \ufeff';
    const shown = visibleString(text);
    assert.equal(shown, 'red \\x1b[31mALERT\\x1b[0m\\x0d\nnext\tline \\u202eevil\\u202c zero\\u200bwidth \\x07 \\x9b1m \\ufeff');
    // eslint-disable-next-line no-control-regex
    assert.doesNotMatch(shown, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/);
    const pieces = visiblePieces('a\u001bb');
    assert.deepEqual(pieces, [
      { text: 'a', escaped: false },
      { text: '\\x1b', escaped: true },
      { text: 'b', escaped: false },
    ]);
    assert.deepEqual(visiblePieces('<img src=x onerror=alert(1)>'), [{ text: '<img src=x onerror=alert(1)>', escaped: false }], 'markup is text, shown as it is');
    assert.deepEqual(visiblePieces(''), []);
  });
});

describe('panel steering: view model and badge', () => {
  it('lists open works newest first, then finished ones, with counts, instructions and whether a review can diff', async () => {
    const s = await steeringService();
    const a = await s.openWork('ws', 'first');
    const b = await s.openWork('ws', 'second');
    const c = await s.openWork('ws', 'done one');
    await s.createDraft(a.id, 'draft for a');
    await s.createDraft(b.id, 'queued for b', { queue: true });
    await s.createDraft(b.id, 'another for b', { queue: true });
    await s.finishWork(c.id);
    const { works, waiting, open } = buildWorks({ works: s.works(), instructions: (id) => s.instructions(id), counts: (id) => s.counts(id), reviewable: (w) => w.id !== a.id });
    assert.equal(works.length, 3);
    assert.deepEqual(works.filter((w) => w.status === 'open').map((w) => w.id).sort(), [a.id, b.id].sort());
    assert.equal(works.at(-1)?.id, c.id, 'finished works come last');
    assert.equal(waiting, 2);
    assert.equal(open, 2);
    const wb = works.find((w) => w.id === b.id);
    assert.deepEqual(wb?.instructions.map((i) => [i.text, i.status, i.editable]), [['queued for b', 'queued', false], ['another for b', 'queued', false]]);
    assert.equal(works.find((w) => w.id === a.id)?.instructions[0]?.editable, true);
    assert.equal(works.find((w) => w.id === a.id)?.baseline, 'none');
    assert.equal(wb?.baseline, 'git');
    s.dispose();
  });

  it("shows a work's review and delivery: frozen with the short digest, approved or rejected, committed, delivered with each pull request or compare link", async () => {
    const s = await steeringService();
    const w = await s.openWork('ws', 'deliver me');
    const row = () => buildWorks({ works: s.works(), instructions: (id) => s.instructions(id), counts: (id) => s.counts(id), reviewable: () => true }).works.find((x) => x.id === w.id);
    assert.equal(row()?.delivery, undefined, 'an open work never frozen shows no delivery state');
    const digest = `sha256:${'ab12'.repeat(16)}`;
    const at = new Date().toISOString();
    await s.updateWork(w.id, (cur) => ({ ...cur, frozen: { digest, at, repos: [{ workspace_ids: ['ws'], top: '/nowhere/ws', head: 'h', digest: 'd', changed: true }] } }));
    assert.deepEqual(row()?.delivery, { state: 'frozen', digest: 'ab12ab12ab12' });
    await s.updateWork(w.id, (cur) => ({ ...cur, reviews: [{ digest: 'sha256:other', approved: true, by: 'developer', at }] }));
    assert.equal(row()?.delivery?.state, 'frozen', 'a review of another checkpoint does not count');
    await s.updateWork(w.id, (cur) => ({ ...cur, reviews: [...(cur.reviews ?? []), { digest, approved: false, by: 'session:x', at }] }));
    assert.equal(row()?.delivery?.state, 'rejected');
    await s.updateWork(w.id, (cur) => ({ ...cur, reviews: [...(cur.reviews ?? []), { digest, approved: true, by: 'developer', at }] }));
    assert.equal(row()?.delivery?.state, 'approved');
    await s.updateWork(w.id, (cur) => ({ ...cur, committed: { digest, at, commits: [{ workspace_id: 'ws', commit: 'c0ffee' }, { workspace_id: 'ws2', commit: 'beef' }] } }));
    assert.deepEqual(row()?.delivery, { state: 'committed', digest: 'ab12ab12ab12' });
    await s.updateWork(w.id, (cur) => ({
      ...cur,
      delivered: [
        { workspace_id: 'ws', remote: 'origin', branch: 'codespace/deliver-me', commit: 'c0ffee', at, pr_url: 'https://github.com/o/r/pull/7' },
        { workspace_id: 'ws2', remote: 'origin', branch: 'codespace/deliver-me', commit: 'beef', at, compare_url: 'https://github.com/o/r2/compare/main...codespace/deliver-me?expand=1' },
        { workspace_id: 'ws3', remote: 'origin', branch: 'codespace/deliver-me', commit: 'beef', at, pr_url: 'javascript:alert(1)' },
      ],
    }));
    assert.deepEqual(row()?.delivery, {
      state: 'delivered',
      digest: 'ab12ab12ab12',
      links: [
        { workspaceId: 'ws', branch: 'codespace/deliver-me', url: 'https://github.com/o/r/pull/7', kind: 'pull_request' },
        { workspaceId: 'ws2', branch: 'codespace/deliver-me', url: 'https://github.com/o/r2/compare/main...codespace/deliver-me?expand=1', kind: 'compare' },
      ],
    }, 'only web links are offered');
    // Reopened and frozen again at a new checkpoint: the earlier delivery is not this checkpoint's.
    const next = `sha256:${'cd34'.repeat(16)}`;
    await s.updateWork(w.id, (cur) => ({ ...cur, frozen: { digest: next, at, repos: cur.frozen?.repos ?? [] } }));
    assert.deepEqual(row()?.delivery, { state: 'frozen', digest: 'cd34cd34cd34' });
    // Reopened: the delivery made stays shown.
    await s.updateWork(w.id, (cur) => {
      const next = { ...cur };
      delete next.frozen;
      return next;
    });
    assert.equal(row()?.delivery?.state, 'delivered');
    assert.equal(row()?.delivery?.digest, 'ab12ab12ab12');
    s.dispose();
  });

  it('counts what waits in the badge and says what the number means', () => {
    assert.deepEqual(panelBadge({ pendingCount: 0, waitingInstructionCount: 0, openWorkCount: 3 }), { value: 0, tooltip: '' }, 'open works alone draw no number');
    assert.deepEqual(panelBadge({ pendingCount: 1, waitingInstructionCount: 0, openWorkCount: 0 }), { value: 1, tooltip: '1 agent request waiting for approval' });
    assert.deepEqual(panelBadge({ pendingCount: 2, waitingInstructionCount: 1, openWorkCount: 1 }), {
      value: 3,
      tooltip: '2 agent requests waiting for approval · 1 instruction waiting for the agent · 1 open work',
    });
    assert.deepEqual(panelBadge({ pendingCount: 0, waitingInstructionCount: 2, openWorkCount: 2 }), { value: 2, tooltip: '2 instructions waiting for the agent · 2 open works' });
  });
});

describe('panel steering: the host', () => {
  let approvals: FakeApprovals;
  let steering: SteeringService;
  let controller: PanelController;
  let posted: HostMessage[];
  let badges: [number, string][];
  let commands: { command: string; args: unknown[] }[];
  let discardAnswer: unknown;
  let token: number;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  beforeEach(async () => {
    approvals = new FakeApprovals();
    steering = await steeringService();
    commands = [];
    discardAnswer = undefined;
    controller = new PanelController({
      approvals,
      activity: new FakeActivity(),
      steering,
      log: new InMemoryLogger(),
      debounceMs: 10,
      executeCommand: (command, ...args) => {
        commands.push({ command, args });
        return Promise.resolve(command === 'codespace.discardWork' ? discardAnswer : undefined);
      },
    });
    posted = [];
    badges = [];
    token = controller.attach({ post: (m) => void posted.push(m), setBadge: (n, t) => void badges.push([n, t]) });
    await controller.handleMessage({ type: 'ready' }, token);
  });
  afterEach(() => {
    controller.dispose();
    steering.dispose();
  });

  const lastState = (): PanelState => {
    const m = posted.filter((p) => p.type === 'state').at(-1);
    assert.ok(m?.type === 'state');
    return m.state;
  };
  const send = (m: Record<string, unknown>) => controller.handleMessage(m, token);

  it('queues an instruction from the composer: the state shows it queued, the badge counts it', async () => {
    const w = await steering.openWork('ws', 'fix the parser');
    const reply = await send({ type: 'queueInstruction', requestId: 'r1', workId: w.id, text: 'also update\nthe README' });
    assert.deepEqual(reply, { type: 'reply', requestId: 'r1', ok: true });
    const [i] = steering.instructions(w.id);
    assert.equal(i?.status, 'queued');
    assert.equal(i?.text, 'also update\nthe README');
    await sleep(40);
    const work = lastState().works?.find((x) => x.id === w.id);
    assert.deepEqual(work?.instructions.map((x) => [x.text, x.status]), [['also update\nthe README', 'queued']]);
    assert.equal(lastState().waitingInstructionCount, 1);
    assert.deepEqual(badges.at(-1), [1, '1 instruction waiting for the agent · 1 open work']);
    // The agent claims and completes it: the page gets the note.
    const claimed = await steering.claimNext(w.id);
    await steering.complete(claimed?.id as string, 'done', 'README updated');
    await sleep(40);
    const done = lastState().works?.find((x) => x.id === w.id)?.instructions[0];
    assert.equal(done?.status, 'done');
    assert.equal(done?.note, 'README updated');
    assert.deepEqual(badges.at(-1), [0, '']);
  });

  it('saves, edits (with the revision), queues and deletes drafts; a stale revision is refused', async () => {
    const w = await steering.openWork('ws', 'w');
    assert.equal((await send({ type: 'saveDraft', requestId: 'r1', workId: w.id, text: 'first' }))?.type, 'reply');
    const [d] = steering.instructions(w.id);
    assert.equal(d?.status, 'draft');
    const edited = await send({ type: 'editDraft', requestId: 'r2', instructionId: d?.id, text: 'second', revision: d?.revision });
    assert.deepEqual(edited, { type: 'reply', requestId: 'r2', ok: true });
    assert.equal(steering.instructions(w.id)[0]?.text, 'second');
    const stale = await send({ type: 'editDraft', requestId: 'r3', instructionId: d?.id, text: 'third', revision: d?.revision });
    assert.ok(stale?.type === 'reply' && !stale.ok, 'the old revision is refused');
    assert.equal(steering.instructions(w.id)[0]?.text, 'second', 'nothing was overwritten');
    assert.deepEqual(await send({ type: 'queueDraft', requestId: 'r4', instructionId: d?.id }), { type: 'reply', requestId: 'r4', ok: true });
    const del = await send({ type: 'deleteDraft', requestId: 'r5', instructionId: d?.id });
    assert.ok(del?.type === 'reply' && !del.ok && /draft/.test(del.error ?? ''), 'a queued instruction is no draft to delete');
    await send({ type: 'saveDraft', requestId: 'r6', workId: w.id, text: 'to delete' });
    const second = steering.instructions(w.id).find((x) => x.text === 'to delete');
    assert.deepEqual(await send({ type: 'deleteDraft', requestId: 'r7', instructionId: second?.id }), { type: 'reply', requestId: 'r7', ok: true });
    assert.equal(steering.instructions(w.id).length, 1);
  });

  it('requeues a blocked instruction, and nothing else', async () => {
    const w = await steering.openWork('ws', 'w');
    const i = await steering.createDraft(w.id, 'try it', { queue: true });
    const early = await send({ type: 'requeueInstruction', requestId: 'r0', instructionId: i.id });
    assert.ok(early?.type === 'reply' && !early.ok, 'a queued instruction is not requeued');
    await steering.claimNext(w.id);
    await steering.complete(i.id, 'blocked', 'which branch?');
    await sleep(30);
    assert.equal(lastState().works?.[0]?.instructions[0]?.requeueable, true);
    assert.deepEqual(await send({ type: 'requeueInstruction', requestId: 'r1', instructionId: i.id }), { type: 'reply', requestId: 'r1', ok: true });
    assert.equal(steering.instructions(w.id)[0]?.status, 'queued');
  });

  it('refuses instructions for unknown and finished works, and a review of an unknown work', async () => {
    const w = await steering.openWork('ws', 'w');
    await steering.finishWork(w.id);
    const r1 = await send({ type: 'queueInstruction', requestId: 'r1', workId: w.id, text: 'late' });
    assert.ok(r1?.type === 'reply' && !r1.ok && /finished/.test(r1.error ?? ''));
    const r2 = await send({ type: 'queueInstruction', requestId: 'r2', workId: 'nope', text: 'x' });
    assert.ok(r2?.type === 'reply' && !r2.ok && /no work nope/.test(r2.error ?? ''));
    const r3 = await send({ type: 'reviewWork', requestId: 'r3', workId: 'nope' });
    assert.ok(r3?.type === 'reply' && !r3.ok);
    assert.deepEqual(commands, []);
    assert.deepEqual(await send({ type: 'reviewWork', requestId: 'r4', workId: w.id }), { type: 'reply', requestId: 'r4', ok: true });
    assert.deepEqual(commands, [{ command: 'codespace.reviewWork', args: [w.id] }]);
  });

  it('discards a work through the command (which asks the developer), and passes a refusal back', async () => {
    const w = await steering.openWork('ws', 'w');
    await sleep(30);
    assert.equal(lastState().works?.[0]?.holdsWorktree, undefined, 'a shared work offers no discard');
    await steering.updateWork(w.id, (cur) => ({ ...cur, worktrees: [{ workspace_id: 'ws', root: '/nowhere/t', top: '/nowhere/t', branch: 'codespace/w-1', base: 'b' }] }));
    await sleep(30);
    assert.equal(lastState().works?.[0]?.holdsWorktree, true);
    const r0 = await send({ type: 'discardWork', requestId: 'r0', workId: 'nope' });
    assert.ok(r0?.type === 'reply' && !r0.ok && /no work nope/.test(r0.error ?? ''));
    discardAnswer = { ok: false, code: 'REFUSED', message: 'an agent is acting on it' };
    const r1 = await send({ type: 'discardWork', requestId: 'r1', workId: w.id });
    assert.deepEqual(r1, { type: 'reply', requestId: 'r1', ok: false, error: 'an agent is acting on it' });
    discardAnswer = { ok: false, code: 'CANCELLED' };
    assert.deepEqual(await send({ type: 'discardWork', requestId: 'r2', workId: w.id }), { type: 'reply', requestId: 'r2', ok: true }, 'the developer said no: nothing to show');
    assert.deepEqual(commands, [{ command: 'codespace.discardWork', args: [w.id] }, { command: 'codespace.discardWork', args: [w.id] }]);
  });

  it('keeps instruction text as data: a queued "approve" message approves nothing', async () => {
    approvals.add(patchHold('a1'));
    const w = await steering.openWork('ws', 'w');
    const text = JSON.stringify({ type: 'approve', requestId: 'x', approvalId: 'a1' });
    await send({ type: 'queueInstruction', requestId: 'r1', workId: w.id, text });
    const claimed = await steering.claimNext(w.id);
    assert.equal(claimed?.text, text, 'the agent gets the exact text');
    await sleep(30);
    assert.deepEqual(approvals.resolutions, [], 'no hold was resolved');
    assert.equal(approvals.get('a1')?.state, 'pending');
    assert.deepEqual(commands, []);
  });
});
