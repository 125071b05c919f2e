import { describeError } from './describeError';
import type { Journal, JournalRecord } from './journal';
import { encodeJournalRecord } from './journal';
import { SerialQueue } from './serialQueue';

/**
 * The one compaction policy of every journal-backed store: once this many lines were appended since the journal was
 * last compacted (or the journal holds more than the store's `maxBytes`), it is rewritten to the latest state of
 * each kept record.
 */
export const COMPACT_AFTER_APPENDS = 2000;

/** How a store's records are written to and read from journal lines. */
export interface JournalCodec<T> {
  /** The record a line holds; undefined for a line that is not one of this store's records (it is unrecognised). */
  decode(line: JournalRecord): T | undefined;
  encode(record: T): JournalRecord;
  /** The key of a record: the last line of an id wins. */
  id(record: T): string;
  /** A tombstone: its line removes the record of its id (on load), and it is never kept. */
  isTombstone?(record: T): boolean;
  /** Whether a kept record goes to the journal (false: kept in memory only, e.g. too large). Default: every one. */
  durable?(record: T): boolean;
}

export interface JournalStoreOptions<T> {
  readonly journal: Journal;
  readonly codec: JournalCodec<T>;
  /** Unrecognised lines: kept verbatim through every compaction (`keep`), or dropped at the first (`drop`). */
  readonly unrecognized: 'keep' | 'drop';
  /**
   * Order of the records: `created` keeps each id where it first appeared; `updated` moves an id to the end on every
   * change (the oldest-changed first).
   */
  readonly order?: 'created' | 'updated';
  /** Journal bytes past which it is compacted while open. Default: no byte bound (only COMPACT_AFTER_APPENDS). */
  readonly maxBytes?: number;
  /** Retention: runs right before every compaction while open, and may `forget` records. */
  readonly beforeCompact?: () => void;
  /** Reports a compaction that failed while open (the appends stay durable; the next one tries again). */
  readonly warn: (message: string) => void;
}

/** What `open()` found. */
export interface JournalStoreLoad {
  /** Journal lines read (readable ones). */
  readonly lines: number;
  /** Unreadable lines the journal skipped (torn tail, corrupt lines). */
  readonly skipped: number;
  readonly unrecognized: number;
}

/**
 * Records keyed by id, held in memory and durable in a Journal (one JSON line per change, the last line of an id
 * wins). Changes are visible at once and written in the order made, one at a time; `flush()` waits for them. The
 * journal is compacted at open (`compact()`, when the file holds anything else than the kept records) and while open
 * by the one policy above, only when no write is queued, so the rewrite is the durable state of everything.
 */
export class JournalStore<T> {
  private readonly records = new Map<string, T>();
  private readonly queue = new SerialQueue();
  private kept: JournalRecord[] = [];
  /** The lines the journal held when loaded, until the first compaction: a compaction to exactly these is skipped. */
  private loaded: JournalRecord[] | undefined;
  private loadIssues = 0;
  private appends = 0;
  /** Bytes the journal holds now, as far as this store wrote or loaded them. */
  private bytes = 0;

  constructor(private readonly options: JournalStoreOptions<T>) {}

  /** Loads the journal into memory (it does not compact: adjust what was loaded, then call `compact()`). */
  async open(): Promise<JournalStoreLoad> {
    const { journal, codec } = this.options;
    const lines = await journal.load();
    let unrecognized = 0;
    for (const line of lines) {
      const record = codec.decode(line);
      if (record === undefined) {
        unrecognized++;
        if (this.options.unrecognized === 'keep') this.kept.push(line);
      } else if (codec.isTombstone?.(record) === true) {
        this.records.delete(codec.id(record));
      } else {
        this.setRecord(record);
      }
    }
    this.loaded = lines;
    this.loadIssues = journal.lastLoadIssues.length;
    this.bytes = lines.reduce((n, line) => n + lineBytes(line), 0);
    return { lines: lines.length, skipped: this.loadIssues, unrecognized };
  }

  get(id: string): T | undefined {
    return this.records.get(id);
  }

  has(id: string): boolean {
    return this.records.has(id);
  }

  values(): IterableIterator<T> {
    return this.records.values();
  }

  get size(): number {
    return this.records.size;
  }

