import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ProtectionState, ProtectedPath } from '../../common/commandIsolation';
import type { ProtectedEntry } from './bubblewrapArgs';
import { SandboxPlanError } from './bubblewrapArgs';
import { heldPlaceholders } from './placeholders';
import type { GitWrites, NestedRepository } from './sandboxInventory';
import { protectedEntries, scanNestedRepositories } from './sandboxInventory';
import { describeError } from '../../../../base/describeError';

/**
 * What a sandboxed command gets when the sandbox cannot establish all it protects (`codespace.exec.incompleteProtection`):
 * `refuse` (the default) does not run it; `protectKnown` runs it with what was found protected, by name, and
 * workspace_info says what is missing.
 */
export type IncompleteProtection = 'refuse' | 'protectKnown';

/** Most entries walked below protected folders when their files' link counts are checked. */
export const LINK_WALK_BOUND = 20_000;

/**
 * The protection of one workspace as the next command would get it: the entries to mount read-only, the nested
 * repositories they include, and every reason the sandbox cannot promise what it says (empty: it can).
 */
export interface ProtectionPlan {
  readonly nested: readonly NestedRepository[];
  readonly entries: readonly ProtectedEntry[];
  readonly gaps: readonly string[];
}

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}

/**
 * Protected files that have other names (st_nlink > 1): a read-only mount covers a name, not the file, so a hard
 * link elsewhere in the workspace would keep it writable. Walks the existing read-only entries (not a git folder's
 * `objects/`, which git hard-links on a local clone and neither runs nor reads as configuration), within
 * {@link LINK_WALK_BOUND} entries; a folder it cannot read, or the bound, is a gap too.
 */
export function linkGaps(root: string, entries: readonly ProtectedEntry[]): string[] {
  const gaps: string[] = [];
  let budget = LINK_WALK_BOUND;
  const rel = (p: string): string => path.relative(root, p) || '.';
  const visit = (p: string): void => {
    if (budget-- === 0) gaps.push(`more than ${LINK_WALK_BOUND} entries in protected folders; the link counts of the rest were not checked`);
    if (budget < 0) return;
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch (err) {
      if (code(err) !== 'ENOENT') gaps.push(`${rel(p)} could not be examined (${code(err)})`);
      return;
    }
    if (st.isFile() && st.nlink > 1) {
      gaps.push(`${rel(p)} has ${st.nlink} names (hard links), so a command could change it through another name; give it a single name (copy it and move the copy over it)`);
    }
    if (!st.isDirectory()) return;
    let names: string[];
    try {
      names = fs.readdirSync(p);
    } catch (err) {
      gaps.push(`the protected folder ${rel(p)} could not be read (${code(err)})`);
      return;
    }
    const gitDir = names.includes('HEAD');
    for (const n of names) if (!(gitDir && n === 'objects')) visit(path.join(p, n));
  };
  for (const e of entries) if (e.state === 'dir' || e.state === 'file') visit(e.path);
  return gaps;
}

/**
 * The entries to protect in `root` now. One that exists only as another running command's placeholder is still a
 * missing one (held again, so that it stays until both commands have ended).
 */
export function currentProtected(root: string, gitWrites: GitWrites, nested: readonly NestedRepository[]): ProtectedEntry[] {
  const held = new Set(heldPlaceholders());
  return protectedEntries(root, gitWrites, nested).map((e): ProtectedEntry =>
    held.has(e.path) && (e.state === 'dir' || e.state === 'file') ? { path: e.path, state: e.state === 'dir' ? 'missing-dir' : 'missing-file' } : e,
  );
}

/** Scans `root` (its real path) for what the next command must not change, and for what stands in the way. */
export async function planProtection(root: string, gitWrites: GitWrites): Promise<ProtectionPlan> {
  const scan = await scanNestedRepositories(root);
  const entries = currentProtected(root, gitWrites, scan.repositories);
  return { nested: scan.repositories, entries, gaps: [...scan.gaps, ...linkGaps(root, entries)] };
}

/** Throws (the command must not run) when `plan` has gaps and the developer did not choose `protectKnown`. */
export function requireComplete(plan: ProtectionPlan, mode: IncompleteProtection): void {
  if (plan.gaps.length === 0 || mode === 'protectKnown') return;
  throw new SandboxPlanError(
    `the sandbox cannot establish what it protects in this workspace: ${plan.gaps.join('; ')}. ` +
      'Fix that, or set codespace.exec.incompleteProtection to "protectKnown" in your user settings to run commands with only what was found protected.',
  );
}

/** `protected` and `protection` of workspace_info for `root` (empty when it cannot be examined at all). */
export async function describeProtection(root: string, gitWrites: GitWrites, mode: IncompleteProtection): Promise<{ protected: ProtectedPath[]; protection: ProtectionState }> {
  let real: string;
  let plan: ProtectionPlan;
  try {
    real = fs.realpathSync(root);
    plan = await planProtection(real, gitWrites);
  } catch (err) {
    const why = `the workspace could not be examined: ${describeError(err)}`;
    return { protected: [], protection: { complete: false, gaps: [why], on_incomplete: mode, commands: mode === 'refuse' ? 'refused' : 'run-protecting-known' } };
  }
  const kind = (e: ProtectedEntry): ProtectedPath['kind'] =>
    e.state === 'dir' ? 'read-only-dir' : e.state === 'file' ? 'read-only-file' : e.state === 'pinned-dir' ? 'writable-pinned' : 'masked-missing';
  const complete = plan.gaps.length === 0;
  return {
    protected: plan.entries.map((e) => ({ path: path.relative(real, e.path), kind: kind(e) })),
    protection: { complete, gaps: [...plan.gaps], on_incomplete: mode, commands: complete ? 'run' : mode === 'refuse' ? 'refused' : 'run-protecting-known' },
  };
}
