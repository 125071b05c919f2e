import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HiddenEntry, ProtectedEntry } from './bubblewrapArgs';
import { SandboxPlanError } from './bubblewrapArgs';

/**
 * Folders of the workspace through which a command could make the editor or an agent run code outside the sandbox,
 * protected whether they exist or not: VS Code applies `.vscode/` (settings naming programs, tasks, launch and
 * MCP configurations) by itself; agents that drive CodeSpace from outside read `.codex/` and `.claude/` (hooks,
 * MCP servers) at their next start. README's security model lists the entries considered and why.
 */
export const PROTECTED_FOLDERS = ['.vscode', '.codex', '.claude'] as const;

/** Other agents' configuration: protected when present (a new one needs the developer's approval on first use). */
export const PROTECTED_WHEN_PRESENT = ['.mcp.json', '.cursor', '.gemini'] as const;

/** Secrets under a home folder: never mounted into the sandbox (folders hidden by an empty tmpfs, files read as empty). */
export const HOME_SECRETS: readonly { readonly rel: string }[] = [
  ...['.ssh', '.aws', '.azure', '.config', '.gnupg', '.docker', '.kube', '.password-store', '.local/share/keyrings', '.claude', '.codex'],
  ...['.netrc', '.npmrc', '.gitconfig', '.git-credentials', '.pypirc', '.cargo/credentials', '.cargo/credentials.toml', '.m2/settings.xml'],
].map((rel) => ({ rel }));

/** What commands may do in the workspace's `.git` (`codespace.exec.gitWrites`). */
export type GitWrites = 'none' | 'commit';

/**
 * With `commit`, the `.git` folder stays writable (objects, refs, index, logs, HEAD and the lock files next to
 * them) except these, which git reads as configuration, runs, or follows to another repository.
 */
export const GIT_READ_ONLY: readonly { readonly name: string; readonly kind: 'dir' | 'file' }[] = [
  { name: 'config', kind: 'file' },
  { name: 'config.worktree', kind: 'file' },
  { name: 'commondir', kind: 'file' },
  { name: 'hooks', kind: 'dir' },
  { name: 'info', kind: 'dir' },
  { name: 'modules', kind: 'dir' },
  { name: 'worktrees', kind: 'dir' },
];

/**
 * Bounds of the search for nested repositories (`.git` folders or files below the workspace root). A scan that
 * reaches either bound, or a folder it cannot read, is incomplete: see protectionCheck.ts (never quietly partial).
 */
export const NESTED_SCAN = { maxDepth: 64, maxDirectories: 20_000 } as const;

/** Folders read at once by the scan. */
const SCAN_CONCURRENCY = 32;

/** Folders not searched for nested repositories: they hold no repository git or the editor would open. */
const SCAN_SKIP = new Set(['.git', 'node_modules']);

/** Content of a missing `commondir` while it is covered: "." names the folder itself, which git accepts. */
export const COMMONDIR_PLACEHOLDER = '.\n';

function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
}

function within(root: string, p: string): boolean {
  return p === root || p.startsWith(root + '/');
}

function entry(p: string, missing: 'missing-dir' | 'missing-file'): ProtectedEntry {
  const st = lstat(p);
  if (!st) return { path: p, state: missing };
  if (st.isSymbolicLink()) {
    // A link could be replaced by the command (the mount would land on its target, not on the link).
    throw new SandboxPlanError(`${p} is a symbolic link, so the sandbox cannot keep it read-only; replace it with a real ${missing === 'missing-dir' ? 'folder' : 'file'} to run commands.`);
  }
  return { path: p, state: st.isDirectory() ? 'dir' : 'file' };
}

/** The folder a `gitdir: <path>` file or a `commondir` file names, resolved against `base`; undefined if unreadable. */
function redirection(file: string, base: string, prefix: string): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const line = text.split('\n')[0]?.trim() ?? '';
  const target = prefix ? (line.startsWith(prefix) ? line.slice(prefix.length).trim() : '') : line;
  if (!target) return undefined;
  try {
    return fs.realpathSync(path.resolve(base, target));
  } catch {
    return undefined;
  }
}

/**
 * Where a repository at `gitPath` (a `.git` folder or file) sends git elsewhere inside the workspace: a `.git`
 * file's `gitdir:`, and the `commondir` of the folder it names (or of the `.git` folder itself). Those folders are
 * read by git outside as this repository's configuration, so they are kept read-only too.
 */
