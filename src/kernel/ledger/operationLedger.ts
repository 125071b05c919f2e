/**
 * The patch operation ledger: a durable record of every `apply_patch` that got past validation, keyed by
 * `operation_id` and by the agent's `operation_key`, kept in a Journal (one JSON line per state change).
 *
 * How the patch tool uses it (the order is what makes a crash recoverable):
 *   1. `lookupKey(key, hashArguments(args))` — a known key with the same arguments returns the stored record
 *      (answer with its `result`, write nothing); the same key with other arguments throws
 *      OPERATION_KEY_CONFLICT.
 *   2. Validate and plan the patch. A request that fails validation is never minted, so it is never stored:
 *      a corrected retry with the same key simply runs.
 *   3. `await mint(...)` — durable before the first file is written; it records every path's expected before
 *      and after hash.
 *   4. Write the files, then `await finish(id, { status, result })` — durable after the last write.
 *
 * If the extension host dies between 3 and 4, the record stays `pending` on disk. On the next start `open()`
 * loads it and `reconcile()` compares the disk with the recorded hashes: every path at its after hash →
 * `applied`; every path at its before hash → `not_applied`; anything else → `unknown`, with per-path evidence.
 * A record is never dropped silently: unreadable journal lines are logged, unrecognised records are kept
 * verbatim, and retention only rolls off finished records (and logs how many).
 *
 * Retry after reconciliation. Every reconciled record stores a terminal `result` ({ status, operation_id,
 * files, reason, hint }) so a retry with the same key and arguments gets it back and writes nothing.
 * - `applied`: the files already hold the patch; writing again would apply it twice.
 * - `not_applied`: the retry also gets the stored `not_applied` result and must use a new operation_key.
 *   We never re-run under a key whose outcome was already reported: a key names one attempt, and the agent
 *   may have acted on the first answer (or on `operation_status`) in between. Re-running under a fresh key
 *   is still safe, because the patch's `expected_versions` are checked again against the disk.
 * - `unknown`: stored too; the agent inspects the files (the evidence names them) before a new key.
 *
 * Retention rolls off finished records older than `maxAgeMs`, then beyond the newest `maxRecords`, then the
 * oldest until the records fit in `maxBytes`. Once a record has rolled off its key is free again; a late retry
 * then runs as a new request, and `expected_versions` (or FILE_EXISTS for added files) stops it from applying
 * twice.
 *
 * Bytes. A record keeps paths and hashes, never file content; the only large part a result can carry is the
 * per-file `diff` of a preview. A record whose journal line would exceed `maxRecordBytes` keeps its result
 * without the diffs (the `reason` says so; the caller still got them), and a mint that is over the bound even
 * so is refused with TOO_LARGE before anything is written. When the journal grows past `maxBytes` while open,
 * it is compacted on the spot, rolling off the oldest finished records until the rest take half of it.
 *
 * A pending record that was minted in this session is an operation in flight; `lookupKey` returns it as is
 * and the caller must not run the patch a second time. `reconcile` only settles records that were already
 * pending when the ledger was opened.
 */
import { randomBytes } from 'node:crypto';
import type { Disposable } from '../../base/disposable';
import { describeError } from '../../base/describeError';
import { Emitter } from '../../base/emitter';
import { JournalStore, lineBytes } from '../../base/journalStore';
import { ToolError } from '../../base/errors';
import type { Journal, JournalRecord } from '../../base/journal';
import type { Logger } from '../../base/logger';
import { silentLogger } from '../../base/logger';
import { keyConflict, notFound, notSettleable } from './ledgerErrors';
import type { OperationQuery } from './ledgerErrors';
import { selectRolledOff, withoutDiffs } from './ledgerRetention';
import type { FinishedStatus, OperationChange, OperationEvent, OperationFile, OperationRecord } from './operationRecord';
import { isOperationRecord } from './operationRecord';
import { reconciled } from './reconcile';
import type { DiskHashProbe, ReconcileOutcome } from './reconcile';
import { LINE_TYPES } from './schemas';

