import { createHash } from 'node:crypto';
import { ToolError } from '../../../base/errors';
import { checkRelativePath } from '../../../base/paths';
import { unifiedDiffSteps } from './diff';
import { Pacer, drive } from './pacer';
import type { FileOp, ParsedPatch } from './parser';
import { buildAddedFileSteps, planFileUpdateSteps } from './planner';
import { decodeText } from './textFile';
import type { Steps } from './pacer';

/** contentVersion (`sha256:<hex>`) hashed 1 MiB at a time, yielding between chunks: a large file never blocks. */
export function* contentVersionSteps(bytes: Uint8Array): Steps<string> {
  const hash = createHash('sha256');
  const CHUNK = 1024 * 1024;
  for (let at = 0; at < bytes.length; at += CHUNK) {
    hash.update(bytes.subarray(at, Math.min(bytes.length, at + CHUNK)));
    yield;
  }
  return `sha256:${hash.digest('hex')}`;
}

/**
 * Turns a parsed patch into the exact bytes to write, validating every file before returning: nothing is
 * written here. A `check_only` preview returns this plan; an applier writes it atomically.
 */

export type PlannedKind = 'add' | 'update' | 'delete' | 'move';

export interface PlannedFile {
  /** Workspace-relative path the section names (the source of a move). */
  readonly path: string;
  readonly kind: PlannedKind;
  /** Destination of a move. */
  readonly move_to?: string;
  /** Current bytes (update, move, delete). */
  readonly before?: Uint8Array;
  readonly beforeVersion?: string;
  /** Bytes to write (add, update, move: at `move_to`). */
  readonly after?: Uint8Array;
  readonly afterVersion?: string;
  /**
   * POSIX mode of the written file: the existing file's, kept (update, move); a restore's own (add, update); and of
   * the removed file (delete).
   */
  readonly mode?: number;
  /** POSIX mode of the existing file when it differs from `mode` (a restore that changes the mode). */
  readonly beforeMode?: number;
  /** Git-style diff of the change; a move starts with `diff --git` rename lines (and has only those when unedited). */
  readonly diff: string;
}

export interface PlannedPatch {
  readonly files: readonly PlannedFile[];
}

/** What the caller finds at a workspace-relative path: a file, a folder, or nothing. */
export type FileLookup = (relPath: string) => Promise<{ bytes: Uint8Array; mode?: number } | undefined | 'directory'>;

function notFound(path: string, op: string): ToolError {
  return new ToolError('NOT_FOUND', `Cannot ${op} ${JSON.stringify(path)}: no such file.`, {
    hint: 'Check the path with find or read; to create a file use "*** Add File".',
    details: { path },
  });
}

function isDirectory(path: string, op: string): ToolError {
  return new ToolError('IS_DIRECTORY', `Cannot ${op} ${JSON.stringify(path)}: it is a folder.`, {
    hint: 'Patches work on files; name each file inside the folder separately.',
    details: { path },
  });
}

function exists(path: string, why: string): ToolError {
  return new ToolError('FILE_EXISTS', `${JSON.stringify(path)} already exists; ${why}.`, {
    hint: 'Use "*** Update File" to change an existing file, or pick another path.',
    details: { path },
  });
}

function binaryDiff(oldPath: string | null, newPath: string | null): string {
  return `Binary files ${oldPath === null ? '/dev/null' : `a/${oldPath}`} and ${newPath === null ? '/dev/null' : `b/${newPath}`} differ\n`;
}

function parents(path: string): string[] {
  const parts = path.split('/');
  const out: string[] = [];
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join('/'));
  return out;
}

export interface PlanOptions {
  /** Compute each file's unified diff (default true). An apply does not return diffs, so it skips them. */
  readonly diffs?: boolean;
  /** Paces the work (yields to the event loop, enforces the deadline); a fresh one by default. */
  readonly pacer?: Pacer;
  /**
   * The agent's expected versions. When given, they are checked first, before any hunk is matched: a file that
   * changed since it was read is VERSION_CONFLICT with its current version, never a context error that its new
   * content happens to cause.
   */
  readonly expected?: Readonly<Record<string, string>>;
}

