import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pidAlive } from './processIdentity';

/**
 * A private temporary folder (mode 0700) owned by this process: `<tmp>/<prefix><pid>-XXXXXX`. Its owner removes it
 * when done (`remove`); a process that could not (killed with SIGKILL, a crash) leaves it behind, so making one
 * also removes the folders of the same prefix whose process is gone and that belong to this user. Folders of
 * another user, links, and anything not named this way are never touched.
 */
export interface OwnTempDir {
  readonly path: string;
  /** Removes the folder and everything in it (idempotent). */
  remove(): void;
}

export function ownTempDir(prefix: string, root: string = os.tmpdir()): OwnTempDir {
  sweepAbandoned(prefix, root);
  const dir = fs.mkdtempSync(path.join(root, `${prefix}${process.pid}-`));
  fs.chmodSync(dir, 0o700);
  return { path: dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Removes `<prefix><pid>-XXXXXX` folders of this user in `root` whose process no longer runs. */
export function sweepAbandoned(prefix: string, root: string = os.tmpdir()): void {
  let names: string[];
  try {
    names = fs.readdirSync(root);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d+)-[A-Za-z0-9]{6}$/.exec(name.slice(prefix.length));
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || pidAlive(pid)) continue;
    const dir = path.join(root, name);
    try {
      const st = fs.lstatSync(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // Gone meanwhile, or not ours to remove: left as it is.
    }
  }
}
