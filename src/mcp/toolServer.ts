import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { requestAgent } from './agentIdentity';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { McpServer as ModernMcpServer } from '@modelcontextprotocol/server';
import type { Disposable } from '../base/disposable';
import type { ToolErrorBody } from '../base/errors';
import type { ToolDispatcher } from '../kernel/dispatch';
import type { ApprovalService } from '../kernel/approvals/approvalService';
import type { Logger } from '../base/logger';
import type { AgentResources } from '../kernel/agentResources';
import type { ExtraContent } from '../kernel/tool';
import type { ModernServing } from './httpHost';
import { legacySurface } from './legacySurface';
import { modernSurface } from './modernSurface';
import { progressReporter } from './progress';
import { registerAgentResources, registerSubscriptions, watchAgentResources } from './agentResources';
import type { ChangeSink, McpSurface } from './surface';
import { HeldOperationTasks } from './tasks';
import { listedTool } from './toolSchemas';
import { registerWorkspaceResources } from './workspaceResources';
import { INSTRUCTIONS, SERVER_NAME, serverInfo } from './serverIdentity';
import { describeError } from '../base/describeError';

export { SERVER_NAME };

/**
 * What the server serves, passed explicitly: tools/call and tools/list (the dispatcher, with the tool groups it
 * serves), what the modules offer beside their tools (resources, prompts, and what a closed session lets go), the
 * holds (held calls as tasks), and where it logs.
 */
export interface ServedCore {
  readonly dispatcher: ToolDispatcher;
  readonly resources: AgentResources;
  readonly holds: Pick<ApprovalService, 'get' | 'withdraw'>;
  readonly logger: Logger;
}

/** Compact JSON: the text block repeats structuredContent for text-only clients, so keep it small. */
function text(value: unknown): string {
  return JSON.stringify(value);
}

/**
 * A JSON-RPC error for the SDK to send. Not an McpError: that class puts "MCP error -32602: " in front of the
 * message, and the SDK sends `message` as it is, so the client would read the code twice.
 */
export function protocolError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

/**
 * A tool that ran and failed. The body travels as JSON text only: clients validate `structuredContent` against
 * the tool's output schema even on errors, and an error body is not a result.
 */
export function errorResult(body: ToolErrorBody): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: text({ error: body }) }] };
}

/**
 * The one definition of what this server offers, for either era (surface.ts): tools/list serves the tools the
 * operator has not turned off (src/mcp/toolSchemas.ts: compact schemas, annotations from the kind table); tools/call
 * goes to the core's ToolDispatcher, and its outcome becomes a CallToolResult; the workspace-file resource template,
 * what the modules offer beside their tools (the works' queues and the agent-loop prompt) and their completions. Per MCP 2025-11-25 (SEP-1303) bad arguments are
 * tool errors (`isError: true`, INVALID_ARGUMENTS); only an unknown tool (and malformed JSON-RPC, which the SDK
 * answers before us) is a protocol error. The dispatcher checks every result against the tool's output schema
 * before it leaves (src/kernel/dispatch.ts), so that holds in both eras.
 */
export function defineServer(surface: McpSurface, served: ServedCore): void {
  const { dispatcher } = served;
  // Our own handlers, not McpServer.registerTool: the SDK would serve its own, larger conversion of the schemas.
  surface.handle('tools/list', () => ({ tools: dispatcher.served().map(listedTool) }));
  // Workspace files (a read-only template), then what the modules offer (the works' instruction queues, subscribable
  // and listed per open work, and the agent-loop prompt).
  registerWorkspaceResources(surface, dispatcher);
  registerAgentResources(surface, served.resources);
  const tasks = new HeldOperationTasks(dispatcher, served.holds, errorResult, successResult);
  surface.serveTasks?.({ get: (taskId, ctx) => tasks.get(taskId, ctx.signal) as never, cancel: (taskId) => tasks.cancel(taskId) });
  surface.handle('tools/call', async (params, ctx) => {
    const progress = progressReporter(params._meta?.progressToken as string | number | undefined, ctx.notify);
    // The agent whose credential the HTTP request carried (src/mcp/agentIdentity.ts); none with the window's token.
    const agent = requestAgent();
    const context = { ...(ctx.sessionId !== undefined ? { session: ctx.sessionId } : {}), ...(agent !== undefined ? { agent } : {}), ...(progress ? { progress } : {}) };
    const outcome = await dispatcher.call(params.name, params.arguments ?? {}, ctx.signal, context);
    switch (outcome.kind) {
      case 'unknown_tool':
        throw protocolError(ErrorCode.InvalidParams, outcome.message);
      case 'error': {
        // A client that reads tasks gets the held call as a task instead of APPROVAL_REQUIRED (tasks.ts).
        const held = outcome.body.code === 'APPROVAL_REQUIRED' ? outcome.body.details?.approval_id : undefined;
        if (ctx.tasks && typeof held === 'string') return tasks.created(held);
        return errorResult(outcome.body);
      }
      case 'result':
        return successResult(outcome.value, outcome.extra);
    }
  });
}

