import type { InstructionRecord, WorkRecord } from '../../../kernel/ledger/schemas';
import type { InstructionView, WorkView } from './steering';

/** What callers see of a work record: a copy, without the bookkeeping fields (editors, every review). */
export function workView(w: WorkRecord): WorkView {
  return {
    id: w.id,
    workspace_id: w.workspace_id,
    title: w.title,
    status: w.status,
    opened_at: w.opened_at,
    ...(w.finished_at !== undefined ? { finished_at: w.finished_at } : {}),
    ...(w.discarded_at !== undefined ? { discarded_at: w.discarded_at } : {}),
    ...(w.session !== undefined ? { session: w.session } : {}),
    ...(w.agent !== undefined ? { agent: { ...w.agent } } : {}),
    ...(w.baseline !== undefined ? { baseline: w.baseline } : {}),
    ...(w.worktrees !== undefined
      ? { worktrees: w.worktrees.map((t) => ({ workspace_id: t.workspace_id, root: t.root, top: t.top, branch: t.branch, base: t.base, ...(t.removed_at !== undefined ? { removed_at: t.removed_at } : {}) })) }
      : {}),
    ...(w.frozen !== undefined ? { frozen: { digest: w.frozen.digest, at: w.frozen.at } } : {}),
    ...(w.reviews !== undefined && w.reviews.length > 0 ? { review: { ...(w.reviews[w.reviews.length - 1] as NonNullable<WorkRecord['reviews']>[number]) } } : {}),
    ...(w.committed !== undefined ? { committed: { digest: w.committed.digest, commits: w.committed.commits.map((c) => ({ ...c })) } } : {}),
    ...(w.delivered !== undefined ? { delivered: w.delivered.map((d) => ({ ...d })) } : {}),
  };
}

/** What callers see of an instruction record (without its idempotency bookkeeping and queue order). */
export function instructionView(r: InstructionRecord): InstructionView {
  return {
    id: r.id,
    work_id: r.work_id,
    text: r.text,
    status: r.status,
    created_at: r.created_at,
    ...(r.queued_at !== undefined ? { queued_at: r.queued_at } : {}),
    ...(r.claimed_at !== undefined ? { claimed_at: r.claimed_at } : {}),
    ...(r.completed_at !== undefined ? { completed_at: r.completed_at } : {}),
    ...(r.note !== undefined ? { note: r.note } : {}),
    revision: r.revision,
    ...(r.kind !== undefined ? { kind: r.kind } : {}),
    ...(r.comments !== undefined ? { comments: r.comments } : {}),
    ...(r.rewind !== undefined ? { rewind: r.rewind } : {}),
  };
}
