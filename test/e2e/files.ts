// File-system helpers the end-to-end tests share.
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Every file whose name matches `name` under `dir`. */
export function findFiles(dir: string, name: RegExp): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (name.test(e.name)) out.push(p);
    }
  };
  walk(dir);
  return out;
}
