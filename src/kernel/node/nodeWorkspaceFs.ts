import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_EXCLUDES, compileGlob } from '../../base/glob';
import { ToolError } from '../../base/errors';
import { isUtf8Name } from '../../base/paths';
import type { FileContent, FileStat, FindOptions, FindResult, Within, WorkspaceFs } from '../../base/workspaceFs';
import { createLinkWithin, deleteWithin, inspectWithin, readFileWithin, removeEmptyFolderWithin, removeTempWithin, writeFileWithin } from './confinedFs';

function toStat(st: Stats): FileStat {
  const type = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other';
  return { type, size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777 };
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * WorkspaceFs on node:fs. Every read and write is confined through verified descriptors (see confinedFs.ts).
 * Used on its own where no editor is around (unit tests, benchmarks), and inside the VS Code adapter for all disk
 * access there. Never follows a symlinked folder while walking.
 */
/** The names in `dir` that are not valid UTF-8, in the lossy form readdir gives them as strings. */
async function lossyNames(dir: string): Promise<Set<string>> {
  const out = new Set<string>();
  try {
    for (const raw of await fsp.readdir(dir, { encoding: 'buffer' })) if (!isUtf8Name(raw)) out.add(raw.toString('utf8'));
  } catch {
    // Gone since: nothing to leave out.
  }
  return out;
}

export class NodeWorkspaceFs implements WorkspaceFs {
  constructor(private readonly excludes: readonly string[] = DEFAULT_EXCLUDES) {}

  // Single metadata calls are synchronous, as in confinedFs.ts (which says why): on a loaded machine a round trip
  // through the thread pool costs far more than the call.
  async stat(p: string): Promise<FileStat | undefined> {
    try {
      return toStat(fs.statSync(p));
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async lstat(p: string): Promise<FileStat | undefined> {
    try {
      return toStat(fs.lstatSync(p));
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async realpath(p: string): Promise<string> {
    return fs.realpathSync.native(p);
  }

  async inspect(p: string, options: Within & { expect: 'file' | 'folder' }): Promise<FileStat> {
    return toStat(await inspectWithin(options.within, p, options.expect));
  }

  readFile(p: string, options: Within & { maxBytes: number }): Promise<FileContent> {
    return readFileWithin(options.within, p, options.maxBytes);
  }

  writeFile(p: string, data: Uint8Array, options: Within & { mode?: number; tag: string }): Promise<void> {
    return writeFileWithin(options.within, p, data, options);
  }

  removeTemp(p: string, tag: string, options: Within): Promise<boolean> {
    return removeTempWithin(options.within, p, tag);
  }

  deleteFile(p: string, options: Within): Promise<void> {
    return deleteWithin(options.within, p);
  }

  removeEmptyFolder(p: string, options: Within): Promise<void> {
    return removeEmptyFolderWithin(options.within, p);
  }

  async readLink(p: string): Promise<string> {
    return fs.readlinkSync(p);
  }

  createLink(target: string, p: string, options: Within): Promise<void> {
    return createLinkWithin(options.within, target, p);
  }

  async find(root: string, pattern: string, options: FindOptions): Promise<FindResult> {
    // A linear matcher (no backtracking): no pattern can stall the walk. Invalid patterns throw InvalidArgumentsError.
    const match = compileGlob(pattern);
    // `**/name` excludes (all of the defaults) are a set lookup on the entry name; others need the matcher.
    const active = (options.useExcludes ?? true) ? (options.excludes ?? this.excludes) : [];
    const isNameGlob = (g: string): boolean => /^\*\*\/[^*?[\]{}/]+$/.test(g);
    const names = new Set(active.filter(isNameGlob).map((g) => g.slice(3)));
    const matchers = active.filter((g) => !isNameGlob(g)).map(compileGlob);
    const isExcluded = (name: string, rel: string): boolean => names.has(name) || (matchers.length > 0 && matchers.some((m) => m(rel)));
    const paths: string[] = [];
    const symlinks: string[] = [];
    const unrepresentable: string[] = [];
    let truncated = false;
    // Matching is cheap but a walk of a huge tree is not: give the event loop a turn every few milliseconds.
    const YIELD_AFTER_MS = 8;
    let sliceStart = performance.now();
    let folders = 0;
    const walk = async (dir: string, relDir: string): Promise<void> => {
      if (options.signal?.aborted) return;
      let entries: Dirent[];
      try {
        entries = await fsp.readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      if (performance.now() - sliceStart > YIELD_AFTER_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
        options.onProgress?.(folders, paths.length);
        if (options.signal?.aborted) return;
      }
      folders++;
      // A name that is not valid UTF-8 reads back with U+FFFD in it and names no file: it has no exact JSON form.
      const lossy = entries.some((e) => e.name.includes('\uFFFD')) ? await lossyNames(dir) : undefined;
      const subdirs: [string, string][] = [];
      for (const e of entries) {
        const rel = relDir === '' ? e.name : `${relDir}/${e.name}`;
        if (lossy?.has(e.name)) {
          if (!isExcluded(e.name, rel) && (e.isDirectory() || match(rel))) unrepresentable.push(rel);
          continue;
        }
        if (isExcluded(e.name, rel)) continue;
        if (e.isDirectory()) {
          subdirs.push([path.join(dir, e.name), rel]);
        } else if ((e.isFile() || e.isSymbolicLink()) && match(rel)) {
          paths.push(rel);
          if (e.isSymbolicLink()) symlinks.push(rel);
        }
      }
      await Promise.all(subdirs.map(([abs, rel]) => walk(abs, rel)));
    };
    await walk(root, '');
    if (options.signal?.aborted) throw new ToolError('CANCELLED', 'The find was cancelled.');
    paths.sort();
    if (paths.length > options.maxResults) {
      truncated = true;
      paths.length = options.maxResults;
    }
    const kept = new Set(paths);
    return { paths, truncated, symlinks: symlinks.filter((p) => kept.has(p)), ...(unrepresentable.length > 0 ? { unrepresentable: unrepresentable.sort() } : {}) };
  }

  isDirty(): boolean {
    return false;
  }
}