  /** Unrecognised lines kept verbatim. */
  get unrecognizedLines(): readonly JournalRecord[] {
    return this.kept;
  }

  /** Bytes the journal holds now (superseded lines included), as far as this store knows. */
  get journalBytes(): number {
    return this.bytes;
  }

  /**
   * Changes a record in memory only, in place (e.g. while adjusting what `open()` loaded); `compact()` or a later
   * `put` of it writes it.
   */
  set(record: T): void {
    this.records.set(this.options.codec.id(record), record);
  }

  /** Drops a record from memory only; its lines go at the next compaction (retention). */
  forget(id: string): void {
    this.records.delete(id);
  }

  /**
   * Changes a record: in memory at once (`memory: 'now'`, the default) or once its line is durable
   * (`memory: 'when-durable'`: a failed write leaves memory as it was). Resolves when the line is durable; rejects
   * when it could not be written. A record that is not `durable` is kept in memory only, and resolves at once; a
   * tombstone is a `remove`.
   */
  put(record: T, options: { memory?: 'now' | 'when-durable' } = {}): Promise<void> {
    if (this.options.codec.isTombstone?.(record) === true) return this.remove(record);
    if (this.options.codec.durable?.(record) === false) {
      this.setRecord(record);
      return Promise.resolve();
    }
    const now = options.memory !== 'when-durable';
    if (now) this.setRecord(record);
    return this.write(this.options.codec.encode(record), () => {
      if (!now) this.setRecord(record);
    });
  }

  /** Removes a record: from memory at once, and durably with its tombstone line. */
  remove(tombstone: T): Promise<void> {
    this.records.delete(this.options.codec.id(tombstone));
    return this.write(this.options.codec.encode(tombstone), () => undefined);
  }

  /** Resolves once every change made so far is durable (or failed). */
  flush(): Promise<void> {
    return this.queue.idle();
  }

  /**
   * Rewrites the journal to the kept records (durable ones, tombstones left out) and the unrecognised lines kept,
   * after every queued write. Skipped when the journal already holds exactly those lines; resolves whether it wrote.
   */
  compact(): Promise<boolean> {
    return this.queue.run(() => this.rewrite());
  }

  private write(line: JournalRecord, onDurable: () => void): Promise<void> {
    return this.queue.run(async () => {
      await this.options.journal.append(line);
      this.appends++;
      this.bytes += lineBytes(line);
      onDurable();
      await this.compactIfDue();
    });
  }

  /** The policy: due after COMPACT_AFTER_APPENDS appends or past maxBytes, and only when no other write waits. */
  private async compactIfDue(): Promise<void> {
    const due = this.appends >= COMPACT_AFTER_APPENDS || this.bytes > (this.options.maxBytes ?? Infinity);
    if (!due || this.queue.size > 1) return;
    try {
      this.options.beforeCompact?.();
      await this.rewrite();
    } catch (err) {
      this.options.warn(`could not compact the journal: ${describeError(err)}`);
    }
  }

  private async rewrite(): Promise<boolean> {
    const { codec, journal } = this.options;
    const lines: JournalRecord[] = [];
    for (const record of this.records.values()) {
      if (codec.isTombstone?.(record) !== true && codec.durable?.(record) !== false) lines.push(codec.encode(record));
    }
    lines.push(...this.kept);
    const unchanged = this.loaded !== undefined && this.loadIssues === 0 && sameLines(this.loaded, lines);
    if (!unchanged) await journal.rewrite(lines);
    this.loaded = undefined;
    this.appends = 0;
    this.bytes = lines.reduce((n, line) => n + lineBytes(line), 0);
    return !unchanged;
  }

  private setRecord(record: T): void {
    const id = this.options.codec.id(record);
    if (this.options.order === 'updated') this.records.delete(id);
    this.records.set(id, record);
  }
}

/** UTF-8 bytes of a journal line, newline included. */
export function lineBytes(line: JournalRecord): number {
  return Buffer.byteLength(encodeJournalRecord(line), 'utf8');
}

/** Whether two lists of records are the same lines, in the same order. */
export function sameLines(a: readonly JournalRecord[], b: readonly JournalRecord[]): boolean {
  return a.length === b.length && a.every((r, i) => encodeJournalRecord(r) === encodeJournalRecord(b[i] as JournalRecord));
}