function redirections(root: string, gitPath: string, isFile: boolean): string[] {
  const out: string[] = [];
  const gitDir = isFile ? redirection(gitPath, path.dirname(gitPath), 'gitdir:') : gitPath;
  if (gitDir === undefined) return out;
  if (isFile && within(root, gitDir) && gitDir !== root) out.push(gitDir);
  const common = redirection(path.join(gitDir, 'commondir'), gitDir, '');
  if (common !== undefined && within(root, common) && common !== root) out.push(common);
  return out;
}

/**
 * The workspace entries to keep read-only, in mount order (a folder before what lies inside it):
 * - `.vscode/`, `.codex/`, `.claude/`, existing or not (missing ones cannot be created);
 * - `.mcp.json`, `.cursor/`, `.gemini/` when present;
 * - the `.git` of the root, existing or not: with `gitWrites` `none` the whole of it read-only; with `commit` it
 *   stays writable but {@link GIT_READ_ONLY} are read-only (missing ones covered); a `.git` *file* read-only with
 *   the folder it names, when that lies in the workspace, and its `commondir`;
 * - the `nested` repositories (see {@link nestedRepositories}: submodule checkouts, vendored clones): each `.git`
 *   read-only whole, with its redirections.
 */
export function protectedEntries(root: string, gitWrites: GitWrites = 'none', nested: readonly NestedRepository[] = []): ProtectedEntry[] {
  const out: ProtectedEntry[] = PROTECTED_FOLDERS.map((name) => entry(path.join(root, name), 'missing-dir'));
  for (const name of PROTECTED_WHEN_PRESENT) {
    const e = entry(path.join(root, name), 'missing-file');
    if (e.state !== 'missing-file') out.push(e);
  }
  const gitPath = path.join(root, '.git');
  const git = entry(gitPath, 'missing-dir');
  // A `.git` folder without HEAD is no repository (an empty folder, say): kept read-only whole.
  if (git.state === 'dir' && gitWrites === 'commit' && lstat(path.join(gitPath, 'HEAD'))) {
    out.push({ path: gitPath, state: 'pinned-dir' });
    for (const g of GIT_READ_ONLY) out.push(entry(path.join(gitPath, g.name), g.kind === 'dir' ? 'missing-dir' : 'missing-file'));
  } else {
    out.push(git);
  }
  const redirected = new Set<string>();
  if (git.state === 'dir' || git.state === 'file') for (const r of redirections(root, gitPath, git.state === 'file')) redirected.add(r);
  for (const n of nested) {
    if (!within(root, n.path) || n.path === root) continue;
    out.push({ path: n.path, state: n.isFile ? 'file' : 'dir' });
    for (const r of redirections(root, n.path, n.isFile)) redirected.add(r);
  }
  for (const r of redirected) if (!out.some((e) => e.path === r)) out.push({ path: r, state: 'dir' });
  // Mount order: shorter paths first, so a folder is bound before anything re-bound inside it.
  return out.sort((a, b) => a.path.split('/').length - b.path.split('/').length);
}

export interface NestedRepository {
  readonly path: string;
  readonly isFile: boolean;
}

/** What the search for nested repositories found, and why it may have missed some (empty: it saw every folder). */
export interface NestedScan {
  readonly repositories: NestedRepository[];
  /** Each reason the scan is incomplete (a bound reached, a folder it could not read), for the developer. */
  readonly gaps: string[];
}

/** Errors of a folder that vanished while the scan ran: nothing is below it any more. */
const GONE = new Set(['ENOENT', 'ENOTDIR']);

/**
 * `.git` folders and files below the root (not the root's own), breadth first within {@link NESTED_SCAN}, never
 * following links (a `.git` link is resolved: its target is protected when it lies in the workspace). Asynchronous:
 * a large tree must not hold up the extension host's event loop. Never gives up quietly: a bound reached or a
 * folder it cannot read is named in `gaps`.
 */