export type { DiskHashProbe, ReconciledResult, ReconcileOutcome } from './reconcile';
export type { OperationQuery } from './ledgerErrors';

export const DEFAULT_LEDGER_MAX_RECORDS = 1000;
export const DEFAULT_LEDGER_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;
/** Journal bytes the ledger keeps (compacted, latest state of each record). */
export const DEFAULT_LEDGER_MAX_BYTES = 32 * 1024 * 1024;
/** Bytes of one record's journal line. */
export const DEFAULT_LEDGER_MAX_RECORD_BYTES = 2 * 1024 * 1024;

/** Journal line type of one operation snapshot; each line holds the whole record in its latest state. */
const ENTRY_TYPE = LINE_TYPES.patch.type;
const ENTRY_VERSION = LINE_TYPES.patch.v;

export interface OperationLedgerOptions {
  readonly journal: Journal;
  readonly logger?: Logger;
  /** Most finished records kept at open (pending ones are always kept). */
  readonly maxRecords?: number;
  /** Finished records older than this (from finished_at) roll off at open. */
  readonly maxAgeMs?: number;
  /** Journal bytes kept; past it the oldest finished records roll off (at open, and while open). */
  readonly maxBytes?: number;
  /** Largest journal line of one record (see "Bytes" above). */
  readonly maxRecordBytes?: number;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
  /** New operation ids; injectable for tests. Default `op_` + 16 hex digits. */
  readonly newOperationId?: () => string;
}

/** What `mint` needs; the ledger adds the id, timestamps, status and events. */
export interface MintRequest {
  readonly operation_key: string;
  readonly args_hash: string;
  readonly workspace_id: string;
  readonly work_id?: string;
  readonly files: readonly OperationFile[];
  readonly changes: readonly OperationChange[];
}

export interface FinishRequest {
  readonly status: FinishedStatus;
  /** The terminal tool result; a retry with the same key and arguments gets exactly this back. */
  readonly result: unknown;
  readonly reason?: string;
  /** Replaces the minted file list, e.g. with the versions actually written. */
  readonly files?: readonly OperationFile[];
}

export interface LedgerOpenSummary {
  /** Operations loaded (after compaction, before retention). */
  readonly loaded: number;
  /** Left pending by an earlier run: call `reconcile` for them. */
  readonly pending: number;
  readonly rolled_off: number;
  /** Journal lines that were not operation records; kept verbatim. */
  readonly unrecognized: number;
  /** Unreadable journal lines skipped (torn tail, corrupt lines). */
  readonly skipped_lines: number;
  /** Whether the journal file was rewritten. */
  readonly compacted: boolean;
}

export type LedgerChangeListener = (record: OperationRecord) => void;

export class OperationLedger implements Disposable {
  private readonly journal: Journal;
  private readonly logger: Logger;
  private readonly maxRecords: number;
  private readonly maxAgeMs: number;
  private readonly maxBytes: number;
  private readonly maxRecordBytes: number;
  private readonly now: () => number;
  private readonly newOperationId: () => string;

  /** Every record by operation_id, in the order minted; durable in the journal. */
  private records: JournalStore<OperationRecord>;
  private readonly idByKey = new Map<string, string>();
  /** Pending when the ledger was opened: cut off by an earlier run, waiting for `reconcile`. */
  private readonly orphaned = new Set<string>();
  /** Operations whose next state is being written right now. */
  private readonly busy = new Set<string>();
  private readonly changes: Emitter<OperationRecord>;
  private state: 'closed' | 'opening' | 'open' = 'closed';

