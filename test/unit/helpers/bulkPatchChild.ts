/**
 * Child process of the kill-anywhere test: assembles the real services on <storage dir>, prints "go", applies the
 * bulk patch (every file of bulkPatchScenario from old to new) and prints "done". The parent SIGKILLs it at a
 * random moment, as an extension-host crash would.
 * argv: <storage dir> <workspace root>
 */
import { applyPatchTool } from '../../../src/features/patches/common/applyPatch';
import { BULK_KEY, bulkPatch } from './bulkPatchScenario';
import { assembleChildServices } from './crashChild';
import { createdTool } from './assembleOptions';

async function main(): Promise<void> {
  const [storage, root] = process.argv.slice(2) as [string, string];
  const { assembled, workspaceId: id } = await assembleChildServices(storage, root);
  process.send?.('go');
  await createdTool(assembled, applyPatchTool).handler({ workspace_id: id, ...bulkPatch(), operation_key: BULK_KEY }, { signal: new AbortController().signal });
  process.send?.('done');
  await assembled.shutdown();
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(3);
});
