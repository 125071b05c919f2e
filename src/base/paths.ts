import * as path from 'node:path';
import { InvalidArgumentsError, ToolError } from './errors';
import { FsFailure } from './workspaceFs';
import type { WorkspaceFs } from './workspaceFs';

/** Longest workspace-relative path, and path segment, in UTF-8 bytes (Linux's PATH_MAX and NAME_MAX, less room). */
export const MAX_PATH_BYTES = 4000;
export const MAX_SEGMENT_BYTES = 255;

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

/** A lone UTF-16 surrogate: text no file name on disk can hold (it has no UTF-8 form). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Checks a workspace-relative path by its text alone, before any file system call.
 * Returns the normalised `/`-separated relative path ("" for the root itself when `allowRoot`).
 *
 * The names policy: every name the file system allows is taken exactly as it is, whatever it holds (spaces at
 * either end, a backslash, newlines and other control characters, glob metacharacters, a leading `-` or `#`,
 * percent signs, characters outside the BMP, NFC and NFD forms as distinct names). What is refused says where the
 * path would lead, not what a name looks like: a NUL byte, an absolute or drive path (`/x`, `C:/x`, `C:\x`), `..`,
 * a first folder `~` or `~user` (home-relative), and on Windows a backslash (it separates folders there). Text that
 * no name can hold (a lone surrogate) is INVALID_ARGUMENTS. A name on disk that is not valid UTF-8 has no exact JSON
 * form: `find` and `search` leave it out and say so (see `UNREPRESENTABLE_NAME`).
 */
