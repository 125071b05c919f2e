import { z } from 'zod';
import { InvalidArgumentsError } from '../../../base/errors';
import { defineTool } from '../../../kernel/tool';
import type { DebugVariable } from './debugPort';
import { DEBUG_LIMITS, clip } from './debugSessions';
import type { DebugSessions } from './debugSessions';
import type { DebugToolDeps } from './debugTools';
import { debuggerOf } from './debugTools';
import { frameSchema, framesOf, sessionOf } from './debugFrames';

type InspectDeps = Pick<DebugToolDeps, 'workspaces' | 'fs' | 'debug' | 'sessions'>;

export const debugStackTool = defineTool({
  name: 'debug_stack',
  title: 'Debug call stack',
  description: 'The stopped thread\'s frames, a page at a time (start, count: default 20, at most 100).',
  kind: 'debugRead',
  input: {
    session_id: z.string().min(1),
    start: z.number().int().min(0).optional(),
    count: z.number().int().min(1).max(DEBUG_LIMITS.maxFrames).optional(),
  },
  output: {
    frames: z.array(frameSchema),
    total: z.number().optional(),
    next_start: z.number().optional(),
  },
  create: (deps: InspectDeps) => async (args) => {
    const { sessions } = debuggerOf(deps);
    sessionOf(deps, sessions, args.session_id, 'read');
    const { view, threadId } = sessions.requireStopped(args.session_id, 'debug_stack');
    const start = args.start ?? 0;
    const count = args.count ?? 20;
    const { frames, total } = await framesOf(deps, view, threadId, start, count);
    const more = total !== undefined ? total > start + frames.length : frames.length === count;
    return { frames, ...(total !== undefined ? { total } : {}), ...(more ? { next_start: start + frames.length } : {}) };
  },
});

const variableSchema = z.object({
  name: z.string().describe('Dotted from the scope or ref asked: obj.a.b'),
  value: z.string(),
  type: z.string().optional(),
  ref: z.number().optional().describe('Has children: pass as ref.'),
});

type VariableView = z.infer<typeof variableSchema>;

function variableView(v: DebugVariable, name: string): VariableView {
  return { name: clip(name, 300), value: clip(v.value, DEBUG_LIMITS.maxValueChars), ...(v.type ? { type: v.type.slice(0, 100) } : {}), ...(v.ref > 0 ? { ref: v.ref } : {}) };
}

/** Reads variables under `ref` to `depth` levels, at most `budget.left` in all, counting what it leaves out; returns how many `ref` has. */
async function readTree(
  deps: InspectDeps,
  sessions: DebugSessions,
  session: string,
  ref: number,
  prefix: string,
  depth: number,
  page: { start: number; count: number },
  budget: { left: number; omitted: number },
  out: VariableView[],
): Promise<number> {
  const { port } = debuggerOf(deps);
  const all = await port.variables(session, ref);
  const slice = all.slice(page.start, page.start + page.count);
  budget.omitted += Math.max(0, all.length - page.start - slice.length);
  for (const v of slice) {
    if (budget.left <= 0) {
      budget.omitted++;
      continue;
    }
    budget.left--;
    const name = prefix === '' ? v.name : /^\d+$/.test(v.name) ? `${prefix}[${v.name}]` : `${prefix}.${v.name}`;
    out.push(variableView(v, name));
    if (v.ref > 0) {
      sessions.issued(session, 'ref', [v.ref]);
      if (depth > 1) await readTree(deps, sessions, session, v.ref, name, depth - 1, { start: 0, count: page.count }, budget, out);
    }
  }
  return all.length;
}

