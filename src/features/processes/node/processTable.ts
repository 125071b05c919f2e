import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { SpawnError } from '../common/processBackend';
import { statFields } from '../../../base/node/processIdentity';
import type { ConfinedDirectory } from '../../../kernel/node/confinedFs';
import { openDirectoryWithin } from '../../../kernel/node/confinedFs';

/** One row of the OS process table. */
export interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgid: number;
  /** One-letter state (`R`, `S`, `Z`...). */
  readonly state: string;
  /** Start time as the OS reports it; with `pid` it names a process even if pids are reused. */
  readonly start: string;
}

/** True for a process that still runs (a zombie has ended and only waits to be reaped). */
export function isLive(entry: ProcessEntry): boolean {
  return entry.state !== 'Z' && entry.state !== 'X';
}

async function readProcLinux(): Promise<ProcessEntry[]> {
  const names = await fs.promises.readdir('/proc');
  const rows = await Promise.all(
    names
      .filter((n) => /^\d+$/.test(n))
      .map(async (n): Promise<ProcessEntry | undefined> => {
        try {
          const rest = statFields(await fs.promises.readFile(`/proc/${n}/stat`, 'latin1'));
          return { pid: Number(n), state: rest[0] ?? '?', ppid: Number(rest[1]), pgid: Number(rest[2]), start: rest[19] ?? '' };
        } catch {
          return undefined; // gone meanwhile
        }
      }),
  );
  return rows.filter((r): r is ProcessEntry => r !== undefined);
}

function readPs(): Promise<ProcessEntry[]> {
  return new Promise((resolve) => {
    execFile('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart='], { maxBuffer: 16 * 1024 * 1024 }, (err, stdout) => {
      if (err) return resolve([]);
      const rows: ProcessEntry[] = [];
      for (const line of stdout.split('\n')) {
        const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
        if (!m) continue;
        rows.push({ pid: Number(m[1]), ppid: Number(m[2]), pgid: Number(m[3]), state: (m[4] as string).charAt(0), start: (m[5] as string).trim() });
      }
      resolve(rows);
    });
  });
}

/** A snapshot of the OS process table (`/proc` on Linux, `ps` elsewhere). */
export function listProcesses(): Promise<ProcessEntry[]> {
  return process.platform === 'linux' ? readProcLinux() : readPs();
}

/** Every live descendant of `pid` in `table` (children, grandchildren...), whatever their group. */
export function descendantsOf(pid: number, table: readonly ProcessEntry[]): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  for (const e of table) {
    const list = children.get(e.ppid);
    if (list) list.push(e);
    else children.set(e.ppid, [e]);
  }
  const out: ProcessEntry[] = [];
  const seen = new Set<number>([pid]);
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift() as number;
    for (const child of children.get(next) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      if (isLive(child)) out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}

/** Sends a signal; false when there was nobody to receive it (or we may not signal it). */
export function sendSignal(target: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(target, signal);
    return true;
  } catch {
    return false;
  }
}

const key = (e: ProcessEntry): string => `${e.pid}/${e.start}`;

/**
 * Ends the process tree led by `leader`: its process group, plus any descendant that moved to another group
 * or session (and those groups). SIGTERM first; whatever is still alive after `graceMs` gets SIGKILL.
 * Processes are tracked by pid and start time, so a recycled pid is never signalled.
 * Resolves once nothing tracked is alive and `leaderGone()` holds, or shortly after SIGKILL.
 */
