import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ToolErrorBody } from '../core/errors';
import type { ToolDispatcher } from '../core/tools/dispatch';
import { completeWorkspaceId } from './completions';
import { progressReporter } from './progress';
import { registerSteeringResources } from './steeringResources';
import { listedTool } from './toolSchemas';
import { registerWorkspaceResources } from './workspaceResources';

export const SERVER_NAME = 'codespace';

const INSTRUCTIONS =
  'CodeSpace serves the folders open in the developer\'s VS Code window. Start with workspace_info (no arguments) to ' +
  'learn workspace ids, then workspace_info with an id to learn what is allowed. Paths are relative to the workspace ' +
  'root; lines and characters are 1-based (characters in UTF-16 code units, as editors count them). Read a file before ' +
  'patching it and pass the version you read as the expected version. Once a session has opened a work (work_open), every ' +
  'result carries coordination { work_id, queued_instructions }: above 0, call steer_claim_next. After an edit, any later ' +
  'result may carry diagnostics_update: what the language servers reported on the files you edited; fix what you broke.';

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
 * Builds one MCP server for one session over the tool catalogue. This adapter only translates: tools/list serves
 * the tools the operator has not turned off (src/mcp/toolSchemas.ts: compact schemas, annotations from the kind
 * table), and sends notifications/tools/list_changed when that changes; tools/call goes to the core's
 * ToolDispatcher, and its outcome becomes a CallToolResult. Per MCP 2025-11-25 (SEP-1303) bad arguments are tool
 * errors (`isError: true`, INVALID_ARGUMENTS); only an unknown tool (and malformed JSON-RPC, which the SDK answers
 * before us) is a protocol error. The SDK still checks every result against CallToolResultSchema, and clients
 * check `structuredContent` against the output schema.
 */
export function createToolServer(options: { dispatcher: ToolDispatcher; version: string }): McpServer {
  const { dispatcher } = options;
  const server = new McpServer({ name: SERVER_NAME, title: 'CodeSpace for VS Code', version: options.version }, { instructions: INSTRUCTIONS, capabilities: { tools: { listChanged: true } } });

  // Our own handlers, not McpServer.registerTool: the SDK would serve its own, larger conversion of the schemas.
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: dispatcher.served().map(listedTool) }));
  const listening = dispatcher.services.toolGroups.onDidChange(() => {
    if (!server.isConnected()) return;
    server.server.sendToolListChanged().catch((err: unknown) => dispatcher.services.logger.debug(`[tools] tools/list_changed not sent: ${err instanceof Error ? err.message : String(err)}`));
  });
  const closed = server.server.onclose;
  server.server.onclose = () => {
    listening.dispose();
    closed?.();
  };
  // Workspace files (a read-only template) and the steering queues (subscribable, listed per open work).
  registerWorkspaceResources(server, dispatcher);
  registerSteeringResources(server, dispatcher.services.steering, dispatcher.services.logger, (prefix) => completeWorkspaceId(dispatcher, prefix));

  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const progress = progressReporter(request.params._meta?.progressToken, extra.sendNotification);
    const context = { ...(extra.sessionId !== undefined ? { session: extra.sessionId } : {}), ...(progress ? { progress } : {}) };
    const outcome = await dispatcher.call(request.params.name, request.params.arguments ?? {}, extra.signal, context);
    switch (outcome.kind) {
      case 'unknown_tool':
        throw protocolError(ErrorCode.InvalidParams, outcome.message);
      case 'error':
        return errorResult(outcome.body);
      case 'result':
        return { content: [{ type: 'text', text: text(outcome.value) }, ...(outcome.extra ?? [])], structuredContent: outcome.value };
    }
  });
  return server;
}
