import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { AgentRef } from '../../../kernel/identity';
import type { InstructionRecord, WorkRecord } from '../../../kernel/ledger/schemas';
import { checkReviewComments } from '../../../kernel/approvals/reviewComments';
import type { ReviewComment } from '../../../kernel/approvals/reviewComments';
import { checkKey, checkNote, checkText, hashOf, reviewCommentsText, rewindText } from './instructionText';
import type { InstructionView, RewindNotice } from './steering';
import { MAX_INSTRUCTIONS_PER_WORK } from './steering';
import type { SteeringStore } from './steeringStore';
import { instructionView } from './views';

/**
 * The instructions of works: the developer's drafts and queue, the agent's claim and completion. Every decision is
 * made synchronously, before the first await of the call (see SteeringService), so a racing claim sees the last one.
 */
export class InstructionQueue {
  constructor(private readonly store: SteeringStore) {}

  /** createDraft, saying whether the call created the instruction or replayed its idempotency key. */
  async create(workId: string, text: string, opts: { queue?: boolean; idempotencyKey?: string } = {}): Promise<{ instruction: InstructionView; created: boolean }> {
    this.store.assertOpen();
    const work = this.store.requireWork(workId);
    const queue = opts.queue ?? false;
    const requestHash = opts.idempotencyKey === undefined ? undefined : hashOf({ text, queue });
    if (opts.idempotencyKey !== undefined) {
      checkKey(opts.idempotencyKey);
      const r = this.store.keyed(workId, opts.idempotencyKey);
      if (r) {
        if (r.request_hash !== requestHash) {
          throw new ToolError('OPERATION_KEY_CONFLICT', 'This idempotency key was used before with a different instruction.', {
            hint: 'Use a new key for a new instruction; resend the same text and queue flag to get the instruction the key created.',
            details: { instruction_id: r.id },
          });
        }
        if (r.deleted_at !== undefined) {
          throw new ToolError('INSTRUCTION_NOT_FOUND', `The instruction this idempotency key created (${r.id}) was deleted.`, {
            hint: 'Use a new key to create it again.',
            details: { instruction_id: r.id },
          });
        }
        await this.store.journal.flush();
        return { instruction: instructionView(r), created: false };
      }
    }
    checkText(text);
    this.assertRoom(work, 'Delete drafts you no longer need, or ask the agent to finish this work and open a new one.');
    const at = this.store.timestamp();
    const r: InstructionRecord = {
      id: this.store.newId('ins'),
      work_id: workId,
      text,
      status: queue ? 'queued' : 'draft',
      created_at: at,
      ...(queue ? { queued_at: at, seq: this.store.nextSeq() } : {}),
      revision: 1,
      ...(opts.idempotencyKey !== undefined ? { idempotency_key: opts.idempotencyKey, request_hash: requestHash } : {}),
    };
    await this.store.putInstruction(r);
    return { instruction: instructionView(r), created: true };
  }

  queueReviewComments(workId: string, comments: readonly ReviewComment[]): Promise<InstructionView> {
    return this.addQueued(workId, () => {
      const checked = checkReviewComments(comments);
      return { text: reviewCommentsText(checked), kind: 'review_comments', comments: checked.map((c) => ({ ...c, range: { ...c.range } })) };
    });
  }

  queueRewindNotice(workId: string, notice: RewindNotice): Promise<InstructionView> {
    return this.addQueued(workId, () => {
      const rewind = { ...notice, files: notice.files.map((f) => ({ ...f })) };
      return { text: rewindText(rewind), kind: 'rewind', rewind };
    });
  }

  async editDraft(instructionId: string, text: string, expectedRevision?: number): Promise<InstructionView> {
    this.store.assertOpen();
    const r = this.store.requireInstruction(instructionId);
    assertDraft(r, 'edited');
    if (expectedRevision !== undefined && expectedRevision !== r.revision) {
      throw new InvalidArgumentsError(`Instruction ${r.id} is at revision ${r.revision}, not ${expectedRevision}: it changed since you read it.`, {
        hint: 'Read the instruction again and apply your edit to its current text.',
        details: { reason: 'revision_mismatch', instruction_id: r.id, revision: r.revision },
      });
    }
    checkText(text);
    return this.update(r, { text });
  }

  async deleteDraft(instructionId: string): Promise<void> {
    this.store.assertOpen();
    const r = this.store.requireInstruction(instructionId);
    assertDraft(r, 'deleted');
    await this.store.deleteInstruction({ ...r, deleted_at: this.store.timestamp(), revision: r.revision + 1 });
  }

  async queue(instructionId: string): Promise<InstructionView> {
    this.store.assertOpen();
    const r = this.store.requireInstruction(instructionId);
    assertDraft(r, 'queued');
    assertWorkOpen(this.store.requireWork(r.work_id));
    return this.update(r, { status: 'queued', queued_at: this.store.timestamp(), seq: this.store.nextSeq() });
  }

  async requeue(instructionId: string): Promise<InstructionView> {
    this.store.assertOpen();
    const r = this.store.requireInstruction(instructionId);
    if (r.status !== 'claimed' && r.status !== 'blocked') {
      throw new InvalidArgumentsError(`Instruction ${r.id} is ${r.status}; only a claimed or blocked instruction can be queued again.`, {
        details: { reason: 'invalid_state', instruction_id: r.id, status: r.status },
      });
    }
    assertWorkOpen(this.store.requireWork(r.work_id));
    const rest: InstructionRecord = { ...r };
    delete rest.claimed_at;
    delete rest.completed_at;
    delete rest.note;
    delete rest.claimed_by;
    return this.update(rest, { status: 'queued', queued_at: this.store.timestamp(), seq: this.store.nextSeq() });
  }

