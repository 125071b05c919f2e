import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProtectedEntry } from './bubblewrapArgs';
import { COMMONDIR_PLACEHOLDER } from './sandboxInventory';

/**
 * Mount points for protected entries that do not exist. bwrap can only mount on something that exists on disk,
 * and the workspace is the developer's own folder, so the empty folder or file it needs is made here just before
 * the command starts and removed when the last sandboxed command of this extension host that covers it has ended
 * (counted per path: removing a mount point detaches the mount in every sandbox still using it, which would lift
 * the protection there). Only what is still the untouched placeholder is removed: an empty folder, or a file with
 * the content written; anything the developer put there meanwhile stays.
 */
const held = new Map<string, { count: number; dir: boolean; content: string }>();

function placeholderContent(p: string): string {
  return path.basename(p) === 'commondir' ? COMMONDIR_PLACEHOLDER : '';
}

/**
 * Makes the placeholders `entries` need (their missing ones) and returns the function that gives them back once the
 * command has ended (idempotent). Throws when a placeholder cannot be made: the command must not run unprotected.
 */
export function holdPlaceholders(entries: readonly ProtectedEntry[]): () => void {
  const taken: string[] = [];
  try {
    for (const e of entries) {
      if (e.state !== 'missing-dir' && e.state !== 'missing-file') continue;
      const dir = e.state === 'missing-dir';
      const h = held.get(e.path);
      if (h) {
        h.count++;
      } else {
        const content = dir ? '' : placeholderContent(e.path);
        try {
          if (dir) fs.mkdirSync(e.path, { mode: 0o755 });
          else fs.writeFileSync(e.path, content, { flag: 'wx', mode: 0o644 });
        } catch (err) {
          // Created meanwhile by someone else: it is mounted over all the same, and not ours to remove.
          if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
          continue;
        }
        held.set(e.path, { count: 1, dir, content });
      }
      taken.push(e.path);
    }
  } catch (err) {
    release(taken);
    throw err;
  }
  let done = false;
  return () => {
    if (done) return;
    done = true;
    release(taken);
  };
}

function release(paths: readonly string[]): void {
  // Deepest first, so a placeholder folder is empty again when its turn comes.
  for (const p of [...paths].reverse()) {
    const h = held.get(p);
    if (!h) continue;
    if (--h.count > 0) continue;
    held.delete(p);
    try {
      const st = fs.lstatSync(p);
      if (h.dir && st.isDirectory()) fs.rmdirSync(p); // fails (and stays) when not empty
      else if (!h.dir && st.isFile() && st.size === Buffer.byteLength(h.content) && fs.readFileSync(p, 'utf8') === h.content) fs.unlinkSync(p);
    } catch {
      // gone already, or no longer ours
    }
  }
}

/** Placeholders currently held (for tests and diagnostics). */
export function heldPlaceholders(): string[] {
  return [...held.keys()];
}
