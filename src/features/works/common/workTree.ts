/**
 * The git side of a work review, without vscode: what changed in a workspace folder since a work's baseline (a
 * git tree captured at work_open, see WorkBaseline in core/steering), the baseline's content of one file, and the
 * plumbing checks a reviewed commit needs. Paths are workspace-relative with `/` separators; blob ids are git
 * object ids in the repository's own format (sha1 or sha256). Implemented by src/features/works/node/gitWorkBaseline.ts.
 */
export type WorkTreeChangeKind = 'add' | 'update' | 'delete';

/** One file that differs between a baseline and the workspace now. */
export interface WorkTreeChange {
  readonly path: string;
  readonly kind: WorkTreeChangeKind;
  /** The git modes before and after (`100644`, `100755`, `120000`), when the change altered the mode. */
  readonly mode?: { readonly from: string; readonly to: string };
  /** The content is the same on both sides: only the mode changed. */
  readonly mode_only?: boolean;
}

export interface WorkTreeRepo {
  /** Whether `baseline` is a ref this implementation reads (a work opened outside git has none). */
  readable(baseline: string | undefined): boolean;
  /** Every file under `root` whose content differs between `baseline` and the working tree now (ignored files excluded). */
  changes(root: string, baseline: string): Promise<WorkTreeChange[]>;
  /** The baseline's bytes of `path`, or undefined when the baseline had no such file. */
  baselineContent(root: string, baseline: string, path: string): Promise<Uint8Array | undefined>;
  /** The blob id git gives these exact bytes (no filters). */
  blobId(root: string, bytes: Uint8Array): Promise<string>;
  /** Repository-wide paths (relative to the repository root) whose index entry differs from HEAD. */
  stagedPaths(root: string): Promise<string[]>;
  /** The index's blob id of each path (undefined: not in the index). */
  indexBlobs(root: string, paths: readonly string[]): Promise<Map<string, string | undefined>>;
  /** The commit HEAD names, or undefined on an unborn branch. */
  head(root: string): Promise<string | undefined>;
  /** The blob id of each path in commit `commit` (undefined: not in it). */
  commitBlobs(root: string, commit: string, paths: readonly string[]): Promise<Map<string, string | undefined>>;
  /** Repository-relative paths commit `commit` changed against its first parent (all of them for a root commit). */
  commitChangedPaths(root: string, commit: string): Promise<string[]>;
  /** The workspace-relative form of a repository-relative path, or undefined when it is outside `root`. */
  toWorkspacePath(root: string, repoPath: string): Promise<string | undefined>;
}

/** One git worktree of a work: the work's copy of one workspace folder, on its own task branch. */
export interface WorkWorktree {
  readonly workspace_id: string;
  /** Absolute path of the workspace folder inside the worktree (the worktree's top, or a folder below it). */
  readonly root: string;
  /** The worktree's top folder (what `git worktree add` created). */
  readonly top: string;
  /** The task branch checked out there, e.g. `codespace/fix-login-1a2b3c4d`. */
  readonly branch: string;
  /** The commit the branch started from. */
  readonly base: string;
}

/**
 * Creates the git worktrees of a work (implemented by src/features/works/node/gitWorktreeFactory.ts). Worktrees are placed outside the
 * workspace folders, so the editor's searches and file watchers never see the files twice.
 */
export interface WorktreeFactory {
  /**
   * One worktree per git repository among `folders` (two folders of one repository share it), each on a new
   * branch from `base` (default HEAD). Folders outside git are left out. On failure nothing it created is left.
   */
  create(folders: readonly { readonly id: string; readonly root: string }[], opts: { readonly name: string; readonly base?: string }): Promise<WorkWorktree[]>;
  /** Removes worktrees `create` made (and their branches when `branches`), best effort; used to undo a failed open. */
  remove(worktrees: readonly WorkWorktree[], opts?: { readonly branches?: boolean }): Promise<void>;
  /**
   * At work_finish: per repository, removes the worktree (never forced) and deletes its task branch, or keeps both
   * when something would be lost. One outcome per entry of `worktrees` (folders of one repository share theirs).
   * `folderOf` (the workspace folder of an id) finds the repository of a worktree whose folder was deleted by hand.
   */
  retire(worktrees: readonly WorkWorktree[], opts?: { readonly folderOf?: (workspaceId: string) => string | undefined }): Promise<WorktreeRetirement[]>;
  /** What discarding would drop, per repository (one entry per entry of `worktrees`, shared like retire's). */
  survey(worktrees: readonly WorkWorktree[], opts?: { readonly folderOf?: (workspaceId: string) => string | undefined }): Promise<WorktreeSurvey[]>;
  /**
   * The developer's explicit discard: per repository, removes the worktree even with changed or untracked files
   * (they are dropped), and deletes the task branch only when no commit of it would be lost (retire's rule);
   * otherwise the branch stays with its commits. A detached HEAD there holding such commits keeps the worktree.
   */
  discard(worktrees: readonly WorkWorktree[], opts?: { readonly folderOf?: (workspaceId: string) => string | undefined }): Promise<WorktreeDiscard[]>;
  /** Bytes the files of every worktree it holds take now (each file once, no link followed). */
  usage(): Promise<number>;
  /**
   * Bytes a new work's checkout would take before it is made: per git repository among `folders`, the sum of the
   * blob sizes at `base` (default HEAD). Checks `base` as `create` does (same errors).
   */
  checkoutBytes(folders: readonly { readonly id: string; readonly root: string }[], opts: { readonly base?: string }): Promise<number>;
}

/** What a worktree holds that a discard drops (`changed`, `untracked` files) or keeps (`unsaved` commits on its branch). */
export interface WorktreeSurvey {
  readonly workspace_id: string;
  readonly top: string;
  readonly branch: string;
  /** False when the worktree folder is no longer on disk. */
  readonly present: boolean;
  readonly changed: number;
  readonly untracked: number;
  /** Commits on the branch (or a detached HEAD) that neither the base, another branch nor a remote-tracking ref holds. */
  readonly unsaved: number;
}

/** One repository's answer to a discard: the worktree removed, and the branch deleted or kept with `kept_commits`. */
export type WorktreeDiscard =
  | { readonly workspace_id: string; readonly removed: true; readonly branch: string; readonly branch_deleted: boolean; readonly kept_commits?: number }
  | { readonly workspace_id: string; readonly removed: false; readonly branch: string; readonly reason: WorktreeKeptReason; readonly detail?: string };

/**
 * Why a work's worktree and branch are kept at work_finish: `uncommitted` (changed or untracked files in the
 * worktree), `unmerged` (commits on the branch that no other branch, remote-tracking ref or the base holds), `failed`
 * (git could not do it; `detail` says why).
 */
export type WorktreeKeptReason = 'uncommitted' | 'unmerged' | 'failed';

export type WorktreeRetirement =
  | { readonly workspace_id: string; readonly removed: true }
  | { readonly workspace_id: string; readonly removed: false; readonly reason: WorktreeKeptReason; readonly detail?: string };
