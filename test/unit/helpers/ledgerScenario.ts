import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { hashArguments } from '../../../src/base/canonicalJson';
import type { OperationLedger } from '../../../src/kernel/ledger/operationLedger';
import type { OperationRecord } from '../../../src/kernel/ledger/operationRecord';

/**
 * One patch, run the way the apply_patch tool is meant to use the ledger (lookup → mint → write → finish),
 * shared by the crash child process and the tests so both sides agree on paths, contents and hashes.
 * The patch adds `added.txt` and updates `existing.txt` from OLD to NEW.
 */
export const SCENARIO_KEY = 'crash-key-1';
export const SCENARIO_WORKSPACE = 'ws';
export const ADDED = { path: 'added.txt', content: 'hello\n' };
export const EXISTING = { path: 'existing.txt', before: 'old\n', after: 'new\n' };
export const SCENARIO_ARGS = {
  workspace_id: SCENARIO_WORKSPACE,
  operation_key: SCENARIO_KEY,
  patch: '*** Begin Patch\n*** Add File: added.txt\n+hello\n*** Update File: existing.txt\n@@\n-old\n+new\n*** End Patch\n',
  expected_versions: { 'existing.txt': sha256(EXISTING.before) },
};

export function sha256(content: string | Uint8Array): string {
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

/** Disk hash probe for reconcile, over a real folder. */
export function diskHashes(root: string): (relative: string) => Promise<string | undefined | 'directory'> {
  return async (relative) => {
    const full = path.join(root, relative);
    try {
      const stat = await fs.stat(full);
      if (stat.isDirectory()) return 'directory';
      return sha256(await fs.readFile(full));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  };
}

export async function prepareWorkspace(root: string): Promise<void> {
  await fs.writeFile(path.join(root, EXISTING.path), EXISTING.before);
}

export interface ScenarioHooks {
  /** After mint, before the first write. */
  afterMint?(record: OperationRecord): void | Promise<void>;
  /** After the first file is written. */
  betweenWrites?(): void | Promise<void>;
  /** After the last write, before finish. */
  afterWrites?(): void | Promise<void>;
}

export interface ScenarioOutcome {
  readonly result: unknown;
  /** How many files this call wrote. */
  readonly writes: number;
  readonly replayed: boolean;
}

export async function runScenario(ledger: OperationLedger, root: string, hooks: ScenarioHooks = {}): Promise<ScenarioOutcome> {
  const argsHash = hashArguments(SCENARIO_ARGS);
  const existing = ledger.lookupKey(SCENARIO_KEY, argsHash);
  if (existing) return { result: existing.result, writes: 0, replayed: true };
  const files = [
    { path: ADDED.path, kind: 'add' as const, after_version: sha256(ADDED.content) },
    { path: EXISTING.path, kind: 'update' as const, before_version: sha256(EXISTING.before), after_version: sha256(EXISTING.after) },
  ];
  const record = await ledger.mint({
    operation_key: SCENARIO_KEY,
    args_hash: argsHash,
    workspace_id: SCENARIO_WORKSPACE,
    files,
    changes: [
      { path: ADDED.path, kind: 'add', before_hash: null, after_hash: sha256(ADDED.content) },
      { path: EXISTING.path, kind: 'update', before_hash: sha256(EXISTING.before), after_hash: sha256(EXISTING.after) },
    ],
  });
  await hooks.afterMint?.(record);
  let writes = 0;
  await fs.writeFile(path.join(root, ADDED.path), ADDED.content);
  writes++;
  await hooks.betweenWrites?.();
  await fs.writeFile(path.join(root, EXISTING.path), EXISTING.after);
  writes++;
  await hooks.afterWrites?.();
  const result = { status: 'applied', operation_id: record.operation_id, files };
  await ledger.finish(record.operation_id, { status: 'applied', result });
  return { result, writes, replayed: false };
}
