import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';

// Which process is which, across pid reuse: the identity that the state folder, the survivor files, the discovery
// records and the process host name a process by.

/** A process named so that a recycled pid does not match: pid, OS start time and (Linux) boot id. */
export interface ProcessIdentity {
  readonly pid: number;
  /** `/proc/<pid>/stat` field 22 (clock ticks since boot) on Linux, `ps -o lstart=` elsewhere. */
  readonly start: string;
  /** `/proc/sys/kernel/random/boot_id` on Linux, '' elsewhere: a record from before a reboot matches nothing. */
  readonly boot: string;
}

/**
 * The fields of a `/proc/<pid>/stat` line after the command name, from the state on: index 0 is the state, 1 the
 * ppid, 2 the process group, 11 and 12 the user and system time in clock ticks, 19 the start time. The name (field 2)
 * may hold spaces and parentheses, so the fields start past the last `)`.
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

let bootIdCache: string | undefined;

export function bootId(): string {
  if (process.platform !== 'linux') return '';
  if (bootIdCache === undefined) {
    try {
      bootIdCache = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      bootIdCache = '';
    }
  }
  return bootIdCache;
}

/**
 * The identity of a live process, or undefined when `pid` is gone (or a zombie). The start time has the format
 * of processTable's `ProcessEntry.start`, so the two can be compared.
 */
export function identify(pid: number): ProcessIdentity | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (process.platform === 'linux') {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    } catch {
      return undefined;
    }
    const rest = statFields(stat);
    const state = rest[0] ?? '?';
    const start = rest[19];
    if (state === 'Z' || state === 'X' || !start) return undefined;
    return { pid, start, boot: bootId() };
  }
  if (process.platform === 'win32') return undefined;
  try {
    const out = execFileSync('ps', ['-o', 'stat=,lstart=', '-p', String(pid)], { encoding: 'utf8', timeout: 5000 });
    const m = /^\s*(\S+)\s+(.*\S)\s*$/.exec(out);
    if (!m || (m[1] as string).startsWith('Z')) return undefined;
    return { pid, start: m[2] as string, boot: '' };
  } catch {
    return undefined;
  }
}

/** True when `who` still runs: same pid, same start time, same boot. */
export function isSameProcessAlive(who: ProcessIdentity): boolean {
  const now = identify(who.pid);
  return now !== undefined && now.start === who.start && now.boot === who.boot;
}

/** True while a process with that pid exists (EPERM: it exists but is someone else's). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes `file` so that a reader sees the old content or the new, never a part. */
export function writeAtomically(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.renameSync(tmp, file);
}
