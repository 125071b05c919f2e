import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Logger } from '../../base/logger';
import type { ProcessIdentity } from '../../base/node/processIdentity';
import { isSameProcessAlive, writeAtomically } from '../../base/node/processIdentity';
import { describeError } from '../../base/describeError';

/**
 * Which folder holds a window's state: the operation ledger (patches, holds, commands), the checkpoints' content,
 * the works' worktrees and the survivors' registry.
 *
 * VS Code gives each extension host of a workspace a storage folder of its own: the workspace's first one, or, while
 * another live extension host holds that one's lock, `<folder>-1` … `<folder>-9` (extHostStoragePaths.ts). A remote
 * window's server keeps a reloaded page's extension host alive for a while (it waits for the old page to reconnect),
 * so the window's next extension host is given another folder, and the window's state would stay behind in the first.
 *
 * So each state folder has an owner, written in `state-owner.json`: the extension host that uses it, named so that a
 * recycled pid does not match (survivors.ts). An owner whose window stopped answering releases its folder (its
 * ledger stops writing first); an extension host of the same folders, given another folder by VS Code, takes a
 * released folder over, and says where in its own folder (`state-at`), so the window's next extension host finds the
 * state there too. A folder whose owner still has its window (a second window on the same folders) is never taken.
 * An owner whose window answers again takes its folder back unless another one took it meanwhile (then it stays
 * withdrawn: a newer extension host has the window).
 */

const OWNER_FILE = 'state-owner.json';
const POINTER_FILE = 'state-at';
/** A private state folder's name: `window-<pid of the extension host that made it>`. */
const PRIVATE_PREFIX = 'window-';
const PRIVATE_NAME = /^window-\d+$/;
const LOCK_DIR = 'state-owner.lock';
/** A lock folder older than this was left by a process that died holding it (the critical section takes ms). */
const STALE_LOCK_MS = 10_000;
const LOCK_WAIT_MS = 2_000;
/** VS Code tries the first folder and `-1` … `-9`. */
const MAX_SUFFIX = 9;

interface OwnerFile {
  readonly version: 1;
  readonly owner: ProcessIdentity;
  /** Changes on every take: an owner takes its folder back only while the file still holds its nonce. */
  readonly nonce: string;
  /** Its owner stopped using it (its window went away): another extension host of the folders may take it. */
  readonly released: boolean;
}

export type StateFolderSource =
  /** The folder VS Code gave this extension host. */
  | 'own'
  /** A folder an extension host whose window went away released (a reloaded remote window's previous one). */
  | 'released'
  /** The folder this window's previous extension host had taken over, named in its folder's `state-at`. */
  | 'pointer'
  /** VS Code's folder is held by a live owner that did not release it: a folder of this extension host's own. */
  | 'private';

export interface StateFolderChoice {
  readonly dir: string;
  readonly source: StateFolderSource;
  readonly claim: StateClaim;
}

function readOwner(dir: string): OwnerFile | undefined {
  try {
    const data = JSON.parse(fs.readFileSync(path.join(dir, OWNER_FILE), 'utf8')) as Partial<OwnerFile>;
    const o = data.owner as Partial<ProcessIdentity> | undefined;
    if (data.version !== 1 || typeof data.nonce !== 'string' || typeof data.released !== 'boolean') return undefined;
    if (!o || !Number.isInteger(o.pid) || typeof o.start !== 'string' || typeof o.boot !== 'string') return undefined;
    return data as OwnerFile;
  } catch {
    return undefined;
  }
}

function writeOwner(dir: string, file: OwnerFile): void {
  writeAtomically(path.join(dir, OWNER_FILE), JSON.stringify(file));
}

/** Its owner no longer uses the folder: it released it, or it has ended. */
function leftByOwner(current: OwnerFile): boolean {
  return current.released || !isSameProcessAlive(current.owner);
}

function sameIdentity(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.pid === b.pid && a.start === b.start && a.boot === b.boot;
}

