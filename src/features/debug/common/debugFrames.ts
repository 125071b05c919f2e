import { z } from 'zod';
import { LocationMapper } from '../../editor';
import type { DebugSessionView, DebugSessions } from './debugSessions';
import type { DebugToolDeps } from './debugTools';
import { debuggerOf } from './debugTools';

export const frameSchema = z.object({
  id: z.number(),
  name: z.string(),
  workspace_id: z.string().optional(),
  path: z.string().optional(),
  source: z.string().optional().describe('A source outside the workspace, by name.'),
  line: z.number(),
  column: z.number(),
});

export type FrameView = z.infer<typeof frameSchema>;

/** The session the agent names, after its workspace's profile allows `need` (an ended one only when `ended`). */
export function sessionOf(deps: Pick<DebugToolDeps, 'workspaces'>, sessions: DebugSessions, id: string, need: 'read' | 'exec', ended = false): DebugSessionView {
  const view = sessions.get(id, { ended });
  deps.workspaces.require(deps.workspaces.get(view.workspace_id), need);
  return view;
}

/**
 * A page of the stopped thread's frames, as the agent may see them: a frame in a workspace folder by its relative
 * path, any other by its source's name only (no path outside the workspace is shown). Their ids are recorded with the
 * current stop.
 */
export async function framesOf(
  deps: Pick<DebugToolDeps, 'workspaces' | 'fs' | 'debug' | 'sessions'>,
  view: DebugSessionView,
  threadId: number,
  start: number,
  count: number,
): Promise<{ frames: FrameView[]; total?: number }> {
  const { port, sessions } = debuggerOf(deps);
  const page = await port.stack(view.id, threadId, start, count);
  const mapper = new LocationMapper(deps);
  const frames: FrameView[] = [];
  for (const f of page.frames.slice(0, count)) {
    const where = await mapper.confinePath(f.path);
    const source = f.source ?? (f.path !== undefined ? f.path.split(/[\\/]/).pop() : undefined);
    frames.push({
      id: f.id,
      name: f.name.slice(0, 200),
      ...(where ? { workspace_id: where.ws.id, path: where.rel } : source !== undefined ? { source: source.slice(0, 200) } : {}),
      line: f.line,
      column: f.column,
    });
  }
  sessions.issued(view.id, 'frame', frames.map((f) => f.id));
  return { frames, ...(page.total !== undefined ? { total: page.total } : {}) };
}
