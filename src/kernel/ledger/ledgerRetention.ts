import type { OperationRecord } from './operationRecord';

/** What the ledger keeps: finished records younger than `maxAgeMs`, at most `maxRecords` of them. */
export interface RetentionLimits {
  readonly now: number;
  readonly maxAgeMs: number;
  readonly maxRecords: number;
}

/**
 * Finished records past the age limit, then the oldest beyond the count limit, then the oldest until the kept
 * records take at most `byteBudget` bytes (`bytesOf` gives a record's journal line). Pending ones never go.
 */
export function selectRolledOff(records: readonly OperationRecord[], limits: RetentionLimits, byteBudget: number, bytesOf: (r: OperationRecord) => number): string[] {
  const finished = records
    .filter((r) => r.status !== 'pending')
    .map((r) => ({ record: r, at: Date.parse(r.finished_at ?? r.created_at) }))
    .map((r) => ({ ...r, order: Number.isNaN(r.at) ? -Infinity : r.at }))
    .sort((a, b) => (a.order === b.order ? 0 : a.order < b.order ? 1 : -1));
  const dropped: string[] = [];
  let kept = 0;
  // Pending records always stay, so their bytes come first.
  let bytes = records.filter((r) => r.status === 'pending').reduce((a, r) => a + bytesOf(r), 0);
  for (const { record, at } of finished) {
    const size = bytesOf(record);
    if ((!Number.isNaN(at) && limits.now - at > limits.maxAgeMs) || kept >= limits.maxRecords || bytes + size > byteBudget) {
      dropped.push(record.operation_id);
    } else {
      kept++;
      bytes += size;
    }
  }
  return dropped;
}

/**
 * A patch result without the per-file diffs (what makes a preview's result large), saying so in `reason`. Anything
 * else that is too large (not a patch result) is replaced by a note.
 */
export function withoutDiffs(result: unknown, limit: number): unknown {
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
