import { sensitivePaths } from '../../../kernel/approvals/sensitivePaths';
import type { HoldFile, ProposalFile } from '../../../kernel/approvals/hold';
import { isSensitivePath } from '../../../kernel/approvals/sensitivePaths';
import { holdReason } from '../../../kernel/approvals/holdPolicy';
import { occupancyScope } from '../../../kernel/workspaces';
import { hashArguments } from '../../../base/canonicalJson';
import type { z } from 'zod';
import type { StoredHold } from '../../../kernel/approvals/approvalService';
import { ToolError } from '../../../base/errors';
import { unifiedDiff } from './diff';
import type { OperationSpec, PreparedOperation } from '../../../kernel/runner/operationRunner';
import type { PatchToolDeps } from './patchTools';
import type { PatchDiagnosticsDeps } from '../../editor';
import type { ApplyPatchRequest, ApplyPatchResult, PatchIntent } from './patchService';
import type { diagnosticsReportSchema } from '../../editor';
import { patchDiagnostics } from '../../editor';
import { holdWorkspace } from '../../../kernel/approvals/holdWork';

export interface ApplyPatchArgs {
  readonly workspace_id: string;
  readonly patch: string;
  readonly expected_versions: Readonly<Record<string, string>>;
  readonly operation_key: string;
  readonly check_only?: boolean | undefined;
  readonly work_id?: string | undefined;
}

/** Section paths and move destinations, in patch order. */
function pathsOf(intent: PatchIntent): string[] {
  return intent.planned.files.flatMap((f) => (f.move_to !== undefined ? [f.path, f.move_to] : [f.path]));
}

/** The held files: what the reviewer sees and what binds the hold (before-versions, proposed versions). */
export function holdFiles(intent: PatchIntent): HoldFile[] {
  return intent.planned.files.map((f) => {
    const counts = intent.counts.get(f.path) ?? { added: 0, removed: 0 };
    return {
      path: f.path,
      kind: f.kind,
      ...(f.move_to !== undefined ? { move_to: f.move_to } : {}),
      ...(f.beforeVersion !== undefined ? { before_version: f.beforeVersion } : {}),
      ...(f.afterVersion !== undefined ? { proposed_version: f.afterVersion } : {}),
      added: counts.added,
      removed: counts.removed,
      sensitive: isSensitivePath(f.path) || (f.move_to !== undefined && isSensitivePath(f.move_to)),
    };
  });
}

export function proposalFiles(intent: PatchIntent): ProposalFile[] {
  return intent.planned.files.map((f) => ({
    path: f.path,
    kind: f.kind,
    ...(f.move_to !== undefined ? { move_to: f.move_to } : {}),
    ...(f.before !== undefined ? { before: f.before } : {}),
    ...(f.after !== undefined ? { proposed: f.after } : {}),
  }));
}

function title(intent: PatchIntent): string {
  const names = intent.planned.files.map((f) => (f.move_to !== undefined ? `${f.path} → ${f.move_to}` : f.path));
  const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? `, +${names.length - 3} more` : '');
  const what = intent.request.check_only ? 'preview' : 'apply_patch';
  return `${what}: ${names.length} file${names.length === 1 ? '' : 's'} (${shown})`;
}

/** The request as the patch service takes it. */
function requestOf(args: ApplyPatchArgs): ApplyPatchRequest {
  return {
    workspace_id: args.workspace_id,
    patch: args.patch,
    expected_versions: args.expected_versions,
    operation_key: args.operation_key,
    ...(args.check_only !== undefined ? { check_only: args.check_only } : {}),
    ...(args.work_id !== undefined ? { work_id: args.work_id } : {}),
  };
}

const decoder = new TextDecoder('utf-8', { fatal: false });

/** `reviewer_changes`: per file the reviewer edited, a unified diff from the agent's proposal to what was applied. */
function reviewerChanges(intent: PatchIntent, reviewed: ReadonlyMap<string, Uint8Array>): { path: string; diff: string }[] {
  return [...reviewed.entries()].map(([path, bytes]) => {
    const planned = intent.planned.files.find((f) => f.path === path);
    const shown = planned?.kind === 'move' && planned.move_to !== undefined ? planned.move_to : path;
    return { path: shown, diff: unifiedDiff(shown, shown, decoder.decode(planned?.after ?? new Uint8Array()), decoder.decode(bytes)) };
  });
}

/** Commits a planned patch, with the reviewer's bytes in place of the plan's where the reviewer edited. */
async function commitPatch(deps: Pick<PatchToolDeps, 'patches' | 'afterWrite'>, intent: PatchIntent, reviewed: ReadonlyMap<string, Uint8Array> | undefined): Promise<ApplyPatchResult> {
  const result = await deps.patches.commit(intent, reviewed);
  // Review after the write: what it wrote joins the review of its work (or workspace).
  await deps.afterWrite.recordCommit(intent, result);
  if (!reviewed || reviewed.size === 0) return result;
  const withChanges: ApplyPatchResult & { reviewer_changes: { path: string; diff: string }[] } = { ...result, reviewer_changes: reviewerChanges(intent, reviewed) };
  return withChanges;
}

