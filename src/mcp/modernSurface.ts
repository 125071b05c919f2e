import type { McpServer, StandardSchemaV1, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { ResourceTemplate, completable } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import type { LowLevelMethod, McpSurface, PromptDefinition, RequestContext } from './surface';

type AnyHandler = (params: never, ctx: RequestContext) => unknown;

/**
 * A prompt's arguments as the v2 SDK takes them: a Standard Schema with its JSON Schema. Our schemas are zod 3,
 * which the v2 SDK cannot convert (it bundles zod 4), so the JSON Schema comes from the converter the tools use,
 * validation from zod 3's own Standard Schema, and `shape` carries one completable marker per argument that
 * completes (the SDK looks completions up there).
 */
function promptArgs(definition: PromptDefinition): StandardSchemaWithJSON {
  const shape: Record<string, unknown> = {};
  const plain: Record<string, z.ZodTypeAny> = {};
  for (const [arg, { schema, complete }] of Object.entries(definition.args)) {
    plain[arg] = schema;
    // A fresh marker per instance: the SDK's completable() marks the object it is given, once.
    shape[arg] = complete ? completable({ '~standard': schema['~standard'] } as StandardSchemaV1, (value, context) => complete(String(value ?? ''), context)) : schema;
  }
  const object = z.object(plain);
  const json = zodToJsonSchema(object, { strictUnions: true }) as Record<string, unknown>;
  delete json.$schema;
  return { '~standard': { ...object['~standard'], jsonSchema: { input: () => json, output: () => json } }, shape } as unknown as StandardSchemaWithJSON;
}

/** The 2026-era surface: the v2 SDK's McpServer that `createMcpHandler` builds for one request (see surface.ts). */
export function modernSurface(server: McpServer): McpSurface {
  const closers: (() => void)[] = [];
  const closed = server.server.onclose;
  server.server.onclose = () => {
    for (const c of closers.splice(0)) c();
    closed?.();
  };
  const handle = (method: LowLevelMethod, handler: AnyHandler): void => {
    (server.server.setRequestHandler as (method: string, h: (request: { params: never }, ctx: { sessionId?: string; mcpReq: { signal: AbortSignal; notify: RequestContext['notify'] } }) => unknown) => void)(method, (request, ctx) =>
      handler(request.params, { signal: ctx.mcpReq.signal, notify: (n) => ctx.mcpReq.notify(n) }),
    );
  };
  return {
    era: 'modern',
    handle: handle as McpSurface['handle'],
    resourceTemplate(name, template, meta, read) {
      server.registerResource(name, new ResourceTemplate(template.uriTemplate, { list: template.list, complete: template.complete }), meta, (uri, variables, ctx) => read(uri, variables, { signal: ctx.mcpReq.signal }) as never);
    },
    prompt(name, definition) {
      server.registerPrompt(name, { title: definition.title, description: definition.description, argsSchema: promptArgs(definition) }, ((args: Record<string, string | undefined>) => definition.get(args ?? {})) as never);
    },
    registerCapabilities(capabilities) {
      server.server.registerCapabilities(capabilities);
    },
    onClose(listener) {
      closers.push(listener);
    },
  };
}
