import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { z } from 'zod';
import type { ToolDispatcher } from '../kernel/dispatch';

/** Most suggestions one completion returns (MCP allows at most 100 values per response). */
export const MAX_COMPLETIONS = 100;
/** Paths looked at per path completion: a bound on the walk behind one keystroke. */
const PATHS_SCANNED = 2000;

const never = new AbortController().signal;

/** Workspace ids beginning with `prefix`, in the order workspace_info lists them. */
export async function completeWorkspaceId(dispatcher: ToolDispatcher, prefix: string): Promise<string[]> {
  const outcome = await dispatcher.call('workspace_info', {}, never);
  if (outcome.kind !== 'result') return [];
  const list = (outcome.value.workspaces as { id: string }[] | undefined) ?? [];
  return list
    .map((w) => w.id)
    .filter((id) => id.startsWith(prefix))
    .slice(0, MAX_COMPLETIONS);
}

/** The workspace a path completion is about: the one named in the context, or the only one open. */
export async function contextWorkspace(dispatcher: ToolDispatcher, context?: { arguments?: Record<string, string> }): Promise<string | undefined> {
  const named = context?.arguments?.workspace_id;
  if (named !== undefined && named !== '') return named;
  const all = await completeWorkspaceId(dispatcher, '');
  return all.length === 1 ? all[0] : undefined;
}

/**
 * Root-relative paths beginning with `prefix`, one level at a time as a shell completes them: files of the prefix's
 * folder and its subfolders (with a trailing "/"). It goes through the `find` tool, so the same confinement,
 * excludes and limits apply; a prefix holding glob characters or ".." completes to nothing.
 */
export async function completePath(dispatcher: ToolDispatcher, workspaceId: string | undefined, prefix: string): Promise<string[]> {
  if (workspaceId === undefined) return [];
  if (/[*?[\]{}\\\0]/.test(prefix) || prefix.startsWith('/') || prefix.split('/').includes('..')) return [];
  const slash = prefix.lastIndexOf('/');
  const dir = slash < 0 ? '' : prefix.slice(0, slash + 1);
  const outcome = await dispatcher.call('find', { workspace_id: workspaceId, pattern: `${dir}**`, max_results: PATHS_SCANNED }, never);
  if (outcome.kind !== 'result') return [];
  const seen = new Set<string>();
  for (const p of (outcome.value.paths as string[] | undefined) ?? []) {
    if (!p.startsWith(prefix)) continue;
    const next = p.indexOf('/', dir.length);
    seen.add(next < 0 ? p : p.slice(0, next + 1));
    if (seen.size >= MAX_COMPLETIONS) break;
  }
  return [...seen].sort();
}

/**
 * A prompt argument that names a workspace, completing to the open folders' ids: use it in a prompt's argsSchema
 * (`{ workspace_id: workspaceIdArgument(dispatcher) }`) and `completion/complete` for that argument answers.
 */
export function workspaceIdArgument(dispatcher: ToolDispatcher, description = 'Workspace id from workspace_info.'): ReturnType<typeof completable<z.ZodString>> {
  return completable(z.string().describe(description), (value) => completeWorkspaceId(dispatcher, value ?? ''));
}

/** A prompt argument that names a workspace-relative path, completing one level at a time (see completePath). */
export function pathArgument(dispatcher: ToolDispatcher, description = 'Path relative to the workspace root.'): ReturnType<typeof completable<z.ZodString>> {
  return completable(z.string().describe(description), async (value, context) => completePath(dispatcher, await contextWorkspace(dispatcher, context), value ?? ''));
}