export async function terminateTree(leader: number, options: { graceMs: number; pollMs?: number; leaderGone: () => boolean }): Promise<void> {
  if (process.platform === 'win32') {
    sendSignal(leader, 'SIGTERM');
    return;
  }
  const poll = options.pollMs ?? 50;
  const tracked = new Map<string, ProcessEntry>();
  const groups = new Set<number>([leader]);

  const refresh = async (): Promise<ProcessEntry[]> => {
    const table = await listProcesses();
    const byPid = new Map(table.map((e) => [e.pid, e]));
    // Newcomers: live members of our groups, and live descendants of anything tracked or of the leader.
    const roots = [leader, ...[...tracked.values()].map((e) => e.pid)];
    for (const e of table) if (groups.has(e.pgid) && isLive(e)) tracked.set(key(e), e);
    for (const root of roots) for (const d of descendantsOf(root, table)) tracked.set(key(d), d);
    for (const e of tracked.values()) if (e.pgid === e.pid) groups.add(e.pgid);
    // Alive: still in the table with the same start time and not a zombie.
    const alive: ProcessEntry[] = [];
    for (const [k, e] of tracked) {
      const now = byPid.get(e.pid);
      if (now && key(now) === k && isLive(now)) alive.push(now);
      else tracked.delete(k);
    }
    return alive;
  };

  const signalAll = (alive: readonly ProcessEntry[], signal: NodeJS.Signals): void => {
    const liveGroups = new Set(alive.map((e) => e.pgid));
    for (const g of groups) if (liveGroups.has(g) || (g === leader && !options.leaderGone())) sendSignal(-g, signal);
    for (const e of alive) sendSignal(e.pid, signal);
  };

  let alive = await refresh();
  signalAll(alive, 'SIGTERM');
  const deadline = Date.now() + options.graceMs;
  for (;;) {
    await delay(poll);
    alive = await refresh();
    if (alive.length === 0 && options.leaderGone()) return;
    if (Date.now() >= deadline) break;
  }
  signalAll(alive, 'SIGKILL');
  const killDeadline = Date.now() + 2000;
  while (Date.now() < killDeadline) {
    await delay(poll);
    alive = await refresh();
    if (alive.length === 0 && options.leaderGone()) return;
    if (alive.length > 0) signalAll(alive, 'SIGKILL'); // late forks
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function isExecutableFile(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Throws SpawnError('bad_cwd') unless `cwd` is an existing directory. */
export function checkCwd(cwd: string): void {
  let ok = false;
  try {
    ok = fs.statSync(cwd).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw new SpawnError('bad_cwd', `Working directory ${cwd} does not exist or is not a directory.`);
}

/**
 * Finds the program to run the way execvp would, but before spawning, so that a missing program is a clear
 * SpawnError rather than a child that prints an error and exits. A name with a `/` is taken relative to
 * `cwd`; a bare name is looked up on the child's PATH. On Windows the name is returned unchanged.
 */
export function resolveExecutable(file: string, cwd: string, env: Readonly<Record<string, string>>): string {
  if (process.platform === 'win32') return file;
  if (file.includes('/')) {
    const abs = path.resolve(cwd, file);
    if (isExecutableFile(abs)) return abs;
    if (fs.existsSync(abs)) throw new SpawnError('not_executable', `${file} is not an executable file.`);
    throw new SpawnError('not_found', `${file} does not exist.`);
  }
  const dirs = (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':');
  let exists = false;
  for (const dir of dirs) {
    const candidate = path.resolve(cwd, dir === '' ? '.' : dir, file);
    if (isExecutableFile(candidate)) return candidate;
    if (!exists && fs.existsSync(candidate)) exists = fs.statSync(candidate).isFile();
  }
  if (exists) throw new SpawnError('not_executable', `${file} was found on PATH but is not executable.`);
  throw new SpawnError('not_found', `${file} was not found on PATH.`);
}

/** Linux's limit on one argument or environment string, terminating NUL included (MAX_ARG_STRLEN). */
export const MAX_ARG_STRLEN = 32 * 4096;
/** Longest path the OS accepts (PATH_MAX, NUL included) and longest single path component (NAME_MAX). */
export const PATH_MAX = 4096;
export const NAME_MAX = 255;

let cachedArgMax: number | undefined;

/**
 * The most bytes argv plus the environment may take at exec (ARG_MAX). On Linux it follows the stack limit:
 * a quarter of it, at least 128 KiB and at most 6 MiB (fs/exec.c); elsewhere 1 MiB (macOS's value).
 */
export function argMax(): number {
  if (cachedArgMax !== undefined) return cachedArgMax;
  let limit = 1024 * 1024;
  if (process.platform === 'linux') {
    limit = 2 * 1024 * 1024;
    try {
      const m = /^Max stack size\s+(\S+)/m.exec(fs.readFileSync('/proc/self/limits', 'latin1'));
      const soft = m?.[1];
      const stack = soft === 'unlimited' ? Infinity : Number(soft);
      if (soft !== undefined && !Number.isNaN(stack)) limit = Math.max(128 * 1024, Math.min(6 * 1024 * 1024, Math.floor(stack / 4)));
    } catch {
      // keep the default
    }
  }
  cachedArgMax = limit;
  return limit;
}

function tooLarge(message: string): SpawnError {
  return new SpawnError('too_large', message);
}

/** Throws SpawnError('too_large') for a path the OS would refuse with ENAMETOOLONG. */
export function checkPathLength(what: string, p: string): void {
  const bytes = Buffer.byteLength(p, 'utf8');
  if (bytes >= PATH_MAX) throw tooLarge(`${what} is ${bytes} bytes long; the system limit for a path is ${PATH_MAX - 1} bytes (PATH_MAX).`);
  for (const part of p.split('/')) {
    const n = Buffer.byteLength(part, 'utf8');
    if (n > NAME_MAX) throw tooLarge(`${what} has a path component of ${n} bytes; the system limit is ${NAME_MAX} bytes per name (NAME_MAX).`);
  }
}

/**
 * Checks, before anything is started, what execve would refuse with E2BIG or ENAMETOOLONG: one argument or
 * environment entry over MAX_ARG_STRLEN (Linux), argv plus environment over ARG_MAX, an over-long program path
 * or working directory. Throws SpawnError('too_large') naming the limit.
 */
export function checkSpawnLimits(file: string, args: readonly string[], env: Readonly<Record<string, string>>, cwd: string): void {
  checkPathLength('The working directory', cwd);
  checkPathLength('The program path', file);
  let total = 0;
  const argv = [file, ...args];
  argv.forEach((arg, i) => {
    const n = Buffer.byteLength(arg, 'utf8') + 1;
    if (process.platform === 'linux' && n > MAX_ARG_STRLEN) {
      throw tooLarge(`command[${i}] is ${n - 1} bytes long; the system limit for one argument is ${MAX_ARG_STRLEN - 1} bytes (MAX_ARG_STRLEN). Pass large input through a file or write_stdin.`);
    }
    total += n + 8;
  });
  for (const [name, value] of Object.entries(env)) {
    const n = Buffer.byteLength(name, 'utf8') + Buffer.byteLength(value, 'utf8') + 2;
    if (process.platform === 'linux' && n > MAX_ARG_STRLEN) {
      throw tooLarge(`The environment variable ${name} is ${n - 2} bytes long; the system limit for one entry is ${MAX_ARG_STRLEN - 1} bytes (MAX_ARG_STRLEN).`);
    }
    total += n + 8;
  }
  const max = argMax();
  if (total > max) {
    throw tooLarge(`The command and its environment take ${total} bytes; the system limit is ${max} bytes (ARG_MAX). Pass large input through a file or write_stdin.`);
  }
}

/** A working directory opened once and verified: start the child in `spawnPath`, then `close()`. */
export interface OpenedDirectory {
  /** What to pass as the child's cwd: on Linux `/proc/self/fd/<n>/.`, the opened directory itself. */
  readonly spawnPath: string;
  close(): Promise<void>;
}

/**
 * The working directory to start in. With a `root`, `cwd` is opened once and what was opened is verified to lie
 * inside the root's real path (confinedFs: on Linux, the real path of the descriptor), and the child starts in
 * `/proc/self/fd/<n>/.`: the kernel resolves that through the descriptor, so a folder swapped for a symbolic
 * link after the check cannot send the child elsewhere. `self`, not our pid: the forked child resolves it
 * through its own inherited copy of the descriptor (chdir happens before exec, where close-on-exec applies), so
 * it stays right however soon we close ours; node-pty returns from the fork before the child has changed folder.
 * Without a root, `cwd` is only checked to be a directory.
 * Throws SpawnError: 'bad_cwd' (missing, not a directory), 'outside', 'too_large'.
 */
export async function openWorkingDirectory(cwd: string, root: string | undefined): Promise<OpenedDirectory> {
  checkPathLength('The working directory', cwd);
  if (root === undefined) {
    checkCwd(cwd);
    return { spawnPath: cwd, close: async () => undefined };
  }
  let realRoot: string;
  try {
    realRoot = await fs.promises.realpath(root);
  } catch (err) {
    throw new SpawnError('bad_cwd', `The workspace folder ${root} no longer exists.`, { cause: err });
  }
  let dir: ConfinedDirectory;
  try {
    dir = await openDirectoryWithin(realRoot, cwd);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (code === 'ESCAPED') {
      throw new SpawnError('outside', `Working directory ${cwd} resolved outside the workspace when opened; it may have been replaced by a symbolic link.`, { cause: err });
    }
    if (code === 'ENAMETOOLONG') throw tooLarge(`Working directory ${cwd} is too long a path for the system (ENAMETOOLONG).`);
    throw new SpawnError('bad_cwd', `Working directory ${cwd} does not exist or is not a directory.`, { cause: err });
  }
  return { spawnPath: dir.entry('.'), close: () => dir.close() };
}
