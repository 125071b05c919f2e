import { describeError } from '../../base/describeError';
import type { Logger } from '../../base/logger';
import type { OperationFile, OperationRecord, ReconcileEvidence } from './operationRecord';

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

/**
 * The settled state of an operation an earlier run left pending, judged by comparing the disk with its recorded
 * hashes: a `reconciled` event with the evidence, finished_at, status and a stored result.
 */
export async function reconciled(current: OperationRecord, hashOf: DiskHashProbe, at: string, logger: Logger): Promise<OperationRecord> {
  const evidence: ReconcileEvidence[] = [];
  for (const change of current.changes) {
    evidence.push({ path: change.path, expected_before: change.before_hash, expected_after: change.after_hash, found: await probe(hashOf, change.path, current, logger) });
  }
  const status = judge(evidence);
  const reason = RECONCILE_REASONS[status];
  const hint = RECONCILE_HINTS[status];
  const result: ReconciledResult = { status, operation_id: current.operation_id, files: current.files, reason, ...(hint ? { hint } : {}) };
  return {
    ...current,
    status,
    finished_at: at,
    events: [...current.events, { type: 'reconciled', at, status, reason, evidence }],
    result,
  };
}

/** All paths at their after hash → applied (also when there is nothing to compare); all at before → not_applied. */
function judge(evidence: readonly ReconcileEvidence[]): ReconcileOutcome['status'] {
  // A record with no changes (a preview) wrote nothing, whatever the disk holds.
  if (evidence.length === 0) return 'not_applied';
  if (evidence.every((e) => e.found === e.expected_after)) return 'applied';
  if (evidence.every((e) => e.found === e.expected_before)) return 'not_applied';
  return 'unknown';
}

async function probe(hashOf: DiskHashProbe, path: string, record: OperationRecord, logger: Logger): Promise<string | null> {
  try {
    return (await hashOf(path, structuredClone(record))) ?? null;
  } catch (err) {
    logger.warn(`ledger: could not hash ${path} while reconciling ${record.operation_id}: ${describeError(err)}`);
    return 'unreadable';
  }
}
