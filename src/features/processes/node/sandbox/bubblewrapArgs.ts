import * as path from 'node:path';
import type { NetBridge } from './netBridge';
import { netBridgeMounts } from './netBridge';

/**
 * What one sandboxed command gets, decided before anything starts (sandboxInventory.ts looks at the disk; this
 * module only turns the plan into bubblewrap's argv, so it can be unit-tested without bwrap).
 */
export interface SandboxPlan {
  /** Real path of the workspace root: the only writable place (besides a private /tmp). */
  readonly root: string;
  /** Logical working directory (inside `root`), where bwrap changes folder; the launcher verifies it. */
  readonly cwd: string;
  /** `domains`: a network namespace of its own like `block`, plus the bridge to the network proxy (netBridge.ts). */
  readonly network: 'block' | 'allow' | 'domains';
  /** With `domains`: the proxy's socket and the relay to bind into the sandbox. */
  readonly netBridge?: NetBridge;
  /**
   * With `domains` only: the command runs under a nested bwrap that applies the Unix-socket filter and drops every
   * capability itself (seccomp.ts), so this one keeps them for the relay stage (a nested bwrap run as root cannot
   * create its namespaces without them).
   */
  readonly nestedFilter?: boolean;
  /** Terminal (PTY) command: no `--new-session`, which would cut the terminal off (see commandSandbox.ts). */
  readonly tty: boolean;
  /** Entries of the workspace the command may not change (`.vscode`, `.git/config`...), present or not. */
  readonly protect: readonly ProtectedEntry[];
  /** The user's secrets that exist: hidden behind an empty folder, or an empty file for a file or socket. */
  readonly hide: readonly HiddenEntry[];
  /**
   * An empty regular file outside the workspace, bound read-only over hidden files so that they read as empty (a bind of /dev/null fails with EACCES: bwrap mounts /dev nodev).
   */
  readonly emptyFile: string;
}

export interface ProtectedEntry {
  /** Absolute path inside `root`. */
  readonly path: string;
  /**
   * `dir` / `file`: exists, re-bound read-only. `missing-dir`: an empty read-only folder is mounted there, so the
   * command cannot create it (bwrap needs a mount point on disk: the launcher creates it and removes it again
   * when the last command using it has ended, see placeholders.ts). `missing-file`: the same with an empty
   * read-only file. `pinned-dir`: stays writable but becomes a mount point, so it cannot be renamed or removed
   * (a `.git` folder when commands may commit: moving it aside would shed the read-only entries inside it).
   */
  readonly state: 'dir' | 'file' | 'missing-dir' | 'missing-file' | 'pinned-dir';
}

export interface HiddenEntry {
  readonly path: string;
  readonly kind: 'dir' | 'file';
}

/** The plan cannot be expressed safely: the command must not run (never "run it unsandboxed" instead). */
export class SandboxPlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxPlanError';
  }
}

function checkPath(what: string, p: string): void {
  if (typeof p !== 'string' || !path.isAbsolute(p) || p.includes('\0') || path.normalize(p) !== p || (p.length > 1 && p.endsWith('/'))) {
    throw new SandboxPlanError(`${what} must be a normalized absolute path, got ${JSON.stringify(p)}.`);
  }
}

function within(root: string, p: string): boolean {
  return p === root || p.startsWith(root.endsWith('/') ? root : root + '/');
}

/**
 * bubblewrap's arguments, up to and including `--` (the command follows). In order, since later mounts cover
 * earlier ones: the whole file system read-only, a fresh /dev and /proc, a private /tmp; secrets hidden that
 * contain the workspace (so the workspace shows again above them); the workspace writable; the other secrets;
 * then the protected entries read-only. New user, PID, IPC and UTS namespaces (network too unless allowed), no
 * capabilities, killed with its parent, a new session on pipes.
 */
export function bubblewrapArgs(plan: SandboxPlan): string[] {
  checkPath('The workspace root', plan.root);
  checkPath('The working directory', plan.cwd);
  if (plan.root === '/') throw new SandboxPlanError('The workspace root cannot be the whole file system.');
  if (!within(plan.root, plan.cwd)) throw new SandboxPlanError(`The working directory ${plan.cwd} lies outside the workspace ${plan.root}.`);
  if (plan.network !== 'block' && plan.network !== 'allow' && plan.network !== 'domains') throw new SandboxPlanError(`Unknown network mode ${JSON.stringify(plan.network)}.`);
  if ((plan.network === 'domains') !== (plan.netBridge !== undefined)) throw new SandboxPlanError('The network proxy bridge goes with network mode "domains", and only with it.');

  const args = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try'];
  if (plan.network !== 'allow') args.push('--unshare-net');
  if (plan.nestedFilter === true && plan.network !== 'domains') throw new SandboxPlanError('Only the network proxy relay of "domains" runs under the nested filter.');
  args.push('--die-with-parent');
  if (plan.nestedFilter !== true) args.push('--cap-drop', 'ALL');
  if (!plan.tty) args.push('--new-session');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');

  checkPath('The empty file', plan.emptyFile);
  const hideOne = (h: HiddenEntry): string[] => (h.kind === 'dir' ? ['--tmpfs', h.path] : ['--ro-bind', plan.emptyFile, h.path]);
  const before: string[] = [];
  const after: string[] = [];
  for (const h of plan.hide) {
    checkPath('A hidden path', h.path);
    if (h.kind !== 'dir' && h.kind !== 'file') throw new SandboxPlanError(`Unknown kind of hidden entry ${JSON.stringify(h.kind)}.`);
    // A secret folder holding the workspace goes first; the workspace is bound again on top of it.
    if (within(h.path, plan.root)) before.push(...hideOne(h));
    else after.push(...hideOne(h));
  }
  args.push(...before, '--bind', plan.root, plan.root, ...after);

  for (const e of plan.protect) {
    checkPath('A protected path', e.path);
    if (!within(plan.root, e.path) || e.path === plan.root) throw new SandboxPlanError(`Protected entry ${e.path} is not inside the workspace.`);
    switch (e.state) {
      case 'dir':
      case 'file':
        args.push('--ro-bind', e.path, e.path);
        break;
      case 'missing-dir':
        args.push('--perms', '0555', '--tmpfs', e.path, '--remount-ro', e.path);
        break;
      case 'missing-file':
        // The placeholder the launcher put there (empty, or a harmless content such as `commondir`'s "."), re-bound
        // read-only onto itself.
        args.push('--ro-bind', e.path, e.path);
        break;
      case 'pinned-dir':
        args.push('--bind', e.path, e.path);
        break;
      default:
        throw new SandboxPlanError(`Unknown state of protected entry ${e.path}.`);
    }
  }
  if (plan.netBridge) {
    for (const p of [plan.netBridge.socket, plan.netBridge.relayScript, plan.netBridge.node]) checkPath('A network bridge path', p);
    args.push(...netBridgeMounts(plan.netBridge));
  }
  args.push('--chdir', plan.cwd, '--');
  return args;
}
