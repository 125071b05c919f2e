import { createHash } from 'node:crypto';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import type { CheckpointEntry, CheckpointTarget, RepoCheckpoint, WorkCheckpoints } from './workCheckpoint';
import type { WorkRecord } from '../../../kernel/ledger/schemas';
import { assertNotOwn, callerFields, callerLabel } from '../../../kernel/identity';
import type { Authors, Caller } from '../../../kernel/identity';
import { describeError } from '../../../base/describeError';
import { KeyedSerialQueue } from '../../../base/keyedSerialQueue';

/**
 * Freeze, bound review and reviewed commit of a work. A freeze captures one checkpoint per repository of the work
 * (its worktrees, or the repository of a shared work's folder) and one digest over them; while frozen, every tool
 * that writes or runs a command with the work's work_id is refused (WORK_FROZEN, through WorkspaceRegistry.require).
 * A review (the developer's, or another agent's) names the digest it saw and is refused when the work no longer has
 * it (REVIEW_STALE), or when the reviewer is one of the work's authors (PERMISSION_DENIED, self_review: the shared
 * check of src/kernel/identity.ts, by agent identity across sessions, else by session).
 * The reviewed commit commits exactly the reviewed content in every changed repository, once: a repository whose
 * HEAD already carries the digest's trailer is not committed again.
 */

/** The trailer of a reviewed commit: `CodeSpace-Review: sha256:<hex>`. */
export const REVIEW_TRAILER = 'CodeSpace-Review';
/** Most UTF-8 bytes of a review's findings. */
export const MAX_FINDINGS_BYTES = 16 * 1024;
/** Reviews kept per work (the newest). */
export const MAX_REVIEWS = 50;

const KIND_ORDER: Record<CheckpointEntry['kind'], number> = { head: 0, index: 1, file: 2, deleted: 3, other: 4, repo: 5 };

/**
 * The canonical listing of a repository's checkpoint: one line per entry, sorted by kind then path (bytewise), the
 * fields separated by spaces and the path last, as a JSON string (so no name can forge a separator or a line).
 */
export function canonicalListing(entries: readonly CheckpointEntry[]): string {
  const key = (e: CheckpointEntry): string => ('path' in e ? e.path : '');
  const sorted = [...entries].sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0) || lineOf(a).localeCompare(lineOf(b)));
  return sorted.map(lineOf).join('\n') + '\n';
}

function lineOf(e: CheckpointEntry): string {
  switch (e.kind) {
    case 'head':
      return `head ${e.commit} ${JSON.stringify(e.branch)}`;
    case 'index':
      return `index ${e.mode} ${e.blob} ${e.stage} ${JSON.stringify(e.path)}`;
    case 'file':
      return `${e.untracked ? 'untracked' : 'file'} ${e.mode} ${e.blob} ${e.sha256} ${JSON.stringify(e.path)}`;
    case 'deleted':
      return `deleted ${JSON.stringify(e.path)}`;
    case 'other':
      return `other ${JSON.stringify(e.path)}`;
    case 'repo':
      return `repo ${e.digest} ${JSON.stringify(e.path)}`;
  }
}

function sha256(text: string): string {
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}

/** The digest of one repository: sha256 over its canonical listing. */
export function repoDigest(entries: readonly CheckpointEntry[]): string {
  return sha256(canonicalListing(entries));
}

/** The digest of a work: sha256 over `<workspace ids> <repository digest>` lines, sorted. */
export function workDigest(repos: readonly Pick<RepoCheckpoint, 'workspace_ids' | 'digest'>[]): string {
  return sha256(repos.map((r) => `${[...r.workspace_ids].sort().join(',')} ${r.digest}`).sort().join('\n') + '\n');
}

export type FrozenState = NonNullable<WorkRecord['frozen']>;
export type WorkReviewRecord = NonNullable<WorkRecord['reviews']>[number];

/** Who reviews (or commits): the developer in the editor, or an MCP caller (its session and agent identity). */
export type Reviewer = { readonly developer: true } | { readonly caller: Caller };

/** A work's authors: the session and agent that opened it, and every session and agent that edited it. */
export function workAuthors(w: WorkRecord): Authors {
  return {
    sessions: [...(w.editors ?? []), ...(w.session !== undefined ? [w.session] : [])],
    agents: [...(w.editor_agents ?? []), ...(w.agent !== undefined ? [w.agent.id] : [])],
  };
}

