import type { CallToolResult, GetPromptResult, ListResourcesResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';

/**
 * The protocol revision family a server instance speaks: `legacy` is 2025-11-25 (sessions, `initialize`, the GET
 * stream, resources/subscribe), `modern` is 2026-07-28 (stateless, per-request `_meta` envelope,
 * subscriptions/listen).
 */
export type Era = 'legacy' | 'modern';

/** What a request handler is told about the request it answers, in either era. */
export interface RequestContext {
  readonly signal: AbortSignal;
  /** The MCP session (2025 era only; a 2026-era request has none). */
  readonly sessionId?: string;
  /** The client declared the Tasks extension on this request (2026 era only): a held call may answer with a task. */
  readonly tasks: boolean;
  /** Sends a notification about this request (progress). */
  notify(notification: { method: 'notifications/progress'; params: { progressToken: string | number; progress: number; total?: number; message?: string } }): Promise<void>;
}

/** One variable's completion: the values beginning with `value` (context: the other arguments given so far). */
export type Completer = (value: string, context?: { arguments?: Record<string, string> }) => string[] | Promise<string[]>;

export interface TemplateDefinition {
  readonly uriTemplate: string;
  /** Lists the resources the template currently matches; undefined lists none. */
  readonly list: (() => ListResourcesResult) | undefined;
  readonly complete: Record<string, Completer>;
}

export interface ResourceMeta {
  readonly title: string;
  readonly description: string;
  readonly mimeType?: string;
}

export interface PromptDefinition {
  readonly title: string;
  readonly description: string;
  /** The arguments, all optional strings: each with its schema (validated before `get`) and, if any, its completion. */
  readonly args: Record<string, { readonly schema: z.ZodTypeAny; readonly complete?: Completer }>;
  readonly get: (args: Record<string, string | undefined>) => GetPromptResult;
}

export type LowLevelMethod = 'tools/list' | 'tools/call' | 'resources/subscribe' | 'resources/unsubscribe';

/**
 * What the server definition (src/mcp/toolServer.ts) registers against: one definition of tools, resources,
 * prompts and completions, served by either SDK. `legacySurface.ts` puts it on the v1 SDK's McpServer (the
 * sessionful 2025-era endpoint, unchanged); `modernSurface.ts` on the v2 SDK's McpServer behind its
 * `createMcpHandler` (2026-07-28). Requests and results are the JSON shapes both revisions share.
 */
export interface McpSurface {
  readonly era: Era;
  /** Answers one method with our own handler (the params as sent; the result as sent). */
  handle(method: 'tools/list', handler: (params: Record<string, unknown> | undefined, ctx: RequestContext) => { tools: unknown[] }): void;
  handle(method: 'tools/call', handler: (params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }, ctx: RequestContext) => Promise<CallToolResult | (Record<string, unknown> & { resultType: 'task' })>): void;
  handle(method: 'resources/subscribe' | 'resources/unsubscribe', handler: (params: { uri: string }, ctx: RequestContext) => Record<string, never>): void;
  /** A resource template with its reader (the variables as the template matched them). */
  resourceTemplate(
    name: string,
    template: TemplateDefinition,
    meta: ResourceMeta,
    read: (uri: URL, variables: Record<string, string | string[]>, ctx: { signal: AbortSignal }) => ReadResourceResult | Promise<ReadResourceResult>,
  ): void;
  prompt(name: string, definition: PromptDefinition): void;
  /**
   * Serves the Tasks extension's tasks/get and tasks/cancel and declares it (2026 era only: the 2025 revision's own
   * tasks are another protocol, not served). Undefined where the era has no such extension.
   */
  readonly serveTasks?: (handlers: { get(taskId: string, ctx: RequestContext): Promise<Record<string, unknown>>; cancel(taskId: string, ctx: RequestContext): Promise<Record<string, never>> }) => void;
  /** Adds capabilities beyond the ones registration implies (resources.subscribe, listChanged). */
  registerCapabilities(capabilities: Record<string, unknown>): void;
  /** Called once when the instance is closed (the session ends, or the request is answered). */
  onClose(listener: () => void): void;
}

/**
 * Where change notifications go. On the 2025 era each session's server sends them on its own stream; on the 2026
 * era they are published once through the handler to every open subscriptions/listen stream.
 */
export interface ChangeSink {
  toolsChanged(): void;
  resourcesChanged(): void;
  resourceUpdated(uri: string): void;
}

/**
 * Chains close listeners onto a protocol's `onclose` (either SDK's low-level server has the same hook), keeping the
 * SDK's own handler: the surfaces' `onClose`.
 */
export function closeListeners(protocol: { onclose?: (() => void) | undefined }): (listener: () => void) => void {
  const closers: (() => void)[] = [];
  const closed = protocol.onclose;
  protocol.onclose = () => {
    for (const c of closers.splice(0)) c();
    closed?.();
  };
  return (listener) => {
    closers.push(listener);
  };
}
