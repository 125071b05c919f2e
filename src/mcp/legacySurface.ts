import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, SubscribeRequestSchema, UnsubscribeRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { closeListeners, type LowLevelMethod, type McpSurface, type PromptDefinition, type RequestContext } from './surface';

const SCHEMAS = {
  'tools/list': ListToolsRequestSchema,
  'tools/call': CallToolRequestSchema,
  'resources/subscribe': SubscribeRequestSchema,
  'resources/unsubscribe': UnsubscribeRequestSchema,
} as const;

type AnyHandler = (params: never, ctx: RequestContext) => unknown;

/** The 2025-era surface: the v1 SDK's McpServer of one session (see surface.ts). */
export function legacySurface(server: McpServer): McpSurface {
  const onClose = closeListeners(server.server);
  const handle = (method: LowLevelMethod, handler: AnyHandler): void => {
    // One cast for the four schemas: each handler's params are exactly that method's params.
    (server.server.setRequestHandler as (schema: unknown, h: (request: { params: never }, extra: { signal: AbortSignal; sessionId?: string; sendNotification: RequestContext['notify'] }) => unknown) => void)(
      SCHEMAS[method],
      (request, extra) => handler(request.params, { signal: extra.signal, ...(extra.sessionId !== undefined ? { sessionId: extra.sessionId } : {}), tasks: false, notify: (n) => extra.sendNotification(n) }) as never,
    );
  };
  return {
    era: 'legacy',
    handle: handle as McpSurface['handle'],
    resourceTemplate(name, template, meta, read) {
      server.registerResource(name, new ResourceTemplate(template.uriTemplate, { list: template.list, complete: template.complete }), meta, (uri, variables, extra) => read(uri, variables, { signal: extra.signal }));
    },
    prompt(name, definition: PromptDefinition) {
      const shape: Record<string, z.ZodTypeAny> = {};
      for (const [arg, { schema, complete }] of Object.entries(definition.args)) shape[arg] = complete ? completable(fresh(schema), (value, context) => complete(value ?? '', context)) : schema;
      server.registerPrompt(name, { title: definition.title, description: definition.description, argsSchema: shape }, (args: Record<string, string | undefined>) => definition.get(args));
    },
    registerCapabilities(capabilities) {
      server.server.registerCapabilities(capabilities);
    },
    onClose,
  };
}

/**
 * A new instance of `schema` (the same definition): the v1 SDK's completable() marks the object it is given with a
 * property that cannot be set again, and a prompt's argument schemas are made once and shared by every session.
 */
function fresh(schema: z.ZodTypeAny): z.ZodTypeAny {
  return new (schema.constructor as new (def: unknown) => z.ZodTypeAny)(schema._def);
}