  constructor(options: OperationLedgerOptions) {
    this.journal = options.journal;
    this.logger = options.logger ?? silentLogger;
    this.maxRecords = options.maxRecords ?? DEFAULT_LEDGER_MAX_RECORDS;
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_LEDGER_MAX_AGE_MS;
    this.maxBytes = options.maxBytes ?? DEFAULT_LEDGER_MAX_BYTES;
    this.maxRecordBytes = options.maxRecordBytes ?? DEFAULT_LEDGER_MAX_RECORD_BYTES;
    this.now = options.now ?? Date.now;
    this.newOperationId = options.newOperationId ?? (() => `op_${randomBytes(8).toString('hex')}`);
    if (!Number.isInteger(this.maxRecords) || this.maxRecords < 0) throw new RangeError('maxRecords must be a non-negative integer.');
    if (!(this.maxAgeMs >= 0)) throw new RangeError('maxAgeMs must be a non-negative number.');
    if (!(this.maxBytes > 0) || !(this.maxRecordBytes > 0)) throw new RangeError('maxBytes and maxRecordBytes must be positive.');
    this.changes = new Emitter<OperationRecord>((err) => this.logger.error(`ledger: a change listener failed: ${describeError(err)}`));
    this.records = this.newStore();
  }

  /** Loads the journal, keeps the latest state of each operation, applies retention and compacts the file. */
  async open(): Promise<LedgerOpenSummary> {
    if (this.state !== 'closed') throw new Error('OperationLedger.open() may run only once.');
    this.state = 'opening';
    try {
      const load = await this.records.open();
      if (load.unrecognized > 0) {
        this.logger.warn(`ledger: kept ${load.unrecognized} journal record(s) it does not understand, unchanged`);
      }
      const loaded = this.records.size;
      const rolledOff = this.rollOff(this.maxBytes);
      if (rolledOff > 0) this.logger.info(`ledger: rolled off ${rolledOff} finished operation(s) by retention`);

      for (const record of this.records.values()) {
        const holder = this.idByKey.get(record.operation_key);
        if (holder !== undefined) {
          this.logger.warn(`ledger: key ${record.operation_key} is held by ${holder} and ${record.operation_id}; lookups use ${holder}`);
        } else {
          this.idByKey.set(record.operation_key, record.operation_id);
        }
        if (record.status === 'pending') this.orphaned.add(record.operation_id);
      }
      const compacted = await this.records.compact();
      if (this.orphaned.size > 0) this.logger.warn(`ledger: ${this.orphaned.size} operation(s) were cut off by an earlier run; reconciling from disk`);
      this.state = 'open';
      return { loaded, pending: this.orphaned.size, rolled_off: rolledOff, unrecognized: load.unrecognized, skipped_lines: load.skipped, compacted };
    } catch (err) {
      this.records = this.newStore();
      this.idByKey.clear();
      this.orphaned.clear();
      this.state = 'closed';
      throw err;
    }
  }

  /**
   * The record stored under `key` when it was minted with the same `argsHash`; undefined for an unknown key.
   * Throws OPERATION_KEY_CONFLICT when the key belongs to other arguments.
   */
  lookupKey(key: string, argsHash: string): OperationRecord | undefined {
    this.assertOpen();
    const id = this.idByKey.get(key);
    const record = id === undefined ? undefined : this.records.get(id);
    if (!record) return undefined;
    if (record.args_hash !== argsHash) throw keyConflict(record, false);
    return clone(record);
  }