/**
 * The diagnostics field of an applied patch (see patchDiagnostics): added after the runner has released the
 * workspace's patch turn and the ledger has the result (which never carries it: a replay answers anew). Never waits
 * for a language server.
 */
export async function withPatchDiagnostics<R extends ApplyPatchResult>(deps: PatchDiagnosticsDeps, workspaceId: string, result: R, session?: string): Promise<R & { diagnostics?: z.infer<typeof diagnosticsReportSchema> }> {
  if (result.status !== 'applied') return result;
  const written = result.files.flatMap((f) => (f.kind === 'delete' ? [] : [{ path: f.kind === 'move' && f.move_to !== undefined ? f.move_to : f.path, version: f.after_version }]));
  const diagnostics = await patchDiagnostics(deps, workspaceId, written, session);
  return diagnostics ? { ...result, diagnostics } : result;
}

/** A held patch planned again (after a reload): its proposal, or the hold turns stale when a bound file moved on. */
async function replanHold(deps: Pick<PatchToolDeps, 'patches' | 'workspaces' | 'approvals'>, hold: StoredHold): Promise<ProposalFile[]> {
  const prepared = await deps.patches.prepare(holdWorkspace(deps.workspaces, hold), hold.request as unknown as ApplyPatchRequest);
  if ('replay' in prepared) return [];
  for (const f of hold.files ?? []) {
    const now = prepared.intent.planned.files.find((x) => x.path === f.path);
    if (now?.beforeVersion !== f.before_version || now?.afterVersion !== f.proposed_version) {
      await deps.approvals.markStale(hold.approval_id, `${f.path} changed on disk`);
      throw new ToolError('VERSION_CONFLICT', `Hold ${hold.approval_id} is stale: ${f.path} changed on disk.`, { details: { approval_id: hold.approval_id, state: 'stale' } });
    }
  }
  return proposalFiles(prepared.intent);
}

/**
 * apply_patch as an operation: prepare takes the workspace's patch turn, validates and plans (nothing written);
 * commit records and writes, with the reviewer's bytes in place of the plan's where the reviewer edited. Held by
 * `codespace.approvals.patches` (every patch, or those touching a sensitive path) and the workspace's
 * `codespace.review.mode` (approvals/holdPolicy.ts); after a commit, a direct call and
 * a resumed hold alike hand what it wrote to the diagnostics feed.
 */
export function patchOperation(deps: PatchToolDeps): OperationSpec<ApplyPatchArgs, ApplyPatchResult> {
  return {
    tool: 'apply_patch',
    hold: {
      reason: (intent, policy, context) => holdReason({ acts: 'patch', sensitive_paths: intent.sensitive_paths }, policy, context),
      description: { reviews: 'every patch', nothing: 'written' },
      replan: (hold) => replanHold(deps, hold),
    },
    // The language servers see the workspace folders, not a work's worktree: no diagnostics are followed there.
    afterCommit: (result, { workspace_id, session, work_id }) => {
      deps.afterWrite.attribute(result.operation_id, session);
      return work_id !== undefined ? Promise.resolve(result) : withPatchDiagnostics(deps, workspace_id, result, session);
    },
    async prepare(args) {
      // With a work_id: the work's worktree of the folder when it has one (the one resolution every tool shares).
      const ws = deps.workspaces.get(args.workspace_id, args.work_id);
      const release = await deps.patches.lock(occupancyScope(ws));
      try {
        const prepared = await deps.patches.prepare(ws, requestOf(args));
        if ('replay' in prepared) {
          release();
          return { done: prepared.replay };
        }
        const intent = prepared.intent;
        const checkOnly = args.check_only === true;
        const proposal = proposalFiles(intent);
        const op: PreparedOperation<ApplyPatchResult> = {
          workspace: ws,
          title: title(intent),
          intent: {
            // The ledger's hash already covers the patch text (hashed once: patches can be megabytes).
            request_hash: hashArguments({ tool: 'apply_patch', args_hash: intent.argsHash, operation_key: args.operation_key, work_id: args.work_id ?? null }),
            files: holdFiles(intent),
            proposal,
            sensitive_paths: sensitivePaths(pathsOf(intent)),
            operation_key: args.operation_key,
          },
          holdable: !checkOnly,
          occupies: !checkOnly,
          ...(checkOnly ? { preview: proposal } : {}),
          ...(args.work_id !== undefined ? { work_id: args.work_id } : {}),
          commit: (review) => commitPatch(deps, intent, review?.reviewed),
          release,
        };
        return op;
      } catch (err) {
        release();
        throw err;
      }
    },
  };
}
