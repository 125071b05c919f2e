import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HiddenEntry, ProtectedEntry } from './bubblewrapArgs';
import { SandboxPlanError } from './bubblewrapArgs';

/** Folders of the workspace through which a command could make the editor or an agent run code outside the sandbox. */
export const PROTECTED_FOLDERS = ['.vscode', '.codex', '.claude'] as const;

/** Secrets under a home folder: never mounted into the sandbox (folders hidden by an empty tmpfs, files by /dev/null). */
export const HOME_SECRETS: readonly { readonly rel: string }[] = [
  ...['.ssh', '.aws', '.azure', '.config', '.gnupg', '.docker', '.kube', '.password-store', '.local/share/keyrings', '.claude', '.codex'],
  ...['.netrc', '.npmrc', '.gitconfig', '.git-credentials', '.pypirc', '.cargo/credentials', '.cargo/credentials.toml', '.m2/settings.xml'],
].map((rel) => ({ rel }));

function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
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

/**
 * The workspace entries to keep read-only: `.vscode/`, `.codex/`, `.claude/` and, in a `.git` folder, `hooks/`
 * and `config` (a `.git` file, as in a linked worktree, is kept as it is; a missing `.git` is covered by an
 * empty read-only folder, so `git init` cannot plant a config the editor's git would run). Missing ones are
 * covered too, so the command cannot create them: bwrap leaves the empty folder (or file) it mounted on in the
 * workspace, which git ignores.
 */
export function protectedEntries(root: string): ProtectedEntry[] {
  const out = PROTECTED_FOLDERS.map((name) => entry(path.join(root, name), 'missing-dir'));
  const git = entry(path.join(root, '.git'), 'missing-dir');
  // A `.git` folder without HEAD is no repository (for example the empty folder an earlier sandbox mounted over
  // a missing `.git`): kept read-only whole, rather than filled with mount points.
  if (git.state === 'dir' && lstat(path.join(root, '.git', 'HEAD'))) {
    out.push({ path: git.path, state: 'pinned-dir' }, entry(path.join(root, '.git', 'hooks'), 'missing-dir'), entry(path.join(root, '.git', 'config'), 'missing-file'));
  } else {
    out.push(git);
  }
  return out;
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
    // Hidden as what it is: a folder behind an empty tmpfs, anything else (file, socket) behind /dev/null.
    out.set(real, { path: real, kind: isDir ? 'dir' : 'file' });
  };
  for (const home of homes) for (const s of HOME_SECRETS) add(path.join(home, s.rel));
  if (typeof process.getuid === 'function') add(`/run/user/${process.getuid()}`);
  // Under /tmp nothing needs hiding: the sandbox's /tmp is its own.
  for (const sock of [env.SSH_AUTH_SOCK, '/run/docker.sock', '/var/run/docker.sock']) if (sock && path.isAbsolute(sock) && !sock.startsWith('/tmp/')) add(path.normalize(sock));
  return [...out.values()];
}
