import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import { defineTool } from '../../../kernel/tool';
import { LocationMapper, checkPosition, readWorkspaceFile } from '../../editor';
import type { DebugAction } from './debugPort';
import { DEBUG_LIMITS, clip } from './debugSessions';
import type { DebugToolDeps } from './debugTools';
import { debuggerOf } from './debugTools';
import { frameSchema, framesOf, sessionOf } from './debugFrames';

const breakpointSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  path: z.string(),
  line: z.number(),
  condition: z.string().optional(),
  hit_condition: z.string().optional(),
  log_message: z.string().optional(),
  enabled: z.boolean(),
});

/** Breakpoints one call may set. */
const MAX_SET = 50;

export const debugBreakpointsTool = defineTool({
  name: 'debug_breakpoints',
  title: 'Debug breakpoints',
  description:
    'Sets (set) and clears (clear: ids) your line breakpoints, then lists yours. log_message makes a logpoint ' +
    '(output in debug_wait). removed: yours someone else removed since.',
  kind: 'debugControl',
  input: {
    workspace_id: z.string().min(1),
    set: z
      .array(z.object({ path: z.string().min(1), line: z.number().int().min(1), condition: z.string().min(1).optional(), hit_condition: z.string().min(1).optional(), log_message: z.string().min(1).optional() }))
      .max(MAX_SET)
      .optional(),
    clear: z.array(z.string()).optional(),
  },
  output: {
    breakpoints: z.array(breakpointSchema),
    removed: z.array(z.string()).optional(),
  },
  create: (deps: Pick<DebugToolDeps, 'workspaces' | 'fs' | 'debug' | 'sessions'>) => async (args) => {
    const { port, sessions } = debuggerOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    deps.workspaces.require(ws, 'exec');
    for (const id of args.clear ?? []) {
      if (!sessions.isOwn(id)) {
        throw new InvalidArgumentsError(`Breakpoint ${id} is not one of yours (or it is gone); you may clear only breakpoints you set.`, { field: 'clear', details: { id, yours: [...sessions.ownIds()] } });
      }
    }
    // Every position is checked before any breakpoint is set: a bad one sets none.
    const planned = [];
    for (const [i, bp] of (args.set ?? []).entries()) {
      const file = await readWorkspaceFile(deps, ws, bp.path, `set[${i}].path`);
      checkPosition(file, bp.line, 1);
      planned.push({ path: file.abs, line: bp.line, ...(bp.condition ? { condition: bp.condition } : {}), ...(bp.hit_condition ? { hitCondition: bp.hit_condition } : {}), ...(bp.log_message ? { logMessage: bp.log_message } : {}) });
    }
    if (args.clear && args.clear.length > 0) {
      for (const id of args.clear) sessions.forgetOwn(id);
      port.removeBreakpoints(args.clear);
    }
    for (const spec of planned) sessions.addOwn(port.addBreakpoint(spec));
    const own = sessions.ownIds();
    const mapper = new LocationMapper(deps);
    const breakpoints = port
      .breakpoints()
      .filter((b) => own.has(b.id))
      .flatMap((b) => {
        const where = mapper.workspaceOf(b.path);
        if (!where) return [];
        return [{ id: b.id, workspace_id: where.ws.id, path: where.rel, line: b.line, ...(b.condition ? { condition: b.condition } : {}), ...(b.hitCondition ? { hit_condition: b.hitCondition } : {}), ...(b.logMessage ? { log_message: b.logMessage } : {}), enabled: b.enabled }];
      });
    const removed = sessions.takeRemovedByOthers();
    return { breakpoints, ...(removed.length > 0 ? { removed } : {}) };
  },
});

const ACTIONS: Record<string, DebugAction | 'stop'> = { continue: 'continue', step_over: 'next', step_in: 'stepIn', step_out: 'stepOut', pause: 'pause', stop: 'stop' };

