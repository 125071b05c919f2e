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
import { ToolError } from '../errors';
import type { Journal, JournalRecord } from '../ports/journal';
import { encodeJournalRecord } from '../ports/journal';
import type { Logger } from '../ports/logger';
import { silentLogger } from '../ports/logger';
import type {
  FinishedStatus,
  OperationChange,
  OperationEvent,
  OperationFile,
  OperationRecord,
  ReconcileEvidence,
} from './operationRecord';
import { isOperationRecord } from './operationRecord';
import { LINE_TYPES } from './schemas';
import { describeError } from '../../base/describeError';

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

export type OperationQuery = { readonly operation_key: string } | { readonly operation_id: string };

/**
 * Hash of what is on disk at a recorded (workspace-relative) path of `record`: `sha256:<hex>`, undefined
 * when nothing is there, `directory` for a folder. May throw; that counts as `unreadable`.
 */
export type DiskHashProbe = (path: string, record: OperationRecord) => Promise<string | undefined | 'directory'>;

export interface ReconcileOutcome {
  readonly operation_id: string;
  readonly operation_key: string;
  readonly status: 'applied' | 'not_applied' | 'unknown';
  readonly evidence: readonly ReconcileEvidence[];
}

/** The stored result of a reconciled operation; mirrors the apply_patch result. */
export interface ReconciledResult {
  readonly status: 'applied' | 'not_applied' | 'unknown';
  readonly operation_id: string;
  readonly files: readonly OperationFile[];
  readonly reason: string;
  readonly hint?: string;
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