  /** steer_claim_next: the oldest queued instruction, now claimed; undefined when none is queued. */
  async claimNext(workId: string, session?: string, agent?: AgentRef): Promise<InstructionView | undefined> {
    this.store.assertOpen();
    this.store.requireWork(workId);
    let next: InstructionRecord | undefined;
    for (const r of this.store.live(workId)) {
      if (r.status === 'queued' && (next === undefined || (r.seq ?? 0) < (next.seq ?? 0))) next = r;
    }
    if (!next) return undefined;
    // No await before this line: the claim is decided synchronously, so a racing claim sees it.
    return this.update(next, { status: 'claimed', claimed_at: this.store.timestamp(), ...(session !== undefined ? { claimed_by: session } : {}), ...(agent !== undefined ? { claimed_by_agent: agent.name } : {}) });
  }

  /** steer_complete: a claimed instruction becomes done or blocked, with the agent's note. Repeating the same completion returns it. */
  async complete(instructionId: string, status: 'done' | 'blocked', note?: string): Promise<InstructionView> {
    this.store.assertOpen();
    const r = this.store.requireInstruction(instructionId);
    checkNote(note);
    const kept = note === '' ? undefined : note;
    if ((r.status === 'done' || r.status === 'blocked') && r.status === status && r.note === kept) {
      await this.store.journal.flush();
      return instructionView(r);
    }
    if (r.status !== 'claimed') {
      throw new InvalidArgumentsError(`Instruction ${r.id} is ${r.status}, not claimed: only an instruction you claimed with steer_claim_next can be completed.`, {
        hint: r.status === 'queued' ? 'Claim it first with steer_claim_next.' : 'Call steer_status to see what is pending.',
        details: { reason: 'invalid_state', instruction_id: r.id, status: r.status },
      });
    }
    return this.update(r, { status, completed_at: this.store.timestamp(), ...(kept !== undefined ? { note: kept } : {}) });
  }

  /**
   * The developer discards an open work: its queued instructions go back to drafts (no agent having seen them).
   * Synchronous up to the returned appends.
   */
  unqueueAll(workId: string): Promise<void>[] {
    const saved: Promise<void>[] = [];
    for (const r of this.store.live(workId)) {
      if (r.status !== 'queued') continue;
      const back: InstructionRecord = { ...r, status: 'draft', revision: r.revision + 1 };
      delete back.queued_at;
      delete back.seq;
      saved.push(this.store.putInstruction(back));
    }
    return saved;
  }

  /** A queued instruction the developer did not type (review comments, a rewind notice). */
  private async addQueued(workId: string, content: () => Pick<InstructionRecord, 'text' | 'kind' | 'comments' | 'rewind'>): Promise<InstructionView> {
    this.store.assertOpen();
    const work = this.store.requireWork(workId);
    assertWorkOpen(work);
    const made = content();
    this.assertRoom(work);
    const at = this.store.timestamp();
    const r: InstructionRecord = { id: this.store.newId('ins'), work_id: workId, text: made.text, status: 'queued', created_at: at, queued_at: at, seq: this.store.nextSeq(), revision: 1, ...withoutUndefined(made) };
    await this.store.putInstruction(r);
    return instructionView(r);
  }

  /** The work is open and has room for one more instruction (deleted drafts kept for their key count too). */
  private assertRoom(work: WorkRecord, hint?: string): void {
    assertWorkOpen(work);
    if (this.store.kept(work.id) >= MAX_INSTRUCTIONS_PER_WORK) {
      throw new InvalidArgumentsError(`Work ${work.id} already has ${MAX_INSTRUCTIONS_PER_WORK} instructions, the most one work keeps.`, {
        ...(hint !== undefined ? { hint } : {}),
        details: { reason: 'too_many_instructions' },
      });
    }
  }

  private async update(r: InstructionRecord, change: Partial<InstructionRecord>): Promise<InstructionView> {
    const next: InstructionRecord = { ...r, ...change, revision: r.revision + 1 };
    await this.store.putInstruction(next);
    return instructionView(next);
  }
}

/** Throws INVALID_ARGUMENTS (work_finished) unless the work is open. */
export function assertWorkOpen(w: WorkRecord): void {
  if (w.status !== 'open') {
    throw new InvalidArgumentsError(`Work ${w.id} is finished; it takes no new instructions.`, {
      hint: 'Ask the agent to open a new work for further changes.',
      details: { reason: 'work_finished', work_id: w.id },
    });
  }
}

function assertDraft(r: InstructionRecord, what: 'edited' | 'deleted' | 'queued'): void {
  if (r.status !== 'draft') {
    throw new InvalidArgumentsError(`Instruction ${r.id} is ${r.status}; only a draft can be ${what}.`, {
      hint: r.status === 'queued' ? 'It is already waiting for the agent.' : 'Write a new instruction instead.',
      details: { reason: 'not_draft', instruction_id: r.id, status: r.status },
    });
  }
}

function withoutUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
