import { sensitivePaths } from '../approvals/sensitivePaths';
import type { HoldFile, ProposalFile } from '../approvals/hold';
import { isSensitivePath } from '../approvals/sensitivePaths';
import { hashArguments } from '../ledger/canonicalJson';
import type { OperationSpec, PreparedOperation } from '../runner/operationRunner';
import type { CoreServices } from './tool';
import type { ApplyPatchRequest, ApplyPatchResult, PatchIntent } from '../patch/patchService';

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

/**
 * apply_patch as an operation: prepare takes the workspace's patch turn, validates and plans (nothing written);
 * commit records and writes, with the reviewer's bytes in place of the plan's where the reviewer edited.
 */
export function patchOperation(services: CoreServices): OperationSpec<ApplyPatchArgs, ApplyPatchResult> {
  return {
    tool: 'apply_patch',
    async prepare(args) {
      const ws = services.workspaces.get(args.workspace_id);
      if (args.work_id !== undefined) services.steering.checkOperationWork(args.work_id, ws.id);
      const release = await services.patches.lock(ws.id);
      try {
        const prepared = await services.patches.prepare(ws, requestOf(args));
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
          commit: (review) => services.patches.commit(intent, review?.reviewed),
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