export function checkRelativePath(input: string, options: { allowRoot?: boolean } = {}): string {
  if (typeof input !== 'string') throw outside(String(input), 'not a string');
  if (input.includes('\0')) throw outside(input, 'it contains a NUL byte');
  if (path.sep === '\\' && input.includes('\\')) throw outside(input, 'it contains a backslash, which separates folders here; separate folders with "/"');
  if (input === '~' || /^~[A-Za-z0-9._-]*\//.test(input)) throw outside(input, 'home-relative paths ("~") are not workspace paths');
  if (input.startsWith('/') || /^[a-zA-Z]:([/\\]|$)/.test(input) || path.isAbsolute(input)) throw outside(input, 'it is absolute');
  if (LONE_SURROGATE.test(input)) throw new InvalidArgumentsError('path holds a lone UTF-16 surrogate, which no file name can hold.');
  const parts = input.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw outside(input, 'it contains ".."');
  const rel = parts.join('/');
  const bytes = Buffer.byteLength(rel);
  if (bytes > MAX_PATH_BYTES) {
    throw new InvalidArgumentsError(`path is ${bytes} bytes long; the limit is ${MAX_PATH_BYTES} bytes.`);
  }
  const long = parts.find((p) => Buffer.byteLength(p) > MAX_SEGMENT_BYTES);
  if (long !== undefined) {
    throw new InvalidArgumentsError(`path has a segment of ${Buffer.byteLength(long)} bytes; a file or folder name is at most ${MAX_SEGMENT_BYTES} bytes.`);
  }
  if (rel === '' && !options.allowRoot) throw outside(input, 'it names the workspace root, not a file');
  return rel;
}

/**
 * Whether a path found on disk is one an agent can name: `find` and `search` list only paths that `read` and the other
 * path-taking tools accept, so nothing is listed that no tool can then open. Under the names policy above, every name
 * that is valid UTF-8 is nameable on Linux and macOS; `isNameable` is the one check the listings apply to what they
 * found, so a future refusal in checkRelativePath drops the name from every listing at once.
 */
export function isNameable(rel: string): boolean {
  try {
    checkRelativePath(rel);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether `rel` is a nameable path in the one spelling checkRelativePath gives it (no empty or `.` segment): the
 * check for paths carried inside other text (review URIs, review comments), so a file any tool takes is shown there
 * too, and a file has one spelling.
 */
export function isCanonicalPath(rel: string): boolean {
  try {
    return checkRelativePath(rel) === rel;
  } catch {
    return false;
  }
}

/** Why a name found on disk is left out of every listing: it is not valid UTF-8, so JSON text cannot carry it. */
export const UNREPRESENTABLE_NAME = 'its name is not valid UTF-8, so no JSON text can carry it exactly';

/** True when `bytes`, a name as the file system holds it, is valid UTF-8 (decodes and re-encodes to itself). */
export function isUtf8Name(bytes: Uint8Array): boolean {
  return Buffer.from(Buffer.from(bytes).toString('utf8'), 'utf8').equals(Buffer.from(bytes));
}

/**
 * The one note `find` and `search` give for paths they found but leave out: names no tool could take (not valid
 * UTF-8, or refused by checkRelativePath). Undefined when none was left out.
 */
export function leftOutNamesNote(count: number): string | undefined {
  if (count === 0) return undefined;
  return `${count} file(s) were left out because ${count === 1 ? 'the name' : 'their names'} cannot be passed as paths: ${UNREPRESENTABLE_NAME} (or the path is refused by the path check); use exec_command to rename them.`;
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
export async function confine(fs: WorkspaceFs, root: string, input: string, options: { allowRoot?: boolean; realRoot?: string; folders?: RealFolders } = {}): Promise<ConfinedPath> {
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

  // Walk up from the target to the deepest existing entry and resolve it. Another process may remove that entry
  // between the two steps: then it is missing too, and its parent is what decides, not a dangling link.
  let probe = abs;
  let probeStat = await fs.lstat(probe);
  while (probe !== root && probeStat === undefined) {
    probe = path.dirname(probe);
    probeStat = await fs.lstat(probe);
  }
  let realProbe: string | undefined;
  // An existing entry that is no link: its real path is its folder's plus its name. A caller confining many paths in
  // one request resolves each folder once (`folders`); what is then opened is verified through its descriptor anyway.
  if (options.folders && probe !== root && probeStat !== undefined && probeStat.type !== 'symlink') {
    const real = await options.folders.realpath(fs, path.dirname(probe)).catch(() => undefined);
    if (real !== undefined) realProbe = path.join(real, path.basename(probe));
  }
  while (realProbe === undefined) {
    try {
      realProbe = await fs.realpath(probe);
    } catch {
      // A dangling symlink: its target is unknown territory.
      if ((await fs.lstat(probe))?.type === 'symlink' || probe === root) throw outside(input, 'it goes through a symbolic link whose target does not exist');
      probe = path.dirname(probe);
    }
  }
  if (!isInside(realRoot, realProbe)) throw outside(input, 'it goes through a symbolic link that points outside the workspace');
  return { abs, rel };
}

/**
 * Real paths of folders, resolved once for one request that confines many paths (a patch of 200 files in 10 folders
 * resolves 10 folders, not 200 paths). Holds for one request only: confine is a check before use, and every file
 * operation proves again, through the descriptor it opened, that it stayed inside (see the node adapter).
 */
export class RealFolders {
  private readonly known = new Map<string, Promise<string>>();

  realpath(fs: WorkspaceFs, dir: string): Promise<string> {
    let p = this.known.get(dir);
    if (!p) {
      p = fs.realpath(dir);
      this.known.set(dir, p);
    }
    return p;
  }
}

/** The real path of a workspace root, resolved once per request; a root gone from disk is WORKSPACE_NOT_FOUND. */
export async function realRootOf(fs: WorkspaceFs, root: string): Promise<string> {
  try {
    return await fs.realpath(root);
  } catch (err) {
    throw new ToolError('WORKSPACE_NOT_FOUND', 'The workspace folder no longer exists on disk.', { cause: err });
  }
}

/** The error code of a failed file operation: ours (FsFailure) or the operating system's errno code. */
export function failureCode(err: unknown): string | undefined {
  if (err instanceof FsFailure) return err.code;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Turns a failed confined file operation on `rel` into the tool error an agent can act on, or undefined when it is
 * not a file system condition (a bug, reported as INTERNAL). One place for every tool, so the same condition always
 * gets the same code. `limit` names the size limit a TOO_LARGE refers to (details: `limit`, `max`, `actual`).
 */
export function fileError(err: unknown, rel: string, limit = 'max_file_bytes'): ToolError | undefined {
  const code = failureCode(err);
  const details: Record<string, unknown> = { path: rel, ...(err instanceof FsFailure ? err.details : {}) };
  if (code === 'EFBIG') details.limit = limit;
  const why = err instanceof FsFailure ? err.message : undefined;
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new ToolError('NOT_FOUND', `No file at ${rel}.`, { hint: 'Use find to list existing paths.', details, cause: err });
    case 'EISDIR':
      return new ToolError('IS_DIRECTORY', `${rel} is a folder, not a file.`, { hint: `Use find with pattern "${rel}/*" to list it.`, details, cause: err });
    case 'ENOTREG':
      return new ToolError('NOT_TEXT', `${rel} is not a regular file: ${why ?? 'a special file'}.`, { hint: 'Only regular files can be read or patched.', details, cause: err });
    case 'EFBIG':
      return new ToolError('TOO_LARGE', `${rel} is too large: ${why ?? 'over the limit'}${typeof details.max === 'number' ? `; the limit is ${details.max} bytes (${limit})` : ''}.`, {
        hint: 'Run a command (for example head or grep) to inspect it instead.',
        details,
        cause: err,
      });
    case 'ESCAPED':
    case 'ELOOP':
      return outside(rel, code === 'ELOOP' ? 'it goes through a loop of symbolic links' : 'it goes through a symbolic link that points outside the workspace');
    case 'ENAMETOOLONG':
      return new ToolError('INVALID_ARGUMENTS', `Path ${JSON.stringify(rel)} is longer than the file system allows.`, { hint: 'Use a shorter path.', details, cause: err });
    case 'EACCES':
    case 'EPERM':
      return new ToolError('PERMISSION_DENIED', `The operating system refused access to ${rel} (${code}).`, {
        hint: 'Check the file\'s permissions; the extension runs as the developer\'s user.',
        details,
        cause: err,
      });
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EROFS':
      return new ToolError('PERMISSION_DENIED', `Cannot write ${rel}: ${code === 'EROFS' ? 'the file system is read-only' : 'the disk is full'} (${code}).`, { details, cause: err });
    default:
      return undefined;
  }
}

/** What a tool expects at a path it takes: a regular file, or a folder (a command's cwd). */
export type PathKind = 'file' | 'folder';

/** A path that passed the one check every tool makes: confined, present, of the expected kind. */
export interface CheckedPath extends ConfinedPath {
  /** The workspace root's real path, resolved for this check. */
  readonly realRoot: string;
}

/** The tool error for a failed confined operation on `rel`, with a missing path first checked for leading outside. */
async function pathError(fs: WorkspaceFs, root: string, rel: string, realRoot: string, err: unknown, expect: PathKind, limit?: string): Promise<unknown> {
  const code = failureCode(err);
  // A path that is missing may be missing because it leads outside (a dangling link): say which.
  if (code === 'ENOENT') await confine(fs, root, rel, { realRoot, allowRoot: true });
  if (expect === 'folder' && (code === 'ENOTDIR' || code === 'ENOTREG')) {
    const details: Record<string, unknown> = { path: rel, ...(err instanceof FsFailure ? err.details : {}) };
    const what = typeof details.kind === 'string' ? `a ${details.kind}` : 'not a folder';
    return new ToolError('NOT_FOUND', `${rel === '' ? 'The workspace root' : rel} is ${what}, not a folder.`, {
      hint: 'Pass an existing folder relative to the workspace root.',
      details,
      cause: err,
    });
  }
  return fileError(err, rel, limit) ?? err;
}

/**
 * The one check of a path an agent passes, shared by every tool that takes one (read, apply_patch's files, a
 * command's cwd, diagnostics, symbols, definition, references, hover, rename_symbol): the text of the path, then what
 * is there through one verified open that never blocks (WorkspaceFs.inspect), in one error vocabulary:
 * PATH_OUTSIDE_WORKSPACE (it leads outside, also through a link), NOT_FOUND (nothing there; for a folder: not a
 * folder), IS_DIRECTORY (a folder where a file was expected), NOT_TEXT with `details.kind` (a named pipe, socket or
 * device). It runs before anything else opens the path: the editor, a language server or a process never gets a
 * FIFO to wait on.
 */
export async function checkPath(fs: WorkspaceFs, root: string, input: string, expect: PathKind, options: { allowRoot?: boolean; realRoot?: string } = {}): Promise<CheckedPath> {
  const rel = checkRelativePath(input, options);
  const abs = rel === '' ? root : path.join(root, ...rel.split('/'));
  const realRoot = options.realRoot ?? (await realRootOf(fs, root));
  try {
    await fs.inspect(abs, { within: realRoot, expect });
  } catch (err) {
    throw await pathError(fs, root, rel, realRoot, err, expect);
  }
  return { abs, rel, realRoot };
}

/** A regular file's bytes, read through one verified descriptor after the same check as checkPath. */
export async function readCheckedFile(fs: WorkspaceFs, root: string, input: string, options: { maxBytes: number; limit: string }): Promise<CheckedPath & { bytes: Uint8Array }> {
  const rel = checkRelativePath(input);
  const abs = path.join(root, ...rel.split('/'));
  const realRoot = await realRootOf(fs, root);
  try {
    // Opened once and verified as opened: a link swapped in after any check cannot redirect the read.
    const { bytes } = await fs.readFile(abs, { within: realRoot, maxBytes: options.maxBytes });
    return { abs, rel, realRoot, bytes };
  } catch (err) {
    throw await pathError(fs, root, rel, realRoot, err, 'file', options.limit);
  }
}
