import { describeError } from '../../../base/describeError';
import { JournalStore } from '../../../base/journalStore';
import { ToolError } from '../../../base/errors';
import type { Journal, JournalRecord } from '../../../base/journal';
import type { Logger } from '../../../base/logger';
import type { InstructionRecord, WorkRecord } from '../../../kernel/ledger/schemas';
import { LINE_TYPES, instructionRecordSchema, workRecordSchema } from '../../../kernel/ledger/schemas';

/** Works and instructions as the journal holds them: by id, the last line of each id winning. */
export interface SteeringRecords {
  readonly works: ReadonlyMap<string, WorkRecord>;
  /** In creation order (a later line of an id keeps the id's first position). */
  readonly instructions: ReadonlyMap<string, InstructionRecord>;
}

/** One line of the section: a work or an instruction, each the whole record. */
type SteeringLine = { readonly kind: 'work'; readonly record: WorkRecord } | { readonly kind: 'instruction'; readonly record: InstructionRecord };

/**
 * The steering section of the shared journal, on the base JournalStore: work and instruction lines carrying the
 * whole record (last line wins; a torn last line is skipped by the journal). Appends run one at a time in the order
 * made; the section is compacted at open and by the store's one policy. A deleted draft without an idempotency key
 * is a tombstone (nothing to remember it for).
 */
export class SteeringJournal {
  private readonly store: JournalStore<SteeringLine>;

  constructor(
    journal: Journal,
    private readonly logger: Logger,
  ) {
    this.store = new JournalStore<SteeringLine>({
      journal,
      codec: {
        decode: (line) => this.decode(line),
        encode: ({ kind, record }) => ({ type: LINE_TYPES[kind].type, v: LINE_TYPES[kind].v, record }),
        id: ({ kind, record }) => `${kind}:${record.id}`,
        isTombstone: (line) => line.kind === 'instruction' && line.record.deleted_at !== undefined && line.record.idempotency_key === undefined,
      },
      unrecognized: 'drop',
      warn: (message) => logger.warn(`[steering] ${message}`),
    });
  }

  /** Every work and instruction line of the journal (others are skipped and reported). */
  async load(): Promise<SteeringRecords> {
    await this.store.open();
    const works = new Map<string, WorkRecord>();
    const instructions = new Map<string, InstructionRecord>();
    for (const line of this.store.values()) {
      if (line.kind === 'work') works.set(line.record.id, line.record);
      else instructions.set(line.record.id, line.record);
    }
    return { works, instructions };
  }

  appendWork(w: WorkRecord): Promise<void> {
    return this.reported(this.store.put({ kind: 'work', record: w }));
  }

  appendInstruction(r: InstructionRecord): Promise<void> {
    return this.reported(this.store.put({ kind: 'instruction', record: r }));
  }

  /** Drops a record from what the section keeps (retention); its lines go at the next compaction. */
  forget(kind: SteeringLine['kind'], id: string): void {
    this.store.forget(`${kind}:${id}`);
  }

  /** Rewrites the section to one line per kept record. */
  async compact(): Promise<void> {
    await this.store.compact();
  }

  /** Resolves once every append made so far is settled. */
  flush(): Promise<void> {
    return this.store.flush();
  }

  private decode(line: JournalRecord): SteeringLine | undefined {
    const record = (line as { record?: unknown }).record;
    if (line.type === LINE_TYPES.work.type && line.v === LINE_TYPES.work.v) {
      const parsed = workRecordSchema.safeParse(record);
      if (parsed.success) return { kind: 'work', record: parsed.data };
    } else if (line.type === LINE_TYPES.instruction.type && line.v === LINE_TYPES.instruction.v) {
      const parsed = instructionRecordSchema.safeParse(record);
      if (parsed.success) return { kind: 'instruction', record: parsed.data };
    }
    this.logger.warn('[steering] skipped a journal line that is not a steering record');
    return undefined;
  }

  /** The state is already changed in memory, so a failed append is logged and reported. */
  private reported(write: Promise<void>): Promise<void> {
    return write.catch((err: unknown) => {
      this.logger.error(`[steering] could not record a change: ${describeError(err)}`);
      throw new ToolError('INTERNAL', 'The change was made but could not be saved to the journal; it may be lost at the next reload.', {
        hint: 'The developer can see details in the CodeSpace log (command "CodeSpace: Show Log").',
      });
    });
  }
}