  private readonly byId = new Map<string, OperationRecord>();
  private readonly idByKey = new Map<string, string>();
  /** Pending when the ledger was opened: cut off by an earlier run, waiting for `reconcile`. */
  private readonly orphaned = new Set<string>();
  /** Operations whose next state is being written right now. */
  private readonly busy = new Set<string>();
  private readonly listeners = new Set<LedgerChangeListener>();
  private unrecognized: JournalRecord[] = [];
  /** Journal line bytes of each record's latest state. */
  private readonly sizes = new Map<string, number>();
  /** Bytes the journal holds now (superseded lines included), as far as this ledger wrote or loaded them. */
  private journalBytes = 0;
  private compacting = false;
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
  }

  /** Loads the journal, keeps the latest state of each operation, applies retention and compacts the file. */
  async open(): Promise<LedgerOpenSummary> {
    if (this.state !== 'closed') throw new Error('OperationLedger.open() may run only once.');
    this.state = 'opening';
    try {
      const entries = await this.journal.load();
      for (const entry of entries) {
        if (entry.type === ENTRY_TYPE && entry.v === ENTRY_VERSION && isOperationRecord(entry.record)) {
          // Map.set keeps the first position, so compaction keeps the order operations were minted in.
          this.byId.set(entry.record.operation_id, entry.record);
        } else {
          this.unrecognized.push(entry);
        }
      }
      if (this.unrecognized.length > 0) {
        this.logger.warn(`ledger: kept ${this.unrecognized.length} journal record(s) it does not understand, unchanged`);
      }
      const loaded = this.byId.size;
      for (const record of this.byId.values()) this.sizes.set(record.operation_id, lineBytes(record));
      const rolledOff = this.selectRolledOff(this.maxBytes);
      for (const id of rolledOff) {
        this.byId.delete(id);
        this.sizes.delete(id);
      }
      if (rolledOff.length > 0) this.logger.info(`ledger: rolled off ${rolledOff.length} finished operation(s) by retention`);

      for (const record of this.byId.values()) {
        const holder = this.idByKey.get(record.operation_key);
        if (holder !== undefined) {
          this.logger.warn(`ledger: key ${record.operation_key} is held by ${holder} and ${record.operation_id}; lookups use ${holder}`);
        } else {
          this.idByKey.set(record.operation_key, record.operation_id);
        }
        if (record.status === 'pending') this.orphaned.add(record.operation_id);
      }

      const kept = [...[...this.byId.values()].map(toEntry), ...this.unrecognized];
      const skipped = this.journal.lastLoadIssues.length;
      const compacted = kept.length !== entries.length || skipped > 0;
      if (compacted) await this.journal.rewrite(kept);
      this.journalBytes = [...this.sizes.values()].reduce((a, b) => a + b, 0) + this.unrecognized.reduce((a, r) => a + entryBytes(r), 0);
      if (this.orphaned.size > 0) this.logger.warn(`ledger: ${this.orphaned.size} operation(s) were cut off by an earlier run; reconciling from disk`);
      this.state = 'open';
      return { loaded, pending: this.orphaned.size, rolled_off: rolledOff.length, unrecognized: this.unrecognized.length, skipped_lines: skipped, compacted };
    } catch (err) {
      this.byId.clear();
      this.idByKey.clear();
      this.orphaned.clear();
      this.sizes.clear();
      this.unrecognized = [];
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
    const record = id === undefined ? undefined : this.byId.get(id);
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
    const existing = holder === undefined ? undefined : this.byId.get(holder);
    if (existing) throw keyConflict(existing, existing.args_hash === request.args_hash);

    let id = this.newOperationId();
    for (let tries = 0; this.byId.has(id); tries++) {
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
    const size = lineBytes(record);
    if (size > this.maxRecordBytes) {
      throw new ToolError('TOO_LARGE', `The operation's record would take ${size} bytes; the ledger keeps records up to ${this.maxRecordBytes} bytes (limit ledger_record_bytes). Nothing was written.`, {
        hint: 'Split the patch into several smaller ones (fewer files, shorter paths).',
        details: { limit: 'ledger_record_bytes', max: this.maxRecordBytes, actual: size },
      });
    }
    // Reserve the key before the first await, so a concurrent mint with the same key sees it.
    this.byId.set(id, record);
    this.idByKey.set(record.operation_key, id);
    this.busy.add(id);
    try {
      await this.journal.append(toEntry(record));
      this.sizes.set(id, size);
      this.journalBytes += size;
    } catch (err) {
      this.byId.delete(id);
      this.idByKey.delete(record.operation_key);
      throw new ToolError('INTERNAL', 'Could not record the operation durably; nothing was written.', {
        hint: 'Check free disk space and the extension storage folder, then retry with the same operation_key.',
        cause: err,
      });
    } finally {
      this.busy.delete(id);
    }
    this.emit(record);
    return clone(record);
  }

  /**
   * Settles a pending operation with its terminal status and tool result; durable when the promise resolves.
   * Call it after the last write. If the journal cannot be written, the record stays pending (in memory and
   * on disk) and the next start reconciles it from the disk.
   */
  async finish(operationId: string, request: FinishRequest): Promise<OperationRecord> {
    this.assertOpen();
    const current = this.byId.get(operationId);
    if (!current) throw notFound({ operation_id: operationId });
    this.assertSettleable(current);
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
    if (lineBytes(next) > this.maxRecordBytes) {
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
    const record = id === undefined ? undefined : this.byId.get(id);
    if (!record) throw notFound(query);
    return clone(record);
  }

  /** Every record, oldest first; for the panel. */
  list(): OperationRecord[] {
    this.assertOpen();
    return [...this.byId.values()].map(clone);
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
      const current = this.byId.get(id);
      if (!current || current.status !== 'pending') {
        this.orphaned.delete(id);
        continue;
      }
      if (this.busy.has(id)) continue;
      const evidence: ReconcileEvidence[] = [];
      for (const change of current.changes) {
        evidence.push({ path: change.path, expected_before: change.before_hash, expected_after: change.after_hash, found: await this.probe(hashOf, change.path, current) });
      }
      const status = judge(evidence);
      const at = this.timestamp();
      const reason = RECONCILE_REASONS[status];
      const result: ReconciledResult = { status, operation_id: id, files: current.files, reason, ...(RECONCILE_HINTS[status] ? { hint: RECONCILE_HINTS[status] } : {}) };
      const next: OperationRecord = {
        ...current,
        status,
        finished_at: at,
        events: [...current.events, { type: 'reconciled', at, status, reason, evidence }],
        result,
      };
      await this.commit(next);
      this.logger.info(`ledger: reconciled ${id} (key ${current.operation_key}) as ${status}`);
      outcomes.push({ operation_id: id, operation_key: current.operation_key, status, evidence });
    }
    return outcomes;
  }

  /** Called with the new state of a record after it is durable. */
  onDidChange(listener: LedgerChangeListener): Disposable {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Drops listeners. The journal belongs to whoever created it and is not closed here. */
  dispose(): void {
    this.listeners.clear();
  }

  private async commit(next: OperationRecord): Promise<void> {
    const id = next.operation_id;
    const size = lineBytes(next);
    this.busy.add(id);
    try {
      await this.journal.append(toEntry(next));
    } finally {
      this.busy.delete(id);
    }
    this.byId.set(id, next);
    this.sizes.set(id, size);
    this.journalBytes += size;
    this.orphaned.delete(id);
    this.emit(next);
    await this.compactIfOver();
  }

  /**
   * While open: once the journal holds more than maxBytes, roll off the oldest finished records until the rest take
   * half of it, and rewrite the journal. Only when no record is being written, so the snapshot is the latest state
   * of everything (a journal runs its operations in order, so later appends land in the new file).
   */
  private async compactIfOver(): Promise<void> {
    if (this.journalBytes <= this.maxBytes || this.compacting || this.busy.size > 0) return;
    this.compacting = true;
    try {
      const rolledOff = this.selectRolledOff(this.maxBytes / 2);
      for (const id of rolledOff) {
        const record = this.byId.get(id);
        this.byId.delete(id);
        this.sizes.delete(id);
        if (record && this.idByKey.get(record.operation_key) === id) this.idByKey.delete(record.operation_key);
      }
      const kept = [...[...this.byId.values()].map(toEntry), ...this.unrecognized];
      const bytes = [...this.sizes.values()].reduce((a, b) => a + b, 0) + this.unrecognized.reduce((a, r) => a + entryBytes(r), 0);
      await this.journal.rewrite(kept);
      this.journalBytes = bytes;
      this.logger.info(`ledger: journal over ${this.maxBytes} bytes; compacted to ${bytes} bytes, rolling off ${rolledOff.length} finished operation(s)`);
    } catch (err) {
      this.logger.warn(`ledger: could not compact the journal: ${describeError(err)}`);
    } finally {
      this.compacting = false;
    }
  }

  private async probe(hashOf: DiskHashProbe, path: string, record: OperationRecord): Promise<string | null> {
    try {
      return (await hashOf(path, clone(record))) ?? null;
    } catch (err) {
      this.logger.warn(`ledger: could not hash ${path} while reconciling ${record.operation_id}: ${describeError(err)}`);
      return 'unreadable';
    }
  }

  private assertSettleable(record: OperationRecord): void {
    if (this.busy.has(record.operation_id)) {
      throw new ToolError('INTERNAL', `Operation ${record.operation_id} is being recorded by another call.`, { details: { operation_id: record.operation_id } });
    }
    if (record.status !== 'pending') {
      throw new ToolError('INTERNAL', `Operation ${record.operation_id} is already finished (${record.status}).`, { details: { operation_id: record.operation_id, status: record.status } });
    }
  }

  private assertOpen(): void {
    if (this.state !== 'open') {
      throw new ToolError('INTERNAL', 'The operation ledger is not open yet.', { hint: 'The extension is still starting; retry in a moment.' });
    }
  }

  /**
   * Finished records past the age limit, then the oldest beyond the count limit, then the oldest until the kept
   * records take at most `byteBudget` bytes. Pending ones never go.
   */
  private selectRolledOff(byteBudget: number): string[] {
    const now = this.now();
    const finished = [...this.byId.values()]
      .filter((r) => r.status !== 'pending')
      .map((r) => ({ id: r.operation_id, at: Date.parse(r.finished_at ?? r.created_at) }))
      .map((r) => ({ id: r.id, at: r.at, order: Number.isNaN(r.at) ? -Infinity : r.at }))
      .sort((a, b) => (a.order === b.order ? 0 : a.order < b.order ? 1 : -1));
    const dropped: string[] = [];
    let kept = 0;
    // Pending records always stay, so their bytes come first.
    let bytes = [...this.byId.values()].filter((r) => r.status === 'pending').reduce((a, r) => a + (this.sizes.get(r.operation_id) ?? 0), 0);
    for (const { id, at } of finished) {
      const size = this.sizes.get(id) ?? 0;
      if ((!Number.isNaN(at) && now - at > this.maxAgeMs) || kept >= this.maxRecords || bytes + size > byteBudget) {
        dropped.push(id);
      } else {
        kept++;
        bytes += size;
      }
    }
    return dropped;
  }

  private emit(record: OperationRecord): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(clone(record));
      } catch (err) {
        this.logger.error(`ledger: a change listener failed: ${describeError(err)}`);
      }
    }
  }

  private timestamp(): string {
    return new Date(this.now()).toISOString();
  }
}

