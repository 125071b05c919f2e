import { randomBytes } from 'node:crypto';
import { describeErrorWithStack } from '../../../base/describeError';
import { Emitter } from '../../../base/emitter';
import { ToolError } from '../../../base/errors';
import type { Journal } from '../../../base/journal';
import type { Logger } from '../../../base/logger';
import type { InstructionRecord, WorkRecord } from '../../../kernel/ledger/schemas';
import type { SteeringChange } from './steering';
import { SteeringJournal } from './steeringJournal';
import { instructionView, workView } from './views';

/** Finished works kept (the newest), with their instructions; open works are always kept. */
export const DEFAULT_FINISHED_WORKS = 200;

export interface SteeringStoreOptions {
  readonly journal: Journal;
  readonly logger: Logger;
  readonly maxFinishedWorks?: number;
  readonly now?: () => Date;
  readonly newId?: (prefix: 'work' | 'ins') => string;
}

/**
 * The works and instructions in memory, with their indexes, and the one way they change: synchronously in memory,
 * then the change event, then the journal append (whose promise the caller awaits).
 */
export class SteeringStore {
  private readonly workMap = new Map<string, WorkRecord>();
  private readonly instructionMap = new Map<string, InstructionRecord>();
  /** work id → instruction ids, creation order. */
  private readonly byWork = new Map<string, string[]>();
  /** `${work_id}\n${key}` → instruction id (deleted ones too, so a replay does not recreate a deleted draft). */
  private readonly keys = new Map<string, string>();
  private readonly events: Emitter<SteeringChange>;
  readonly journal: SteeringJournal;
  private seq = 0;
  private opened = false;

  /** Every work kept, by id (changed only through putWork). */
  get works(): ReadonlyMap<string, WorkRecord> {
    return this.workMap;
  }

  /** Every instruction kept, by id, in creation order (changed only through putInstruction and deleteInstruction). */
  get instructions(): ReadonlyMap<string, InstructionRecord> {
    return this.instructionMap;
  }

  constructor(private readonly options: SteeringStoreOptions) {
    this.events = new Emitter<SteeringChange>((err) => options.logger.error('[steering] a change listener failed', describeErrorWithStack(err)));
    this.journal = new SteeringJournal(options.journal, options.logger);
  }

  /** Loads the journal (last line of each id wins), drops what is not kept and compacts. */
  async open(): Promise<void> {
    const loaded = await this.journal.load();
    for (const [id, w] of loaded.works) this.workMap.set(id, w);
    for (const [id, r] of loaded.instructions) {
      // A deleted draft is kept only for its idempotency key.
      if (!this.workMap.has(r.work_id) || (r.deleted_at !== undefined && r.idempotency_key === undefined)) {
        this.journal.forget('instruction', id);
        continue;
      }
      this.instructionMap.set(id, r);
      this.index(r);
      if (r.seq !== undefined && r.seq >= this.seq) this.seq = r.seq + 1;
    }
    this.trim();
    await this.journal.compact();
    this.opened = true;
  }

  assertOpen(): void {
    if (!this.opened) throw new ToolError('INTERNAL', 'Steering is not available: its journal is not open.');
  }

  onDidChange(listener: (e: SteeringChange) => void): { dispose(): void } {
    return this.events.on(listener);
  }

  /** Throws WORK_NOT_FOUND unless the work exists. */
  requireWork(workId: string): WorkRecord {
    const w = this.workMap.get(workId);
    if (!w) {
      throw new ToolError('WORK_NOT_FOUND', `No work ${JSON.stringify(workId.length > 100 ? `${workId.slice(0, 100)}…` : workId)}.`, {
        hint: 'Open one with work_open, or pass the work_id work_open returned.',
        details: { work_id: workId },
      });
    }
    return w;
  }

  /** Throws INSTRUCTION_NOT_FOUND unless the instruction exists (a deleted draft is gone). */
  requireInstruction(id: string): InstructionRecord {
    const r = this.instructionMap.get(id);
    if (!r || r.deleted_at !== undefined) {
      throw new ToolError('INSTRUCTION_NOT_FOUND', `No instruction ${JSON.stringify(id.length > 100 ? `${id.slice(0, 100)}…` : id)}.`, {
        hint: 'List the instructions of the work (steer_status gives counts) and use an id from there.',
        details: { instruction_id: id },
      });
    }
    return r;
  }