  /**
   * Records a validated, planned operation as `pending`; durable when the promise resolves. Call it after
   * validation and before the first write. Throws OPERATION_KEY_CONFLICT when the key is already recorded
   * (another call with the same key won the race), without writing anything.
   */
  async mint(request: MintRequest): Promise<OperationRecord> {
    this.assertOpen();
    if (typeof request.operation_key !== 'string' || request.operation_key === '') {
      throw new ToolError('INTERNAL', 'An operation needs a non-empty operation_key.');
    }
    const holder = this.idByKey.get(request.operation_key);
    const existing = holder === undefined ? undefined : this.records.get(holder);
    if (existing) throw keyConflict(existing, existing.args_hash === request.args_hash);

    let id = this.newOperationId();
    for (let tries = 0; this.records.has(id); tries++) {
      if (tries >= 10) throw new ToolError('INTERNAL', 'Could not pick an unused operation id.');
      id = this.newOperationId();
    }
    const at = this.timestamp();
    const record: OperationRecord = {
      operation_id: id,
      operation_key: request.operation_key,
      args_hash: request.args_hash,
      kind: 'patch',
      workspace_id: request.workspace_id,
      ...(request.work_id === undefined ? {} : { work_id: request.work_id }),
      created_at: at,
      status: 'pending',
      files: clone(request.files),
      changes: clone(request.changes),
      events: [{ type: 'minted', at }],
    };
    const size = recordBytes(record);
    if (size > this.maxRecordBytes) {
      throw new ToolError('TOO_LARGE', `The operation's record would take ${size} bytes; the ledger keeps records up to ${this.maxRecordBytes} bytes (limit ledger_record_bytes). Nothing was written.`, {
        hint: 'Split the patch into several smaller ones (fewer files, shorter paths).',
        details: { limit: 'ledger_record_bytes', max: this.maxRecordBytes, actual: size },
      });
    }
    // The record is in memory (so the key is reserved) before the first await: a concurrent mint with the same key sees it.
    this.idByKey.set(record.operation_key, id);
    this.busy.add(id);
    try {
      await this.records.put(record);
    } catch (err) {
      this.records.forget(id);
      this.idByKey.delete(record.operation_key);
      throw new ToolError('INTERNAL', 'Could not record the operation durably; nothing was written.', {
        hint: 'Check free disk space and the extension storage folder, then retry with the same operation_key.',
        cause: err,
      });
    } finally {
      this.busy.delete(id);
    }
    this.changes.emit(clone(record));
    return clone(record);
  }

  /**
   * Settles a pending operation with its terminal status and tool result; durable when the promise resolves.
   * Call it after the last write. If the journal cannot be written, the record stays pending (in memory and
   * on disk) and the next start reconciles it from the disk.
   */
  async finish(operationId: string, request: FinishRequest): Promise<OperationRecord> {
    this.assertOpen();
    const current = this.records.get(operationId);
    if (!current) throw notFound({ operation_id: operationId });
    const refused = notSettleable(current, this.busy.has(operationId));
    if (refused) throw refused;
    const at = this.timestamp();
    const event: OperationEvent = { type: 'finished', at, status: request.status, ...(request.reason === undefined ? {} : { reason: request.reason }) };
    let next: OperationRecord = {
      ...current,
      status: request.status,
      finished_at: at,
      files: request.files === undefined ? current.files : clone(request.files),
      events: [...current.events, event],
      result: clone(request.result),
    };
    if (recordBytes(next) > this.maxRecordBytes) {
      next = { ...next, result: withoutDiffs(next.result, this.maxRecordBytes) };
      this.logger.info(`ledger: kept the result of ${operationId} without its diffs (over ${this.maxRecordBytes} bytes)`);
    }
    await this.commit(next);
    return clone(next);
  }

  /** The record for exactly one of operation_key / operation_id; throws OPERATION_NOT_FOUND. */
  get(query: OperationQuery): OperationRecord {
    this.assertOpen();
    const id = 'operation_id' in query ? query.operation_id : this.idByKey.get(query.operation_key);
    const record = id === undefined ? undefined : this.records.get(id);
    if (!record) throw notFound(query);
    return clone(record);
  }

  /** Every record, oldest first; for the panel. */
  list(): OperationRecord[] {
    this.assertOpen();
    return [...this.records.values()].map(clone);
  }

