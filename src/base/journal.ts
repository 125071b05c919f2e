import { asError, describeError } from './describeError';

/**
 * Durable state of the extension (patch ledger, approvals, works) lives in append-only journals: one JSON
 * object per line (JSON Lines), each append durable once its promise resolves. A journal belongs to one owner
 * (the ledger, the approvals store, ...), which gives its records a meaning; the journal only keeps them.
 *
 * Crash model: the process may die at any byte. The only damage that produces is a torn last line, which
 * `load()` skips and reports. A line that cannot be read in the middle of the file (disk trouble, a hand edit)
 * is skipped and reported too; neither is ever fatal. Compaction (`rewrite`) replaces the whole file
 * atomically, so a crash during it leaves either the old file or the new one.
 */

/** Where a journal reports what it skipped (any logger of the code base satisfies it). */
export interface JournalLogger {
  warn(message: string): void;
  error(message: string): void;
}

/** One journal line: a JSON object. */
export type JournalRecord = { readonly [key: string]: unknown };

/** A line `load()` skipped. `line` is 1-based. */
export interface JournalLoadIssue {
  readonly line: number;
  /** `torn_tail`: the unterminated last line, cut off by a crash. `corrupt`: any other unreadable line. */
  readonly kind: 'torn_tail' | 'corrupt';
  /** Characters on the skipped line. */
  readonly length: number;
  readonly reason: string;
}

export interface Journal {
  /** Every readable record, oldest first. Unreadable lines are skipped, logged and listed in `lastLoadIssues`. */
  load(): Promise<JournalRecord[]>;
  /** Appends one record; durable (written and fsynced) when the promise resolves. Appends never interleave. */
  append(record: JournalRecord): Promise<void>;
  /** Compaction: atomically replaces the whole journal with `records` (new file, fsync, rename, fsync folder). */
  rewrite(records: readonly JournalRecord[]): Promise<void>;
  /** What the last `load()` skipped; empty when the journal was clean. */
  readonly lastLoadIssues: readonly JournalLoadIssue[];
  /** Waits for pending writes and releases the file. Later appends are rejected. */
  close(): Promise<void>;
}

/** The result of decoding a journal's text. */
export interface DecodedJournal {
  readonly records: JournalRecord[];
  readonly issues: JournalLoadIssue[];
}

/** One record as a journal line, newline included. Throws when the record is not JSON-serializable. */
export function encodeJournalRecord(record: JournalRecord): string {
  if (record === null || typeof record !== 'object' || Array.isArray(record)) {
    throw new TypeError('A journal record must be a JSON object.');
  }
  // JSON.stringify escapes every newline inside strings, so one record is always exactly one line.
  return `${JSON.stringify(record)}\n`;
}

/**
 * Decodes JSON Lines text. An unterminated last line that parses is accepted (the crash came after its last
 * byte); one that does not parse is a torn tail. Blank lines are ignored.
 */
export function decodeJournalText(text: string): DecodedJournal {
  const records: JournalRecord[] = [];
  const issues: JournalLoadIssue[] = [];
  const lines = text.split('\n');
  // After a final '\n' split() yields one empty string: that is not a line.
  const terminated = text.endsWith('\n');
  const count = terminated ? lines.length - 1 : lines.length;
  for (let i = 0; i < count; i++) {
    const line = lines[i] ?? '';
    if (line.trim() === '') continue;
    const isTail = i === count - 1 && !terminated;
    const parsed = parseObject(line);
    if (parsed.ok) {
      records.push(parsed.value);
    } else {
      issues.push({ line: i + 1, kind: isTail ? 'torn_tail' : 'corrupt', length: line.length, reason: parsed.reason });
    }
  }
  return { records, issues };
}

/** Logs what a load skipped: a torn tail is expected after a crash (warn); a corrupt line is not (error). */
export function logJournalIssues(logger: JournalLogger, where: string, issues: readonly JournalLoadIssue[]): void {
  for (const issue of issues) {
    if (issue.kind === 'torn_tail') {
      logger.warn(`journal ${where}: skipped a torn last line (${issue.length} chars, line ${issue.line}), likely cut off by a crash`);
    } else {
      logger.error(`journal ${where}: skipped unreadable line ${issue.line} (${issue.length} chars): ${issue.reason}`);
    }
  }
}

function parseObject(line: string): { ok: true; value: JournalRecord } | { ok: false; reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return { ok: false, reason: describeError(err) };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: 'not a JSON object' };
  }
  return { ok: true, value: value as JournalRecord };
}

/**
 * A journal held in memory as the text a file would hold; test double. Records go through the same encoding
 * as the file journal, and `text` can be set by hand to simulate torn or corrupt lines.
 */
export class InMemoryJournal implements Journal {
  /** The journal's content, exactly as a file would hold it. */
  text = '';
  /** How many times `rewrite` ran. */
  rewrites = 0;
  private issues: JournalLoadIssue[] = [];
  private closed = false;

  constructor(private readonly logger?: JournalLogger) {}

  get lastLoadIssues(): readonly JournalLoadIssue[] {
    return this.issues;
  }

  load(): Promise<JournalRecord[]> {
    const decoded = decodeJournalText(this.text);
    this.issues = decoded.issues;
    if (this.logger) logJournalIssues(this.logger, 'in-memory', decoded.issues);
    return Promise.resolve(decoded.records);
  }

  append(record: JournalRecord): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The journal is closed.'));
    try {
      const line = encodeJournalRecord(record);
      if (this.text !== '' && !this.text.endsWith('\n')) this.text += '\n';
      this.text += line;
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  rewrite(records: readonly JournalRecord[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('The journal is closed.'));
    try {
      this.text = records.map(encodeJournalRecord).join('');
      this.rewrites++;
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(asError(err));
    }
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}