/** The caller a recorded review names (undefined: the developer's). Older records name only `session:<id>` in `by`. */
function reviewCaller(r: WorkReviewRecord): Caller | undefined {
  if (r.by === 'developer') return undefined;
  const session = r.session ?? (r.by.startsWith('session:') ? r.by.slice('session:'.length) : undefined);
  const agentId = r.agent_id ?? (r.by.startsWith('agent:') ? r.by.slice('agent:'.length) : undefined);
  return { ...(session !== undefined ? { session } : {}), ...(agentId !== undefined ? { agent: { id: agentId, name: r.agent ?? agentId } } : {}) };
}

/** The part of the steering service freezing needs. */
export interface FreezeSteering {
  requireWork(workId: string): WorkRecord;
  updateWork(workId: string, change: (w: WorkRecord) => WorkRecord): Promise<WorkRecord>;
  /** Process ids of the work's commands still running. */
  runningProcesses(workId: string): readonly string[];
}

export interface FreezeOptions {
  readonly steering: FreezeSteering;
  readonly checkpoints: WorkCheckpoints;
  readonly workspaces: { get(id: string): { readonly root: string } };
  readonly logger: Logger;
  readonly now?: () => Date;
}

export interface FreezeView {
  readonly work_id: string;
  readonly frozen: boolean;
  readonly digest?: string;
  readonly commits?: readonly { readonly workspace_id: string; readonly commit: string }[];
}

export class WorkFreezer {
  /** One work's freeze, review and commit steps run one at a time (two commits at once would race). */
  private readonly steps = new KeyedSerialQueue();

  constructor(private readonly options: FreezeOptions) {}

  /** The repositories of a work: its live worktrees (one per top), or the repository of its folder. */
  targets(w: WorkRecord): CheckpointTarget[] {
    if (w.worktrees !== undefined) {
      const byTop = new Map<string, string[]>();
      for (const t of w.worktrees) {
        if (t.removed_at !== undefined) continue;
        const ids = byTop.get(t.top);
        if (ids) ids.push(t.workspace_id);
        else byTop.set(t.top, [t.workspace_id]);
      }
      return [...byTop].map(([top, ids]) => ({ workspace_ids: ids, root: top }));
    }
    return [{ workspace_ids: [w.workspace_id], root: this.options.workspaces.get(w.workspace_id).root }];
  }

  /** The work's checkpoints now, and their digest. */
  async capture(w: WorkRecord): Promise<{ digest: string; repos: RepoCheckpoint[] }> {
    const targets = this.targets(w);
    if (targets.length === 0) throw new InvalidArgumentsError(`Work ${w.id} has no worktree left to freeze.`, { field: 'work_id', details: { reason: 'worktree_removed' } });
    let repos: RepoCheckpoint[];
    try {
      repos = await this.options.checkpoints.capture(targets);
    } catch (err) {
      if (ToolError.is(err) || InvalidArgumentsError.is(err)) throw err;
      throw new ToolError('UNAVAILABLE', `The checkpoint of work ${w.id} could not be taken: ${describeError(err)}`, {
        hint: 'A work is frozen in git repositories only; the developer can see details in the CodeSpace log.',
        details: { reason: 'checkpoint_failed' },
      });
    }
    return { digest: workDigest(repos), repos };
  }

  /**
   * What a review of a frozen work shows: per repository, the commit its changes are shown against (a worktree's
   * base, or HEAD at the freeze) and the files now, with the work's digest now (the review is of the frozen one:
   * REVIEW_STALE when they differ).
   */
  async inspect(workId: string): Promise<{ digest: string; repos: { repo: RepoCheckpoint; base: string }[] }> {
    const w = this.options.steering.requireWork(workId);
    const frozen = this.requireFrozen(w);
    const repos = await this.assertUnchanged(w, frozen);
    return {
      digest: frozen.digest,
      repos: repos.map((repo) => ({ repo, base: w.worktrees?.find((t) => t.top === repo.top)?.base ?? frozen.repos.find((f) => f.top === repo.top)?.head ?? repo.head })),
    };
  }

