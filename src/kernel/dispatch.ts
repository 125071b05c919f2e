import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../base/errors';
import type { ToolErrorBody } from '../base/errors';
import type { Logger } from '../base/logger';
import type { AnyTool, ExtraContent, ProgressReporter } from './tool';
import { EXTRA_CONTENT } from './tool';
import { invalidArgumentsBody } from './runner/argumentErrors';
import { TOOL_GROUPS_SETTING, TOOL_GROUPS_ON_SETTING } from './toolGroups';
import type { ToolGroups } from './toolGroups';
import type { CallHook } from './callHooks';
import type { Disposable } from '../base/disposable';
import { callerOf } from './identity';
import type { AgentRef } from './identity';
import { describeErrorWithStack } from '../base/describeError';

/** Who is calling: the protocol adapter fills it in (the MCP session id). */
export interface CallContext {
  readonly session?: string;
  /** The agent whose credential the call carried (absent with the window's token). */
  readonly agent?: AgentRef;
  /** Reports progress of a long call, when the client asked for it (MCP `_meta.progressToken`). */
  readonly progress?: ProgressReporter;
}

/** The answer to one tool call, before any protocol sees it. */
export type ToolOutcome =
  | { readonly kind: 'result'; readonly value: Record<string, unknown>; readonly extra?: readonly ExtraContent[] }
  | { readonly kind: 'error'; readonly body: ToolErrorBody }
  | { readonly kind: 'unknown_tool'; readonly message: string };

/**
 * tools/call, independent of the protocol: looks the tool up, checks the arguments against its input schema
 * (strict: an unknown argument is an error, so `approved: true` can never be smuggled in), runs it, and maps
 * every failure to a tool error body. Mutating tools run through the operation runner from their handler.
 * Nothing but the body (no stack trace) ever leaves; unexpected failures are logged.
 */