const RECONCILE_REASONS: Record<ReconcileOutcome['status'], string> = {
  applied: 'Cut off before it was recorded as finished; on restart every file held the content the patch writes.',
  not_applied: 'Cut off before it was recorded as finished; on restart every file still held its content from before the patch.',
  unknown: 'Cut off before it was recorded as finished; on restart the files matched neither the state before nor after the patch (see evidence).',
};

const RECONCILE_HINTS: Record<ReconcileOutcome['status'], string | undefined> = {
  applied: undefined,
  not_applied: 'Nothing was written. To try again, re-read the files and send the patch with a new operation_key.',
  unknown: 'Inspect the files named in operation_status evidence and report the uncertainty before starting a new operation with a new operation_key.',
};

/** All paths at their after hash → applied (also when there is nothing to compare); all at before → not_applied. */
function judge(evidence: readonly ReconcileEvidence[]): ReconcileOutcome['status'] {
  // A record with no changes (a preview) wrote nothing, whatever the disk holds.
  if (evidence.length === 0) return 'not_applied';
  if (evidence.every((e) => e.found === e.expected_after)) return 'applied';
  if (evidence.every((e) => e.found === e.expected_before)) return 'not_applied';
  return 'unknown';
}

function toEntry(record: OperationRecord): JournalRecord {
  return { type: ENTRY_TYPE, v: ENTRY_VERSION, record };
}

