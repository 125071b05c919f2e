import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../core/errors';
import type { ToolErrorBody } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import { kindFlags } from '../core/toolKinds';
import type { AnyTool, CoreServices } from '../core/tools/tool';
import { invalidArgumentsBody } from './argumentErrors';

export const SERVER_NAME = 'codespace';

const INSTRUCTIONS =
  'CodeSpace serves the folders open in the developer\'s VS Code window. Start with workspace_info (no arguments) to ' +
  'learn workspace ids, then workspace_info with an id to learn what is allowed. Paths are relative to the workspace ' +
  'root. Read a file before patching it and pass the version you read as the expected version.';

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
 * Builds one MCP server for one session over the tool catalogue. Tools are plain data; this adapter is the only
 * place that knows the SDK. tools/list comes from McpServer.registerTool; tools/call is answered by our own
 * handler. Per MCP 2025-11-25 (SEP-1303) arguments that fail the input schema, and arguments a tool refuses
 * (InvalidArgumentsError), are tool execution errors the model can correct: `isError: true`, code
 * INVALID_ARGUMENTS, the message naming the field and what was expected. Only an unknown tool (and malformed
 * JSON-RPC, which the SDK answers before us) is a protocol error. A tool that ran and failed is `isError: true`
 * with its code; nothing else (no stack trace) reaches the client. The SDK still checks every result against
 * CallToolResultSchema (Server wraps this handler), and clients check `structuredContent` against the output
 * schema.
 */
export function createToolServer(options: {
  tools: readonly AnyTool[];
  services: CoreServices;
  logger: Logger;
  version: string;
}): McpServer {
  const { tools, services, logger } = options;
  const server = new McpServer({ name: SERVER_NAME, title: 'CodeSpace for VS Code', version: options.version }, { instructions: INSTRUCTIONS, capabilities: { tools: { listChanged: false } } });
  const byName = new Map<string, { tool: AnyTool; input: z.ZodObject<z.ZodRawShape> }>();

  for (const tool of tools) {
    const flags = kindFlags(tool.kind);
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        outputSchema: tool.output,
        annotations: {
          title: tool.title,
          readOnlyHint: flags.readOnly,
          destructiveHint: flags.destructive,
          idempotentHint: flags.idempotent,
          openWorldHint: false,
        },
      },
      // Never called: tools/call is answered below.
      () => errorResult({ code: 'INTERNAL', message: 'unreachable' }),
    );
    byName.set(tool.name, { tool, input: z.object(tool.input).strict() });
  }
  // registerTool declares `tools.listChanged: true` (the SDK assumes tools may come and go). Ours are fixed for
  // the life of a session and we never send notifications/tools/list_changed, so say so.
  server.server.registerCapabilities({ tools: { listChanged: false } });

  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const entry = byName.get(name);
    if (!entry) {
      const shown = name.length > 100 ? `${JSON.stringify(name.slice(0, 100))}… (${name.length} characters)` : JSON.stringify(name);
      throw protocolError(ErrorCode.InvalidParams, `Unknown tool ${shown}. Known tools: ${[...byName.keys()].join(', ')}.`);
    }
    const args = request.params.arguments ?? {};
    const parsed = entry.input.safeParse(args);
    if (!parsed.success) {
      const body = invalidArgumentsBody(name, parsed.error, entry.tool.input, args);
      logger.debug(`[mcp] ${name} refused: INVALID_ARGUMENTS (${String(body.details?.field)})`);
      return errorResult(body);
    }
    const started = Date.now();
    try {
      const result = await entry.tool.handler(parsed.data, { services, signal: extra.signal });
      logger.debug(`[mcp] ${name} ok in ${Date.now() - started} ms`);
      return { content: [{ type: 'text', text: text(result) }], structuredContent: result as Record<string, unknown> };
    } catch (err) {
      if (ToolError.is(err)) {
        logger.debug(`[mcp] ${name} failed: ${err.code}`);
        return errorResult(err.toBody());
      }
      if (InvalidArgumentsError.is(err)) {
        logger.debug(`[mcp] ${name} refused: INVALID_ARGUMENTS`);
        const body = err.toBody();
        body.hint ??= `Correct the arguments and call ${name} again.`;
        return errorResult(body);
      }
      logger.error(`[mcp] ${name} failed unexpectedly`, err instanceof Error ? (err.stack ?? err.message) : String(err));
      return errorResult({ code: 'INTERNAL', message: `${name} failed unexpectedly inside the extension.`, hint: 'The developer can see details in the CodeSpace log (command "CodeSpace: Show Log").' });
    }
  });
  return server;
}
