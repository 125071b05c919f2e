import type { ApprovalService } from '../../../kernel/approvals/approvalService';
import type { DiagnosticsFeed } from '../../editor';
import type { WorkspaceRegistry } from '../../../kernel/workspaces';
import type { LanguageFeatures } from '../../editor';
import type { Logger } from '../../../base/logger';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import type { PatchService } from './patchService';
import type { AfterWriteReviews } from '../../review';
import { applyPatchTool } from './applyPatch';
import { operationStatusTool } from '../../review';
import type { AnyTool, OperationDeps } from '../../../kernel/tool';

/** What apply_patch and operation_status use. */
export interface PatchToolDeps {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  readonly logger: Logger;
  /** Patches and their ledger. */
  readonly patches: PatchService;
  /** A held patch planned again turns its hold stale when a bound file moved on. */
  readonly approvals: Pick<ApprovalService, 'markStale'>;
  /** The review after the write: what a patch wrote joins it. */
  readonly afterWrite: Pick<AfterWriteReviews, 'recordCommit' | 'attribute'>;
  /** The editor's language features (absent without an editor): a patch's files are followed for diagnostics. */
  readonly language: LanguageFeatures | undefined;
  readonly diagnosticsFeed: DiagnosticsFeed;
}

/** The patch tools (TOOLS.md "Patches"), in the order tools/list shows them. */
export const PATCH_TOOLS = [applyPatchTool, operationStatusTool] as const;

export function patchTools(deps: PatchToolDeps & OperationDeps): AnyTool[] {
  return [applyPatchTool.create(deps), operationStatusTool.create(deps)];
}