/** UTF-8 bytes of a journal line. */
function entryBytes(entry: JournalRecord): number {
  return Buffer.byteLength(encodeJournalRecord(entry), 'utf8');
}

/** UTF-8 bytes of the record's journal line. */
function lineBytes(record: OperationRecord): number {
  return entryBytes(toEntry(record));
}

/**
 * A patch result without the per-file diffs (what makes a preview's result large), saying so in `reason`. Anything
 * else that is too large (not a patch result) is replaced by a note.
 */
function withoutDiffs(result: unknown, limit: number): unknown {
  const note = `The diffs were not kept: the record would exceed ${limit} bytes (limit ledger_record_bytes). Preview again with a new operation_key to see them.`;
  if (result !== null && typeof result === 'object' && Array.isArray((result as { files?: unknown }).files)) {
    const r = result as { files: unknown[]; reason?: unknown };
    const files = r.files.map((f) => {
      if (f === null || typeof f !== 'object') return f;
      const rest = { ...(f as Record<string, unknown>) };
      delete rest.diff;
      return rest;
    });
    return { ...r, files, reason: typeof r.reason === 'string' ? `${r.reason} ${note}` : note };
  }
  return { note };
}

function clone<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}

function keyConflict(record: OperationRecord, sameArguments: boolean): ToolError {
  const details = { operation_key: record.operation_key, operation_id: record.operation_id };
  if (sameArguments) {
    return new ToolError('OPERATION_KEY_CONFLICT', `A request with operation_key "${record.operation_key}" is already being applied.`, {
      details: { ...details, in_flight: true },
      hint: 'Wait for the first request, then query operation_status with this operation_key instead of sending it again.',
    });
  }
  return new ToolError('OPERATION_KEY_CONFLICT', `operation_key "${record.operation_key}" was already used for a request with other arguments.`, {
    details,
    hint: 'Use a new operation_key for a new or changed patch, or query operation_status with this key to see what the earlier request did.',
  });
}

function notFound(query: OperationQuery): ToolError {
  const what = 'operation_id' in query ? `operation_id "${query.operation_id}"` : `operation_key "${query.operation_key}"`;
  return new ToolError('OPERATION_NOT_FOUND', `No recorded patch operation has ${what}.`, {
    details: { ...query },
    hint: 'Only patches that passed validation are recorded, and old finished ones roll off. Check the id or key; a patch that was rejected can simply be sent again.',
  });
}