export async function scanNestedRepositories(root: string): Promise<NestedScan> {
  const found: NestedRepository[] = [];
  const gaps: string[] = [];
  let level = [root];
  let seen = 0;
  for (let depth = 0; level.length > 0; depth++) {
    if (depth >= NESTED_SCAN.maxDepth) {
      gaps.push(`folders deeper than ${NESTED_SCAN.maxDepth} levels were not searched (first: ${path.relative(root, level[0] ?? root)})`);
      break;
    }
    const next: string[] = [];
    const truncated = seen + level.length > NESTED_SCAN.maxDirectories;
    if (truncated) {
      const stop = level[NESTED_SCAN.maxDirectories - seen] ?? root;
      gaps.push(`the workspace has more than ${NESTED_SCAN.maxDirectories} folders (node_modules not counted); the search stopped at ${path.relative(root, stop)}`);
      level = level.slice(0, NESTED_SCAN.maxDirectories - seen);
    }
    seen += level.length;
    // Several folders at once: one after the other, each readdir waits its turn in libuv's pool on a busy machine.
    for (let i = 0; i < level.length; i += SCAN_CONCURRENCY) {
      const batch = level.slice(i, i + SCAN_CONCURRENCY);
      const listed = await Promise.all(batch.map((dir) => fs.promises.readdir(dir, { withFileTypes: true }).then((names) => ({ dir, names }), (err: unknown) => ({ dir, err }))));
      for (const l of listed) {
        if ('err' in l) {
          const code = (l.err as NodeJS.ErrnoException).code ?? '';
          if (!GONE.has(code)) gaps.push(`the folder ${path.relative(root, l.dir) || '.'} could not be read (${code || String(l.err)})`);
          continue;
        }
        for (const d of l.names) {
          const p = path.join(l.dir, d.name);
          if (d.name === '.git' && l.dir !== root) {
            if (d.isDirectory()) found.push({ path: p, isFile: false });
            else if (d.isFile()) found.push({ path: p, isFile: true });
            else if (d.isSymbolicLink()) {
              try {
                const real = await fs.promises.realpath(p);
                if (within(root, real) && real !== root) found.push({ path: real, isFile: !(await fs.promises.stat(real)).isDirectory() });
              } catch {
                // dangling: nothing git could read
              }
            }
          } else if (d.isDirectory() && !SCAN_SKIP.has(d.name)) {
            next.push(p);
          }
        }
      }
    }
    level = truncated ? [] : next;
  }
  return { repositories: found, gaps };
}

/** The repositories {@link scanNestedRepositories} finds (gaps aside). */
export async function nestedRepositories(root: string): Promise<NestedRepository[]> {
  return (await scanNestedRepositories(root)).repositories;
}

/**
 * Secrets that exist: those of {@link HOME_SECRETS} under the child's HOME and under this user's home, the user's
 * runtime folder (/run/user/<uid>: D-Bus, keyring and agent sockets), the SSH agent socket and Docker's socket.
 */
export function hiddenEntries(env: Readonly<Record<string, string>>): HiddenEntry[] {
  const homes = new Set<string>();
  for (const h of [env.HOME, os.homedir()]) if (h && path.isAbsolute(h) && path.normalize(h) !== '/') homes.add(path.normalize(h).replace(/\/+$/, ''));
  const out = new Map<string, HiddenEntry>();
  const add = (p: string): void => {
    const st = lstat(p);
    if (!st) return;
    // A link is followed by the mount: hide what it points to, as what it is.
    let real = p;
    let isDir = st.isDirectory();
    if (st.isSymbolicLink()) {
      try {
        real = fs.realpathSync(p);
        isDir = fs.statSync(real).isDirectory();
      } catch {
        return; // dangling: nothing to hide
      }
    }
    if (real === '/') return;
    // Hidden as what it is: a folder behind an empty tmpfs, anything else (file, socket) behind an empty file.
    out.set(real, { path: real, kind: isDir ? 'dir' : 'file' });
  };
  for (const home of homes) for (const s of HOME_SECRETS) add(path.join(home, s.rel));
  if (typeof process.getuid === 'function') add(`/run/user/${process.getuid()}`);
  // Under /tmp nothing needs hiding: the sandbox's /tmp is its own.
  for (const sock of [env.SSH_AUTH_SOCK, '/run/docker.sock', '/var/run/docker.sock']) if (sock && path.isAbsolute(sock) && !sock.startsWith('/tmp/')) add(path.normalize(sock));
  return [...out.values()];
}
