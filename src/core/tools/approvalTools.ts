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
    'Opens an approval hold for a request, whatever the approval settings: request holds the arguments of an apply_patch ' +
    '(it has "patch") or exec_command (it has "command") call; tool names which when it is ambiguous. The request is ' +
    'checked and planned now, and nothing is written or started. The developer decides in VS Code; call ' +
    'operation_resume with the approval_id to wait for the decision and run it. A hold never raises a permission.',
  kind: 'approval',
  input: {
    workspace_id: z.string().min(1).describe('Workspace id from workspace_info; must match request.workspace_id when that is given.'),
    tool: z.enum(['apply_patch', 'exec_command']).optional().describe('Which tool the request is for. Default: apply_patch when request has "patch", exec_command when it has "command".'),
    request: z.record(z.string(), z.unknown()).describe('The arguments of the apply_patch or exec_command call to hold.'),
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
    'Grants or denies a pending hold. By default only the developer in VS Code decides (panel or diff editor) and this ' +
    'tool answers PERMISSION_DENIED; it works only when the operator set codespace.approvals.agentMayResolve. A grant of ' +
    'a hold whose files changed on disk fails with VERSION_CONFLICT (the hold is stale). Granting does not run anything: ' +
    'call operation_resume.',
  kind: 'approval',
  input: {
    approval_id: z.string().min(1).max(200).describe('The approval_id of the hold.'),
    decision: z.enum(['grant', 'deny']),
    note: z.string().max(MAX_NOTE_CHARS).optional().describe('Why; reaches the agent with the decision.'),
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
    `Waits up to wait_ms (at most ${MAX_RESUME_WAIT_MS}, default ${MAX_RESUME_WAIT_MS}) for the developer's decision on a hold, then, if granted, ` +
    're-checks policy and file versions and runs the original request once, returning its result (apply_patch: with ' +
    'reviewer_changes when the developer edited the proposal, and diagnostics as apply_patch has them). Still pending after the wait: APPROVAL_CONFLICT, call again. ' +
    'Denied: APPROVAL_DENIED with the note. Files changed meanwhile: VERSION_CONFLICT (stale). Repeating after it ran returns ' +
    'the stored result; a resume cut off mid-way is APPROVAL_AMBIGUOUS and never runs a command twice.',
  kind: 'resume',
  input: {
    approval_id: z.string().min(1).max(200).describe('The approval_id from APPROVAL_REQUIRED or approval_create.'),
    wait_ms: z.number().int().min(0).max(MAX_RESUME_WAIT_MS).optional().describe(`How long to wait for the decision (ms, ≤ ${MAX_RESUME_WAIT_MS}).`),
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
