import { ToolError } from '../../base/errors';
import type { HoldView } from './hold';

/** The error a resume answers for a hold that is not granted (or the stored outcome's error). */
export function notGranted(h: HoldView): ToolError {
  switch (h.state) {
    case 'pending':
      return new ToolError('APPROVAL_CONFLICT', `Hold ${h.approval_id} is still waiting for the developer's decision.`, {
        hint: 'Call operation_resume again with wait_ms (up to 55000) to keep waiting; do not resend the original request.',
        details: { approval_id: h.approval_id, state: h.state },
      });
    case 'denied':
      return new ToolError('APPROVAL_DENIED', `The developer denied hold ${h.approval_id}${h.note ? `: ${h.note}` : '.'}`, {
        hint: 'Nothing was written or started. Read the note, change the approach, and send a new request.',
        details: { approval_id: h.approval_id, ...(h.note !== undefined ? { note: h.note } : {}) },
      });
    case 'stale':
      return staleError(h.approval_id, h.stale_reason ?? 'a file it touches changed');
    case 'resuming':
      return new ToolError('APPROVAL_CONFLICT', `Hold ${h.approval_id} is being resumed by another call.`, {
        hint: 'Wait for that call; a repeat of operation_resume afterwards returns its result.',
        details: { approval_id: h.approval_id, state: h.state },
      });
    case 'ambiguous':
      return new ToolError('APPROVAL_AMBIGUOUS', `Resuming hold ${h.approval_id} was interrupted; whether it ran is not known.`, {
        hint:
          h.operation_key === undefined
            ? `Do not start the ${h.command ? 'command' : 'operation'} again blindly: check the workspace for its effects first.`
            : `Call operation_status with operation_key ${JSON.stringify(h.operation_key)} to learn whether the patch was applied.`,
        details: { approval_id: h.approval_id, state: h.state, ...(h.operation_key !== undefined ? { operation_key: h.operation_key } : {}) },
      });
    case 'granted':
    case 'consumed':
      return new ToolError('APPROVAL_CONFLICT', `Hold ${h.approval_id} is ${h.state}.`, { details: { approval_id: h.approval_id, state: h.state } });
  }
}

/** A decision asked for on a hold that is no longer pending. */
export function notPending(h: HoldView): ToolError {
  if (h.state === 'stale') return staleError(h.approval_id, h.stale_reason ?? 'a file it touches changed');
  return new ToolError('APPROVAL_CONFLICT', `Hold ${h.approval_id} is ${h.state}, not pending; it was already decided.`, {
    hint: 'A decision is final. Call operation_resume to learn the outcome.',
    details: { approval_id: h.approval_id, state: h.state },
  });
}

export function staleError(approvalId: string, reason: string): ToolError {
  return new ToolError('VERSION_CONFLICT', `Hold ${approvalId} is stale: ${reason}. It can no longer be granted.`, {
    hint: 'Read the files again and send a new patch (with a new operation_key).',
    details: { approval_id: approvalId, state: 'stale', reason },
  });
}

/** OPERATION_NOT_FOUND for an approval id no hold has (any more). */
export function holdNotFound(approvalId: string): ToolError {
  return new ToolError('OPERATION_NOT_FOUND', `No approval hold has id ${JSON.stringify(approvalId.slice(0, 100))}.`, {
    hint: 'Use the approval_id that APPROVAL_REQUIRED or approval_create returned. Finished holds roll off after a while.',
    details: { approval_id: approvalId },
  });
}