export const debugVariablesTool = defineTool({
  name: 'debug_variables',
  title: 'Debug variables',
  description:
    'With frame_id: its scopes and their variables. With ref: that value\'s children (start, count). depth (1-3, ' +
    'default 1) expands children inline. Ids are valid until the thread resumes.',
  kind: 'debugRead',
  input: {
    session_id: z.string().min(1),
    frame_id: z.number().int().optional(),
    ref: z.number().int().min(1).optional(),
    start: z.number().int().min(0).optional(),
    count: z.number().int().min(1).max(DEBUG_LIMITS.maxVariables).optional(),
    depth: z.number().int().min(1).max(3).optional(),
  },
  output: {
    scopes: z.array(z.object({ name: z.string(), ref: z.number(), expensive: z.boolean().optional() })).optional(),
    variables: z.array(variableSchema),
    omitted: z.number().optional().describe('Variables left out by count, depth budget or the answer bound.'),
    next_start: z.number().optional(),
  },
  create: (deps: InspectDeps) => async (args) => {
    const { port, sessions } = debuggerOf(deps);
    sessionOf(deps, sessions, args.session_id, 'read');
    if ((args.frame_id === undefined) === (args.ref === undefined)) {
      throw new InvalidArgumentsError('Pass either frame_id (a frame\'s scopes) or ref (a value\'s children).', { field: 'frame_id' });
    }
    sessions.requireStopped(args.session_id, 'debug_variables');
    const depth = args.depth ?? 1;
    const out: VariableView[] = [];
    const count = args.count ?? 100;
    if (args.ref !== undefined) {
      sessions.checkRef(args.session_id, 'ref', args.ref, 'ref');
      const start = args.start ?? 0;
      const budget = { left: DEBUG_LIMITS.maxVariables, omitted: 0 };
      const total = await readTree(deps, sessions, args.session_id, args.ref, '', depth, { start, count }, budget, out);
      const next = start + count;
      return { variables: out, ...(budget.omitted > 0 ? { omitted: budget.omitted } : {}), ...(next < total ? { next_start: next } : {}) };
    }
    const frameId = args.frame_id as number;
    sessions.checkRef(args.session_id, 'frame', frameId, 'frame_id');
    const scopes = await port.scopes(args.session_id, frameId);
    sessions.issued(args.session_id, 'ref', scopes.map((s) => s.ref));
    const budget = { left: DEBUG_LIMITS.maxVariables, omitted: 0 };
    for (const scope of scopes) {
      if (scope.expensive) continue;
      await readTree(deps, sessions, args.session_id, scope.ref, scope.name, depth, { start: 0, count }, budget, out);
    }
    return {
      scopes: scopes.map((s) => ({ name: s.name, ref: s.ref, ...(s.expensive ? { expensive: true } : {}) })),
      variables: out,
      ...(budget.omitted > 0 ? { omitted: budget.omitted } : {}),
    };
  },
});

export const debugEvaluateTool = defineTool({
  name: 'debug_evaluate',
  title: 'Debug evaluate',
  description: 'Evaluates an expression in a frame of the stopped thread (default: the top one). It may change the program\'s state.',
  kind: 'debugControl',
  input: {
    session_id: z.string().min(1),
    expression: z.string().min(1).max(10_000),
    frame_id: z.number().int().optional(),
  },
  output: {
    result: z.string(),
    type: z.string().optional(),
    ref: z.number().optional(),
  },
  create: (deps: InspectDeps) => async (args) => {
    const { port, sessions } = debuggerOf(deps);
    sessionOf(deps, sessions, args.session_id, 'exec');
    const { view, threadId } = sessions.requireStopped(args.session_id, 'debug_evaluate');
    let frameId = args.frame_id;
    if (frameId === undefined) {
      const top = (await framesOf(deps, view, threadId, 0, 1)).frames[0];
      if (!top) throw new InvalidArgumentsError('The stopped thread has no frames; pass frame_id.', { field: 'frame_id' });
      frameId = top.id;
    } else {
      sessions.checkRef(args.session_id, 'frame', frameId, 'frame_id');
    }
    const r = await port.evaluate(args.session_id, frameId, args.expression);
    if (r.ref > 0) sessions.issued(args.session_id, 'ref', [r.ref]);
    return { result: clip(r.result, DEBUG_LIMITS.maxResultChars), ...(r.type ? { type: r.type.slice(0, 100) } : {}), ...(r.ref > 0 ? { ref: r.ref } : {}) };
  },
});
