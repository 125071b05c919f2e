import type { z } from 'zod';
import type { OperationRunner, OperationSpec, RegisteredOperation } from './runner/operationRunner';
import type { ToolKind } from './toolKinds';
import { callerOf } from './identity';
import type { AgentRef } from './identity';

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


/** What one call of a tool carries: only per-call things (what a tool uses, it took when it was created). */
export interface ToolContext {
  /** Aborted when the client cancels the request or the session closes. */
  readonly signal: AbortSignal;
  /**
   * Reports progress of a long call, when the client asked for it (MCP `_meta.progressToken`); absent otherwise.
   * `done` must grow from call to call; `total` when known.
   */
  readonly progress?: ProgressReporter;
  /** The MCP session of the call (absent for callers without one): a work it opens is its open work. */
  readonly session?: string;
  /** The agent whose credential the call carried (absent with the window's token): see src/kernel/identity.ts. */
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

/** What a tool is to a client, without anything it runs with: tools/list and the bridge's shipped catalogue. */
export interface ToolContract<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly kind: ToolKind;
  readonly input: I;
  readonly output: O;
}

export type ToolHandler<I extends z.ZodRawShape, O extends z.ZodRawShape> = (args: z.output<z.ZodObject<I>>, ctx: ToolContext) => Promise<z.input<z.ZodObject<O>>>;

/** A tool ready to serve: its contract and a handler closed over what it uses. src/mcp serves them via the dispatcher. */
export interface ToolDefinition<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> extends ToolContract<I, O> {
  readonly handler: ToolHandler<I, O>;
}

/**
 * A tool as its file exports it: the contract (importable without anything it runs with) and `create`, which takes
 * exactly the dependencies `D` the tool uses and returns the tool ready to serve. Each module's `tools(deps)` creates
 * its own (catalogue.ts).
 */
export interface ToolFactory<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape, D = never> extends ToolContract<I, O> {
  create(deps: D): ToolDefinition<I, O>;
}

/**
 * A mutating tool: its operation (prepare, and for a holdable one the hold's reason, description and re-plan, and the
 * work after a commit) is part of its definition. The composition registers the catalogue's operations with the
 * runner (so a hold of any of them resumes) and the handler routes each call to the runner by the tool's name. A new
 * holdable tool is one file with such a definition and one line in its module. See src/kernel/runner/operationRunner.ts.
 */
export interface OperationToolDefinition<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> extends ToolDefinition<I, O> {
  readonly operation: OperationSpec<z.output<z.ZodObject<I>>, z.input<z.ZodObject<O>>>;
}

/** What every operation tool uses besides its own dependencies: the runner its calls go through. */
export interface OperationDeps {
  readonly runner: Pick<OperationRunner, 'run'>;
}

function contractOf<I extends z.ZodRawShape, O extends z.ZodRawShape>(def: ToolContract<I, O>): ToolContract<I, O> {
  return { name: def.name, title: def.title, description: def.description, kind: def.kind, input: def.input, output: def.output };
}

/** Defines a tool: its contract, and `create` taking exactly what its handler uses. */
export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape, D>(
  def: ToolContract<I, O> & { readonly create: (deps: D) => ToolHandler<I, O> },
): ToolFactory<I, O, D> {
  const contract = contractOf(def);
  return { ...contract, create: (deps) => ({ ...contract, handler: def.create(deps) }) };
}

/**
 * Defines a tool whose calls go through the operation runner (policy, holds, occupancy, events, after-commit work):
 * `operation` takes exactly what the operation uses; the tool then also takes the runner.
 */
export function defineOperationTool<I extends z.ZodRawShape, O extends z.ZodRawShape, D>(
  def: ToolContract<I, O> & { readonly operation: (deps: D) => OperationSpec<z.output<z.ZodObject<I>>, z.input<z.ZodObject<O>>> },
): ToolFactory<I, O, D & OperationDeps> {
  const contract = contractOf(def);
  return {
    ...contract,
    create: (deps): OperationToolDefinition<I, O> => ({
      ...contract,
      operation: def.operation(deps),
      handler: async (args, { signal, progress, session, agent }) =>
        (await deps.runner.run(def.name, args, signal, { ...(progress ? { progress } : {}), ...callerOf({ session, agent }) })) as z.input<z.ZodObject<O>>,
    }),
  };
}

export function isOperationTool(tool: AnyTool): tool is OperationToolDefinition {
  return typeof (tool as Partial<OperationToolDefinition>).operation === 'object';
}

/** The runner's registry entries for the operations of `tools`. */
export function operationsOf(tools: readonly AnyTool[]): RegisteredOperation[] {
  return tools.filter(isOperationTool).map((tool) => {
    const spec = tool.operation as unknown as OperationSpec<Record<string, unknown>, unknown>;
    if (spec.tool !== tool.name) throw new Error(`The operation of ${tool.name} calls itself ${spec.tool}.`);
    return { kind: tool.kind, input: tool.input, spec };
  });
}

/** The catalogue type: tools with their own shapes, seen uniformly. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;

/** A tool factory of any shape and dependencies. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyToolFactory = ToolFactory<any, any, any>;
