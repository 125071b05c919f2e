import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DiscoveryRecord, FoundRecord } from '../common/record';
import { RECORD_SUFFIX, TOKEN_SUFFIX, parseRecord } from '../common/record';

/** Another window of the same folders asks a record's owner whether its window still answers (sameWindow.ts). */
export const PING_SUFFIX = '.ping';
export const PONG_SUFFIX = '.pong';
import { identify, pidAlive } from '../../../base/node/processIdentity';

/**
 * Discovery files on disk. One folder per user, mode 0700, never a symlink and never someone else's; in it each
 * window's `<pid>-<random>.json` (the record) and `<pid>-<random>.token` (the bearer token), both 0600, each
 * written to an exclusively created temp file and renamed into place, so a reader sees a whole file or none.
 */

const getuid = (): number | undefined => (typeof process.getuid === 'function' ? process.getuid() : undefined);

/** Names one discovery folder for every process that sees it (tests, unusual setups). Both sides honour it alone. */
export const DISCOVERY_DIR_ENV = 'CODESPACE_DISCOVERY_DIR';

/** What decides the folders: the user's identity and the file system, never variables an agent may strip. */
export interface DiscoveryPlaces {
  readonly env?: NodeJS.ProcessEnv;
  /** Default: this process's uid. */
  readonly uid?: number;
  /** Where systemd makes each user's runtime folder (default `/run/user`). */
  readonly runUserRoot?: string;
  /** The shared temp folder of the fallback (default `/tmp`, whatever TMPDIR says). */
  readonly tmpRoot?: string;
}

