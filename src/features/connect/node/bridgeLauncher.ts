import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BridgeCommand } from '../common/connection';
import { shellQuote } from '../common/connection';
import { describeError } from '../../../base/describeError';

/** Where the launcher lives, relative to the user's home: the same on every machine, for every version. */
export const LAUNCHER_HOME_PATH = '.codespace/bin/codespace-mcp';

export interface LauncherTarget {
  /** The installed extension that writes the launcher (its `dist/stdio.js` is the bridge). */
  readonly extensionRoot: string;
  /** Folders whose `<prefix><version>` subfolders are installed copies of the extension (VS Code's extensions dir). */
  readonly extensionsDirs: readonly string[];
  /** The installed folder's name up to its version: the lower-case extension id and a dash. */
  readonly folderPrefix: string;
  /**
   * The program that runs JavaScript: the editor's own (the extension host's executable, Node or Electron run as
   * Node), so agents need no Node of their own; `node` on PATH when that file is gone.
   */
  readonly runtime: string;
}

/**
 * The launcher's text: a POSIX shell line that re-runs the file itself under the runtime, and the JavaScript that
 * follows it (the shell line is a string and a comment for JavaScript; Node skips the `#!` line). At launch it runs
 * the bridge of the extension that wrote it, or, when an update removed that folder, of the newest installed copy.
 * The JavaScript uses only dynamic `import()`, so it runs whether Node takes the file for CommonJS or for an ES module.
 */
export function launcherText(t: LauncherTarget): string {
  const js = `
// codespace-mcp: starts the stdio bridge of the CodeSpace VS Code extension. The extension rewrites this file each
// time it starts; do not edit it. Usage: codespace-mcp --help.
void (async () => {
  const fs = await import('node:fs');
  const path = await import('node:path');
  const url = await import('node:url');
  const preferred = ${JSON.stringify(t.extensionRoot)};
  const parents = ${JSON.stringify(t.extensionsDirs)};
  const prefix = ${JSON.stringify(t.folderPrefix)};
  const bridgeOf = (root) => path.join(root, 'dist', 'stdio.js');
  const versionOf = (name) => {
    const m = /^(\\d+)\\.(\\d+)\\.(\\d+)(?:-|$)/.exec(name.slice(prefix.length));
    return m ? m.slice(1).map(Number) : undefined;
  };
  const newer = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
  let root = fs.existsSync(bridgeOf(preferred)) ? preferred : undefined;
  if (!root) {
    let best;
    for (const parent of parents) {
      let names = [];
      try {
        names = fs.readdirSync(parent);
      } catch {
        continue;
      }
      for (const name of names) {
        const version = name.toLowerCase().startsWith(prefix) ? versionOf(name) : undefined;
        if (!version || !fs.existsSync(bridgeOf(path.join(parent, name)))) continue;
        if (!best || newer(version, best.version) > 0) best = { version, root: path.join(parent, name) };
      }
    }
    root = best && best.root;
  }
  if (!root) {
    process.stderr.write('[codespace-mcp] No CodeSpace extension is installed where this launcher looks (' + [preferred, ...parents].join(', ') + '). Install CodeSpace in VS Code and start VS Code once: the extension rewrites this launcher.\\n');
    process.exitCode = 1;
    return;
  }
  const bridge = bridgeOf(root);
  process.argv.splice(1, 1, bridge);
  await import(url.pathToFileURL(bridge).href);
})();
`;
  return `#!/bin/sh\n':' //; n=${shellQuote(t.runtime)}; [ -x "$n" ] || n=node; ELECTRON_RUN_AS_NODE=1 exec "$n" "$0" "$@"\n${js}`;
}

/** `~/.codespace/bin/codespace-mcp` for this user. */
export function launcherPath(home: string = os.homedir()): string {
  return path.join(home, ...LAUNCHER_HOME_PATH.split('/'));
}

/**
 * Writes the launcher (0755) atomically: a client starting it meanwhile runs the old or the new file, never half of
 * one. Returns its path. POSIX only: on Windows the bridge is started as `node <extension>/dist/stdio.js`.
 */
export function writeLauncher(t: LauncherTarget, file: string = launcherPath()): string {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o755 });
  const text = launcherText(t);
  try {
    if (fs.readFileSync(file, 'utf8') === text && (fs.statSync(file).mode & 0o777) === 0o755) return file;
  } catch {
    // Missing or unreadable: written below.
  }
  const tmp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | (fs.constants.O_NOFOLLOW ?? 0), 0o755);
  try {
    fs.writeSync(fd, text);
    fs.fchmodSync(fd, 0o755);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return file;
}

/**
 * The bridge command "Connect an Agent" gives: for an installed extension on a POSIX system, the launcher, written
 * (or refreshed) now; otherwise, or when writing fails (said in the log), `node <extension>/dist/stdio.js`. A
 * development or test run never touches the user's launcher: it would point at a checkout.
 */
export function installBridgeLauncher(options: { installed: boolean; extensionRoot: string; extensionId: string; log: (line: string) => void }): BridgeCommand {
  const direct: BridgeCommand = { command: 'node', args: [path.join(options.extensionRoot, 'dist', 'stdio.js')] };
  if (!options.installed || process.platform === 'win32') return direct;
  try {
    const file = writeLauncher({
      extensionRoot: options.extensionRoot,
      extensionsDirs: [path.dirname(options.extensionRoot)],
      folderPrefix: `${options.extensionId.toLowerCase()}-`,
      runtime: process.execPath,
    });
    options.log(`[connect] bridge launcher ${file} runs ${path.join(options.extensionRoot, 'dist', 'stdio.js')}`);
    return { command: file, args: [], homePath: LAUNCHER_HOME_PATH };
  } catch (err) {
    options.log(`[connect] writing the bridge launcher failed (${describeError(err)}): agents get node <extension>/dist/stdio.js, which changes with each update`);
    return direct;
  }
}
