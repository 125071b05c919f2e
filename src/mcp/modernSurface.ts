import type { McpServer, StandardSchemaV1, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { ResourceTemplate, completable } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import { closeListeners, type LowLevelMethod, type McpSurface, type PromptDefinition, type RequestContext } from './surface';
import { TASKS_EXTENSION, declaresTasks } from './tasks';

type ModernContext = { mcpReq: { signal: AbortSignal; envelope?: Record<string, unknown>; notify: RequestContext['notify'] } };

function requestContext(ctx: ModernContext): RequestContext {
  return { signal: ctx.mcpReq.signal, tasks: declaresTasks(ctx.mcpReq.envelope?.['io.modelcontextprotocol/clientCapabilities']), notify: (n) => ctx.mcpReq.notify(n) };
}

/** tasks/get and tasks/cancel take a task id; their answers are checked by our own code (tasks.ts). */
const TASK_SCHEMAS = { params: z.object({ taskId: z.string().min(1).max(200) }).passthrough(), result: z.object({}).passthrough() };

type AnyHandler = (params: never, ctx: RequestContext) => unknown;

/**
 * A prompt's arguments as the v2 SDK takes them: a Standard Schema with its JSON Schema. Our schemas are zod 3,
 * which the v2 SDK cannot convert (it bundles zod 4), so the JSON Schema comes from the converter the tools use,
 * validation from zod 3's own Standard Schema, and `shape` carries one completable marker per argument that
 * completes (the SDK looks completions up there).
 */
function promptArgs(definition: PromptDefinition): StandardSchemaWithJSON {
  const shape: Record<string, unknown> = {};
  for (const [arg, { schema, complete }] of Object.entries(definition.args)) {
    // A fresh marker per instance: the SDK's completable() marks the object it is given, once.
    shape[arg] = complete ? completable({ '~standard': schema['~standard'] } as StandardSchemaV1, (value, context) => complete(String(value ?? ''), context)) : schema;
  }
  const { object, json } = argsObject(definition.args);
  return { '~standard': { ...object['~standard'], jsonSchema: { input: () => json, output: () => json } }, shape } as unknown as StandardSchemaWithJSON;
}

interface ArgsObject {
  readonly names: string;
  readonly schemas: readonly z.ZodTypeAny[];
  readonly object: z.AnyZodObject;
  readonly json: Record<string, unknown>;
}

/**
 * The zod object and JSON Schema of a prompt's arguments, made once for the same argument schemas: every 2026-era
 * request builds its server anew, and converting the schemas was most of that (about 0.15 of 0.3 ms in plain Node).
 * Kept by the first argument's schema, so a prompt whose schemas are made anew each time leaves nothing behind.
 */
const argsObjects = new WeakMap<z.ZodTypeAny, ArgsObject>();

function argsObject(args: PromptDefinition['args']): ArgsObject {
  const entries = Object.entries(args);
  const names = entries.map(([name]) => name).join('\0');
  const schemas = entries.map(([, arg]) => arg.schema);
  const first = schemas[0];
  const known = first ? argsObjects.get(first) : undefined;
  if (known && known.names === names && known.schemas.every((s, i) => s === schemas[i])) return known;
  const object = z.object(Object.fromEntries(entries.map(([name, arg]) => [name, arg.schema])));
  const json = zodToJsonSchema(object, { strictUnions: true }) as Record<string, unknown>;
  delete json.$schema;
  const made = { names, schemas, object, json };
  if (first) argsObjects.set(first, made);
  return made;
}

/** The 2026-era surface: the v2 SDK's McpServer that `createMcpHandler` builds for one request (see surface.ts). */
export function modernSurface(server: McpServer): McpSurface {
  const onClose = closeListeners(server.server);
  const handle = (method: LowLevelMethod, handler: AnyHandler): void => {
    (server.server.setRequestHandler as (method: string, h: (request: { params: never }, ctx: ModernContext) => unknown) => void)(method, (request, ctx) => handler(request.params, requestContext(ctx)));
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
    serveTasks(handlers) {
      // Custom methods for the SDK (it serves no tasks itself on this revision): the 3-argument form with schemas.
      const custom = server.server.setRequestHandler.bind(server.server) as unknown as (method: string, schemas: typeof TASK_SCHEMAS, h: (params: { taskId: string }, ctx: ModernContext) => unknown) => void;
      custom('tasks/get', TASK_SCHEMAS, (params, ctx) => handlers.get(params.taskId, requestContext(ctx)));
      custom('tasks/cancel', TASK_SCHEMAS, (params, ctx) => handlers.cancel(params.taskId, requestContext(ctx)));
      server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
    },
    registerCapabilities(capabilities) {
      server.server.registerCapabilities(capabilities);
    },
    onClose,
  };
}
