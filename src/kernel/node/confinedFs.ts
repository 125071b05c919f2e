import * as fs from 'node:fs';
import { constants } from 'node:fs';
import type { Stats } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { isInside } from '../../base/paths';
import type { FileContent } from '../../base/workspaceFs';
import { fsFailure } from '../../base/workspaceFs';

/**
 * File operations that stay inside a workspace even while another process swaps symbolic links under them.
 *
 * A path that was checked and then used again can be redirected between the two steps (a folder replaced by a
 * link to somewhere else). So every operation here resolves once, opens once, asks the kernel what was actually
 * opened (`/proc/self/fd/N`, the descriptor's real path), and then works only through that descriptor: file
 * content is read from the open file, and names are created, replaced or removed relative to an open, verified
 * folder (`/proc/self/fd/N/<name>` resolves through the descriptor, not through the path).
 *
 * Linux has `/proc/self/fd`; elsewhere the same checks run on paths, which narrows the window but cannot close it.
 *
 * The system calls are synchronous, except reading and writing contents over SYNC_IO_MAX_BYTES. Each asynchronous
 * call is a round trip through libuv's thread pool, and on a loaded machine every round trip waits for a worker
 * thread and then for the event loop to be scheduled again: measured here with load ~15 on 2 cores, 25 sequential
 * `fs.promises.lstat` took 1.4–124 ms where 25 `lstatSync` took 0.06–0.15 ms. A one-file patch makes about 25 such
 * calls (open, verify through /proc, stat, read, write, rename, close…), each a metadata operation on the page cache
 * that returns in microseconds. Large contents still go through the thread pool, so no big read or write holds up the
 * extension host's event loop. An operation begins with a turn of the event loop (`setImmediate`, no thread
 * involved) when the last turn is 4 ms or more ago, so a caller that loops over file operations never starves timers
 * and I/O: without it, a loop of `read` calls answered entirely by synchronous calls never gives the event loop a turn.
 */

/** Contents up to this size are read and written with synchronous calls; larger ones through the thread pool. */
export const SYNC_IO_MAX_BYTES = 1024 * 1024;
const readAsync = promisify(fs.read);
/** Longest run of file operations between two turns of the event loop (see above). */
export const TURN_SLICE_MS = 4;
let lastTurn = -Infinity;
/**
 * A turn of the event loop (`setImmediate`) when the last one is TURN_SLICE_MS or more ago; otherwise nothing to
 * wait for. A turn per operation made a 200-file patch in the editor wait behind everything the extension host had
 * queued, such as the file events of the files it had just written, 400 times; a turn every 4 ms keeps timers and
 * I/O as responsive without that.
 */
function turn(): Promise<void> | undefined {
  if (performance.now() - lastTurn < TURN_SLICE_MS) return undefined;
  return new Promise((resolve) =>
    setImmediate(() => {
      lastTurn = performance.now();
      resolve();
    }),
  );
}
const writeAsync = promisify(fs.write);

const PROC_FD = process.platform === 'linux' ? '/proc/self/fd' : undefined;
/** O_NONBLOCK: opening a FIFO never waits for a writer. O_NOCTTY: opening a terminal never adopts it. */
const READ_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);
const DIR_FLAGS = constants.O_RDONLY | (constants.O_DIRECTORY ?? 0);
const TEMP_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0);
const READ_CHUNK = 1024 * 1024;

/** The real location of an open descriptor, or of `fallback` where the platform cannot say. */
function openedPath(fd: number, fallback: string): string {
  if (PROC_FD === undefined) return fs.realpathSync.native(fallback);
  const real = fs.readlinkSync(`${PROC_FD}/${fd}`);
  // A file deleted since it was opened reads "<path> (deleted)": it is gone, as if never found.
  if (real.endsWith(' (deleted)')) throw fsFailure('ENOENT', 'the file was removed while it was being opened');
  return real;
}

function closeQuietly(fd: number): void {
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed or never valid: nothing more to release.
  }
}

/** The real path of what `fd` opened, proven inside `realRoot`; otherwise the descriptor is closed and it throws. */
function verified(fd: number, fallback: string, realRoot: string): string {
  let real: string;
  try {
    real = openedPath(fd, fallback);
  } catch (err) {
    closeQuietly(fd);
    throw err;
  }
  if (!isInside(realRoot, real)) {
    closeQuietly(fd);
    throw fsFailure('ESCAPED', 'what was opened lies outside the workspace');
  }
  return real;
}

/** An open folder proven to be inside the workspace; names below it resolve through the descriptor. */
export class ConfinedDirectory {
  private closed = false;

  constructor(
    readonly fd: number,
    /** The folder's real path, checked when it was opened. */
    readonly real: string,
  ) {}

  /** A path naming `name` inside this very folder, whatever happens to the path it was opened by. */
  entry(name: string): string {
    return PROC_FD === undefined ? path.join(this.real, name) : `${PROC_FD}/${this.fd}/${name}`;
  }

