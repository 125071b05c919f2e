import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../errors';
import type { ToolErrorBody } from '../errors';
import type { Logger } from '../ports/logger';
import type { AnyTool, CoreServices, ExtraContent, ProgressReporter } from '../tools/tool';
import { EXTRA_CONTENT } from '../tools/tool';
import { invalidArgumentsBody } from './argumentErrors';

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
  private readonly byName = new Map<string, { tool: AnyTool; input: z.ZodObject<z.ZodRawShape> }>();

  constructor(
    readonly tools: readonly AnyTool[],
    private readonly services: CoreServices,
    private readonly logger: Logger,
  ) {
    for (const tool of tools) this.byName.set(tool.name, { tool, input: z.object(tool.input).strict() });
  }

  names(): string[] {
    return [...this.byName.keys()];
  }

  async call(name: string, args: unknown, signal: AbortSignal, progress?: ProgressReporter): Promise<ToolOutcome> {
    const entry = this.byName.get(name);
    if (!entry) {
      const shown = name.length > 100 ? `${JSON.stringify(name.slice(0, 100))}… (${name.length} characters)` : JSON.stringify(name);
      return { kind: 'unknown_tool', message: `Unknown tool ${shown}. Known tools: ${this.names().join(', ')}.` };
    }
    const parsed = entry.input.safeParse(args ?? {});
    if (!parsed.success) {
      const body = invalidArgumentsBody(name, parsed.error, entry.tool.input, args ?? {});
      this.logger.debug(`[tools] ${name} refused: INVALID_ARGUMENTS (${String(body.details?.field)})`);
      return { kind: 'error', body };
    }
    const started = Date.now();
    try {
      const value = (await entry.tool.handler(parsed.data, { services: this.services, signal, ...(progress ? { progress } : {}) })) as Record<string, unknown>;
      this.logger.debug(`[tools] ${name} ok in ${Date.now() - started} ms`);
      const extra = (value as { [EXTRA_CONTENT]?: ExtraContent[] })[EXTRA_CONTENT];
      if (extra === undefined) return { kind: 'result', value };
      const plain: Record<string | symbol, unknown> = { ...value };
      delete plain[EXTRA_CONTENT];
      return { kind: 'result', value: plain as Record<string, unknown>, extra };
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
      this.logger.error(`[tools] ${name} failed unexpectedly`, err instanceof Error ? (err.stack ?? err.message) : String(err));
      return {
        kind: 'error',
        body: { code: 'INTERNAL', message: `${name} failed unexpectedly inside the extension.`, hint: 'The developer can see details in the CodeSpace log (command "CodeSpace: Show Log").' },
      };
    }
  }
}
