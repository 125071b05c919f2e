import * as path from 'node:path';
import { ToolError } from '../../../base/errors';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import type { Workspace } from '../../../kernel/workspaces';
import { mapLimit } from '../../../base/concurrency';
import { Pacer } from './pacer';
import { parsePatchPaced } from './parser';
import type { ParsedPatch } from './parser';
import type { PlannedPatch } from './plan';
import { planPatch } from './plan';
import { confinedPaths, diskIdentity, missingFolders, readFound, throughLink } from './patchDisk';
import type { FileFound } from './patchDisk';
import type { ApplyPatchRequest, PatchStep } from './patchTypes';

/** Every check that can refuse the patch, before anything is recorded or written. */
export async function validatePatch(fs: WorkspaceFs, ws: Workspace, request: ApplyPatchRequest): Promise<{ planned: PlannedPatch; steps: PatchStep[]; realRoot: string; parsed: ParsedPatch }> {
  // One pacer for the whole check: the work yields to the event loop and has one deadline (TIMEOUT).
  const pacer = new Pacer();
  const parsed = await parsePatchPaced(request.patch, pacer);
  /** The real path each file read for the plan had (see FileContent.real). */
  const realOf = new Map<string, string>();
  const { realRoot, resolve } = await confinedPaths(fs, ws.root);
  // Look every named path up at once (bounded), then plan in patch order from those answers: a large patch
  // validates in parallel, and errors still surface in the order the patch names them.
  const lookups = new Map<string, Promise<FileFound>>();
  const lookup = (rel: string): Promise<FileFound> => {
    let p = lookups.get(rel);
    if (!p) {
      p = (async (): Promise<FileFound> => {
        const { found, real } = await readFound(fs, await resolve(rel), rel, realRoot);
        if (real !== undefined) realOf.set(rel, real);
        return found;
      })();
      p.catch(() => undefined); // surfaced when planPatch asks for it
      lookups.set(rel, p);
    }
    return p;
  };
  const named = [...new Set(parsed.files.flatMap((op) => (op.kind === 'update' && op.moveTo !== undefined ? [op.path, op.moveTo] : [op.path])))];
  await mapLimit(named, 16, (rel) => lookup(rel).then(() => undefined, () => undefined));
  // Versions are checked inside the plan, before any hunk is matched (preconditions first).
  const planned = await planPatch(parsed, lookup, { diffs: request.check_only === true, pacer, expected: request.expected_versions });
  const steps = await stepsOf(fs, ws, planned, resolve, realOf, realRoot);
  return { planned, steps, realRoot, parsed };
}

/** Where each planned file is written, refusing files with unsaved editor changes and two sections on one file. */
export async function stepsOf(fs: WorkspaceFs, ws: Workspace, planned: PlannedPatch, resolve: (rel: string) => Promise<string>, realOf: ReadonlyMap<string, string>, realRoot: string): Promise<PatchStep[]> {
  const steps: PatchStep[] = [];
  /** What each section changes on disk (see diskIdentity) → the patch path that names it. */
  const claimed = new Map<string, string>();
  const facts = await mapLimit(planned.files, 16, async (file) => {
    const named = await resolve(file.path);
    // An update writes through a symbolic link to the file it names (confine proved the target is inside), so
    // the link survives like the mode does; replacing it would leave the link's target unpatched. A delete or a
    // move removes the entry itself.
    // The file the plan was read from, when its real path is the named one below the real root: no link on the
    // way, so the write goes to the named path and the real path read is what it changes (no second resolution).
    const direct = file.kind === 'update' && realOf.get(file.path) === path.join(realRoot, ...file.path.split('/')) ? realOf.get(file.path) : undefined;
    const abs = direct !== undefined ? named : file.kind === 'update' ? await throughLink(fs, named) : named;
    const absTarget = file.move_to !== undefined ? await resolve(file.move_to) : undefined;
    const identity = direct ?? (await diskIdentity(fs, abs, file.kind === 'update'));
    const targetIdentity = absTarget !== undefined ? await diskIdentity(fs, absTarget, false) : undefined;
    const created = file.kind === 'add' ? abs : file.kind === 'move' ? absTarget : undefined;
    const newFolders = created !== undefined ? await missingFolders(fs, created, ws.root) : [];
    const removesEntry = file.kind === 'delete' || file.kind === 'move';
    const linkTarget = removesEntry && (await fs.lstat(named))?.type === 'symlink' ? await fs.readLink(named) : undefined;
    return { named, abs, absTarget, identity, targetIdentity, newFolders, linkTarget };
  });
  for (const [i, file] of planned.files.entries()) {
    const { named, abs, absTarget, identity, targetIdentity, newFolders, linkTarget } = facts[i] as (typeof facts)[number];
    for (const [rel, p] of [[file.path, named], [file.path, abs], [file.move_to, absTarget]] as const) {
      if (p !== undefined && rel !== undefined && fs.isDirty(p)) {
        throw new ToolError('FILE_DIRTY_IN_EDITOR', `${rel} has unsaved changes in the editor; nothing was written.`, {
          hint: 'Ask the developer to save or revert the file, then read it again and resend the patch.',
          details: { path: rel },
        });
      }
    }
    for (const [rel, id] of [
      [file.path, identity],
      ...(file.move_to !== undefined && targetIdentity !== undefined ? [[file.move_to, targetIdentity] as const] : []),
    ] as const) {
      const other = claimed.get(id);
      if (other !== undefined) {
        // Two sections on one file (through a symbolic link) would each be planned from the old content and
        // the second write would silently drop the first one's changes.
        throw new ToolError('PATCH_INVALID', `${JSON.stringify(rel)} and ${JSON.stringify(other)} are the same file on disk (a symbolic link); the patch touches it twice.`, {
          hint: 'Touch each file once per patch: merge the changes into one section, under one of its names.',
          details: { path: rel, same_as: other },
        });
      }
      claimed.set(id, rel);
    }
    steps.push({ file, abs, newFolders, ...(absTarget ? { absTarget } : {}), ...(linkTarget !== undefined ? { linkTarget } : {}) });
  }
  return steps;
}
