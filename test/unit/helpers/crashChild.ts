import { fork } from 'node:child_process';
import * as path from 'node:path';
import type { PatchFaults } from '../../../src/features/patches/common/patchService';
import { silentLogger } from '../../../src/base/logger';
import { InMemoryWorkspaceSource } from '../../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../../src/kernel/workspaces';
import { DEFAULT_LIMITS } from '../../../src/kernel/limits';
import type { AssembledServices } from '../../../src/app/assembleServices';
import { assembleServices } from '../../../src/app/assembleServices';
import { NodeWorkspaceFs } from '../../../src/kernel/node/nodeWorkspaceFs';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

/** Runs a compiled helper script (under out/test/unit/helpers) in a child Node process and reports how it ended. */
export function runHelperChild(script: string, args: readonly string[]): Promise<ChildExit> {
  return new Promise((resolve, reject) => {
    const child = fork(path.join(__dirname, script), [...args], { execArgv: [], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}

/**
 * For the child side: the real services on one workspace folder (`root`, profile write) with the ledger in
 * `storage`, as the extension assembles them; returns them with the folder's id.
 */
export async function assembleChildServices(storage: string, root: string, faults?: PatchFaults): Promise<{ assembled: AssembledServices; workspaceId: string }> {
  const workspaces = new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: path.basename(root), profile: 'write' }]));
  const assembled = await assembleServices({
    workspaces,
    fs: new NodeWorkspaceFs(),
    logger: silentLogger,
    limits: () => DEFAULT_LIMITS,
    storageDir: storage,
    env: () => ({}),
    timeoutMs: () => 0,
    lifetime: 'crash-child',
    ...(faults ? { faults } : {}),
  });
  return { assembled, workspaceId: workspaces.list()[0]?.id as string };
}
