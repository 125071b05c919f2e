import { z } from 'zod';
import { MAX_NOTE_CHARS } from '../../../kernel/approvals/approvalService';
import type { HoldView } from '../../../kernel/approvals/hold';
import { InvalidArgumentsError } from '../../../base/errors';
import { callerOf } from '../../../kernel/identity';
import { holdViewSchema, reviewCommentSchema } from '../../../kernel/ledger/schemas';
import { invalidArgumentsBody } from '../../../kernel/runner/argumentErrors';
import { MAX_RESUME_WAIT_MS } from '../../../kernel/runner/operationRunner';
import type { OperationRunner, RegisteredOperation } from '../../../kernel/runner/operationRunner';
import type { ApprovalService } from '../../../kernel/approvals/approvalService';

/** What the approval tools use. */
export interface ApprovalToolDeps {
  /** Holds open through the runner (its registered operations), and resume through it. */
  readonly runner: Pick<OperationRunner, 'holdable' | 'createHold' | 'resume'>;
  readonly approvals: Pick<ApprovalService, 'resolve'>;
}
import { applyPatchTool } from '../../patches';
import { execCommandTool } from '../../processes';
import type { AnyTool } from '../../../kernel/tool';
import { defineTool } from '../../../kernel/tool';

// Who asked and which agent decided stay in the record (the panel, the ledger): tools/list keeps to its budget.
const holdShape = holdViewSchema.omit({ requested_by_agent: true, decided_by_agent: true }).shape;

function shown(h: HoldView): z.input<z.ZodObject<typeof holdShape>> {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a Request Changes' comments reach the agent through operation_resume
  const { files, command, sensitive_paths, comments, requested_by_agent, decided_by_agent, ...rest } = h;
  return {
    ...rest,
    sensitive_paths: [...sensitive_paths],
    ...(files ? { files: files.map((f) => ({ ...f })) } : {}),
    ...(command ? { command: { ...command, argv: [...command.argv], env_changes: { ...command.env_changes } } } : {}),
  };
}

/** An operation's distinctive arguments: required by it and taken by no other holdable operation ("patch", "command"). */
function distinctive(op: RegisteredOperation, all: readonly RegisteredOperation[]): string[] {
  const shape = op.input as z.ZodRawShape;
  return Object.keys(shape).filter((k) => !(shape[k] as z.ZodTypeAny).isOptional() && all.every((o) => o === op || !(k in o.input)));
}

/** The holdable tool a request is for when `tool` is not given: the one whose distinctive arguments it carries. */
function toolOfRequest(request: Record<string, unknown>, holdable: readonly RegisteredOperation[]): string {
  const keyed = holdable.map((op) => ({ tool: op.spec.tool, keys: distinctive(op, holdable) }));
  const hits = keyed.filter((k) => k.keys.some((key) => key in request));
  if (hits.length === 1) return (hits[0] as { tool: string }).tool;
  const named = keyed.flatMap((k) => (k.keys[0] !== undefined ? [`"${k.keys[0]}" (${k.tool})`] : []));
  const list = named.length === 2 ? `neither ${named[0]} nor ${named[1]}` : `none of ${named.join(', ')}`;
  throw new InvalidArgumentsError(hits.length === 0 ? `request has ${list}; name the tool with "tool".` : `request has arguments of ${hits.map((h) => h.tool).join(' and ')}; name the tool with "tool".`, { field: 'request' });
}

