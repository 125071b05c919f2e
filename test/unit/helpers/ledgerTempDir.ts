import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** A fresh folder under the OS temp folder; `remove()` deletes it with everything inside. */
export interface LedgerTempDir {
  readonly path: string;
  remove(): Promise<void>;
}

export async function makeLedgerTempDir(prefix = 'codespace-ledger-'): Promise<LedgerTempDir> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => fs.rm(dir, { recursive: true, force: true }) };
}
