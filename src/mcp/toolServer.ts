import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../core/errors';
import type { ToolErrorBody } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import { kindFlags } from '../core/toolKinds';
import type { AnyTool, CoreServices } from '../core/tools/tool';

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
 * A tool that ran and failed. The body travels as JSON text only: clients validate `structuredContent` against
 * the tool's output schema even on errors, and an error body is not a result.
 */
export function errorResult(body: ToolErrorBody): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: text({ error: body }) }] };
}

function describeZodError(err: z.ZodError): string {
  return err.issues
    .map((i) => `${i.path.length ? i.path.join('.') : 'arguments'}: ${i.message}`)
    .join('; ');
}

/**
 * Builds one MCP server for one session over the tool catalogue. Tools are plain data; this adapter is the only
 * place that knows the SDK. tools/list comes from McpServer.registerTool; tools/call is answered by our own
 * handler so that malformed arguments and unknown tools are protocol errors (InvalidParams), a tool that ran and
 * failed is `isError: true` with a code, and nothing else (no stack trace) reaches the client.
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

  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const name = request.params.name;
    const entry = byName.get(name);
    if (!entry) {
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${JSON.stringify(name)}. Known tools: ${[...byName.keys()].join(', ')}.`);
    }
    const parsed = entry.input.safeParse(request.params.arguments ?? {});
    if (!parsed.success) {
      throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${name}: ${describeZodError(parsed.error)}`);
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
        throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for ${name}: ${err.message}`);
      }
      logger.error(`[mcp] ${name} failed unexpectedly`, err instanceof Error ? (err.stack ?? err.message) : String(err));
      return errorResult({ code: 'INTERNAL', message: `${name} failed unexpectedly inside the extension.`, hint: 'The developer can see details in the CodeSpace log (command "CodeSpace: Show Log").' });
    }
  });
  return server;
}
