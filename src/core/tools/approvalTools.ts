import { z } from 'zod';
import { MAX_NOTE_CHARS } from '../approvals/approvalService';
import type { HoldView } from '../approvals/hold';
import { InvalidArgumentsError } from '../errors';
import { holdViewSchema } from '../ledger/schemas';
import { invalidArgumentsBody } from '../runner/argumentErrors';
import { MAX_RESUME_WAIT_MS } from '../runner/operationRunner';
import type { ApplyPatchResult } from '../patch/patchService';
import { applyPatchTool, withPatchDiagnostics } from './applyPatch';
import { execCommandTool } from './execCommand';
import type { AnyTool, OperationToolDefinition } from './tool';
import { defineTool } from './tool';

const holdShape = holdViewSchema.shape;

function shown(h: HoldView): z.input<z.ZodObject<typeof holdShape>> {
  const { files, command, sensitive_paths, ...rest } = h;
  return {
    ...rest,
    sensitive_paths: [...sensitive_paths],
    ...(files ? { files: files.map((f) => ({ ...f })) } : {}),
    ...(command ? { command: { ...command, argv: [...command.argv], env_changes: { ...command.env_changes } } } : {}),
  };
}

const HOLDABLE: Record<'apply_patch' | 'exec_command', OperationToolDefinition> = {
  apply_patch: applyPatchTool as unknown as OperationToolDefinition,
  exec_command: execCommandTool as unknown as OperationToolDefinition,
};

export const approvalCreateTool = defineTool({
  name: 'approval_create',
  title: 'Ask for approval',
  description:
    'Asks the developer to approve a request before it runs: request holds the arguments of an apply_patch or ' +
    'exec_command call. Nothing runs now: call operation_resume with the approval_id to wait for the decision and run it.',
  kind: 'approval',
  input: {
    workspace_id: z.string().min(1),
    tool: z.enum(['apply_patch', 'exec_command']).optional(),
    request: z.record(z.string(), z.unknown()),
  },
  output: holdShape,
  async handler(args, { services, signal }) {
    const tool = args.tool ?? ('patch' in args.request ? 'apply_patch' : 'command' in args.request ? 'exec_command' : undefined);
    if (!tool) throw new InvalidArgumentsError('request has neither "patch" (apply_patch) nor "command" (exec_command); name the tool with "tool".', { field: 'request' });
    if (args.request.workspace_id !== undefined && args.request.workspace_id !== args.workspace_id) {
      throw new InvalidArgumentsError('request.workspace_id differs from workspace_id.', { field: 'request.workspace_id' });
    }
    const def = HOLDABLE[tool];
    const request = { ...args.request, workspace_id: args.workspace_id };
    const parsed = z.object(def.input).strict().safeParse(request);
    if (!parsed.success) {
      const body = invalidArgumentsBody(tool, parsed.error, def.input, request);
      throw new InvalidArgumentsError(`request: ${body.message}`, { field: `request.${String(body.details?.field ?? '')}`, ...(body.hint !== undefined ? { hint: body.hint } : {}) });
    }
    return shown(await services.runner.createHold(def.kind, def.operation(services), parsed.data, signal));
  },
});

export const approvalResolveTool = defineTool({
  name: 'approval_resolve',
  title: 'Decide on a hold',
  description:
    'Grants or denies a hold. Only when the developer set codespace.approvals.agentMayResolve; otherwise ' +
    'PERMISSION_DENIED. Runs nothing: call operation_resume next.',
  kind: 'approval',
  input: {
    approval_id: z.string().min(1).max(200),
    decision: z.enum(['grant', 'deny']),
    note: z.string().max(MAX_NOTE_CHARS).optional(),
  },
  output: holdShape,
  async handler(args, { services }) {
    return shown(await services.approvals.resolve(args.approval_id, args.decision, { by: 'agent', ...(args.note !== undefined ? { note: args.note } : {}) }));
  },
});

export const operationResumeTool = defineTool({
  name: 'operation_resume',
  title: 'Resume a held operation',
  description:
    `After APPROVAL_REQUIRED or approval_create: waits up to wait_ms (default and at most ${MAX_RESUME_WAIT_MS}) for the developer's ` +
    `decision and, once granted, runs the request once and returns its result (a patch's with diagnostics, as apply_patch). Still pending: call again. Safe to repeat.`,
  kind: 'resume',
  input: {
    approval_id: z.string().min(1).max(200),
    wait_ms: z.number().int().min(0).max(MAX_RESUME_WAIT_MS).optional(),
  },
  // Either tool's result: apply_patch (status, operation_id, files, ...) or exec_command (process_id, dispatch_status).
  output: {
    status: applyPatchTool.output.status.optional(),
    operation_id: z.string().optional(),
    files: applyPatchTool.output.files.optional(),
    reason: z.string().optional(),
    hint: z.string().optional(),
    reviewer_changes: applyPatchTool.output.reviewer_changes,
    reviewer_note: z.string().optional(),
    diagnostics: applyPatchTool.output.diagnostics,
    process_id: z.string().optional(),
    dispatch_status: execCommandTool.output.dispatch_status.optional(),
  },
  async handler(args, { services, signal, session }) {
    const result = await services.runner.resume(args.approval_id, args.wait_ms ?? MAX_RESUME_WAIT_MS, signal);
    const hold = services.approvals.stored(args.approval_id);
    // A resumed patch is followed for diagnostics as apply_patch follows one (the stored result never carries them).
    if (hold.tool === 'apply_patch') return (await withPatchDiagnostics(services, hold.workspace_id, result as ApplyPatchResult, session)) as never;
    return result as never;
  },
});

export const approvalTools: AnyTool[] = [approvalCreateTool, approvalResolveTool, operationResumeTool];