/** A tool's result: the JSON as text for text-only clients, and as structuredContent, then any extra blocks. */
function successResult(value: Record<string, unknown>, extra?: readonly ExtraContent[]): CallToolResult {
  return { content: [{ type: 'text', text: text(value) }, ...(extra ?? [])], structuredContent: value };
}

/** Tells `sink` what changes the served lists or the modules' resources: the tool set, the resources and their lists. */
export function watchChanges(served: Pick<ServedCore, 'dispatcher' | 'resources'>, sink: ChangeSink, wanted?: (uri: string) => boolean): Disposable {
  const tools = served.dispatcher.toolGroups.onDidChange(() => sink.toolsChanged());
  const resources = watchAgentResources(served.resources, sink, wanted);
  return {
    dispose: () => {
      tools.dispose();
      resources.dispose();
    },
  };
}

/**
 * Builds the 2025-era server of one session (v1 SDK): the shared definition, plus what a session has on its own:
 * resources/subscribe, change notifications on its stream, and the end of its coordination when it closes.
 */
export function createToolServer(options: ServedCore & { version: string }): McpServer {
  const { logger, resources } = options;
  const server = new McpServer(serverInfo(options.version), { instructions: INSTRUCTIONS, capabilities: { tools: { listChanged: true } } });
  const surface = legacySurface(server);
  defineServer(surface, options);
  const wanted = registerSubscriptions(surface, resources);
  const failed = (what: string) => (err: unknown) => logger.debug(`[mcp] ${what} not sent: ${describeError(err)}`);
  const listening = watchChanges(
    options,
    {
      toolsChanged: () => {
        if (server.isConnected()) server.server.sendToolListChanged().catch(failed('tools/list_changed'));
      },
      resourcesChanged: () => {
        if (server.isConnected()) server.sendResourceListChanged();
      },
      resourceUpdated: (uri) => {
        if (server.isConnected()) server.server.sendResourceUpdated({ uri }).catch(failed('resource update'));
      },
    },
    wanted,
  );
  // The session id is known once initialize is answered; the SDK has let go of the transport by onclose.
  let session: string | undefined;
  const initialized = server.server.oninitialized;
  server.server.oninitialized = () => {
    session = server.server.transport?.sessionId;
    initialized?.();
  };
  surface.onClose(() => {
    listening.dispose();
    if (session !== undefined) resources.sessionEnded(session);
  });
  return server;
}

/**
 * Builds the 2026-era server that `createMcpHandler` makes for one request (v2 SDK): the same definition, no
 * session. Change notifications are published once through the handler (see McpHttpHost), not per instance.
 */
export function createModernToolServer(options: ServedCore & { version: string }): ModernMcpServer {
  const server = new ModernMcpServer(serverInfo(options.version), { instructions: INSTRUCTIONS, capabilities: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true } } });
  defineServer(modernSurface(server), options);
  return server;
}

/** What McpHttpHost serves for both eras, from one dispatcher: its `createServer` and `modern` options. */
export function bothEras(options: ServedCore & { version: string }): { createServer: () => McpServer; modern: ModernServing } {
  return {
    createServer: () => createToolServer(options),
    modern: { createServer: () => createModernToolServer(options), watch: (sink) => watchChanges(options, sink) },
  };
}
