/**
 * Child process of the patch crash test: assembles the real services (assembleServices on NodeWorkspaceFs with a
 * FileJournal in <storage dir>), applies the shared two-file patch through the apply_patch tool handler, and
 * SIGKILLs itself at the requested point, leaving disk and ledger exactly as an extension-host crash would.
 * argv: <storage dir> <workspace root> <before-write | after-first-write | before-finish>
 */
import type { PatchFaults } from '../../../src/features/patches/common/patchService';
import { applyPatchTool } from '../../../src/features/patches/common/applyPatch';
import { assembleChildServices } from './crashChild';
import { createdTool } from './assembleOptions';
import type { CrashPoint } from './patchCrashScenario';
import { CRASH_ARGS, CRASH_POINTS } from './patchCrashScenario';

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  // SIGKILL is not delivered synchronously on every platform; never run past the kill point.
  for (;;) {
    /* wait for the signal */
  }
}

async function main(): Promise<void> {
  const [storage, root, point] = process.argv.slice(2) as [string, string, CrashPoint];
  if (!storage || !root || !CRASH_POINTS.includes(point)) {
    throw new Error(`usage: patchCrashChild <storage dir> <workspace root> <point>, got ${process.argv.slice(2).join(' ')}`);
  }
  const faults: PatchFaults = {
    failWrite: (index) => {
      if (point === 'before-write' && index === 0) die();
      return false;
    },
    afterWrite: (index) => {
      if (point === 'after-first-write' && index === 0) die();
    },
    beforeFinish: () => {
      if (point === 'before-finish') die();
    },
  };
  const { assembled, workspaceId: id } = await assembleChildServices(storage, root, faults);
  await createdTool(assembled, applyPatchTool).handler({ workspace_id: id, ...CRASH_ARGS, expected_versions: { ...CRASH_ARGS.expected_versions } }, {
    signal: new AbortController().signal,
  });
  throw new Error('the patch finished: the child should have been killed before the ledger recorded it');
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(3);
});