export const debugControlTool = defineTool({
  name: 'debug_control',
  title: 'Debug control',
  description: 'continue, step_over, step_in, step_out (a stopped session), pause (a running one), or stop. Returns at once; then debug_wait.',
  kind: 'debugControl',
  input: {
    session_id: z.string().min(1),
    action: z.enum(['continue', 'step_over', 'step_in', 'step_out', 'pause', 'stop']),
  },
  output: {
    state: z.enum(['running', 'stopped', 'terminated']),
  },
  create: (deps: Pick<DebugToolDeps, 'workspaces' | 'debug' | 'sessions'>) => async (args) => {
    const { port, sessions } = debuggerOf(deps);
    const action = ACTIONS[args.action] as DebugAction | 'stop';
    const view = sessionOf(deps, sessions, args.session_id, 'exec');
    if (action === 'stop') {
      sessions.stoppedByAgent(view.id);
      await port.stop(view.id);
      return { state: 'terminated' as const };
    }
    if (action === 'pause') {
      if (view.state === 'stopped') return { state: 'stopped' as const };
      await port.control(view.id, 'pause', view.stop?.threadId ?? 1);
      return { state: sessions.get(view.id, { ended: true }).state };
    }
    const { threadId } = sessions.requireStopped(view.id, args.action);
    // The stop ends before the request leaves: no reference of it is honoured once the thread may run.
    sessions.resuming(view.id);
    await port.control(view.id, action, threadId);
    return { state: sessions.get(view.id, { ended: true }).state };
  },
});

export const debugWaitTool = defineTool({
  name: 'debug_wait',
  title: 'Wait for a debug stop',
  description:
    'Waits (wait_ms, default 10000) until the session stops or ends: why, the thread, top frames (ids for ' +
    'debug_variables/debug_evaluate), and the output since the last call.',
  kind: 'debugRead',
  input: {
    session_id: z.string().min(1),
    wait_ms: z.number().int().min(0).max(DEBUG_LIMITS.maxWaitMs).optional(),
  },
  output: {
    state: z.enum(['running', 'stopped', 'terminated']),
    stop: z.number().describe('Stop count: ids are valid during this stop only.'),
    reason: z.string().optional(),
    thread_id: z.number().optional(),
    frames: z.array(frameSchema).optional(),
    exit_code: z.number().optional(),
    output: z.string(),
    output_dropped: z.number().optional().describe('Older output characters dropped unread.'),
  },
  create: (deps: Pick<DebugToolDeps, 'workspaces' | 'fs' | 'debug' | 'sessions'>) => async (args, ctx) => {
    const { sessions } = debuggerOf(deps);
    sessionOf(deps, sessions, args.session_id, 'read', true);
    const view = await sessions.wait(args.session_id, args.wait_ms ?? 10_000, ctx.signal);
    let frames;
    if (view.state === 'stopped' && view.stop) {
      try {
        frames = (await framesOf(deps, view, view.stop.threadId ?? 1, 0, DEBUG_LIMITS.waitFrames)).frames;
      } catch (err) {
        // The thread may have resumed meanwhile (the developer pressed continue): the answer says what holds now.
        if (!ToolError.is(err)) throw err;
      }
    }
    const now = sessions.get(view.id, { ended: true });
    const { output, dropped } = sessions.takeOutput(view.id);
    return {
      state: now.state,
      stop: now.epoch,
      ...(now.stop ? { reason: clip(now.stop.text ? `${now.stop.reason}: ${now.stop.text}` : now.stop.reason, 500) } : {}),
      ...(now.stop?.threadId !== undefined ? { thread_id: now.stop.threadId } : {}),
      ...(now.state === 'stopped' && frames ? { frames } : {}),
      ...(now.exitCode !== undefined ? { exit_code: now.exitCode } : {}),
      output,
      ...(dropped > 0 ? { output_dropped: dropped } : {}),
    };
  },
});