/** `<root>/<uid>` when it is that user's own private folder (a logged-in user's runtime folder on Linux). */
function userRuntimeDir(uid: number, root: string): string | undefined {
  const dir = path.join(root, String(uid));
  try {
    const st = fs.lstatSync(dir);
    return st.isDirectory() && st.uid === uid && (st.mode & 0o077) === 0 ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Where this window publishes: `/run/user/<uid>/codespace` when that runtime folder exists and is the user's own,
 * else `/tmp/codespace-<uid>`. A function of the uid and the file system only: an agent may start the bridge
 * with an environment without XDG_RUNTIME_DIR or with another TMPDIR (Codex passes HOME, LANG, LOGNAME,
 * PATH, SHELL, TERM, TMPDIR and USER), and it must still compute the same folder. Windows (no uid): the
 * per-user temp folder. `CODESPACE_DISCOVERY_DIR`, when set to an absolute path, replaces all of this.
 */
export function discoveryDir(places: DiscoveryPlaces = {}): string {
  const override = (places.env ?? process.env)[DISCOVERY_DIR_ENV];
  if (override && path.isAbsolute(override)) return override;
  const uid = places.uid ?? getuid();
  if (uid === undefined) return path.join(os.tmpdir(), `codespace-${os.userInfo().username}`);
  const runtime = userRuntimeDir(uid, places.runUserRoot ?? '/run/user');
  return runtime ? path.join(runtime, 'codespace') : path.join(places.tmpRoot ?? '/tmp', `codespace-${uid}`);
}

/**
 * Every folder a reader searches, the canonical one first: the other candidate of the rule above (a runtime
 * folder that appeared or went while a window ran), and where earlier versions published
 * (`$XDG_RUNTIME_DIR/codespace`, `<tmpdir>/codespace-<uid>`), when this process knows them. With
 * `CODESPACE_DISCOVERY_DIR` set, that folder alone.
 */
export function discoveryDirs(places: DiscoveryPlaces = {}): string[] {
  const env = places.env ?? process.env;
  const first = discoveryDir(places);
  const override = env[DISCOVERY_DIR_ENV];
  if (override && path.isAbsolute(override)) return [first];
  const uid = places.uid ?? getuid();
  const all = [first];
  if (uid !== undefined) {
    const runtime = userRuntimeDir(uid, places.runUserRoot ?? '/run/user');
    if (runtime) all.push(path.join(runtime, 'codespace'));
    all.push(path.join(places.tmpRoot ?? '/tmp', `codespace-${uid}`));
  }
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && path.isAbsolute(xdg)) all.push(path.join(xdg, 'codespace'));
  all.push(path.join(os.tmpdir(), uid === undefined ? `codespace-${os.userInfo().username}` : `codespace-${uid}`));
  return [...new Set(all)];
}

export class DiscoveryDirError extends Error {}

/**
 * Checks (and with `create`, makes) the folder. Refused: a symlink, not a directory, owned by another user. Ours
 * but readable by others (someone loosened it): tightened back to 0700. Windows has no uid or mode bits: the
 * per-user temp folder is already private there.
 */
export function checkDiscoveryDir(dir: string, create: boolean): void {
  if (create) {
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  const st = fs.lstatSync(dir);
  if (st.isSymbolicLink()) throw new DiscoveryDirError(`${dir} is a symbolic link; CodeSpace refuses it as its discovery folder. Remove it.`);
  if (!st.isDirectory()) throw new DiscoveryDirError(`${dir} is not a folder; CodeSpace refuses it as its discovery folder. Remove it.`);
  const uid = getuid();
  if (uid === undefined) return;
  if (st.uid !== uid) throw new DiscoveryDirError(`${dir} belongs to uid ${st.uid}, not to you (uid ${uid}): another user may have planted it. CodeSpace does not use it.`);
  if ((st.mode & 0o077) !== 0) fs.chmodSync(dir, 0o700);
}

const OPEN_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0);

/** Writes `text` to `dir/name` atomically: exclusive temp file (0600, no symlink followed), fsync, rename. */
export function writeAtomic(dir: string, name: string, text: string): void {
  const tmp = path.join(dir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, OPEN_FLAGS, 0o600);
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  try {
    fs.renameSync(tmp, path.join(dir, name));
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

/** One window's published files. `update` rewrites them (port or token changed); `remove` deletes both. */
export class DiscoveryEntry {
  private removed = false;
  readonly recordFile: string;
  readonly tokenFile: string;

  private constructor(
    private readonly dir: string,
    base: string,
  ) {
    this.recordFile = path.join(dir, base + RECORD_SUFFIX);
    this.tokenFile = path.join(dir, base + TOKEN_SUFFIX);
  }

  /** A fresh entry named `<pid>-<random>`; the folder is checked (and created) first. */
  static create(dir: string, pid = process.pid): DiscoveryEntry {
    checkDiscoveryDir(dir, true);
    return new DiscoveryEntry(dir, `${pid}-${randomBytes(8).toString('hex')}`);
  }

  /** Writes the record, and the token file when `token` is given (undefined: the token file is removed). */
  write(record: DiscoveryRecord, token: string | undefined): void {
    if (this.removed) return;
    checkDiscoveryDir(this.dir, false);
    // The token first: a reader that sees the record finds its token.
    if (token !== undefined) writeAtomic(this.dir, path.basename(this.tokenFile), token);
    else fs.rmSync(this.tokenFile, { force: true });
    writeAtomic(this.dir, path.basename(this.recordFile), `${JSON.stringify(record, null, 2)}\n`);
  }

  remove(): void {
    this.removed = true;
    fs.rmSync(this.recordFile, { force: true });
    fs.rmSync(this.tokenFile, { force: true });
  }
}

/**
 * True while the record's process runs: the same pid and, where the record has it and Linux gives it cheaply, the
 * same start time (a pid reused by another process after a crash does not keep a stale record alive).
 */
export function recordAlive(record: DiscoveryRecord): boolean {
  if (record.pidStart !== undefined && process.platform === 'linux') return identify(record.pid)?.start === record.pidStart;
  return pidAlive(record.pid);
}

/** This process's start time for its record (Linux only; elsewhere the pid alone is checked). */
export function ownPidStart(): string | undefined {
  return process.platform === 'linux' ? identify(process.pid)?.start : undefined;
}

/** A regular file of ours, readable by us alone. Anything else in the folder is ignored. */
export function privateFile(file: string): boolean {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(file);
  } catch {
    return false;
  }
  if (!st.isFile()) return false;
  const uid = getuid();
  return uid === undefined || (st.uid === uid && (st.mode & 0o077) === 0);
}

/**
 * The live windows' records. A record whose pid is gone is stale: it and its token file are deleted. Symlinks,
 * files of other users or with loose modes, and malformed records are skipped (never followed, never trusted).
 * A missing folder means no window; a folder we must refuse throws DiscoveryDirError.
 */
export function readRecords(dir: string, alive: (record: DiscoveryRecord) => boolean = recordAlive): FoundRecord[] {
  try {
    checkDiscoveryDir(dir, false);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: FoundRecord[] = [];
  for (const name of fs.readdirSync(dir)) {
    if (name.startsWith('.') || !name.endsWith(RECORD_SUFFIX)) continue;
    const file = path.join(dir, name);
    if (!privateFile(file)) continue;
    let text: string;
    try {
      text = readNoFollow(file);
    } catch {
      continue;
    }
    const record = parseRecord(text);
    if (!record) continue;
    if (!alive(record)) {
      const base = file.slice(0, -RECORD_SUFFIX.length);
      for (const f of [file, base + TOKEN_SUFFIX, base + PING_SUFFIX, base + PONG_SUFFIX]) fs.rmSync(f, { force: true });
      continue;
    }
    out.push({ record, file });
  }
  return out;
}

/**
 * The live windows' records in every folder of `dirs` (discoveryDirs). A refused first (canonical) folder throws as
 * readRecords does; a refused other folder is skipped: it is never read, and the canonical one still is.
 */
export function readAllRecords(dirs: readonly string[], alive: (record: DiscoveryRecord) => boolean = recordAlive): FoundRecord[] {
  const out: FoundRecord[] = [];
  dirs.forEach((dir, i) => {
    try {
      out.push(...readRecords(dir, alive));
    } catch (err) {
      if (i === 0 || !(err instanceof DiscoveryDirError)) throw err;
    }
  });
  return out;
}

export function readNoFollow(file: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  try {
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/** The token published next to a record; undefined when there is none or it is not a private file of ours. */
export function readToken(found: FoundRecord): string | undefined {
  const file = found.file.slice(0, -RECORD_SUFFIX.length) + TOKEN_SUFFIX;
  if (!privateFile(file)) return undefined;
  try {
    const token = readNoFollow(file).trim();
    return token === '' ? undefined : token;
  } catch {
    return undefined;
  }
}
