import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import type { ToolDispatcher } from '../kernel/dispatch';
import { completePath, completeWorkspaceId, contextWorkspace } from './completions';
import type { McpSurface } from './surface';

/** Workspace files as MCP resources (RFC 6570: `{+path}` keeps its "/" separators). */
export const WORKSPACE_FILE_TEMPLATE = 'codespace://workspace/{workspace_id}/{+path}';

/** MCP's code for a resource that does not exist (specification, "Resources", error handling). */
export const RESOURCE_NOT_FOUND = -32002;
/** JSON-RPC's codes, the same in every revision. */
const ErrorCode = { InvalidParams: -32602, InternalError: -32603 } as const;

/** A JSON-RPC error the SDK sends as it is (see protocolError in toolServer.ts). */
function protocolError(code: number, message: string): Error & { code: number } {
  return Object.assign(new Error(message), { code });
}

const NOT_FOUND_CODES = new Set(['WORKSPACE_NOT_FOUND', 'NOT_FOUND', 'PATH_OUTSIDE_WORKSPACE', 'IS_DIRECTORY']);
/** The resource exists but is not one this template serves (binary, too large): the request cannot be met as asked. */
const INVALID_PARAMS_CODES = new Set(['INVALID_ARGUMENTS', 'NOT_TEXT', 'TOO_LARGE', 'PERMISSION_DENIED']);

function decode(part: string | string[] | undefined): string | undefined {
  if (typeof part !== 'string') return undefined;
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/**
 * Registers the read-only resource template of workspace files, with completion of its `workspace_id` and `path`.
 * A read goes through the `read` tool, so it has the same confinement (no "..", no absolute path, no link out of
 * the workspace, opened once and verified), the same limits and the same image handling: a text file comes back
 * as `text`, an image as `blob`, each with its version in `_meta`. A file over the read limit or a binary that is
 * no image is refused with a message pointing to the `read` tool. resources/list lists nothing: a workspace's
 * files are found with `find`, not enumerated.
 */
export function registerWorkspaceResources(surface: McpSurface, dispatcher: ToolDispatcher): void {
  const template = {
    uriTemplate: WORKSPACE_FILE_TEMPLATE,
    list: undefined,
    complete: {
      workspace_id: (value: string) => completeWorkspaceId(dispatcher, value),
      path: async (value: string, context?: { arguments?: Record<string, string> }) => completePath(dispatcher, await contextWorkspace(dispatcher, context), value),
    },
  };
  surface.resourceTemplate(
    'workspace-file',
    template,
    {
      title: 'Workspace file',
      description: 'A file of a workspace folder, read-only: codespace://workspace/{workspace_id}/{path}. Text as text, images as blobs; the version is in _meta.',
    },
    async (uri, variables, ctx): Promise<ReadResourceResult> => {
      const workspaceId = decode(variables.workspace_id);
      const rel = decode(variables.path);
      if (workspaceId === undefined || rel === undefined) throw protocolError(ErrorCode.InvalidParams, `Resource ${uri.href}: the workspace id or path is not valid percent-encoding.`);
      const outcome = await dispatcher.call('read', { workspace_id: workspaceId, path: rel }, ctx.signal);
      if (outcome.kind === 'unknown_tool') throw protocolError(ErrorCode.InternalError, 'Resource reads are unavailable.');
      if (outcome.kind === 'error') {
        const code = NOT_FOUND_CODES.has(outcome.body.code) ? RESOURCE_NOT_FOUND : INVALID_PARAMS_CODES.has(outcome.body.code) ? ErrorCode.InvalidParams : ErrorCode.InternalError;
        throw Object.assign(protocolError(code, `Resource ${uri.href}: ${outcome.body.message}`), { data: { code: outcome.body.code, uri: uri.href } });
      }
      const v = outcome.value as { version: string; truncated: boolean; content?: string; size: number };
      const image = outcome.extra?.find((c) => c.type === 'image');
      if (image) return { contents: [{ uri: uri.href, mimeType: image.mimeType, blob: image.data, _meta: { version: v.version } }] };
      if (v.truncated || v.content === undefined) {
        throw Object.assign(protocolError(ErrorCode.InvalidParams, `Resource ${uri.href}: the file (${v.size} bytes) is over the read limit; use the read tool with start_line to read it in parts.`), { data: { code: 'TOO_LARGE', uri: uri.href } });
      }
      return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: v.content, _meta: { version: v.version } }] };
    },
  );
}
