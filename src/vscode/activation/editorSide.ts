import type * as vscode from 'vscode';
import type { Disposable } from '../../base/disposable';
import { holdWorkspace } from '../../kernel/approvals/holdWork';
import type { WorkspaceRegistry } from '../../kernel/workspaces';
import type { AssembledServices } from '../../app/assembleServices';
import type { GitWorkBaseline } from '../../features/works/node';
import { WorkDelivery, deliverReviewedWork } from '../../features/works/node';
import type { FreezeGit } from '../../features/works/node';
import type { AgentDirectory } from '../../features/connect/vscode';
import type { OutputLogger } from '../../kernel/vscode/log';
import type { PanelForTests } from '../panel/panelView';
import { registerPanel } from '../panel/panelView';
import { ProcessTerminals } from '../../features/processes/vscode';
import { locateAfterWriteComment, registerAfterWriteReview } from '../../features/review/vscode';
import type { CheckpointsForTests } from '../../features/review/vscode';
import { registerCheckpointCommands } from '../../features/review/vscode';
import { registerFrozenReview } from '../../features/works/vscode';
import { pullRequestExtensionOpener } from '../../features/works/vscode';
import { registerReview } from '../../features/review/vscode';
import type { ReviewCommentsForTests } from '../../features/review/vscode';
import { registerReviewComments } from '../../features/review/vscode';
import type { WorkReviewForTests } from '../../features/works/vscode';
import { registerWorkReview } from '../../features/works/vscode';
import { registerShowProcessTerminal } from '../../features/processes/vscode';
import { registerDiscardWork } from '../../features/works/vscode';
import { registerOpenWorkWorktree } from '../../features/works/vscode';
import { registerSteering } from '../../features/works/vscode';

export interface EditorSideOptions {
  readonly core: AssembledServices;
  readonly workspaces: WorkspaceRegistry;
  readonly workTree: GitWorkBaseline;
  readonly checkpoints: FreezeGit;
  readonly agents: AgentDirectory;
  readonly state: vscode.Memento;
  readonly extensionUri: vscode.Uri;
  readonly log: OutputLogger;
}

/** What the in-editor tests read of the editor's side (CodeSpaceApi). */
export interface EditorSideForTests {
  readonly panelForTests: PanelForTests;
  readonly workReviewForTests: WorkReviewForTests;
  readonly reviewCommentsForTests: ReviewCommentsForTests;
  readonly checkpointsForTests: CheckpointsForTests;
}

/**
 * The editor's view of what agents do: process terminals, the reviews (of holds, of works, after the write, of frozen
 * works), the review comments, the steering commands, the checkpoints and the panel. Needs no token.
 */
export function registerEditorSide(o: EditorSideOptions, owned: Disposable[]): EditorSideForTests {
  const { core, workspaces, log } = o;
  const terminals = new ProcessTerminals(core.supervisor, log);
  owned.push(terminals, registerShowProcessTerminal(terminals, core.supervisor));
  const approvals = core.approvals;
  const steering = core.steering;
  const workspaceRoot = (id: string): string | undefined => workspaces.list().find((w) => w.id === id)?.root;
  // A held patch of a work with worktrees binds the files of its worktree: those are the ones watched.
  const holdRoot = (id: string, approvalId?: string): string | undefined => {
    try {
      return holdWorkspace(workspaces, { workspace_id: id, request: approvalId === undefined ? undefined : approvals.stored(approvalId).request }).root;
    } catch {
      return workspaceRoot(id);
    }
  };
  owned.push(...registerReview({ approvals, activity: core.runner, log, workspaceRoot: holdRoot }));
  const workReview = registerWorkReview({ steering, tree: o.workTree, workspaceRoot, patchRecords: () => core.ledger.list(), log });
  // The reviews after the write, and where each one's files are: its work's worktree of the folder, or the folder.
  const afterWrite = {
    reviews: core.afterWrite,
    rootOf: (r: { workspace_id: string; work_id?: string }): string | undefined => {
      try {
        return workspaces.get(r.workspace_id, r.work_id).root;
      } catch {
        return undefined;
      }
    },
  };
  const reviewComments = registerReviewComments({
    approvals,
    log,
    state: o.state,
    // A work review's files, and the files of a work's review after the write.
    locateWork: (uri) => {
      const at = workReview.locate(uri) ?? locateAfterWriteComment(afterWrite, uri);
      return at ? { target: `work:${at.workId}`, path: at.path, side: at.side } : undefined;
    },
    sendToWork: async (workId, comments) => (await steering.queueReviewComments(workId, comments)).id,
  });
  owned.push(...reviewComments.disposables, ...registerAfterWriteReview({ ...afterWrite, steering, state: o.state, log }));
  owned.push(...workReview.disposables, ...registerSteering({ steering, log }), registerOpenWorkWorktree(steering), registerDiscardWork(steering, log));
  const delivery = new WorkDelivery({ log, opener: pullRequestExtensionOpener() });
  owned.push(...registerFrozenReview({ steering, freezer: core.freezer, checkpoints: o.checkpoints, deliver: (id) => deliverReviewedWork(steering, delivery, id), log }));
  const checkpointCommands = registerCheckpointCommands({ checkpoints: core.checkpoints, steering, locateWork: (uri) => workReview.locate(uri), log });
  owned.push(...checkpointCommands.disposables);
  const panel = registerPanel({ extensionUri: o.extensionUri, approvals, activity: core.runner, steering, reviewable: (w) => o.workTree.readable(w.baseline), agents: o.agents, log });
  owned.push(panel);
  return { panelForTests: panel.forTests, workReviewForTests: workReview.forTests, reviewCommentsForTests: reviewComments.forTests, checkpointsForTests: checkpointCommands.forTests };
}
