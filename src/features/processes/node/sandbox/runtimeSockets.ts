import * as fs from 'node:fs';
import * as path from 'node:path';
import type { HiddenEntry } from './bubblewrapArgs';

/**
 * Where Unix sockets of the desktop and of VS Code live, hidden from sandboxed commands by the file system: the
 * runtime folder (`$XDG_RUNTIME_DIR` wherever it is, not only /run/user/<uid>), the folders of VS Code's IPC
 * hooks (`VSCODE_IPC_HOOK`, `VSCODE_IPC_HOOK_CLI`, the git extension's `VSCODE_GIT_IPC_HANDLE`) and the sockets
 * directly in `$TMPDIR`. This is a second line only: the seccomp filter (seccomp.ts) is the guarantee, since a
 * socket made later, or in a place not listed here, is not hidden.
 *
 * A folder is hidden whole (an empty tmpfs) only when it is a private runtime folder as the XDG specification
 * demands (a real directory owned by this user, mode 0700), never a shared one such as a home or /tmp that a
 * stray variable could name; elsewhere only the sockets present at launch are hidden (behind an empty file).
 */
const IPC_VARIABLES = ['VSCODE_IPC_HOOK', 'VSCODE_IPC_HOOK_CLI', 'VSCODE_GIT_IPC_HANDLE'] as const;

function lstat(p: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(p);
  } catch {
    return undefined;
  }
}

function absolute(p: string | undefined): string | undefined {
  if (!p || !path.isAbsolute(p) || p.includes('\0')) return undefined;
  const n = path.normalize(p).replace(/\/+$/, '');
  return n === '' ? undefined : n;
}

/** A folder only this user can enter (owned by it, no access for group or others), and not a link. */
function privateFolder(p: string): boolean {
  const st = lstat(p);
  const uid = process.getuid?.();
  return st !== undefined && st.isDirectory() && uid !== undefined && st.uid === uid && (st.mode & 0o077) === 0;
}

function socketsIn(dir: string): string[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  return names.map((n) => path.join(dir, n)).filter((p) => lstat(p)?.isSocket() === true);
}

/**
 * The entries to hide for the sockets `env` (the command's) and `host` (the extension host's, which holds VS Code's
 * IPC hooks) point at. Paths under /tmp need nothing: the sandbox's /tmp is its own.
 */
export function runtimeSocketEntries(env: Readonly<Record<string, string | undefined>>, host: Readonly<Record<string, string | undefined>> = process.env): HiddenEntry[] {
  const out = new Map<string, HiddenEntry>();
  const add = (p: string, kind: HiddenEntry['kind']): void => {
    if (p === '/' || p === '/tmp' || p.startsWith('/tmp/')) return;
    out.set(p, { path: p, kind });
  };
  const folderOrSockets = (dir: string | undefined): void => {
    if (dir === undefined) return;
    if (privateFolder(dir)) add(dir, 'dir');
    else for (const s of socketsIn(dir)) add(s, 'file');
  };
  for (const source of [env, host]) {
    folderOrSockets(absolute(source.XDG_RUNTIME_DIR));
    folderOrSockets(absolute(source.TMPDIR));
    for (const v of IPC_VARIABLES) {
      const sock = absolute(source[v]);
      if (sock === undefined) continue;
      folderOrSockets(path.dirname(sock));
      if (lstat(sock)?.isSocket()) add(sock, 'file');
    }
  }
  return [...out.values()];
}

/** `a` and `b` together, without an entry that lies inside a hidden folder (it is out of sight already). */
export function mergeHidden(a: readonly HiddenEntry[], b: readonly HiddenEntry[]): HiddenEntry[] {
  const all = new Map<string, HiddenEntry>();
  for (const e of [...a, ...b]) if (!all.has(e.path) || e.kind === 'dir') all.set(e.path, e);
  const dirs = [...all.values()].filter((e) => e.kind === 'dir').map((e) => e.path);
  return [...all.values()].filter((e) => !dirs.some((d) => d !== e.path && e.path.startsWith(`${d}/`)));
}
