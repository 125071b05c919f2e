/**
 * File access for the core. Paths are absolute, in the host OS's form, and have already passed
 * path confinement (see policy/paths.ts). The VS Code adapter goes through `workspace.fs` so the editor sees
 * every change; the Node adapter is used by unit tests and benchmarks.
 */
export type FileType = 'file' | 'directory' | 'symlink' | 'other';

export interface FileStat {
  readonly type: FileType;
  readonly size: number;
  readonly mtimeMs: number;
  /** POSIX permission bits, where the platform has them. */
  readonly mode?: number;
}

export interface FindOptions {
  /** Most paths to return. */
  readonly maxResults: number;
  /** Whether to honour the editor's exclude settings (files.exclude). */
  readonly useExcludes?: boolean;
}

export interface FindResult {
  /** Root-relative, `/`-separated, sorted. */
  readonly paths: string[];
  readonly truncated: boolean;
  /**
   * Which of `paths` are symbolic links or lie below one, when the adapter knows (a walk that never follows a
   * linked folder does). Undefined: the adapter may have followed links, so every path must be checked.
   */
  readonly symlinks?: readonly string[];
}

export interface WorkspaceFs {
  /** Follows symlinks; undefined when nothing is there. */
  stat(path: string): Promise<FileStat | undefined>;
  /** Does not follow a final symlink; undefined when nothing is there. */
  lstat(path: string): Promise<FileStat | undefined>;
  /** Canonical path with every symlink resolved; throws when the path does not exist. */
  realpath(path: string): Promise<string>;
  readFile(path: string): Promise<Uint8Array>;
  /** Atomic replace (temp file + rename in the same folder) keeping `mode` when given; creates parent folders. */
  writeFile(path: string, data: Uint8Array, options?: { mode?: number }): Promise<void>;
  /** Deletes a file (never a directory). */
  deleteFile(path: string): Promise<void>;
  /** Removes a folder only if it is empty; fails otherwise. Used to undo folders a failed patch created. */
  removeEmptyFolder(path: string): Promise<void>;
  /** The target text of a symbolic link (as stored, not resolved). */
  readLink(path: string): Promise<string>;
  /** Creates a symbolic link at `path` pointing to `target` (used to put back a link a failed patch removed). */
  createLink(target: string, path: string): Promise<void>;
  /** Files under `root` matching a glob relative to it. */
  find(root: string, pattern: string, options: FindOptions): Promise<FindResult>;
  /** True when an editor holds unsaved changes for this file. */
  isDirty(path: string): boolean;
}