  /** work_review freeze: captures the checkpoint; from now on edits with the work's work_id are refused. */
  freeze(workId: string): Promise<FreezeView> {
    return this.steps.run(workId, async () => {
      const w = this.options.steering.requireWork(workId);
      if (w.status !== 'open') throw new InvalidArgumentsError(`Work ${w.id} is finished; only an open work can be frozen.`, { field: 'work_id', details: { reason: 'work_finished' } });
      const running = this.options.steering.runningProcesses(workId);
      if (running.length > 0) {
        throw new ToolError('WORKSPACE_BUSY', `Work ${w.id} has ${running.length} command(s) running (${running.join(', ')}): a running command could change the work after its checkpoint.`, {
          hint: 'Wait for them to exit or terminate them (terminate_process), then freeze.',
          details: { reason: 'processes_running', process_ids: [...running] },
        });
      }
      const { digest, repos } = await this.capture(w);
      const at = this.timestamp();
      const frozen: FrozenState = { digest, at, repos: repos.map((r) => ({ workspace_ids: [...r.workspace_ids], top: r.top, head: r.head, digest: r.digest, changed: r.changed })) };
      await this.options.steering.updateWork(workId, (cur) => ({ ...cur, frozen }));
      this.options.logger.info(`[works] ${workId} frozen at ${digest} (${repos.length} repositor${repos.length === 1 ? 'y' : 'ies'})`);
      return { work_id: workId, frozen: true, digest };
    });
  }

  /** work_review reopen: edits are accepted again; reviews of the frozen digest stay bound to it (stale from the first change). */
  reopen(workId: string): Promise<FreezeView> {
    return this.steps.run(workId, async () => {
      const w = this.options.steering.requireWork(workId);
      if (w.frozen === undefined) return { work_id: workId, frozen: false };
      await this.options.steering.updateWork(workId, (cur) => {
        const next = { ...cur };
        delete next.frozen;
        return next;
      });
      this.options.logger.info(`[works] ${workId} reopened`);
      return { work_id: workId, frozen: false };
    });
  }

  /** The frozen state, or WORK_FROZEN's counterpart: INVALID_ARGUMENTS not_frozen. */
  private requireFrozen(w: WorkRecord): FrozenState {
    if (w.frozen === undefined) {
      throw new InvalidArgumentsError(`Work ${w.id} is not frozen: freeze it first (work_review action "freeze"), then review the digest it returns.`, {
        field: 'work_id',
        details: { reason: 'not_frozen', work_id: w.id },
      });
    }
    return w.frozen;
  }

  /** REVIEW_STALE unless the work is exactly as frozen (per repository: which ones changed). */
  private async assertUnchanged(w: WorkRecord, frozen: FrozenState): Promise<RepoCheckpoint[]> {
    const now = await this.capture(w);
    if (now.digest === frozen.digest) return now.repos;
    const changed = now.repos.filter((r) => !frozen.repos.some((f) => f.top === r.top && f.digest === r.digest)).flatMap((r) => r.workspace_ids);
    throw new ToolError('REVIEW_STALE', `Work ${w.id} changed since it was frozen (in ${changed.join(', ') || 'its repositories'}): the checkpoint ${frozen.digest} is no longer what is on disk.`, {
      hint: 'Reopen the work (work_review action "reopen"), freeze it again and review the new digest.',
      details: { reason: 'changed_since_freeze', work_id: w.id, digest: frozen.digest, current: now.digest, changed },
    });
  }

  /**
   * A review bound to `digest`: refused when the work is not frozen at that digest, when it changed since, and when
   * the reviewing session is one whose operations edited the work (or that opened it). Returns the review recorded.
   */
  review(workId: string, digest: string, approved: boolean, reviewer: Reviewer, findings?: string): Promise<WorkReviewRecord> {
    return this.steps.run(workId, async () => {
      const w = this.options.steering.requireWork(workId);
      const frozen = this.requireFrozen(w);
      if (findings !== undefined && new TextEncoder().encode(findings).length > MAX_FINDINGS_BYTES) {
        throw new InvalidArgumentsError(`findings has more than ${MAX_FINDINGS_BYTES} bytes.`, { field: 'findings' });
      }
      if ('caller' in reviewer) assertNotOwn(reviewer.caller, workAuthors(w), { kind: 'work', id: w.id, action: 'review' });
      if (digest !== frozen.digest) {
        throw new ToolError('REVIEW_STALE', `The digest reviewed (${digest.slice(0, 80)}) is not the work's checkpoint ${frozen.digest}.`, {
          hint: 'Review what the work is frozen at: work_review action "freeze" returns the digest (again, if nothing changed).',
          details: { reason: 'digest_mismatch', work_id: w.id, digest: frozen.digest },
        });
      }
      await this.assertUnchanged(w, frozen);
      const record: WorkReviewRecord = {
        digest,
        approved,
        by: 'developer' in reviewer ? 'developer' : callerLabel(reviewer.caller),
        at: this.timestamp(),
        ...('caller' in reviewer ? callerFields(reviewer.caller) : {}),
        ...(findings !== undefined && findings !== '' ? { findings } : {}),
      };
      await this.options.steering.updateWork(workId, (cur) => ({ ...cur, reviews: [...(cur.reviews ?? []), record].slice(-MAX_REVIEWS) }));
      this.options.logger.info(`[works] ${workId} ${approved ? 'approved' : 'not approved'} at ${digest} by ${record.by}`);
      return record;
    });
  }

