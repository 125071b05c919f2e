import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { zodToJsonSchema } from 'zod-to-json-schema';
import { kindFlags } from '../kernel/toolKinds';
import type { ToolContract } from '../kernel/tool';

type JsonSchema = Record<string, unknown>;

/**
 * A tool's arguments as tools/list serves them: the JSON Schema of exactly what the dispatcher accepts (a strict
 * object: `additionalProperties: false`, every bound), converted as the SDK converts it, without the `$schema` key.
 */
export function inputJsonSchema(shape: z.ZodRawShape): Tool['inputSchema'] {
  const schema = zodToJsonSchema(z.object(shape).strict(), { strictUnions: true, pipeStrategy: 'input' }) as JsonSchema;
  delete schema.$schema;
  return schema as Tool['inputSchema'];
}

/** One field of a result, as the output schema names it: its JSON type, or its values when they are a fixed set. */
function fieldSchema(field: JsonSchema): JsonSchema {
  if (Array.isArray(field.enum)) return { enum: field.enum };
  if ('const' in field) return { const: field.const };
  if (field.type !== undefined) return { type: field.type };
  if (Array.isArray(field.anyOf)) return { anyOf: (field.anyOf as JsonSchema[]).map(fieldSchema) };
  return {};
}

/**
 * A tool's result as tools/list describes it: every top-level field with its JSON type (fixed sets of values
 * spelled out); nested objects and arrays are typed, and their fields are documented in TOOLS.md. Clients check
 * `structuredContent` against it, so it must accept every real result: it is derived from the tool's own output
 * schema (which types the handler), only less detailed. It lists no `required` fields and allows fields it does
 * not name: any result may carry `coordination` and `diagnostics_update` (src/kernel/dispatch.ts).
 */
export function outputJsonSchema(shape: z.ZodRawShape): NonNullable<Tool['outputSchema']> {
  const full = zodToJsonSchema(z.object(shape), { strictUnions: true, pipeStrategy: 'output' }) as JsonSchema;
  const fields = (full.properties ?? {}) as Record<string, JsonSchema>;
  const properties: Record<string, JsonSchema> = {};
  // A field whose schema appeared before (the same zod value twice) is converted as a reference to the first.
  const resolve = (field: JsonSchema): JsonSchema => {
    const ref = /^#\/properties\/([^/]+)$/.exec(typeof field.$ref === 'string' ? field.$ref : '');
    return ref ? resolve(fields[ref[1] as string] ?? {}) : field;
  };
  for (const [name, field] of Object.entries(fields)) properties[name] = fieldSchema(resolve(field));
  return { type: 'object', properties };
}

const listed = new WeakMap<ToolContract, Tool>();

/**
 * A tool's tools/list entry (computed once per tool): schemas, and the annotations of the kind table. No
 * `openWorldHint`: its default (true, "may reach beyond the workspace") is the honest one for exec_command, whose
 * commands may use the network, and saying `false` for every other tool is not worth its bytes in every session.
 */
/**
 * The MCP annotations of a kind. The protocol defines destructiveHint and idempotentHint only for a tool that is not
 * read-only, so a read-only tool carries readOnlyHint alone (every client reads the same; the list is shorter).
 */
export function toolAnnotations(flags: { readOnly: boolean; destructive: boolean; idempotent: boolean }): NonNullable<Tool['annotations']> {
  return flags.readOnly ? { readOnlyHint: true } : { readOnlyHint: false, destructiveHint: flags.destructive, idempotentHint: flags.idempotent };
}

export function listedTool(tool: ToolContract): Tool {
  let entry = listed.get(tool);
  if (!entry) {
    const flags = kindFlags(tool.kind);
    entry = {
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputJsonSchema(tool.input),
      outputSchema: outputJsonSchema(tool.output),
      annotations: toolAnnotations(flags),
    };
    listed.set(tool, entry);
  }
  return entry;
}