export class ToolDispatcher {
  private readonly hooks: CallHook[] = [];
  private readonly byName = new Map<string, { tool: AnyTool; input: z.ZodObject<z.ZodRawShape>; output: z.ZodObject<z.ZodRawShape> }>();
  constructor(
    /**
     * Every tool of the catalogue, served or not. Any result may also carry `coordination: { work_id,
     * queued_instructions }` from the steering hook (see call()); output schemas leave room for such notes.
     */
    readonly tools: readonly AnyTool[],
    /** Which groups the operator serves: tools/list leaves the others out, and a call to one of them is refused. */
    readonly toolGroups: Pick<ToolGroups, 'state' | 'disabledGroupOf' | 'onDidChange'>,
    private readonly logger: Logger,
  ) {
    // Both schemas are built once per tool: checking a result is then one parse (measured on `read` in bench).
    for (const tool of this.tools) this.byName.set(tool.name, { tool, input: z.object(tool.input).strict(), output: z.object(tool.output) });
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  /** The tools served now: the catalogue less the groups the operator turned off (tools/list). */
  served(): AnyTool[] {
    const off = new Set(this.toolGroups.state().unserved);
    return this.tools.filter((t) => !off.has(t.name));
  }

  /** Adds a hook around every call (callHooks.ts); its notes follow those of the hooks added before it. */
  addHook(hook: CallHook): Disposable {
    this.hooks.push(hook);
    return {
      dispose: () => {
        const at = this.hooks.indexOf(hook);
        if (at >= 0) this.hooks.splice(at, 1);
      },
    };
  }

  /**
   * Runs one call, then asks every hook for its notes on the answer: the works' coordination, the language servers'
   * reports, what the reviewer undid (the pieces that add them register their hooks, see callHooks.ts).
   */
  async call(name: string, args: unknown, signal: AbortSignal, context: CallContext = {}): Promise<ToolOutcome> {
    const outcome = await this.run(name, args, signal, context);
    if (outcome.kind === 'unknown_tool') return outcome;
    const kind = (this.byName.get(name) as { tool: AnyTool }).tool.kind;
    const call = { tool: name, kind, args, ...callerOf(context) };
    let notes: Record<string, unknown> = {};
    for (const hook of [...this.hooks]) notes = { ...notes, ...hook.after?.(call) };
    if (Object.keys(notes).length === 0) return outcome;
    if (outcome.kind === 'result') return { kind: 'result', value: { ...outcome.value, ...notes } };
    return { kind: 'error', body: { ...outcome.body, details: { ...outcome.body.details, ...notes } } };
  }

  /**
   * Checks a result against the tool's output schema before it leaves, as the MCP SDK's McpServer checks the
   * structured content of a tool it serves (tools/call is ours, so the check is too): a result that does not match
   * is a bug on our side, logged, and the caller gets a tool error instead of content its client would reject.
   */
  private checkOutput(name: string, output: z.ZodObject<z.ZodRawShape>, value: Record<string, unknown>): ToolErrorBody | undefined {
    const checked = output.safeParse(value);
    if (checked.success) return undefined;
    const issues = checked.error.issues.slice(0, 5).map((i) => `${i.path.length > 0 ? i.path.join('.') : '(result)'}: ${i.message}`);
    this.logger.error(`[tools] ${name} returned a result that does not match its output schema: ${issues.join('; ')}`);
    return {
      code: 'INTERNAL',
      message: `Output validation error: ${name} produced a result that does not match its output schema (${issues[0] ?? 'invalid'}), so it was withheld.`,
      hint: 'This is a fault in the extension, not in your call; it may have taken effect (check with read, operation_status or process_status). The developer can see details in the CodeSpace log.',
      details: { output_errors: issues },
    };
  }

  private async run(name: string, args: unknown, signal: AbortSignal, context: CallContext): Promise<ToolOutcome> {
    const entry = this.byName.get(name);
    if (!entry) {
      const shown = name.length > 100 ? `${JSON.stringify(name.slice(0, 100))}… (${name.length} characters)` : JSON.stringify(name);
      return { kind: 'unknown_tool', message: `Unknown tool ${shown}. Known tools: ${this.served().map((t) => t.name).join(', ')}.` };
    }
    const group = this.toolGroups.disabledGroupOf(name);
    if (group !== undefined && !this.toolGroups.state().disabled.includes(group)) {
      return {
        kind: 'error',
        body: {
          code: 'TOOL_DISABLED',
          message: `${name} is not served: the group "${group}" is served only when the operator turns it on (${TOOL_GROUPS_ON_SETTING}).`,
          hint: `Use the tools tools/list shows; only the developer can turn "${group}" on.`,
          details: { group, setting: TOOL_GROUPS_ON_SETTING },
        },
      };
    }
    if (group !== undefined) {
      return {
        kind: 'error',
        body: {
          code: 'TOOL_DISABLED',
          message: `${name} is turned off: the operator's setting ${TOOL_GROUPS_SETTING} includes "${group}".`,
          hint: `Use the tools tools/list shows (workspace_info says what is off); only the developer can serve "${group}" again.`,
          details: { group, setting: TOOL_GROUPS_SETTING },
        },
      };
    }
    const parsed = entry.input.safeParse(args ?? {});
    if (!parsed.success) {
      const body = invalidArgumentsBody(name, parsed.error, entry.tool.input, args ?? {});
      this.logger.debug(`[tools] ${name} refused: INVALID_ARGUMENTS (${String(body.details?.field)})`);
      return { kind: 'error', body };
    }
    const call = { tool: name, kind: entry.tool.kind, args: parsed.data as Record<string, unknown>, ...callerOf(context) };
    for (const hook of [...this.hooks]) hook.before?.(call);
    const started = Date.now();
    try {
      const value = (await entry.tool.handler(parsed.data, {
        signal,
        ...callerOf(context),
        ...(context.progress ? { progress: context.progress } : {}),
      })) as Record<string, unknown>;
      this.logger.debug(`[tools] ${name} ok in ${Date.now() - started} ms`);
      const extra = (value as { [EXTRA_CONTENT]?: ExtraContent[] })[EXTRA_CONTENT];
      let plain = value;
      if (extra !== undefined) {
        const copy: Record<string | symbol, unknown> = { ...value };
        delete copy[EXTRA_CONTENT];
        plain = copy as Record<string, unknown>;
      }
      const invalid = this.checkOutput(name, entry.output, plain);
      if (invalid) return { kind: 'error', body: invalid };
      return extra === undefined ? { kind: 'result', value: plain } : { kind: 'result', value: plain, extra };
    } catch (err) {
      if (ToolError.is(err)) {
        this.logger.debug(`[tools] ${name} failed: ${err.code}`);
        return { kind: 'error', body: err.toBody() };
      }
      if (InvalidArgumentsError.is(err)) {
        this.logger.debug(`[tools] ${name} refused: INVALID_ARGUMENTS`);
        const body = err.toBody();
        body.hint ??= `Correct the arguments and call ${name} again.`;
        return { kind: 'error', body };
      }
      this.logger.error(`[tools] ${name} failed unexpectedly`, describeErrorWithStack(err));
      return {
        kind: 'error',
        body: { code: 'INTERNAL', message: `${name} failed unexpectedly inside the extension.`, hint: 'The developer can see details in the CodeSpace log (command "CodeSpace: Show Log").' },
      };
    }
  }
}
