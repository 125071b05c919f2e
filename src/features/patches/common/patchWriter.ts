import type { Logger } from '../../../base/logger';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import { failureCode } from '../../../base/paths';
import type { Workspace } from '../../../kernel/workspaces';
import { mapLimit } from '../../../base/concurrency';
import { describeError } from '../../../base/describeError';
import { hashAt, modeBeforeOf, writeStep } from './patchDisk';
import type { ApplyPatchResult, PatchFaults, PatchFileResult, PatchStep } from './patchTypes';

export interface WriteContext {
  readonly fs: WorkspaceFs;
  readonly logger: Logger;
  readonly faults?: PatchFaults;
}

/**
 * Writes the steps of one operation, all or nothing: if a write fails, the files already written are put back from
 * their snapshots and checked by hash ('failed'), or the result names the files that could not be ('failed_partial').
 */
export async function writeSteps(context: WriteContext, ws: Workspace, realRoot: string, steps: PatchStep[], operationId: string, files: PatchFileResult[]): Promise<ApplyPatchResult> {
  const { fs, faults, logger } = context;
  // Adds and updates touch independent paths and are written several at a time. A delete or a move may clear the
  // way for a later section (a file replaced by a folder of the same name), so such patches keep patch order;
  // so do the test seams, which stop the applier between two writes.
  const ordered = faults !== undefined || steps.some((s) => s.file.kind === 'delete' || s.file.kind === 'move');
  const done: PatchStep[] = [];
  let failure: { index: number; error: unknown } | undefined;
  await mapLimit(steps, ordered ? 1 : 8, async (step, index) => {
    if (failure) return;
    try {
      if (faults?.failWrite?.(index, step.file.path)) throw new Error(`injected write failure at ${step.file.path}`);
      await writeStep(fs, step, { within: realRoot, tag: operationId });
      done.push(step);
      await faults?.afterWrite?.(index);
    } catch (error) {
      failure ??= { index, error };
    }
  });
  if (!failure) return { status: 'applied', operation_id: operationId, files };

  const message = describeError(failure.error);
  logger.warn(`[patch] write failed in ${ws.id} (${message}); restoring ${done.length} file operation(s)`);
  const failedStep = steps[failure.index] as PatchStep;
  const failedAt = failedStep.file.path;
  // Also undo and verify the step that failed: an atomic write leaves it untouched, but a move may be half done.
  // Except when confinement refused it: its folder led outside, nothing was opened for writing, and re-checking it
  // through the same moving link would only report that link's state.
  const refused = failureCode(failure.error) === 'ESCAPED' && failedStep.file.kind !== 'move';
  const undo = refused || done.includes(failedStep) ? done : [...done, failedStep];
  const states = await undoSteps(fs, realRoot, operationId, undo);
  const broken = states.filter((s) => s.state !== 'restored');
  if (broken.length === 0) {
    return {
      status: 'failed',
      operation_id: operationId,
      files,
      reason: `Writing ${failedAt} failed (${message}); every file was restored and verified by hash.`,
      hint: 'Nothing changed. Read the files again and retry with a new operation_key.',
    };
  }
  return {
    status: 'failed_partial',
    operation_id: operationId,
    files: files.map((f) => ({ ...f, state: states.find((s) => s.path === f.path)?.state ?? 'unchanged' })),
    reason: `Writing ${failedAt} failed (${message}) and ${broken.length} file(s) could not be restored.`,
    hint: 'Read the files listed with a state other than "restored" before doing anything else.',
  };
}

/** Puts back what each step changed, newest first, and checks each path by hash. */
async function undoSteps(fs: WorkspaceFs, realRoot: string, operationId: string, steps: PatchStep[]): Promise<{ path: string; state: string }[]> {
  const within = { within: realRoot };
  const hash = (abs: string) => hashAt(fs, abs, realRoot);
  const out: { path: string; state: string }[] = [];
  for (const step of [...steps].reverse()) {
    const { file } = step;
    try {
      if (file.kind === 'add') {
        if (await fs.stat(step.abs)) await fs.deleteFile(step.abs, within);
      } else if (step.linkTarget !== undefined) {
        if ((await fs.lstat(step.abs)) === undefined) await fs.createLink(step.linkTarget, step.abs, within);
        if (file.kind === 'move' && step.absTarget && (await fs.stat(step.absTarget))) await fs.deleteFile(step.absTarget, within);
      } else if (file.before) {
        if ((await hash(step.abs)) !== file.beforeVersion || file.beforeMode !== undefined) await fs.writeFile(step.abs, file.before, { ...within, ...modeBeforeOf(file), tag: `${operationId}-undo` });
        if (file.kind === 'move' && step.absTarget && (await fs.stat(step.absTarget))) await fs.deleteFile(step.absTarget, within);
      }
      for (const folder of step.newFolders) {
        // Fails, harmlessly, while another file of the patch still lives there; its own undo removes it later.
        await fs.removeEmptyFolder(folder, within).catch(() => undefined);
      }
      const ok = file.kind === 'add'
        ? (await hash(step.abs)) === undefined
        : (await hash(step.abs)) === file.beforeVersion && (file.kind !== 'move' || (await hash(step.absTarget as string)) === undefined);
      out.push({ path: file.path, state: ok ? 'restored' : 'differs from both before and after' });
    } catch (err) {
      out.push({ path: file.path, state: `restore failed: ${describeError(err)}` });
    }
  }
  return out;
}