export const approvalCreateTool = defineTool({
  name: 'approval_create',
  title: 'Ask for approval',
  description:
    'Asks the developer to approve a request before it runs: request holds the arguments of an apply_patch or ' +
    'exec_command call. Nothing runs now: call operation_resume with the approval_id to wait for the decision and run it.',
  kind: 'approval',
  input: {
    workspace_id: z.string().min(1),
    tool: z.string().min(1).max(200).optional(),
    request: z.record(z.string(), z.unknown()),
  },
  output: holdShape,
  create: (deps: Pick<ApprovalToolDeps, 'runner'>) => async (args, { signal, session, agent }) => {
    // The holdable tools are the registered operations that declare a hold (src/app/catalogue.ts).
    const holdable = deps.runner.holdable();
    const tool = args.tool ?? toolOfRequest(args.request, holdable);
    const op = holdable.find((o) => o.spec.tool === tool);
    if (!op) {
      throw new InvalidArgumentsError(`tool: ${JSON.stringify(tool.slice(0, 100))} cannot be held; the tools that can are ${holdable.map((o) => o.spec.tool).join(', ')}.`, { field: 'tool' });
    }
    if (args.request.workspace_id !== undefined && args.request.workspace_id !== args.workspace_id) {
      throw new InvalidArgumentsError('request.workspace_id differs from workspace_id.', { field: 'request.workspace_id' });
    }
    const input = op.input as z.ZodRawShape;
    const request = { ...args.request, workspace_id: args.workspace_id };
    const parsed = z.object(input).strict().safeParse(request);
    if (!parsed.success) {
      const body = invalidArgumentsBody(tool, parsed.error, input, request);
      throw new InvalidArgumentsError(`request: ${body.message}`, { field: `request.${String(body.details?.field ?? '')}`, ...(body.hint !== undefined ? { hint: body.hint } : {}) });
    }
    return shown(await deps.runner.createHold(tool, parsed.data, signal, callerOf({ session, agent })));
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
  create: (deps: Pick<ApprovalToolDeps, 'approvals'>) => async (args, { session, agent }) => {
    return shown(await deps.approvals.resolve(args.approval_id, args.decision, { by: 'agent', caller: callerOf({ session, agent }), ...(args.note !== undefined ? { note: args.note } : {}) }));
  },
});

export const operationResumeTool = defineTool({
  name: 'operation_resume',
  title: 'Resume a held operation',
  description:
    `After APPROVAL_REQUIRED or approval_create: waits up to wait_ms (default and at most ${MAX_RESUME_WAIT_MS}) for the developer's ` +
    `decision and, once granted, runs the request once and returns its result. Still pending: call again. Safe to repeat.`,
  kind: 'resume',
  input: {
    approval_id: z.string().min(1).max(200),
    wait_ms: z.number().int().min(0).max(MAX_RESUME_WAIT_MS).optional(),
  },
  // Either tool's result: apply_patch (status, operation_id, files, ...) or exec_command (process_id, dispatch_status).
  output: {
    status: z.enum([...applyPatchTool.output.status.options, 'changes_requested']).optional(),
    operation_id: z.string().optional(),
    comments: z.array(reviewCommentSchema).optional(),
    files: applyPatchTool.output.files.optional(),
    reason: z.string().optional(),
    hint: z.string().optional(),
    reviewer_changes: applyPatchTool.output.reviewer_changes,
    reviewer_note: z.string().optional(),
    diagnostics: applyPatchTool.output.diagnostics,
    process_id: z.string().optional(),
    dispatch_status: execCommandTool.output.dispatch_status.optional(),
  },
  create: (deps: Pick<ApprovalToolDeps, 'runner'>) => async (args, { signal, session }) => {
    // The held operation's after-commit work runs as for a direct call (a patch's diagnostics: never stored).
    return (await deps.runner.resume(args.approval_id, args.wait_ms ?? MAX_RESUME_WAIT_MS, signal, session !== undefined ? { session } : {})) as never;
  },
});

/** The holds an agent opens or decides itself (the group "approvals"), in the order tools/list shows them. */
export const APPROVAL_TOOLS = [approvalCreateTool, approvalResolveTool] as const;

/** The approval tools and operation_resume (which finishes every held request, whatever group is off). */
export function approvalTools(deps: ApprovalToolDeps): AnyTool[] {
  return [approvalCreateTool.create(deps), approvalResolveTool.create(deps), operationResumeTool.create(deps)];
}