  /** The work's instructions that are not deleted, in creation order. */
  live(workId: string): InstructionRecord[] {
    const out: InstructionRecord[] = [];
    for (const id of this.byWork.get(workId) ?? []) {
      const r = this.instructionMap.get(id);
      if (r && r.deleted_at === undefined) out.push(r);
    }
    return out;
  }

  /** How many instructions the work keeps, deleted drafts kept for their idempotency key included. */
  kept(workId: string): number {
    return this.byWork.get(workId)?.length ?? 0;
  }

  /** The instruction an idempotency key of the work created, if any (deleted too). */
  keyed(workId: string, key: string): InstructionRecord | undefined {
    const id = this.keys.get(keyOf(workId, key));
    return id === undefined ? undefined : this.instructionMap.get(id);
  }

  /** The next position in the queue. */
  nextSeq(): number {
    return this.seq++;
  }

  putWork(w: WorkRecord): Promise<void> {
    this.workMap.set(w.id, w);
    this.events.emit({ kind: 'work', work: workView(w) });
    return this.journal.appendWork(w);
  }

  /** Records an instruction, new (indexed under its work and key) or changed. */
  putInstruction(r: InstructionRecord): Promise<void> {
    if (!this.instructionMap.has(r.id)) this.index(r);
    this.instructionMap.set(r.id, r);
    this.events.emit({ kind: 'instruction', instruction: instructionView(r) });
    return this.journal.appendInstruction(r);
  }

  /** Records a draft's deletion: kept while its idempotency key needs it, else forgotten now. */
  deleteInstruction(gone: InstructionRecord): Promise<void> {
    if (gone.idempotency_key !== undefined) {
      this.instructionMap.set(gone.id, gone);
    } else {
      // Nothing to remember it for: forget it now (the journal's tombstone line goes at the next compaction).
      this.instructionMap.delete(gone.id);
      const list = this.byWork.get(gone.work_id);
      if (list) list.splice(list.indexOf(gone.id), 1);
    }
    this.events.emit({ kind: 'instruction_deleted', id: gone.id, work_id: gone.work_id });
    return this.journal.appendInstruction(gone);
  }

  /** Drops the oldest finished works (and their instructions) beyond the limit. */
  trim(): void {
    const max = this.options.maxFinishedWorks ?? DEFAULT_FINISHED_WORKS;
    // A finished work that still holds a worktree is kept: a later work_finish removes it.
    const finished = [...this.workMap.values()].filter((w) => w.status === 'finished' && !holdsWorktree(w)).sort((a, b) => (a.finished_at ?? '').localeCompare(b.finished_at ?? ''));
    for (const w of finished.slice(0, Math.max(0, finished.length - max))) {
      this.workMap.delete(w.id);
      this.journal.forget('work', w.id);
      for (const id of this.byWork.get(w.id) ?? []) {
        const r = this.instructionMap.get(id);
        if (r?.idempotency_key !== undefined) this.keys.delete(keyOf(w.id, r.idempotency_key));
        this.instructionMap.delete(id);
        this.journal.forget('instruction', id);
      }
      this.byWork.delete(w.id);
    }
  }

  timestamp(): string {
    return (this.options.now?.() ?? new Date()).toISOString();
  }

  newId(prefix: 'work' | 'ins'): string {
    return this.options.newId?.(prefix) ?? `${prefix}_${randomBytes(8).toString('hex')}`;
  }

  dispose(): void {
    this.opened = false;
    this.events.dispose();
  }

  private index(r: InstructionRecord): void {
    const list = this.byWork.get(r.work_id);
    if (list) list.push(r.id);
    else this.byWork.set(r.work_id, [r.id]);
    if (r.idempotency_key !== undefined) this.keys.set(keyOf(r.work_id, r.idempotency_key), r.id);
  }
}

/** Whether a work still has a worktree on disk: open with worktrees, or finished with one kept. */
export function holdsWorktree(w: WorkRecord): boolean {
  return w.worktrees !== undefined && (w.status === 'open' || w.worktrees.some((t) => t.removed_at === undefined));
}

function keyOf(workId: string, key: string): string {
  return `${workId}\n${key}`;
}
