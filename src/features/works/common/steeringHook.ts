import type { ApprovalService } from '../../../kernel/approvals/approvalService';
import { callerOf } from '../../../kernel/identity';
import type { SteeringService } from './steeringService';
import { kindFlags } from '../../../kernel/toolKinds';
import type { CallHook, HookedCall } from '../../../kernel/callHooks';
import { heldWork } from '../../../kernel/approvals/holdWork';

/**
 * The work a call writes in or runs a command in: its own work_id (a tool that writes or runs), the work_id of the
 * request it holds (approval_create), or of the hold it resumes (operation_resume).
 */
function editedWork(call: HookedCall & { readonly args: Record<string, unknown> }, approvals: Pick<ApprovalService, 'stored'>): string | undefined {
  const { kind, args } = call;
  if (typeof args.work_id === 'string' && kindFlags(kind).requires !== 'read') return args.work_id;
  if (kind === 'approval') return heldWork(args.request);
  if (kind === 'resume' && typeof args.approval_id === 'string') {
    try {
      return heldWork(approvals.stored(args.approval_id).request);
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * The works' side of every call. Before it runs: a session that writes or runs a command in a work is one of its
 * authors, so it cannot review it (work_review). After: a session that names an open work (`work_id`) takes it on,
 * and every answer to a session with an open work carries `coordination` (`{ work_id, queued_instructions }`), so
 * the agent learns at its next call, whatever the tool, that the developer has queued an instruction.
 */
export function steeringHook(steering: SteeringService, approvals: Pick<ApprovalService, 'stored'>): CallHook {
  return {
    before(call) {
      const edited = editedWork(call, approvals);
      if (edited !== undefined) steering.noteEditor(edited, callerOf(call));
    },
    after(call) {
      const named = heldWork(call.args);
      if (named !== undefined) steering.adopt(call.session, named);
      const coordination = steering.coordination(call.session, named);
      return coordination ? { coordination } : undefined;
    },
  };
}
