import { describeError } from '../../base/describeError';
import { SerialQueue } from '../../base/serialQueue';
import { ToolError } from '../errors';
import type { Journal, JournalRecord } from '../ports/journal';
import type { Logger } from '../ports/logger';
import type { InstructionRecord, WorkRecord } from '../ledger/schemas';
import { LINE_TYPES, instructionRecordSchema, workRecordSchema } from '../ledger/schemas';

/** Appends after which the section is compacted again (one line per kept record). */
const COMPACT_AFTER_APPENDS = 2000;

/** Works and instructions as the journal holds them: by id, the last line of each id winning. */
export interface SteeringRecords {
  readonly works: Map<string, WorkRecord>;
  /** In creation order (a later line of an id keeps the id's first position). */
  readonly instructions: Map<string, InstructionRecord>;
}

/**
 * The steering section of the shared journal: work and instruction lines carrying the whole record (last line
 * wins; a torn last line is skipped by the journal). Appends run one at a time in the order made; every
 * COMPACT_AFTER_APPENDS appends, and at open, the section is rewritten to one line per kept record.
 */
export class SteeringJournal {
  private readonly writes = new SerialQueue();
  private appends = 0;

  /** `records` gives what a compaction keeps: the records in memory now. */
  constructor(
    private readonly journal: Journal,
    private readonly logger: Logger,
    private readonly records: () => SteeringRecords,
  ) {}

  /** Every work and instruction line of the journal (others are skipped and reported). */
  async load(): Promise<SteeringRecords> {
    const works = new Map<string, WorkRecord>();
    const instructions = new Map<string, InstructionRecord>();
    for (const line of await this.journal.load()) {
      const record = (line as { record?: unknown }).record;
      if (line.type === LINE_TYPES.work.type && line.v === LINE_TYPES.work.v) {
        const parsed = workRecordSchema.safeParse(record);
        if (parsed.success) {
          works.set(parsed.data.id, parsed.data);
          continue;
        }
      } else if (line.type === LINE_TYPES.instruction.type && line.v === LINE_TYPES.instruction.v) {
        const parsed = instructionRecordSchema.safeParse(record);
        if (parsed.success) {
          // Map.set keeps the first position: instructions stay in creation order.
          instructions.set(parsed.data.id, parsed.data);
          continue;
        }
      }
      this.logger.warn('[steering] skipped a journal line that is not a steering record');
    }
    return { works, instructions };
  }

  appendWork(w: WorkRecord): Promise<void> {
    return this.append({ type: LINE_TYPES.work.type, v: LINE_TYPES.work.v, record: w });
  }

  appendInstruction(r: InstructionRecord): Promise<void> {
    return this.append({ type: LINE_TYPES.instruction.type, v: LINE_TYPES.instruction.v, record: r });
  }

  /** Rewrites the section to one line per record kept in memory (a deleted draft only when it holds a key). */
  compact(): Promise<void> {
    const { works, instructions } = this.records();
    const lines: JournalRecord[] = [];
    for (const w of works.values()) lines.push({ type: LINE_TYPES.work.type, v: LINE_TYPES.work.v, record: w });
    for (const r of instructions.values()) {
      // A deleted draft is kept only for its idempotency key.
      if (r.deleted_at !== undefined && r.idempotency_key === undefined) continue;
      lines.push({ type: LINE_TYPES.instruction.type, v: LINE_TYPES.instruction.v, record: r });
    }
    return this.journal.rewrite(lines);
  }

  /** Resolves once every append made so far is settled. */
  flush(): Promise<void> {
    return this.writes.idle();
  }

  /** Appends in order; the state is already changed in memory, so a failed append is logged and reported. */
  private append(line: JournalRecord): Promise<void> {
    return this.writes
      .run(async () => {
        await this.journal.append(line);
        if (++this.appends >= COMPACT_AFTER_APPENDS) {
          this.appends = 0;
          await this.compact();
        }
      })
      .catch((err: unknown) => {
        this.logger.error(`[steering] could not record a change: ${describeError(err)}`);
        throw new ToolError('INTERNAL', 'The change was made but could not be saved to the journal; it may be lost at the next reload.', {
          hint: 'The developer can see details in the CodeSpace log (command "CodeSpace: Show Log").',
        });
      });
  }
}