export async function planPatch(parsed: ParsedPatch, getFile: FileLookup, options: PlanOptions = {}): Promise<PlannedPatch> {
  const wantDiff = options.diffs ?? true;
  const pacer = options.pacer ?? new Pacer();
  const created = new Set<string>();
  for (const op of parsed.files) {
    if (op.kind === 'update' && op.moveTo !== undefined) created.add(op.moveTo);
    if (op.kind === 'add') created.add(op.path);
  }
  // Files this patch deletes or moves away, so far: an applier writing in patch order has removed them by
  // the time a later section creates something below them.
  const removed = new Set<string>();
  // A path created here must not be a folder of another path created here.
  for (const p of created) {
    for (const parent of parents(p)) {
      if (created.has(parent)) {
        throw new ToolError('PATCH_INVALID', `The patch creates both ${JSON.stringify(parent)} and ${JSON.stringify(p)} inside it.`, {
          hint: 'A path cannot be a file and a folder at once; rename one of them.',
          details: { path: p, conflicting: parent },
        });
      }
    }
  }

  /** Creating `path`: no existing file may stand where one of its folders goes (unless an earlier section removes it). */
  const checkParents = async (path: string): Promise<void> => {
    for (const parent of parents(path)) {
      if (removed.has(parent)) continue;
      const found = await getFile(parent);
      if (found !== undefined && found !== 'directory') {
        throw new ToolError('FILE_EXISTS', `Cannot create ${JSON.stringify(path)}: ${JSON.stringify(parent)} is a file, not a folder.`, {
          hint: 'Pick a path whose folders are folders, or delete that file in an earlier section of the same patch.',
          details: { path, conflicting: parent },
        });
      }
    }
  };

  // Preconditions first: every existing file the patch updates, moves or deletes, at the version the agent read.
  const versions = new Map<string, string>();
  if (options.expected !== undefined) {
    const current: { path: string; beforeVersion: string }[] = [];
    for (const op of parsed.files) {
      if (op.kind === 'add') continue;
      await pacer.breathe();
      const found = await getFile(op.path);
      if (found === undefined || found === 'directory') continue; // NOT_FOUND / IS_DIRECTORY, in patch order below
      const beforeVersion = await drive(contentVersionSteps(found.bytes), pacer);
      versions.set(op.path, beforeVersion);
      current.push({ path: op.path, beforeVersion });
    }
    checkVersions(current, options.expected);
  }

  const files: PlannedFile[] = [];
  for (const op of parsed.files) {
    await pacer.breathe();
    files.push(await planOne(op, getFile, checkParents, wantDiff, pacer, versions));
    if (op.kind === 'delete' || (op.kind === 'update' && op.moveTo !== undefined)) removed.add(op.path);
  }
  return { files };
}