  /**
   * The folder as a working directory for a child process. `/proc/<our pid>/fd/N` (not `self`, which a child
   * would read as its own) resolves to the opened folder; keep this object open until the child has started.
   */
  get cwd(): string {
    return PROC_FD === undefined ? this.real : `/proc/${process.pid}/fd/${this.fd}`;
  }

  close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      closeQuietly(this.fd);
    }
    return Promise.resolve();
  }
}

/**
 * Opens the folder `absDir` and proves it lies inside `realRoot`. With `create`, missing folders are made one by
 * one, each below an already verified parent, so a swapped link can never make us create anything outside.
 */
export async function openDirectoryWithin(realRoot: string, absDir: string, options: { create?: boolean } = {}): Promise<ConfinedDirectory> {
  await turn();
  return openDirectory(realRoot, absDir, options.create === true);
}

function openDirectory(realRoot: string, absDir: string, create: boolean): ConfinedDirectory {
  let fd: number;
  try {
    fd = fs.openSync(absDir, DIR_FLAGS);
  } catch (err) {
    const parent = path.dirname(absDir);
    if (!create || (err as NodeJS.ErrnoException).code !== 'ENOENT' || parent === absDir) throw err;
    const above = openDirectory(realRoot, parent, create);
    try {
      const name = path.basename(absDir);
      try {
        fs.mkdirSync(above.entry(name));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      fd = fs.openSync(above.entry(name), DIR_FLAGS);
    } finally {
      void above.close();
    }
  }
  return new ConfinedDirectory(fd, verified(fd, absDir, realRoot));
}

async function withDirectory<T>(realRoot: string, abs: string, create: boolean, fn: (dir: ConfinedDirectory, name: string) => T | Promise<T>): Promise<T> {
  await turn();
  const dir = openDirectory(realRoot, path.dirname(abs), create);
  try {
    return await fn(dir, path.basename(abs));
  } finally {
    await dir.close();
  }
}

function kindOf(st: { isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean }): string {
  return st.isFIFO() ? 'named pipe (FIFO)' : st.isSocket() ? 'socket' : st.isCharacterDevice() || st.isBlockDevice() ? 'device' : 'special file';
}

type Kinded = { isFile(): boolean; isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean; isCharacterDevice(): boolean; isBlockDevice(): boolean };

/** Refuses what is not the expected kind: EISDIR / ENOTREG for a file, ENOTDIR for a folder. */
function expectKind(st: Kinded, expect: 'file' | 'folder'): void {
  if (expect === 'folder') {
    if (!st.isDirectory()) throw fsFailure('ENOTDIR', `it is a ${st.isFile() ? 'file' : kindOf(st)}, not a folder`, { kind: st.isFile() ? 'file' : kindOf(st) });
    return;
  }
  if (st.isDirectory()) throw fsFailure('EISDIR', 'it is a folder');
  if (!st.isFile()) throw fsFailure('ENOTREG', `it is a ${kindOf(st)}, not a regular file`, { kind: kindOf(st) });
}

/**
 * What is at `abs`, before it is opened: a special file is refused from its kind (opening a FIFO could wait for a
 * writer), but confinement comes first, so a link out of the workspace to a device or a folder is outside, not a
 * device or a folder. (What is of the right kind is checked for confinement once opened, through the descriptor.)
 */
function preCheck(realRoot: string, abs: string, expect: 'file' | 'folder'): Kinded & { size: number } {
  const pre = fs.statSync(abs);
  try {
    expectKind(pre, expect);
  } catch (err) {
    if (!isInside(realRoot, fs.realpathSync.native(abs))) throw fsFailure('ESCAPED', 'it leads outside the workspace');
    throw err;
  }
  return pre;
}

/**
 * Opens `abs` once, non-blocking, checks the kind and the real location of what was opened, and closes it. Anything
 * but the expected kind is refused before it is opened (and again after, in case it was swapped in between).
 */
export async function inspectWithin(realRoot: string, abs: string, expect: 'file' | 'folder'): Promise<Stats> {
  await turn();
  preCheck(realRoot, abs, expect);
  const fd = fs.openSync(abs, expect === 'folder' ? DIR_FLAGS : READ_FLAGS);
  verified(fd, abs, realRoot);
  try {
    const st = fs.fstatSync(fd);
    expectKind(st, expect);
    return st;
  } finally {
    closeQuietly(fd);
  }
}

/**
 * Reads a regular file inside `realRoot`. Anything but a regular file is refused before it is opened (and again
 * after, in case it was swapped in between); a file over `maxBytes` is refused before a byte is read.
 */
export async function readFileWithin(realRoot: string, abs: string, maxBytes: number): Promise<FileContent> {
  await turn();
  const pre = preCheck(realRoot, abs, 'file');
  if (pre.size > maxBytes) throw fsFailure('EFBIG', `it is ${pre.size} bytes`, { actual: pre.size, max: maxBytes });
  const fd = fs.openSync(abs, READ_FLAGS);
  const real = verified(fd, abs, realRoot);
  try {
    const st = fs.fstatSync(fd);
    expectKind(st, 'file');
    if (st.size > maxBytes) throw fsFailure('EFBIG', `it is ${st.size} bytes`, { actual: st.size, max: maxBytes });
    // Read what fstat announced plus one byte, so a file that did not grow fits one buffer of its own size (no second,
    // 1 MiB buffer just to find its end); a file that grew meanwhile is read on to the end, never past the limit.
    const chunks: Buffer[] = [];
    let total = 0;
    let want = st.size + 1;
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(want, maxBytes + 1 - total));
      if (buf.length === 0) throw fsFailure('EFBIG', `it grew past ${maxBytes} bytes while being read`, { actual: total, max: maxBytes });
      let filled = 0;
      while (filled < buf.length) {
        const count = buf.length - filled;
        const bytesRead = count <= SYNC_IO_MAX_BYTES ? fs.readSync(fd, buf, filled, count, null) : await readAsync(fd, buf, filled, count, null).then((r) => r.bytesRead);
        if (bytesRead === 0) break;
        filled += bytesRead;
      }
      chunks.push(filled === buf.length ? buf : buf.subarray(0, filled));
      total += filled;
      if (filled < buf.length) break;
      want = READ_CHUNK;
    }
    if (total > maxBytes) throw fsFailure('EFBIG', `it grew past ${maxBytes} bytes while being read`, { actual: total, max: maxBytes });
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
    return { bytes, size: total, mode: st.mode & 0o7777, real };
  } finally {
    closeQuietly(fd);
  }
}

