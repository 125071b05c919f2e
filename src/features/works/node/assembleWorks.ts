// The works module as the composition starts it: the store of works and instructions opened from its journal
// sections, freezing on git, its tools, its per-call hook (which work a call belongs to, and the coordination every
// answer carries) and what it offers agents beside its tools (the instruction queues, the agent-loop prompt).
import type { AsyncDisposableStore } from '../../../base/disposable';
import { flushThenDispose } from '../../../base/disposable';
import type { ApprovalService } from '../../../kernel/approvals/approvalService';
import type { AgentResources } from '../../../kernel/agentResources';
import type { CallHook } from '../../../kernel/callHooks';
import type { AnyTool } from '../../../kernel/tool';
import { WorkFreezer } from '../common/freeze';
import { steeringHook } from '../common/steeringHook';
import { steeringResources } from '../common/steeringResources';
import { SteeringService } from '../common/steeringService';
import type { SteeringServiceOptions } from '../common/steeringService';
import { steeringTools } from '../common/steeringTools';
import type { WorkCheckpoints } from '../common/workCheckpoint';
import { FreezeGit } from './freezeGit';

export interface WorksModule {
  readonly steering: SteeringService;
  readonly freezer: WorkFreezer;
  readonly tools: readonly AnyTool[];
  readonly hook: CallHook;
  /** The queues and the prompt; `completeWorkspace` completes the prompt's workspace_id. */
  resources(completeWorkspace: (prefix: string) => Promise<string[]>): AgentResources;
}

/**
 * Opens the works (their journal sections are read and settled) and makes the rest of the module on them. What is
 * still queued to be written is written before the store closes, as the last of the module to go (`owned`).
 */
export async function assembleWorks(
  options: SteeringServiceOptions & { readonly checkpoints?: WorkCheckpoints; readonly approvals: Pick<ApprovalService, 'stored'> },
  owned: AsyncDisposableStore,
): Promise<WorksModule> {
  const { checkpoints, approvals, ...steeringOptions } = options;
  const steering = new SteeringService(steeringOptions);
  owned.add(flushThenDispose(steering));
  const opened = await steering.open();
  options.logger.info(`[steering] ${opened.works} work(s) loaded, ${opened.open} open, ${opened.queued} instruction(s) queued, ${opened.claimed} claimed`);
  const freezer = new WorkFreezer({ steering, checkpoints: checkpoints ?? new FreezeGit({ log: options.logger }), workspaces: options.workspaces, logger: options.logger });
  return {
    steering,
    freezer,
    tools: steeringTools({ steering, freezer }),
    hook: steeringHook(steering, approvals),
    resources: (completeWorkspace) => steeringResources(steering, completeWorkspace),
  };
}