async function planOne(
  op: FileOp,
  getFile: FileLookup,
  checkParents: (p: string) => Promise<void>,
  wantDiff: boolean,
  pacer: Pacer,
  versions: ReadonlyMap<string, string>,
): Promise<PlannedFile> {
  const version = (bytes: Uint8Array): Promise<string> => drive(contentVersionSteps(bytes), pacer);
  const udiff = async (a: string | null, b: string | null, x: string, y: string): Promise<string> => (wantDiff ? drive(unifiedDiffSteps(a, b, x, y), pacer) : '');
  const current = await getFile(op.path);

  if (op.kind === 'add') {
    if (current === 'directory') throw isDirectory(op.path, 'add');
    if (current !== undefined) throw exists(op.path, '"*** Add File" only creates new files');
    await checkParents(op.path);
    const after = await drive(buildAddedFileSteps(op.lines), pacer);
    return { path: op.path, kind: 'add', after, afterVersion: await version(after), diff: wantDiff ? await udiff(null, op.path, '', new TextDecoder().decode(after)) : '' };
  }

  const verb = op.kind === 'delete' ? 'delete' : op.moveTo !== undefined ? 'move' : 'update';
  if (current === undefined) throw notFound(op.path, verb);
  if (current === 'directory') throw isDirectory(op.path, verb);
  const before = current.bytes;
  const beforeVersion = versions.get(op.path) ?? (await version(before));
  const mode = current.mode;

  if (op.kind === 'delete') {
    // The BOM stays in the text, as U+FEFF, so the diff is faithful to the bytes.
    const text = decodeText(before);
    const diff = !wantDiff ? '' : text === undefined ? binaryDiff(op.path, null) : await udiff(op.path, null, text, '');
    return { path: op.path, kind: 'delete', before, beforeVersion, ...(mode === undefined ? {} : { mode }), diff };
  }

  let after = before;
  let diff = '';
  if (op.hunks.length > 0) {
    const update = await drive(planFileUpdateSteps(op.path, before, op.hunks), pacer);
    after = update.after;
    const bom = update.bom ? '\uFEFF' : '';
    diff = await udiff(op.path, op.moveTo ?? op.path, bom + update.beforeText, bom + update.afterText);
  }

  if (op.moveTo === undefined) {
    const afterVersion = after === before ? beforeVersion : await version(after);
    return { path: op.path, kind: 'update', before, beforeVersion, after, afterVersion, ...(mode === undefined ? {} : { mode }), diff };
  }

  const target = await getFile(op.moveTo);
  if (target === 'directory') throw isDirectory(op.moveTo, 'move a file onto');
  if (target !== undefined) throw exists(op.moveTo, `"*** Move to" would overwrite it`);
  await checkParents(op.moveTo);
  const rename = `diff --git a/${op.path} b/${op.moveTo}\nrename from ${op.path}\nrename to ${op.moveTo}\n`;
  return {
    path: op.path,
    kind: 'move',
    move_to: op.moveTo,
    before,
    beforeVersion,
    after,
    afterVersion: after === before ? beforeVersion : await version(after),
    ...(mode === undefined ? {} : { mode }),
    diff: rename + diff,
  };
}

/**
 * Checks the agent's `expected_versions` against the current versions of the existing files a patch updates, moves
 * or deletes: each needs an entry (`VERSION_REQUIRED` lists the missing ones) equal to its current version
 * (`VERSION_CONFLICT` otherwise). Keys are workspace-relative paths; entries for other paths are ignored.
 */
function checkVersions(needed: readonly { path: string; beforeVersion: string }[], expected: Readonly<Record<string, string>>): void {
  const byPath = new Map<string, string>();
  for (const [key, value] of Object.entries(expected)) {
    let rel: string;
    try {
      rel = checkRelativePath(key);
    } catch {
      continue; // Not a path this patch can touch.
    }
    byPath.set(rel, value);
  }
  const missing = needed.filter((f) => !byPath.has(f.path)).map((f) => f.path);
  if (missing.length > 0) {
    throw new ToolError('VERSION_REQUIRED', `expected_versions has no entry for ${missing.map((p) => JSON.stringify(p)).join(', ')}.`, {
      hint: 'Read each file the patch updates, moves or deletes, and pass the version the read returned in expected_versions.',
      details: { paths: missing },
    });
  }
  const conflicts = needed
    .filter((f) => byPath.get(f.path) !== f.beforeVersion)
    .map((f) => ({ path: f.path, expected: byPath.get(f.path) as string, current: f.beforeVersion }));
  const first = conflicts[0];
  if (first !== undefined) {
    throw new ToolError('VERSION_CONFLICT', `${JSON.stringify(first.path)} changed since it was read (expected ${first.expected}, now ${first.current}).`, {
      hint: 'Read the file again, rebuild the patch against its current content, and send the new version.',
      details: { ...first, conflicts },
    });
  }
}
