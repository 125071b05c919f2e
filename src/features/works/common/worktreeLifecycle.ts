import { KeyedSerialQueue } from '../../../base/keyedSerialQueue';
import { SerialQueue } from '../../../base/serialQueue';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { WorkRecord } from '../../../kernel/ledger/schemas';
import type { Logger } from '../../../base/logger';
import type { WorkWorktree, WorktreeDiscard, WorktreeFactory, WorktreeRetirement, WorktreeSurvey } from './workTree';
import type { FinishOutcome } from './steering';
import type { SteeringStore } from './steeringStore';
import { holdsWorktree } from './steeringStore';
import { workView } from './views';

/** Open works with their own worktrees at once, by default (`codespace.works.maxWorktrees`). */
export const DEFAULT_MAX_WORKTREE_WORKS = 8;
/** Total MiB the worktrees held may take, by default (`codespace.works.maxWorktreeDiskMiB`; 0: no bound). */
export const DEFAULT_MAX_WORKTREE_DISK_MIB = 2048;
const MIB = 1024 * 1024;

export interface WorktreeLifecycleOptions {
  readonly logger: Logger;
  /** Where a work's workspace is (WORKSPACE_NOT_FOUND when it is not one of the window's). */
  readonly workspaces: {
    get(id: string): { readonly id: string; readonly root: string };
    /** Every folder of the window (absent: the work's own folder only). */
    list?(): readonly { readonly id: string; readonly root: string }[];
  };
  /** Creates a work's git worktrees (absent: only shared works can be opened). */
  readonly worktrees?: WorktreeFactory;
  /** How many open works may have worktrees at once (read at every work_open). */
  readonly maxWorktreeWorks?: () => number;
  /** How many MiB all worktrees held may take together (read at every work_open; 0: no bound). */
  readonly maxWorktreeDiskMiB?: () => number;
}

/**
 * The git worktrees of works: created at work_open under the count and disk bounds, retired at work_finish once
 * nothing in them would be lost, surveyed and discarded at the developer's word. One work's removals run one at a
 * time (work_finish twice at once runs them one after the other).
 */
export class WorktreeLifecycle {
  /** work_open calls creating worktrees now (counted against the bound). */
  private creating = 0;
  /** Under the disk bound, worktrees are measured and created one work_open at a time (each sees the last one's files). */
  private readonly measured = new SerialQueue();
  private readonly removals = new KeyedSerialQueue();

  constructor(
    private readonly store: SteeringStore,
    private readonly options: WorktreeLifecycleOptions,
  ) {}

  /** The bound, then the worktrees of every git folder of the window, on a task branch named after the work. */
  async create(id: string, title: string, workspaceId: string, base: string | undefined): Promise<readonly WorkWorktree[]> {
    const factory = this.options.worktrees;
    if (!factory) throw new ToolError('UNAVAILABLE', 'This host cannot create worktrees (no git support); open the work with isolation "shared".', { details: { reason: 'no_worktrees' } });
    const max = this.options.maxWorktreeWorks?.() ?? DEFAULT_MAX_WORKTREE_WORKS;
    // A finished work that kept a worktree (something in it would be lost) still counts.
    const holding = [...this.store.works.values()].filter(holdsWorktree);
    // Counted with the ones being created now, so that racing opens cannot pass the bound together.
    if (holding.length + this.creating >= max) {
      throw new ToolError('UNAVAILABLE', `${holding.length + this.creating} works already have their own worktrees; at most ${max} (codespace.works.maxWorktrees).`, {
        hint: 'Finish one of them with work_finish (a finished work keeps a worktree until its changes are committed and merged or pushed; then call work_finish again), or open this work with isolation "shared".',
        details: { reason: 'worktree_limit', max, works: holding.map((x) => x.id) },
      });
    }
    this.creating++;
    try {
      const maxMiB = this.options.maxWorktreeDiskMiB?.() ?? DEFAULT_MAX_WORKTREE_DISK_MIB;
      const folders = (this.options.workspaces.list?.() ?? [this.options.workspaces.get(workspaceId)]).map((f) => ({ id: f.id, root: f.root }));
      const make = (): Promise<WorkWorktree[]> => this.make(factory, folders, { id, title, workspaceId, base, maxMiB });
      return await (maxMiB > 0 ? this.measured.run(make) : make());
    } finally {
      this.creating--;
    }
  }

  /**
   * A finished work's worktrees and branches go once nothing in them would be lost; the others stay, each with its
   * reason, and the next work_finish tries them again.
   */
  retire(workId: string): Promise<FinishOutcome & { closed: true }> {
    return this.removals.run(workId, async () => {
      const w = this.store.requireWork(workId);
      if (w.worktrees === undefined) return { closed: true as const, work: workView(w) };
      const left = w.worktrees.filter((t) => t.removed_at === undefined);
      const factory = this.options.worktrees;
      const outcomes: WorktreeRetirement[] = left.length === 0 ? [] : factory ? await factory.retire(left, this.lookup()) : left.map((t) => ({ workspace_id: t.workspace_id, ...noGit }));
      const next = await this.markRemoved(workId, outcomes);
      const byId = new Map(outcomes.map((o) => [o.workspace_id, o]));
      return {
        closed: true as const,
        work: workView(next),
        worktrees: (next.worktrees ?? []).map((t): WorktreeRetirement => byId.get(t.workspace_id) ?? { workspace_id: t.workspace_id, removed: true }),
      };
    });
  }