  /**
   * Settles every operation an earlier run left pending by comparing the disk with its recorded hashes, and
   * stores the outcome (a `reconciled` event with evidence, finished_at, status and a result). Call it right
   * after `open()`, before tools are served. Operations minted in this session are never touched.
   */
  async reconcile(hashOf: DiskHashProbe): Promise<ReconcileOutcome[]> {
    this.assertOpen();
    const outcomes: ReconcileOutcome[] = [];
    for (const id of [...this.orphaned]) {
      const current = this.records.get(id);
      if (!current || current.status !== 'pending') {
        this.orphaned.delete(id);
        continue;
      }
      if (this.busy.has(id)) continue;
      const next = await reconciled(current, hashOf, this.timestamp(), this.logger);
      await this.commit(next);
      const status = next.status as ReconcileOutcome['status'];
      this.logger.info(`ledger: reconciled ${id} (key ${current.operation_key}) as ${status}`);
      const evidence = next.events[next.events.length - 1]?.evidence ?? [];
      outcomes.push({ operation_id: id, operation_key: current.operation_key, status, evidence });
    }
    return outcomes;
  }

  /** Called with the new state of a record after it is durable. */
  onDidChange(listener: LedgerChangeListener): Disposable {
    return this.changes.on(listener);
  }

  /** Drops listeners. The journal belongs to whoever created it and is not closed here. */
  dispose(): void {
    this.changes.dispose();
  }

  /** Writes the next state of a record; memory changes once it is durable (a failed write leaves it as it was). */
  private async commit(next: OperationRecord): Promise<void> {
    const id = next.operation_id;
    this.busy.add(id);
    try {
      await this.records.put(next, { memory: 'when-durable' });
    } finally {
      this.busy.delete(id);
    }
    this.orphaned.delete(id);
    this.changes.emit(clone(next));
  }

  private newStore(): JournalStore<OperationRecord> {
    return new JournalStore<OperationRecord>({
      journal: this.journal,
      codec: {
        decode: (line) => (line.type === ENTRY_TYPE && line.v === ENTRY_VERSION && isOperationRecord(line.record) ? line.record : undefined),
        encode: toEntry,
        id: (record) => record.operation_id,
      },
      unrecognized: 'keep',
      maxBytes: this.maxBytes,
      // While open: once the journal holds more than maxBytes, the oldest finished records roll off until the rest
      // take half of it (the store compacts only when no record is being written, so it writes the latest state).
      beforeCompact: () => {
        const over = this.records.journalBytes;
        const rolledOff = this.rollOff(this.maxBytes / 2);
        this.logger.info(`ledger: journal at ${over} bytes (over ${this.maxBytes}); compacting, rolling off ${rolledOff} finished operation(s)`);
      },
      warn: (message) => this.logger.warn(`ledger: ${message}`),
    });
  }

  /** Retention: forgets the finished records past the limits (and frees their keys); returns how many. */
  private rollOff(byteBudget: number): number {
    const limits = { now: this.now(), maxAgeMs: this.maxAgeMs, maxRecords: this.maxRecords };
    const dropped = selectRolledOff([...this.records.values()], limits, byteBudget, recordBytes);
    for (const id of dropped) {
      const record = this.records.get(id);
      this.records.forget(id);
      if (record && this.idByKey.get(record.operation_key) === id) this.idByKey.delete(record.operation_key);
    }
    return dropped.length;
  }

  private assertOpen(): void {
    if (this.state !== 'open') {
      throw new ToolError('INTERNAL', 'The operation ledger is not open yet.', { hint: 'The extension is still starting; retry in a moment.' });
    }
  }

  private timestamp(): string {
    return new Date(this.now()).toISOString();
  }
}

function toEntry(record: OperationRecord): JournalRecord {
  return { type: ENTRY_TYPE, v: ENTRY_VERSION, record };
}

/** UTF-8 bytes of the record's journal line. */
function recordBytes(record: OperationRecord): number {
  return lineBytes(toEntry(record));
}

function clone<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}
