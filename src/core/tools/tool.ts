import type { z } from 'zod';
import type { ApprovalService } from '../approvals/approvalService';
import type { CommandIsolation } from '../ports/commandIsolation';
import type { ExecLog } from '../ledger/execLog';
import type { LanguageFeatures } from '../ports/languageFeatures';
import type { DiagnosticsFeed } from '../language/diagnosticsFeed';
import type { PatchService } from '../patch/patchService';
import type { ProcessCapabilities, ProcessSupervisor } from '../process/supervisor';
import type { SteeringService } from '../steering/steeringService';
import type { WorkFreezer } from '../steering/freeze';
import type { OperationRunner, OperationSpec, RegisteredOperation } from '../runner/operationRunner';
import type { Logger } from '../ports/logger';
import type { WorkspaceFs } from '../ports/workspaceFs';
import type { ContentSearch } from '../ports/contentSearch';
import type { WorkspaceRegistry } from '../policy/workspaces';
import type { ToolKind } from '../toolKinds';
import { callerOf } from '../identity';
import type { AgentRef } from '../identity';
import type { SecretRedactor } from '../secretRedactor';
import type { ToolGroups } from './toolGroups';
import type { Limits } from '../policy/limits';
import type { AfterWriteReviews } from '../review/afterWriteReviews';

/** What a tool may use: every service, always present. Adapters build it (src/node/assembleServices.ts). */
export interface CoreServices {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  readonly logger: Logger;
  readonly limits: () => Limits;
  /** Patches and their ledger. */
  readonly patches: PatchService;
  /** Agent processes. */
  readonly processes: ProcessSupervisor;
  readonly exec: ExecSettings;
  /** What process support this host has (a backend may fail to load). */
  readonly processCapabilities: () => ProcessCapabilities;
  /** Whether commands run in a sandbox, and with what network (workspace_info). */
  readonly isolation: CommandIsolation;
  /** Approval holds. */
  readonly approvals: ApprovalService;
  /** The ledger's durable record of every command started. */
  readonly execLog: ExecLog;
  /** Policy, holds and the event stream for every mutating tool. */
  readonly runner: OperationRunner;
  /** Works and the developer's instructions to them (steering). */
  readonly steering: SteeringService;
  /** Freezing, bound reviews and reviewed commits of works (work_review). */
  readonly freezer: WorkFreezer;
  /** Content search (the `search` tool): ripgrep and the editor's search settings. */
  readonly search: ContentSearch;
  /** The editor's language features; undefined in a host without an editor (the editor tools answer UNAVAILABLE). */
  readonly language: LanguageFeatures | undefined;
  /**
   * How long the language servers' report on an edited file is followed, and the default wait of `diagnostics`, in
   * milliseconds; 0: edits are not followed.
   */
  readonly diagnosticsSettleMs: () => number;
  /** Redacts credentials from what agents read back (search lines here; command output in the supervisor). */
  readonly redactor: SecretRedactor;
  /** Which tool groups the operator serves (`codespace.tools.disabledGroups`). */
  readonly toolGroups: ToolGroups;
  /** Follows what edits wrote, in the background, and hands each session the language servers' reports. */
  readonly diagnosticsFeed: DiagnosticsFeed;
  /** The review after the write (`codespace.review.mode` `after`): what patches wrote, Keep and Undo per hunk. */
  readonly afterWrite: AfterWriteReviews;
}

/** Operator settings for commands, read fresh on every call. */
export interface ExecSettings {
  /** Base environment of children (operator setting merged over the host's); scrubbed by the supervisor. */
  readonly env: () => Record<string, string>;
  /** The operator's environment changes (a string sets, null removes), shown on a held command. */
  readonly envChanges: () => Record<string, string | null>;
  /** Operator timeout in milliseconds; 0 means none. */
  readonly timeoutMs: () => number;
}

/** A live process that holds a workspace. */
export interface Occupant {
  readonly process_id: string;
  readonly command: readonly string[];
}


export interface ToolContext {
  readonly services: CoreServices;
  /** Aborted when the client cancels the request or the session closes. */
  readonly signal: AbortSignal;
  /**
   * Reports progress of a long call, when the client asked for it (MCP `_meta.progressToken`); absent otherwise.
   * `done` must grow from call to call; `total` when known.
   */
  readonly progress?: ProgressReporter;
  /** The MCP session of the call (absent for callers without one): a work it opens is its open work. */
  readonly session?: string;
  /** The agent whose credential the call carried (absent with the window's token): see src/core/identity.ts. */
  readonly agent?: AgentRef;
}

export type ProgressReporter = (done: number, total?: number, message?: string) => void;

/**
 * Content a tool returns besides its structured result (an image `read` returns), set on the result under this
 * key. The dispatcher takes it off the value, so structuredContent and the JSON text block never carry it; the MCP
 * adapter sends each as a content block after the text block.
 */
export const EXTRA_CONTENT = Symbol('codespace.extraContent');

export type ExtraContent = { readonly type: 'image'; readonly data: string; readonly mimeType: string };

/** A tool is data plus a handler; src/mcp loops over the catalogue and registers each. */
export interface ToolDefinition<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly kind: ToolKind;
  readonly input: I;
  readonly output: O;
  handler(args: z.output<z.ZodObject<I>>, ctx: ToolContext): Promise<z.input<z.ZodObject<O>>>;
}

/**
 * A mutating tool: its operation (prepare, and for a holdable one the hold's reason, description and re-plan, and the
 * work after a commit) is part of its definition. The dispatcher registers the catalogue's operations with the runner
 * (so a hold of any of them resumes) and the handler routes each call to the runner by the tool's name. A new holdable
 * tool is one file with such a definition and one line in the catalogue. See src/core/runner/operationRunner.ts.
 */
export interface OperationToolDefinition<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> extends ToolDefinition<I, O> {
  operation(services: CoreServices): OperationSpec<z.output<z.ZodObject<I>>, z.input<z.ZodObject<O>>>;
}

/** Defines a tool whose calls go through the operation runner (policy, holds, occupancy, events, after-commit work). */
export function defineOperationTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(
  def: Omit<OperationToolDefinition<I, O>, 'handler'>,
): OperationToolDefinition<I, O> {
  return {
    ...def,
    handler: async (args, { services, signal, progress, session, agent }) =>
      (await services.runner.run(def.name, args, signal, { ...(progress ? { progress } : {}), ...callerOf({ session, agent }) })) as z.input<z.ZodObject<O>>,
  };
}

export function isOperationTool(tool: AnyTool): tool is OperationToolDefinition {
  return typeof (tool as Partial<OperationToolDefinition>).operation === 'function';
}

/** The runner's registry entries for the operations of `tools`, bound to `services`. */
export function operationsOf(tools: readonly AnyTool[], services: CoreServices): RegisteredOperation[] {
  return tools.filter(isOperationTool).map((tool) => {
    const spec = tool.operation(services) as unknown as OperationSpec<Record<string, unknown>, unknown>;
    if (spec.tool !== tool.name) throw new Error(`The operation of ${tool.name} calls itself ${spec.tool}.`);
    return { kind: tool.kind, input: tool.input, spec };
  });
}

/** Identity helper that keeps each tool's argument and result types precise. */
export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(def: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return def;
}

/** The catalogue type: tools with their own shapes, seen uniformly. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;
