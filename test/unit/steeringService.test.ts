/**
 * The steering service: the instruction state machine, queue order, one claim per instruction even when two
 * sessions race, durability across a restart (a torn last line tolerated), work_finish refusing while the
 * developer has something pending, and idempotent creates.
 */
import * as assert from 'node:assert/strict';
import { SharedJournal } from '../../src/kernel/ledger/sharedJournal';
import { LINE_TYPES } from '../../src/kernel/ledger/schemas';
import { InMemoryJournal } from '../../src/base/journal';
import { silentLogger } from '../../src/base/logger';
import type { SteeringChange } from '../../src/features/works/common/steering';
import { MAX_INSTRUCTIONS_PER_WORK, MAX_INSTRUCTION_BYTES } from '../../src/features/works/common/steering';
import { SteeringService } from '../../src/features/works/common/steeringService';
import type { SteeringServiceOptions } from '../../src/features/works/common/steeringService';
import { ToolError, InvalidArgumentsError } from '../../src/base/errors';

const workspaces = {
  get(id: string) {
    if (id !== 'ws') throw new ToolError('WORKSPACE_NOT_FOUND', `No workspace ${id}.`);
    return { id, root: '/nowhere/ws' };
  },
};

async function service(file = new InMemoryJournal(), extra: Partial<SteeringServiceOptions> = {}): Promise<{ s: SteeringService; file: InMemoryJournal }> {
  const shared = new SharedJournal(file);
  const s = new SteeringService({ journal: shared.section([LINE_TYPES.work.type, LINE_TYPES.instruction.type]), logger: silentLogger, workspaces, ...extra });
  await s.open();
  return { s, file };
}

async function rejectsWith(p: Promise<unknown>, code: string, reason?: string): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    const body = ToolError.is(err) ? err.toBody() : InvalidArgumentsError.is(err) ? err.toBody() : undefined;
    assert.ok(body, `expected a tool error, got ${String(err)}`);
    assert.equal(body.code, code, body.message);
    if (reason !== undefined) assert.equal(body.details?.reason, reason);
    return true;
  });
}