/** Blocks this thread for `ms` (the lock is held for the few file operations below; waiting for it is rare). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `fn` while holding `dir`'s lock folder (mkdir is atomic), so two extension hosts never both take a folder.
 * Synchronous: activation takes its folder without giving the event loop a turn.
 */
function locked<T>(dir: string, fn: () => T): T {
  const lock = path.join(dir, LOCK_DIR);
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      fs.mkdirSync(lock, { mode: 0o700 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let age = 0;
      try {
        age = Date.now() - fs.statSync(lock).mtimeMs;
      } catch {
        continue; // removed meanwhile: try again at once
      }
      if (age > STALE_LOCK_MS) fs.rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`${lock} is held by another extension host`);
      else sleepSync(20);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

/** This extension host's ownership of one state folder. */
export class StateClaim {
  private released = false;

  constructor(
    readonly dir: string,
    private readonly self: ProcessIdentity,
    private readonly nonce: string,
  ) {}

  /**
   * Takes `dir` for `self` when nobody else uses it: no owner, a dead one, one that released it, or `self` already.
   * Undefined when a live owner still uses it.
   */
  static take(dir: string, self: ProcessIdentity): StateClaim | undefined {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    return locked(dir, () => {
      const current = readOwner(dir);
      const free = !current || sameIdentity(current.owner, self) || leftByOwner(current);
      if (!free) return undefined;
      const nonce = randomBytes(16).toString('hex');
      writeOwner(dir, { version: 1, owner: self, nonce, released: false });
      return new StateClaim(dir, self, nonce);
    });
  }

  get isReleased(): boolean {
    return this.released;
  }

  /** Lets another extension host of the folders take the folder (call once nothing writes there any more). */
  release(): void {
    locked(this.dir, () => {
      const current = readOwner(this.dir);
      if (current?.nonce !== this.nonce) return;
      writeOwner(this.dir, { ...current, released: true });
    });
    this.released = true;
  }

  /** Takes the folder back after release(): true unless another extension host took it meanwhile. */
  reclaim(): boolean {
    const ok = locked(this.dir, () => {
      const current = readOwner(this.dir);
      if (current?.nonce !== this.nonce || !sameIdentity(current.owner, this.self)) return false;
      writeOwner(this.dir, { ...current, released: false });
      return true;
    });
    if (ok) this.released = false;
    return ok;
  }
}

/**
 * An extension's storage folder `<parent>/<workspace>[-N]/<extension>` in its parts: `base` is the workspace folder's
 * name without VS Code's suffix (`-1` … `-9`), `suffixed` whether it had one.
 */
export function storageFolderParts(storageDir: string): { parent: string; base: string; suffixed: boolean; extension: string } {
  const workspaceFolder = path.dirname(storageDir);
  const m = /^(.+)-[1-9]$/.exec(path.basename(workspaceFolder));
  return { parent: path.dirname(workspaceFolder), base: m ? (m[1] as string) : path.basename(workspaceFolder), suffixed: m !== null, extension: path.basename(storageDir) };
}

/**
 * The storage folders of the same workspace and extension as `vscodeDir`, in VS Code's order, those that exist,
 * `vscodeDir` included.
 */
export function sameWorkspaceFolders(vscodeDir: string): string[] {
  const { parent, base, extension } = storageFolderParts(vscodeDir);
  const names = [base, ...Array.from({ length: MAX_SUFFIX }, (_, i) => `${base}-${i + 1}`)];
  return names.map((n) => path.join(parent, n, extension)).filter((d) => d === vscodeDir || fs.existsSync(d));
}

/** The folder `vscodeDir`'s `state-at` names, when it is one of the same workspace's folders. */
function pointedAt(vscodeDir: string, family: readonly string[]): string | undefined {
  let name: string;
  try {
    name = fs.readFileSync(path.join(vscodeDir, POINTER_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
  return family.find((d) => d !== vscodeDir && path.basename(path.dirname(d)) === name);
}

/**
 * Chooses and takes the state folder of an extension host given `vscodeDir` by VS Code (see the top of this file):
 * 1. the folder its own folder's `state-at` names, when that is free (this window's previous extension host took
 *    it over, and has ended or released it);
 * 2. when VS Code gave a folder other than the workspace's first: a folder of the same workspace that its owner
 *    released (a reloaded remote window's previous extension host; the owner releases before its discovery record
 *    goes, so by the time `askSameWindows` says `gone` it is released), the first in VS Code's order;
 * 3. `vscodeDir` itself, when free;
 * 4. else a private folder in `vscodeDir`: one that an earlier extension host given this folder used and left (it
 *    ended, or released it), the most recently used first, so private folders do not pile up and a window that gets
 *    one again finds its state there; else a new `window-<pid>`. Never a folder a live window uses.
 */
export function chooseStateFolder(o: { vscodeDir: string; self: ProcessIdentity; logger: Logger }): StateFolderChoice {
  const family = sameWorkspaceFolders(o.vscodeDir);
  const pointer = pointedAt(o.vscodeDir, family);
  const say = (choice: StateFolderChoice): StateFolderChoice => {
    try {
      if (choice.source === 'own') fs.rmSync(path.join(o.vscodeDir, POINTER_FILE), { force: true });
      else if (choice.source !== 'private') fs.writeFileSync(path.join(o.vscodeDir, POINTER_FILE), path.basename(path.dirname(choice.dir)), { mode: 0o600 });
    } catch (err) {
      o.logger.warn(`[state] could not record where this window's state is: ${describeError(err)}`);
    }
    return choice;
  };
  const attempt = (dir: string): StateClaim | undefined => {
    try {
      return StateClaim.take(dir, o.self);
    } catch (err) {
      o.logger.warn(`[state] could not take ${dir}: ${describeError(err)}`);
      return undefined;
    }
  };
  if (pointer) {
    const claim = attempt(pointer);
    if (claim) return say({ dir: pointer, source: 'pointer', claim });
  }
  if (family[0] !== o.vscodeDir) {
    for (const dir of family) {
      if (dir === o.vscodeDir || readOwner(dir)?.released !== true) continue;
      const claim = attempt(dir);
      if (claim) return say({ dir, source: 'released', claim });
    }
  }
  const own = attempt(o.vscodeDir);
  if (own) return say({ dir: o.vscodeDir, source: 'own', claim: own });
  for (const dir of leftPrivateFolders(o.vscodeDir)) {
    const claim = attempt(dir);
    if (claim) return say({ dir, source: 'private', claim });
  }
  const dir = path.join(o.vscodeDir, `${PRIVATE_PREFIX}${o.self.pid}`);
  const claim = attempt(dir);
  if (!claim) throw new Error(`no state folder could be taken in ${o.vscodeDir}`);
  return say({ dir, source: 'private', claim });
}

/**
 * The private folders in `vscodeDir` that an owner file names as left (its owner released it or has ended), the most
 * recently written first. A folder whose owner is alive, that has no owner file, or that is a link is not offered.
 */
function leftPrivateFolders(vscodeDir: string): string[] {
  let names: string[];
  try {
    // Real folders only: a link by that name could lead anywhere.
    names = fs
      .readdirSync(vscodeDir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && PRIVATE_NAME.test(e.name))
      .map((e) => e.name);
  } catch {
    return [];
  }
  const left: { dir: string; taken: number }[] = [];
  for (const name of names) {
    const dir = path.join(vscodeDir, name);
    const current = readOwner(dir);
    if (!current || !leftByOwner(current)) continue;
    try {
      left.push({ dir, taken: fs.statSync(path.join(dir, OWNER_FILE)).mtimeMs });
    } catch {
      // Gone since it was read: nothing to offer.
    }
  }
  return left.sort((a, b) => b.taken - a.taken).map((f) => f.dir);
}