  /**
   * The reviewed commit: the latest review of the frozen digest must approve it; then every repository that changed
   * gets one commit of exactly the frozen content (message: the work's title, or `message`, and the digest's
   * trailer). A repository whose HEAD already carries the trailer is taken as committed: repeating never commits
   * twice, also after a failure half-way. The work stays frozen (a new freeze after reopening starts over).
   */
  commit(workId: string, message?: string, committer: Reviewer = { developer: true }): Promise<FreezeView & { commits: { workspace_id: string; commit: string }[] }> {
    return this.steps.run(workId, async () => {
      const w = this.options.steering.requireWork(workId);
      const frozen = this.requireFrozen(w);
      const authors = workAuthors(w);
      if ('caller' in committer) assertNotOwn(committer.caller, authors, { kind: 'work', id: w.id, action: 'commit' });
      const last = [...(w.reviews ?? [])].reverse().find((r) => r.digest === frozen.digest);
      if (!last?.approved) {
        throw new ToolError('PERMISSION_DENIED', last ? `The review of ${frozen.digest} did not approve work ${w.id}.` : `Work ${w.id} has no review of its checkpoint ${frozen.digest}.`, {
          hint: 'The developer (in the editor) or another agent approves the frozen digest first.',
          details: { reason: last ? 'not_approved' : 'not_reviewed', work_id: w.id, digest: frozen.digest },
        });
      }
      // The approval a commit relies on must not be the authors' own (also for a review recorded by an older version).
      const approver = reviewCaller(last);
      if (approver !== undefined) assertNotOwn(approver, authors, { kind: 'work', id: w.id, action: 'review' });
      const text = (message ?? w.title).trim() || w.title;
      const now = await this.options.checkpoints.capture(this.targets(w));
      const commits: { workspace_id: string; commit: string }[] = [];
      const pending: RepoCheckpoint[] = [];
      for (const f of frozen.repos) {
        const repo = now.find((r) => r.top === f.top);
        const done = await this.options.checkpoints.headTrailer(f.top, REVIEW_TRAILER);
        if (done?.value === frozen.digest) {
          for (const id of f.workspace_ids) commits.push({ workspace_id: id, commit: done.commit });
          continue;
        }
        if (!repo || repo.digest !== f.digest) {
          throw new ToolError('REVIEW_STALE', `Work ${w.id} changed in ${f.workspace_ids.join(', ')} since it was frozen and reviewed; nothing ${commits.length > 0 ? 'more ' : ''}was committed.`, {
            hint: 'Reopen the work, freeze it again and have the new digest reviewed.',
            details: { reason: 'changed_since_freeze', work_id: w.id, digest: frozen.digest, changed: [...f.workspace_ids] },
          });
        }
        if (repo.changed) pending.push(repo);
      }
      for (const repo of pending) {
        const commit = await this.options.checkpoints.commit(repo, `${text}\n\n${REVIEW_TRAILER}: ${frozen.digest}\n`);
        for (const id of repo.workspace_ids) commits.push({ workspace_id: id, commit });
      }
      const record = { digest: frozen.digest, at: this.timestamp(), commits: commits.map((c) => ({ ...c })) };
      await this.options.steering.updateWork(workId, (cur) => ({ ...cur, committed: record }));
      this.options.logger.info(`[works] ${workId} committed as reviewed: ${commits.map((c) => `${c.workspace_id} ${c.commit.slice(0, 10)}`).join(', ') || 'nothing changed'}`);
      return { work_id: workId, frozen: true, digest: frozen.digest, commits };
    });
  }

  private timestamp(): string {
    return (this.options.now?.() ?? new Date()).toISOString();
  }
}
