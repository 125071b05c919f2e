import * as path from 'node:path';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import { RealFolders, confine, failureCode, fileError, realRootOf } from '../../../base/paths';
import type { PlannedFile } from './plan';
import { MAX_PATCH_FILE_BYTES } from './patchTypes';
import type { PatchStep } from './patchTypes';
import { contentVersion } from './version';

/** What a patch finds at a path: a regular file's bytes and mode, nothing, or a folder. */
export type FileFound = { bytes: Uint8Array; mode?: number } | undefined | 'directory';

/**
 * Reads the file at `abs` (confined, `rel` names it in errors) through one verified descriptor: what is planned from
 * is what was inside the workspace. Nothing there (or a file on the way) is `undefined`, a folder is 'directory';
 * anything else that refuses the read throws the file's error (TOO_LARGE over MAX_PATCH_FILE_BYTES). `real` is the
 * real path the descriptor had (see FileContent.real).
 */
export async function readFound(fs: WorkspaceFs, abs: string, rel: string, realRoot: string): Promise<{ found: FileFound; real?: string }> {
  try {
    const { bytes, mode, real } = await fs.readFile(abs, { within: realRoot, maxBytes: MAX_PATCH_FILE_BYTES });
    return { found: { bytes, ...(mode !== undefined ? { mode } : {}) }, ...(real !== undefined ? { real } : {}) };
  } catch (err) {
    const code = failureCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return { found: undefined };
    if (code === 'EISDIR') return { found: 'directory' };
    throw fileError(err, rel, 'max_update_file_bytes') ?? err;
  }
}

/** The version of the regular file at `abs`, read through a verified descriptor; undefined when there is none. */
export async function hashAt(fs: WorkspaceFs, abs: string, realRoot: string): Promise<string | undefined> {
  try {
    return contentVersion((await fs.readFile(abs, { within: realRoot, maxBytes: MAX_PATCH_FILE_BYTES })).bytes);
  } catch (err) {
    const code = failureCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'ENOTREG') return undefined;
    throw err;
  }
}

/** What is at `abs` now: nothing, a folder, or the version of the file there. */
export async function entryVersion(fs: WorkspaceFs, abs: string, realRoot: string): Promise<string | undefined | 'directory'> {
  const st = await fs.stat(abs);
  if (!st) return undefined;
  if (st.type === 'directory') return 'directory';
  return hashAt(fs, abs, realRoot);
}

/** The workspace folder's real path and the confined absolute path of `rel` in it. */
export async function confineOne(fs: WorkspaceFs, root: string, rel: string): Promise<{ realRoot: string; abs: string }> {
  const realRoot = await realRootOf(fs, root);
  const { abs } = await confine(fs, root, rel, { realRoot });
  return { realRoot, abs };
}

/**
 * The folder's real path, and a resolver of workspace paths to confined absolute ones for one plan: each path is
 * confined once, and each folder's real path resolved once (RealFolders).
 */
export async function confinedPaths(fs: WorkspaceFs, root: string): Promise<{ realRoot: string; resolve: (rel: string) => Promise<string> }> {
  const realRoot = await realRootOf(fs, root);
  const folders = new RealFolders();
  const absOf = new Map<string, string>();
  const resolve = async (rel: string): Promise<string> => {
    const known = absOf.get(rel);
    if (known) return known;
    const { abs } = await confine(fs, root, rel, { realRoot, folders });
    absOf.set(rel, abs);
    return abs;
  };
  return { realRoot, resolve };
}

/** The file a symbolic link names (already confined to the workspace), or `abs` itself when it is no link. */
export async function throughLink(fs: WorkspaceFs, abs: string): Promise<string> {
  return (await fs.lstat(abs))?.type === 'symlink' ? fs.realpath(abs) : abs;
}

/**
 * What a write at `abs` changes on disk, to spot two sections that reach the same file through symbolic links:
 * the real path of the content (`content`: an update through a link changes the link's target), else the real
 * folder plus the entry's own name (an add, a delete, a move: the entry itself). The folder may not exist yet.
 */
export async function diskIdentity(fs: WorkspaceFs, abs: string, content: boolean): Promise<string> {
  if (content) return fs.realpath(abs);
  const rest = [path.basename(abs)];
  let dir = path.dirname(abs);
  while ((await fs.lstat(dir)) === undefined && path.dirname(dir) !== dir) {
    rest.unshift(path.basename(dir));
    dir = path.dirname(dir);
  }
  return path.join(await fs.realpath(dir), ...rest);
}

/** Ancestors of `abs` below `root` that do not exist yet, deepest first. */
export async function missingFolders(fs: WorkspaceFs, abs: string, root: string): Promise<string[]> {
  const out: string[] = [];
  for (let dir = path.dirname(abs); dir !== root && path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    if ((await fs.lstat(dir)) !== undefined) break;
    out.push(dir);
  }
  return out;
}

function modeOf(file: PlannedFile): { mode?: number } {
  return file.mode !== undefined ? { mode: file.mode } : {};
}

/** The mode the file had before the step (none for an add). */
export function modeBeforeOf(file: PlannedFile): { mode?: number } {
  const mode = file.kind === 'add' ? undefined : (file.beforeMode ?? file.mode);
  return mode !== undefined ? { mode } : {};
}

/** Writes one planned file: each write atomic (a temp file tagged `tag`, renamed over the target). */
export async function writeStep(fs: WorkspaceFs, step: PatchStep, options: { within: string; tag: string }): Promise<void> {
  const { file } = step;
  const within = { within: options.within };
  switch (file.kind) {
    case 'add':
    case 'update':
      await fs.writeFile(step.abs, file.after as Uint8Array, { ...options, ...modeOf(file) });
      return;
    case 'delete':
      await fs.deleteFile(step.abs, within);
      return;
    case 'move':
      await fs.writeFile(step.absTarget as string, file.after as Uint8Array, { ...options, ...modeOf(file) });
      await fs.deleteFile(step.abs, within);
      return;
  }
}
