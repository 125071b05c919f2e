import { ToolError } from '../../base/errors';
import type { OperationRecord } from './operationRecord';

export type OperationQuery = { readonly operation_key: string } | { readonly operation_id: string };

/** OPERATION_KEY_CONFLICT: the key is in flight (same arguments) or was used for other arguments. */
export function keyConflict(record: OperationRecord, sameArguments: boolean): ToolError {
  const details = { operation_key: record.operation_key, operation_id: record.operation_id };
  if (sameArguments) {
    return new ToolError('OPERATION_KEY_CONFLICT', `A request with operation_key "${record.operation_key}" is already being applied.`, {
      details: { ...details, in_flight: true },
      hint: 'Wait for the first request, then query operation_status with this operation_key instead of sending it again.',
    });
  }
  return new ToolError('OPERATION_KEY_CONFLICT', `operation_key "${record.operation_key}" was already used for a request with other arguments.`, {
    details,
    hint: 'Use a new operation_key for a new or changed patch, or query operation_status with this key to see what the earlier request did.',
  });
}

export function notFound(query: OperationQuery): ToolError {
  const what = 'operation_id' in query ? `operation_id "${query.operation_id}"` : `operation_key "${query.operation_key}"`;
  return new ToolError('OPERATION_NOT_FOUND', `No recorded patch operation has ${what}.`, {
    details: { ...query },
    hint: 'Only patches that passed validation are recorded, and old finished ones roll off. Check the id or key; a patch that was rejected can simply be sent again.',
  });
}

/** A record that cannot be finished: another call is writing it, or it is finished already. */
export function notSettleable(record: OperationRecord, busy: boolean): ToolError | undefined {
  if (busy) {
    return new ToolError('INTERNAL', `Operation ${record.operation_id} is being recorded by another call.`, { details: { operation_id: record.operation_id } });
  }
  if (record.status !== 'pending') {
    return new ToolError('INTERNAL', `Operation ${record.operation_id} is already finished (${record.status}).`, { details: { operation_id: record.operation_id, status: record.status } });
  }
  return undefined;
}