  /** What discarding work `workId` would drop and keep, per folder it still holds a worktree of. */
  async survey(workId: string): Promise<WorktreeSurvey[]> {
    const w = this.store.requireWork(workId);
    const left = (w.worktrees ?? []).filter((t) => t.removed_at === undefined);
    if (left.length === 0 || !this.options.worktrees) return [];
    return this.options.worktrees.survey(left, this.lookup());
  }

  /** The developer's discard of a finished work's worktrees (with whatever files they hold); marks the work discarded. */
  discard(workId: string): Promise<{ work: WorkRecord; worktrees: WorktreeDiscard[] }> {
    return this.removals.run(workId, async () => {
      const left = (this.store.requireWork(workId).worktrees ?? []).filter((t) => t.removed_at === undefined);
      const factory = this.options.worktrees;
      const outcomes: WorktreeDiscard[] = left.length === 0 ? [] : factory ? await factory.discard(left, this.lookup()) : left.map((t) => ({ workspace_id: t.workspace_id, branch: t.branch, ...noGit }));
      let next = await this.markRemoved(workId, outcomes);
      if (next.discarded_at === undefined) {
        next = { ...next, discarded_at: this.store.timestamp() };
        await this.store.putWork(next);
      }
      this.options.logger.info(`[steering] work ${workId} discarded by the developer`);
      return { work: next, worktrees: outcomes };
    });
  }

  /** Measures (under the disk bound) and creates; a work whose own folder is outside git gets none. */
  private async make(
    factory: WorktreeFactory,
    folders: { id: string; root: string }[],
    w: { id: string; title: string; workspaceId: string; base: string | undefined; maxMiB: number },
  ): Promise<WorkWorktree[]> {
    const base = w.base !== undefined ? { base: w.base } : {};
    if (w.maxMiB > 0) {
      const [needed, used] = await Promise.all([factory.checkoutBytes(folders, base), factory.usage()]);
      if (used + needed > w.maxMiB * MIB) {
        throw new ToolError('UNAVAILABLE', `The worktrees held take ${mib(used)} MiB and this work's checkout needs ${mib(needed)} MiB; at most ${w.maxMiB} MiB together (codespace.works.maxWorktreeDiskMiB).`, {
          hint: 'Finish works holding worktrees (a finished work keeps one until its changes are committed and merged or pushed) or ask the developer to discard one, or open this work with isolation "shared".',
          details: { reason: 'worktree_disk_limit', max_mib: w.maxMiB, used_mib: mib(used), needed_mib: mib(needed) },
        });
      }
    }
    const made = await factory.create(folders, { name: `codespace/${branchSlug(w.title)}-${w.id.replace(/^work_/, '').slice(0, 8)}`, ...base });
    if (!made.some((t) => t.workspace_id === w.workspaceId)) {
      await factory.remove(made, { branches: true });
      throw new InvalidArgumentsError(`Workspace ${w.workspaceId} is not in a git repository, so the work cannot have a worktree of it.`, {
        field: 'isolation',
        hint: 'Open the work with isolation "shared", or in a workspace folder that git tracks.',
        details: { reason: 'not_git', workspace_id: w.workspaceId },
      });
    }
    return made;
  }

  /** Marks the worktrees an outcome removed with removed_at (now); the work as recorded after. */
  private async markRemoved(workId: string, outcomes: readonly { readonly workspace_id: string; readonly removed: boolean }[]): Promise<WorkRecord> {
    const gone = new Set(outcomes.filter((o) => o.removed).map((o) => o.workspace_id));
    const now = this.store.requireWork(workId);
    if (gone.size === 0) return now;
    const at = this.store.timestamp();
    const next: WorkRecord = { ...now, worktrees: (now.worktrees ?? []).map((t) => (t.removed_at === undefined && gone.has(t.workspace_id) ? { ...t, removed_at: at } : t)) };
    await this.store.putWork(next);
    return next;
  }

  /** The window's folder of a workspace id, if it is still one of them (finds the repository of a deleted worktree). */
  private lookup(): { folderOf: (workspaceId: string) => string | undefined } {
    return {
      folderOf: (workspaceId) => {
        try {
          return this.options.workspaces.get(workspaceId).root;
        } catch {
          return undefined;
        }
      },
    };
  }
}

/** A worktree kept because this host has no git support. */
const noGit = { removed: false as const, reason: 'failed' as const, detail: 'this host has no git support' };

/** Bytes in MiB, one decimal, rounded up (a non-zero size never shows as 0). */
function mib(bytes: number): number {
  return Math.ceil((bytes / MIB) * 10) / 10;
}

/** A task branch's name part from a work's title: lower-case words joined by `-`, at most 40 characters. */
export function branchSlug(title: string): string {
  const s = title.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40).replace(/-+$/, '');
  return s === '' ? 'work' : s;
}
