import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Creates (or checks) the private folder for host sockets: a real directory, owned by this user, mode 0700.
 * Anything else (a link, someone else's folder, looser modes that cannot be tightened) is refused.
 */
export function privateSocketDir(root: string): string {
  const uid = process.getuid?.() ?? 0;
  const dir = path.join(root, `codespace-${uid}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = fs.lstatSync(dir);
  if (!st.isDirectory() || st.isSymbolicLink()) throw new Error(`${dir} is not a directory.`);
  if (st.uid !== uid) throw new Error(`${dir} belongs to another user (uid ${st.uid}).`);
  if ((st.mode & 0o077) !== 0) {
    fs.chmodSync(dir, 0o700);
    if ((fs.lstatSync(dir).mode & 0o077) !== 0) throw new Error(`${dir} cannot be made private (mode ${(st.mode & 0o777).toString(8)}).`);
  }
  return dir;
}

/** Writes `text` to `file` with mode 0600, through a rename: a reader sees all of it or nothing. */
export function writePrivate(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

/** Removes `file`, if it is there. */
export function forget(file: string): void {
  try {
    fs.rmSync(file, { force: true });
  } catch {
    // nothing to forget
  }
}
