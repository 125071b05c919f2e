import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { Logger } from '../../../../base/logger';

/**
 * The guard's whole program, for `/bin/sh`. It reads `+ <pgid>` and `- <pgid>` lines on stdin and keeps the set of
 * listed groups; at end of file it sends SIGKILL to every group still listed, then exits. The kernel closes the
 * host's end of the pipe however the host ends (a SIGKILL included), so the end of file always comes. `kill -9
 * -<pgid>` is the one spelling of a group kill that dash, bash and zsh all accept.
 */
const GUARD_SCRIPT = [
  "trap '' HUP INT TERM",
  "g=' '",
  'while read -r op pg; do',
  '  case $pg in ""|*[!0-9]*) continue ;; esac',
  '  case $op in',
  '    +) g="$g$pg " ;;',
  '    -) case $g in *" $pg "*) g="${g%% $pg *} ${g#* $pg }" ;; esac ;;',
  '  esac',
  'done',
  'for pg in $g; do kill -9 -$pg 2>/dev/null; done',
].join('\n');

/** How often a group whose leader has exited is checked for members left behind. */
const EMPTY_POLL_MS = 500;

/**
 * Makes sure the process groups of the host's children do not outlive the host when it dies without ending them
 * (SIGKILL, a crash, the OOM killer). A tiny `sh` beside the host, in its own session so that nothing aimed at
 * the host's group reaches it, holds the list of live groups and kills them when the host's end of its stdin
 * closes. Every process the host starts leads its own group (pipes: `detached`; a PTY: its own session), so a
 * group kill reaches what it started in that group; a sandboxed command also dies with bubblewrap's
 * `--die-with-parent` and its pid namespace. A descendant that left its group (setsid) is not reached.
 *
 * A group leaves the list once it is empty, not when its leader exits (the backend sweeps what the leader left,
 * and the guard keeps the group until that is done): the id of an empty group may be reused by an unrelated
 * process, so it is taken off within `EMPTY_POLL_MS` of emptying.
 */
export class OrphanGuard {
  private child: ChildProcess | undefined;
  private readonly groups = new Set<number>();
  private readonly draining = new Set<number>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  constructor(private readonly logger: Logger) {
    if (process.platform !== 'win32') this.start();
  }

  /** The guard's pid (tests), while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** A new process group to end if the host dies. */
  add(pgid: number): void {
    if (this.closed || !Number.isInteger(pgid) || pgid <= 1) return;
    this.groups.add(pgid);
    this.tell(`+ ${pgid}\n`);
  }

  /** The group's leader has exited: keep the group listed until nothing in it runs, then forget it. */
  release(pgid: number): void {
    if (!this.groups.has(pgid)) return;
    this.draining.add(pgid);
    this.timer ??= setInterval(() => this.sweep(), EMPTY_POLL_MS);
    this.timer.unref?.();
    this.sweep();
  }

  /**
   * The host ends normally (it has ended its processes): the guard still kills any group left listed, which is
   * what the host tried to end and could not.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.child?.stdin?.end();
    this.child = undefined;
  }

  private sweep(): void {
    for (const pgid of this.draining) {
      if (groupAlive(pgid)) continue;
      this.draining.delete(pgid);
      this.groups.delete(pgid);
      this.tell(`- ${pgid}\n`);
    }
    if (this.draining.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private tell(line: string): void {
    const stdin = this.child?.stdin;
    if (stdin && !stdin.destroyed) stdin.write(line);
  }

  private start(): void {
    let child: ChildProcess;
    try {
      child = spawn('/bin/sh', ['-c', GUARD_SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: { PATH: '/usr/bin:/bin' } });
    } catch (err) {
      this.logger.warn(`the orphan guard could not start: ${String(err)}; processes may outlive a host that is killed`);
      return;
    }
    this.child = child;
    child.stdin?.on('error', () => undefined);
    child.on('error', (err) => this.logger.warn(`the orphan guard failed: ${String(err)}`));
    child.on('exit', (code, signal) => {
      if (this.closed || this.child !== child) return;
      // Someone ended it: start another and hand it the groups, so the promise holds.
      this.logger.warn(`the orphan guard ended (${signal ?? `exit code ${String(code)}`}); starting it again`);
      this.child = undefined;
      this.start();
      for (const pgid of this.groups) this.tell(`+ ${pgid}\n`);
    });
    child.unref();
  }
}

/** Whether any process is left in group `pgid`. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
