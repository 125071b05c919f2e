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
  /** The exclude globs to honour (the editor's files.exclude for this folder); the adapter's defaults when absent. */
  readonly excludes?: readonly string[];
  /** Aborted when the caller gives up (the client cancelled): the walk stops and find rejects. */
  readonly signal?: AbortSignal;
  /** Called now and then while walking: folders read so far and paths matched. */
  readonly onProgress?: (folders: number, matched: number) => void;
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
  /**
   * Entries left out of `paths` because their names are not valid UTF-8 (in the lossy form a string gives them; a
   * folder stands for everything below it). Listed by no tool; `find` says how many in its notes.
   */
  readonly unrepresentable?: readonly string[];
}

/** A regular file's bytes, read through one verified descriptor. */
export interface FileContent {
  readonly bytes: Uint8Array;
  readonly size: number;
  /** POSIX permission bits, where the platform has them. */
  readonly mode?: number;
  /** The real path of the file that was read (what the verified descriptor had open), where the adapter knows it. */
  readonly real?: string;
}

/**
 * Why a confined operation refused, beyond the operating system's own errno codes (ENOENT, EISDIR, EACCES, ...),
 * which adapters pass through unchanged: `ESCAPED` what was opened lies outside the workspace; `ENOTREG` a FIFO,
 * socket or device; `EFBIG` over the caller's size limit. Core maps every code to a tool error in one place.
 */
export class FsFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'FsFailure';
  }
}

export function fsFailure(code: string, message: string, details?: Readonly<Record<string, unknown>>): FsFailure {
  return new FsFailure(code, message, details);
}

/** Where a confined operation must stay: the real path of the workspace root (resolved once per request). */
export interface Within {
  readonly within: string;
}

export interface WorkspaceFs {
  /** Follows symlinks; undefined when nothing is there. Informational: never a licence to use the path later. */
  stat(path: string): Promise<FileStat | undefined>;
  /** Does not follow a final symlink; undefined when nothing is there. */
  lstat(path: string): Promise<FileStat | undefined>;
  /** Canonical path with every symlink resolved; throws when the path does not exist. */
  realpath(path: string): Promise<string>;
  /**
   * Opens `path` once (never blocking: a FIFO, socket or device is refused from its kind before it is opened), proves
   * that what was opened is a `file` (regular) or a `folder` as expected and lies inside `within`, closes it and
   * returns what it was. Fails with EISDIR (a folder where a file was expected), ENOTDIR (anything else where a folder
   * was expected), ENOTREG (a special file), ESCAPED, or the operating system's code (ENOENT, ...).
   */
  inspect(path: string, options: Within & { expect: 'file' | 'folder' }): Promise<FileStat>;
  /**
   * Opens `path` once, proves that what was opened is a regular file inside `within`, and reads it through that
   * descriptor. Refuses non-regular files before opening them and files over `maxBytes` before reading.
   */
  readFile(path: string, options: Within & { maxBytes: number }): Promise<FileContent>;
  /**
   * Atomic replace through a verified folder: temp file `tempName(name, tag)` + rename. The target is present and
   * wholly old or wholly new at every instant. Keeps `mode` when given; creates parent folders, each verified.
   */
  writeFile(path: string, data: Uint8Array, options: Within & { mode?: number; tag: string }): Promise<void>;
  /** Removes a temp file a write tagged `tag` left next to `path` (after a crash); false when there was none. */
  removeTemp(path: string, tag: string, options: Within): Promise<boolean>;
  /** Deletes a file or link entry (never a directory, never a link's target). */
  deleteFile(path: string, options: Within): Promise<void>;
  /** Removes a folder only if it is empty; fails otherwise. Used to undo folders a failed patch created. */
  removeEmptyFolder(path: string, options: Within): Promise<void>;
  /** The target text of a symbolic link (as stored, not resolved). */
  readLink(path: string): Promise<string>;
  /** Creates a symbolic link at `path` pointing to `target` (used to put back a link a failed patch removed). */
  createLink(target: string, path: string, options: Within): Promise<void>;
  /** Files under `root` matching a glob relative to it. */
  find(root: string, pattern: string, options: FindOptions): Promise<FindResult>;
  /** True when an editor holds unsaved changes for this file. */
  isDirty(path: string): boolean;
}