describe('steering service', () => {
  it('walks an instruction draft → queued → claimed → done, with the note, and counts each state', async () => {
    const { s } = await service();
    const changes: SteeringChange[] = [];
    s.onDidChange((c) => changes.push(c));
    const w = await s.openWork('ws', '  Fix the parser  ', { session: 'S1' });
    assert.equal(w.title, 'Fix the parser');
    assert.equal(w.status, 'open');
    const d = await s.createDraft(w.id, 'use the new tokenizer');
    assert.equal(d.status, 'draft');
    assert.equal(d.revision, 1);
    const e = await s.editDraft(d.id, 'use the new tokenizer, keep the API', 1);
    assert.equal(e.revision, 2);
    assert.deepEqual(s.counts(w.id), { draft: 1, queued: 0, claimed: 0, done: 0, blocked: 0 });
    const q = await s.queue(d.id);
    assert.equal(q.status, 'queued');
    assert.ok(q.queued_at);
    await rejectsWith(s.editDraft(d.id, 'changed my mind'), 'INVALID_ARGUMENTS', 'not_draft');
    await rejectsWith(s.deleteDraft(d.id), 'INVALID_ARGUMENTS', 'not_draft');
    await rejectsWith(s.complete(d.id, 'done'), 'INVALID_ARGUMENTS', 'invalid_state');
    const c = await s.claimNext(w.id, 'S1');
    assert.equal(c?.id, d.id);
    assert.equal(c?.status, 'claimed');
    assert.equal(await s.claimNext(w.id, 'S1'), undefined, 'nothing else is queued');
    const done = await s.complete(d.id, 'done', 'tokenizer swapped');
    assert.equal(done.status, 'done');
    assert.equal(done.note, 'tokenizer swapped');
    assert.deepEqual(await s.complete(d.id, 'done', 'tokenizer swapped'), done, 'the same completion again returns it');
    await rejectsWith(s.complete(d.id, 'blocked'), 'INVALID_ARGUMENTS', 'invalid_state');
    assert.deepEqual(s.counts(w.id), { draft: 0, queued: 0, claimed: 0, done: 1, blocked: 0 });
    assert.deepEqual(
      changes.map((x) => (x.kind === 'instruction' ? x.instruction.status : x.kind)),
      ['work', 'draft', 'draft', 'queued', 'claimed', 'done'],
    );
  });

  it('refuses unknown works and instructions, empty and oversized text, and a stale revision', async () => {
    const { s } = await service();
    await rejectsWith(s.openWork('nope', 't'), 'WORKSPACE_NOT_FOUND');
    await rejectsWith(s.openWork('ws', '   '), 'INVALID_ARGUMENTS');
    const w = await s.openWork('ws', 't');
    await rejectsWith(s.createDraft('work_missing', 'x'), 'WORK_NOT_FOUND');
    assert.throws(() => s.instructions('work_missing'), (e: unknown) => ToolError.is(e, 'WORK_NOT_FOUND'));
    await rejectsWith(s.editDraft('ins_missing', 'x'), 'INSTRUCTION_NOT_FOUND');
    await rejectsWith(s.queue('ins_missing'), 'INSTRUCTION_NOT_FOUND');
    await rejectsWith(s.createDraft(w.id, ' \n\t '), 'INVALID_ARGUMENTS');
    await rejectsWith(s.createDraft(w.id, 'é'.repeat(MAX_INSTRUCTION_BYTES / 2 + 1)), 'INVALID_ARGUMENTS');
    const ok = await s.createDraft(w.id, 'é'.repeat(MAX_INSTRUCTION_BYTES / 2));
    await rejectsWith(s.editDraft(ok.id, 'x', 7), 'INVALID_ARGUMENTS', 'revision_mismatch');
    await s.deleteDraft(ok.id);
    await rejectsWith(s.queue(ok.id), 'INSTRUCTION_NOT_FOUND');
    assert.deepEqual(s.instructions(w.id), []);
  });

  it('keeps control characters and escape sequences as exact text', async () => {
    const { s } = await service();
    const w = await s.openWork('ws', 't');
    const text = 'stop\u001b[2J\u001b]0;pwned\u0007\r\n\u0000 approve everything';
    await s.createDraft(w.id, text, { queue: true });
    const c = await s.claimNext(w.id);
    assert.equal(c?.text, text);
  });

  it('hands out the oldest queued first, in queue order, not creation order', async () => {
    const { s } = await service();
    const w = await s.openWork('ws', 't');
    const a = await s.createDraft(w.id, 'a');
    await s.createDraft(w.id, 'b', { queue: true });
    await s.createDraft(w.id, 'c', { queue: true });
    await s.queue(a.id);
    const order = [];
    for (let i = 0; i < 3; i++) order.push((await s.claimNext(w.id))?.text);
    assert.deepEqual(order, ['b', 'c', 'a']);
  });

  it('never hands one instruction to two sessions racing to claim', async () => {
    const { s } = await service();
    const w = await s.openWork('ws', 't');
    const n = 50;
    for (let i = 0; i < n; i++) await s.createDraft(w.id, `i${i}`, { queue: true });
    // Two sessions fire claims at once, more claims than instructions.
    const claims = await Promise.all(Array.from({ length: n * 2 + 10 }, (_, i) => s.claimNext(w.id, i % 2 === 0 ? 'S1' : 'S2')));
    const got = claims.filter((c) => c !== undefined).map((c) => c.id);
    assert.equal(got.length, n);
    assert.equal(new Set(got).size, n, 'no instruction claimed twice');
    // One instruction, two racing sessions: exactly one wins.
    const one = await s.createDraft(w.id, 'only one', { queue: true });
    const [x, y] = await Promise.all([s.claimNext(w.id, 'S1'), s.claimNext(w.id, 'S2')]);
    assert.deepEqual([x?.id, y?.id].filter((v) => v !== undefined), [one.id]);
  });

  it('work_finish answers pending_user_input while instructions are queued or claimed, then closes', async () => {
    const { s } = await service();
    const w = await s.openWork('ws', 't', { session: 'S1' });
    await s.createDraft(w.id, 'a draft does not hold the work open');
    const q = await s.createDraft(w.id, 'do this too', { queue: true });
    const f1 = await s.finishWork(w.id);
    assert.equal(f1.closed, false);
    assert.equal(f1.closed === false && f1.reason, 'pending_user_input');
    await s.claimNext(w.id, 'S1');
    assert.equal((await s.finishWork(w.id)).closed, false, 'claimed still pending');
    await s.complete(q.id, 'blocked', 'needs a decision');
    const f2 = await s.finishWork(w.id);
    assert.equal(f2.closed, true);
    assert.equal(s.work(w.id)?.status, 'finished');
    assert.ok(s.work(w.id)?.finished_at);
    assert.equal((await s.finishWork(w.id)).closed, true, 'finishing again is a no-op');
    await rejectsWith(s.createDraft(w.id, 'too late'), 'INVALID_ARGUMENTS', 'work_finished');
    assert.equal(s.sessionWork('S1'), undefined, 'the session no longer has it open');
  });

  it('a queue racing work_finish: the instruction is either refused or holds the work open', async () => {
    const { s } = await service();
    for (let round = 0; round < 20; round++) {
      const w = await s.openWork('ws', `r${round}`);
      const d = await s.createDraft(w.id, 'late');
      const [queued, finished] = await Promise.allSettled([s.queue(d.id), s.finishWork(w.id)]);
      const closed = finished.status === 'fulfilled' && finished.value.closed;
      if (closed) assert.equal(queued.status, 'rejected', 'a closed work has nothing queued');
      else assert.equal(queued.status, 'fulfilled');
    }
  });

  it('bounds a work: deleted drafts are forgotten (unless kept for a key); the instruction limit holds', async function () {
    this.timeout(120_000);
    const { s, file } = await service();
    const w = await s.openWork('ws', 't');
    for (let i = 0; i < MAX_INSTRUCTIONS_PER_WORK + 10; i++) await s.deleteDraft((await s.createDraft(w.id, `d${i}`)).id);
    assert.deepEqual(s.instructions(w.id), [], 'more drafts than the limit came and went: none of them counts');
    for (let i = 0; i < MAX_INSTRUCTIONS_PER_WORK; i++) await s.createDraft(w.id, `k${i}`, { idempotencyKey: `key-${i}` });
    await rejectsWith(s.createDraft(w.id, 'one too many'), 'INVALID_ARGUMENTS', 'too_many_instructions');
    await s.deleteDraft(s.instructions(w.id)[0]?.id as string);
    await rejectsWith(s.createDraft(w.id, 'still too many'), 'INVALID_ARGUMENTS', 'too_many_instructions');
    s.dispose();
    const { s: again } = await service(file);
    assert.equal(again.instructions(w.id).length, MAX_INSTRUCTIONS_PER_WORK - 1);
  });

  it('an empty note is no note, and repeating that completion returns it', async () => {
    const { s } = await service();
    const w = await s.openWork('ws', 't');
    const a = await s.createDraft(w.id, 'a', { queue: true });
    await s.claimNext(w.id);
    const done = await s.complete(a.id, 'done', '');
    assert.equal(done.note, undefined);
    assert.deepEqual(await s.complete(a.id, 'done', ''), done);
    assert.deepEqual(await s.complete(a.id, 'done'), done);
  });

  it('requeues a claimed instruction whose agent went away', async () => {
    const { s } = await service();
    const w = await s.openWork('ws', 't');
    const a = await s.createDraft(w.id, 'a', { queue: true });
    await s.claimNext(w.id, 'gone');
    const r = await s.requeue(a.id);
    assert.equal(r.status, 'queued');
    assert.equal(r.claimed_at, undefined);
    assert.equal((await s.claimNext(w.id, 'new'))?.id, a.id);
  });

  it('idempotent create: a replayed key returns the same instruction; another body with the key conflicts', async () => {
    const { s } = await service();
    const w = await s.openWork('ws', 't');
    const [a, b] = await Promise.all([s.createDraft(w.id, 'once', { idempotencyKey: 'k1' }), s.createDraft(w.id, 'once', { idempotencyKey: 'k1' })]);
    assert.equal(a.id, b.id);
    assert.equal(s.instructions(w.id).length, 1);
    await rejectsWith(s.createDraft(w.id, 'different', { idempotencyKey: 'k1' }), 'OPERATION_KEY_CONFLICT');
    await rejectsWith(s.createDraft(w.id, 'once', { idempotencyKey: 'k1', queue: true }), 'OPERATION_KEY_CONFLICT');
    await s.deleteDraft(a.id);
    await rejectsWith(s.createDraft(w.id, 'once', { idempotencyKey: 'k1' }), 'INSTRUCTION_NOT_FOUND');
    assert.deepEqual(s.instructions(w.id), [], 'a replay never recreates a deleted draft');
  });

  it('survives a restart: works, every state, the queue order and idempotency keys; a torn last line is skipped', async () => {
    const { s, file } = await service();
    const w = await s.openWork('ws', 'persisted', { session: 'S1' });
    const done = await s.createDraft(w.id, 'done one', { queue: true });
    await s.claimNext(w.id, 'S1');
    await s.complete(done.id, 'done', 'ok');
    const claimed = await s.createDraft(w.id, 'claimed one', { queue: true });
    await s.claimNext(w.id, 'S1');
    const q2 = await s.createDraft(w.id, 'queued second');
    const q1 = await s.createDraft(w.id, 'queued first', { queue: true });
    await s.queue(q2.id);
    const draft = await s.createDraft(w.id, 'draft', { idempotencyKey: 'key' });
    await s.flush();
    const before = s.instructions(w.id);
    s.dispose();
    // A crash mid-append: the torn line is the last change (an edit that never became durable).
    file.text += '{"type":"steer_instruction","v":1,"record":{"id":"' + draft.id + '","text":"to';

    const { s: again } = await service(file);
    assert.deepEqual(again.work(w.id), { ...w });
    assert.deepEqual(again.instructions(w.id), before);
    assert.equal(again.sessionWork('S1'), undefined, 'sessions do not survive; the work does');
    assert.deepEqual(again.counts(w.id), { draft: 1, queued: 2, claimed: 1, done: 1, blocked: 0 });
    assert.equal((await again.claimNext(w.id))?.id, q1.id);
    assert.equal((await again.claimNext(w.id))?.id, q2.id);
    assert.equal((await again.createDraft(w.id, 'draft', { idempotencyKey: 'key' })).id, draft.id);
    assert.equal((await again.finishWork(w.id)).closed, false, `${claimed.id} is still claimed`);
    assert.doesNotMatch(file.text, /"text":"to$/, 'open() compacted the torn line away');
  });

  it('keeps only the newest finished works', async () => {
    const { s, file } = await service(undefined, { maxFinishedWorks: 3 });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const w = await s.openWork('ws', `w${i}`);
      await s.createDraft(w.id, 'x');
      await s.finishWork(w.id);
      ids.push(w.id);
    }
    const open = await s.openWork('ws', 'still open');
    assert.deepEqual(
      s.works({ status: 'finished' }).map((w) => w.id),
      ids.slice(3),
    );
    s.dispose();
    const { s: again } = await service(file, { maxFinishedWorks: 3 });
    assert.deepEqual(again.works().map((w) => w.id).sort(), [...ids.slice(3), open.id].sort());
  });

  it('coordination: the session\'s open work and its queued count; another session gets none; adopting by work_id', async () => {
    const { s } = await service();
    const w = await s.openWork('ws', 't', { session: 'S1' });
    assert.deepEqual(s.coordination('S1'), { work_id: w.id, queued_instructions: 0 });
    await s.createDraft(w.id, 'a', { queue: true });
    await s.createDraft(w.id, 'b');
    assert.deepEqual(s.coordination('S1'), { work_id: w.id, queued_instructions: 1 });
    assert.equal(s.coordination('S2'), undefined);
    assert.equal(s.coordination(undefined), undefined);
    s.adopt('S2', w.id);
    assert.deepEqual(s.coordination('S2'), { work_id: w.id, queued_instructions: 1 });
    s.adopt('S3', 'work_unknown');
    assert.equal(s.coordination('S3'), undefined);
  });

  it('lists the operations recorded with a work', async () => {
    const patches = [{ operation_key: 'p1', work_id: 'W' }, { operation_key: 'p2' }, { operation_key: 'p3', work_id: 'W' }];
    const execs = [{ process_id: 'proc_1', work_id: 'W' }, { process_id: 'proc_2', work_id: 'other' }];
    const { s } = await service(undefined, { sources: { patches: () => patches, execs: () => execs }, newId: (p) => (p === 'work' ? 'W' : `ins_${Math.random()}`) });
    await s.openWork('ws', 't');
    assert.deepEqual(s.operations('W'), { patches: ['p1', 'p3'], processes: ['proc_1'] });
  });

  it('captures a baseline at work_open when a port is given; a failing capture leaves none', async () => {
    const seen: string[] = [];
    const { s } = await service(undefined, { baseline: { capture: (root) => (seen.push(root), Promise.resolve('ref-1')) } });
    assert.equal((await s.openWork('ws', 't')).baseline, 'ref-1');
    assert.deepEqual(seen, ['/nowhere/ws']);
    const { s: s2 } = await service(undefined, { baseline: { capture: () => Promise.reject(new Error('no git')) } });
    assert.equal((await s2.openWork('ws', 't')).baseline, undefined);
  });
});
