/**
 * The git side of freezing a work (implemented by src/features/works/node/freezeGit.ts): the checkpoint of each repository
 * (one stable digest over HEAD, the index and every file's content, mode or absence, untracked files included),
 * and the reviewed commit, which records exactly a checkpoint's content or nothing.
 */

/** One line of a repository's canonical listing (see canonicalListing in core/steering/freeze.ts). */
export type CheckpointEntry =
  /** The commit HEAD names (`unborn` on a branch without commits) and the branch it is on (`detached` otherwise). */
  | { readonly kind: 'head'; readonly commit: string; readonly branch: string }
  /** One index entry: what is staged. */
  | { readonly kind: 'index'; readonly path: string; readonly mode: string; readonly blob: string; readonly stage: number }
  /** A file in the working tree (tracked, or untracked and not ignored): its mode, git blob id and sha256. */
  | { readonly kind: 'file'; readonly path: string; readonly mode: string; readonly blob: string; readonly sha256: string; readonly untracked: boolean }
  /** A tracked path with no file in the working tree. */
  | { readonly kind: 'deleted'; readonly path: string }
  /**
   * A nested repository at `path` (a submodule's checkout, or an untracked folder with its own `.git`): `digest` is
   * its own repository digest (its HEAD, index, files and untracked files, nested ones in turn).
   */
  | { readonly kind: 'repo'; readonly path: string; readonly digest: string }
  /** A path that is neither a file, a link nor a repository (an empty or uninitialised submodule folder): named only. */
  | { readonly kind: 'other'; readonly path: string };

/** A repository of a work: the folder a worktree or workspace is in (any folder inside the repository). */
export interface CheckpointTarget {
  readonly workspace_ids: readonly string[];
  readonly root: string;
}

/** One repository's checkpoint. */
export interface RepoCheckpoint {
  /** The workspaces (folders) of the work in this repository. */
  readonly workspace_ids: readonly string[];
  /** The repository's (or worktree's) top folder. */
  readonly top: string;
  readonly head: string;
  readonly digest: string;
  /** Whether the working tree differs from HEAD (something to commit). */
  readonly changed: boolean;
  /** The listing the digest is over (kept in memory for the commit's check; not stored). */
  readonly entries: readonly CheckpointEntry[];
}

export interface WorkCheckpoints {
  /** One checkpoint per repository among `targets` (targets in one repository share it), in target order. */
  capture(targets: readonly CheckpointTarget[]): Promise<RepoCheckpoint[]>;
  /** The value of `key` among the trailers of HEAD's message, if any. */
  headTrailer(top: string, key: string): Promise<{ commit: string; value: string | undefined } | undefined>;
  /**
   * Commits exactly `expected`'s working-tree files on top of `expected.head`, hooks off, through a temporary index
   * (the content staged is checked against the listing before the commit is written; HEAD moves only if it is still
   * `expected.head`). Throws STALE when what is on disk is not `expected`.
   */
  commit(expected: RepoCheckpoint, message: string): Promise<string>;
  /** The files of commit `commit`: top-relative path → `<mode> <blob id>` (nested repositories left out). */
  treeFiles(top: string, commit: string): Promise<Map<string, string>>;
  /** The bytes of `path` in commit `commit`, or undefined when it has no such file. */
  show(top: string, commit: string, path: string): Promise<Uint8Array | undefined>;
}