/** The temp file a write with `tag` uses next to `name`: known in advance, so recovery can find and remove it. */
export function tempName(name: string, tag: string): string {
  // Leave room under the 255-byte name limit for the prefix and suffix, whatever the target's name.
  const stem = Buffer.from(name).length > 180 ? Buffer.from(name).subarray(0, 180).toString('utf8').replace(/\uFFFD+$/, '') : name;
  return `.${stem}.codespace-${tag}.tmp`;
}

/**
 * Replaces (or creates) `abs` atomically: the content goes to a temp file in the same verified folder, which is
 * then renamed over the target. At every instant the target is wholly old or wholly new, and a crash at any
 * moment leaves it present. A final symbolic link is replaced as an entry, never followed.
 */
export async function writeFileWithin(realRoot: string, abs: string, data: Uint8Array, options: { mode?: number; tag: string }): Promise<void> {
  await withDirectory(realRoot, abs, true, async (dir, name) => {
    const tmp = dir.entry(tempName(name, options.tag));
    const open = () => fs.openSync(tmp, TEMP_FLAGS, options.mode ?? 0o644);
    let fd: number;
    try {
      fd = open();
    } catch (err) {
      // A temp file of the same operation left by a crash: ours to replace.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      fs.unlinkSync(tmp);
      fd = open();
    }
    try {
      try {
        await writeAll(fd, data);
        if (options.mode !== undefined) fs.fchmodSync(fd, options.mode);
        // No fsync, like the editor's own file system: the rename is atomic for readers and across a crash of this
        // process; the operation ledger, which recovery relies on, is fsynced.
      } finally {
        fs.closeSync(fd);
      }
      fs.renameSync(tmp, dir.entry(name));
    } catch (err) {
      try {
        fs.unlinkSync(tmp);
      } catch {
        // Never created, or already gone.
      }
      throw err;
    }
  });
}

/** Writes all of `data` at the descriptor's position: synchronously when small, else through the thread pool. */
async function writeAll(fd: number, data: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < data.length) {
    const count = data.length - offset;
    offset += count <= SYNC_IO_MAX_BYTES ? fs.writeSync(fd, data, offset, count) : (await writeAsync(fd, data, offset, count)).bytesWritten;
  }
}

/** Removes a leftover temp file of a write tagged `tag` next to `abs`, if there is one. */
export async function removeTempWithin(realRoot: string, abs: string, tag: string): Promise<boolean> {
  try {
    return await withDirectory(realRoot, abs, false, async (dir, name) => {
      fs.unlinkSync(dir.entry(tempName(name, tag)));
      return true;
    });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw err;
  }
}

/** Removes the entry `abs` (a file or a link, never what a link points to). */
export async function deleteWithin(realRoot: string, abs: string): Promise<void> {
  await withDirectory(realRoot, abs, false, (dir, name) => fs.unlinkSync(dir.entry(name)));
}

/** Removes the folder `abs` only if it is empty. */
export async function removeEmptyFolderWithin(realRoot: string, abs: string): Promise<void> {
  await withDirectory(realRoot, abs, false, (dir, name) => fs.rmdirSync(dir.entry(name)));
}

/** Creates a symbolic link at `abs` with the given target text. */
export async function createLinkWithin(realRoot: string, target: string, abs: string): Promise<void> {
  await withDirectory(realRoot, abs, true, (dir, name) => fs.symlinkSync(target, dir.entry(name)));
}
