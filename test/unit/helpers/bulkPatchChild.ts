/**
 * Child process of the kill-anywhere test: assembles the real services on <storage dir>, prints "go", applies the
 * bulk patch (every file of bulkPatchScenario from old to new) and prints "done". The parent SIGKILLs it at a
 * random moment, as an extension-host crash would.
 * argv: <storage dir> <workspace root>
 */
import * as path from 'node:path';
import { silentLogger } from '../../../src/core/ports/logger';
import { InMemoryWorkspaceSource } from '../../../src/core/ports/workspaceSource';
import { WorkspaceRegistry } from '../../../src/core/policy/workspaces';
import { applyPatchTool } from '../../../src/core/tools/applyPatch';
import { DEFAULT_LIMITS } from '../../../src/core/tools/tool';
import { assembleServices } from '../../../src/node/assembleServices';
import { NodeWorkspaceFs } from '../../../src/node/nodeWorkspaceFs';
import { BULK_KEY, bulkPatch } from './bulkPatchScenario';

async function main(): Promise<void> {
  const [storage, root] = process.argv.slice(2) as [string, string];
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
  });
  const id = workspaces.list()[0]?.id as string;
  process.send?.('go');
  await applyPatchTool.handler({ workspace_id: id, ...bulkPatch(), operation_key: BULK_KEY }, { services: assembled.services, signal: new AbortController().signal });
  process.send?.('done');
  await assembled.shutdown();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(3);
});
