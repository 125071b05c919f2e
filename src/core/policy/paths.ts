import * as path from 'node:path';
import { ToolError } from '../errors';
import type { WorkspaceFs } from '../ports/workspaceFs';

/** A path that passed confinement: `abs` is inside the workspace root, `rel` is its `/`-separated form. */
export interface ConfinedPath {
  readonly abs: string;
  readonly rel: string;
}

function outside(input: string, why: string): ToolError {
  return new ToolError('PATH_OUTSIDE_WORKSPACE', `Path ${JSON.stringify(input)} is not inside the workspace: ${why}.`, {
    hint: 'Use a path relative to the workspace root, with "/" separators and no "..", "~" or absolute form.',
    details: { path: input },
  });
}

/**
 * Checks a workspace-relative path by its text alone, before any file system call.
 * Returns the normalised `/`-separated relative path ("" for the root itself when `allowRoot`).
 */
export function checkRelativePath(input: string, options: { allowRoot?: boolean } = {}): string {
  if (typeof input !== 'string') throw outside(String(input), 'not a string');
  if (input.includes('\0')) throw outside(input, 'it contains a NUL byte');
  if (input.includes('\\')) throw outside(input, 'it contains a backslash; separate folders with "/"');
  if (/%(2e|2f|5c|00)/i.test(input)) throw outside(input, 'it contains a percent-encoded dot, slash or NUL');
  if (input.startsWith('~')) throw outside(input, 'home-relative paths ("~") are not workspace paths');
  if (input.startsWith('/') || /^[a-zA-Z]:/.test(input) || path.isAbsolute(input)) throw outside(input, 'it is absolute');
  const parts = input.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw outside(input, 'it contains ".."');
  const rel = parts.join('/');
  if (rel === '' && !options.allowRoot) throw outside(input, 'it names the workspace root, not a file');
  return rel;
}

/** True when `child` is `parent` or lies below it (no prefix-sibling confusion). */
export function isInside(parent: string, child: string): boolean {
  const r = path.relative(parent, child);
  return r === '' || (!r.startsWith('..') && !path.isAbsolute(r) && r.split(path.sep)[0] !== '..');
}

/**
 * Resolves a workspace-relative path against `root` and proves, with realpath, that it stays inside the root's
 * real location. Works for paths that do not exist yet (creation): the deepest existing ancestor is checked,
 * so a file cannot be created under a symlinked folder that points outside.
 */
export async function confine(fs: WorkspaceFs, root: string, input: string, options: { allowRoot?: boolean; realRoot?: string } = {}): Promise<ConfinedPath> {
  const rel = checkRelativePath(input, options);
  const abs = rel === '' ? root : path.join(root, ...rel.split('/'));
  if (!isInside(root, abs)) throw outside(input, 'it resolves outside the root');

  // A caller confining many paths at once may pass the root's real path, resolved once for all of them.
  let realRoot: string;
  try {
    realRoot = options.realRoot ?? (await fs.realpath(root));
  } catch (err) {
    throw new ToolError('WORKSPACE_NOT_FOUND', 'The workspace folder no longer exists on disk.', { cause: err, details: { path: input } });
  }

  // Walk up from the target to the deepest existing entry and resolve it.
  let probe = abs;
  const missing: string[] = [];
  for (;;) {
    const st = await fs.lstat(probe);
    if (st !== undefined) break;
    if (probe === root) break;
    missing.unshift(path.basename(probe));
    probe = path.dirname(probe);
  }
  let realProbe: string;
  try {
    realProbe = await fs.realpath(probe);
  } catch {
    // A dangling symlink: its target is unknown territory.
    throw outside(input, 'it goes through a symbolic link whose target does not exist');
  }
  if (!isInside(realRoot, realProbe)) throw outside(input, 'it goes through a symbolic link that points outside the workspace');
  return { abs, rel };
}

/** Converts an absolute path below `root` to the contract's `/`-separated relative form. */
export function toRelative(root: string, abs: string): string {
  return path.relative(root, abs).split(path.sep).join('/');
}
