import * as path from 'node:path';
import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import { describeErrorWithStack } from '../../../base/describeError';
import { callerOf } from '../../../kernel/identity';
import type { OperationRunner } from '../../../kernel/runner/operationRunner';
import type { AnyTool } from '../../../kernel/tool';
import { defineTool } from '../../../kernel/tool';
import type { Workspace, WorkspaceRegistry } from '../../../kernel/workspaces';
import { diagnosticSchema, diagnosticsReportSchema, workspaceDiagnostics } from '../../editor';
import type { ProcessSupervisor } from '../../processes';
import { execCommandTool } from '../../processes';
import { resolveTask } from './resolveTask';
import type { TaskEntry, TasksPort } from './tasksPort';

/** What the task tools use. */
export interface TaskToolDeps {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  readonly logger: Logger;
  /** The editor's tasks; undefined in a host without an editor (the task tools answer UNAVAILABLE). */
  readonly tasks: TasksPort | undefined;
  /** task_run starts the task through exec_command's own operation. */
  readonly runner: Pick<OperationRunner, 'run'>;
  /** The processes exec_command starts: their output (for the problem matchers) and their end. */
  readonly processes: Pick<ProcessSupervisor, 'read' | 'status' | 'onDidExit'>;
}

export const TASK_LIMITS = {
  /** Tasks one `tasks` call lists. */
  maxTasks: 200,
  /** Labels a NOT_FOUND refusal names. */
  maxNamed: 50,
  /** Longest wait of one task_run. */
  maxWaitMs: 50_000,
  /** How long task_run waits, after the process ended, for the problem matchers' report. */
  matcherGraceMs: 10_000,
} as const;

function portOf(deps: Pick<TaskToolDeps, 'tasks'>): TasksPort {
  if (!deps.tasks) {
    throw new ToolError('UNAVAILABLE', 'Tasks need the VS Code editor; this host has none.', { hint: 'Run the command with exec_command.' });
  }
  return deps.tasks;
}

/** The tasks of one workspace folder (tasks of the whole workspace or global ones name no folder: not listed). */
async function tasksOf(port: TasksPort, ws: Workspace): Promise<TaskEntry[]> {
  const root = path.resolve(ws.root);
  return (await port.list()).filter((t) => t.folder !== undefined && path.resolve(t.folder) === root);
}

const runnable = (t: TaskEntry): boolean => (t.execution.kind === 'shell' || t.execution.kind === 'process') && (t.dependsOn ?? []).length === 0;

export const tasksTool = defineTool({
  name: 'tasks',
  title: 'List tasks',
  description: "The folder's VS Code tasks (tasks.json, detected ones such as npm scripts). runnable: task_run can run it.",
  kind: 'inspect',
  input: { workspace_id: z.string().min(1) },
  output: {
    tasks: z.array(z.object({ label: z.string(), source: z.string(), group: z.string().optional(), runnable: z.boolean(), problem_matchers: z.array(z.string()).optional(), detail: z.string().optional() })),
    truncated: z.boolean(),
  },
  create: (deps: Pick<TaskToolDeps, 'tasks' | 'workspaces'>) => async (args) => {
    const port = portOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    const all = await tasksOf(port, ws);
    const tasks = all.slice(0, TASK_LIMITS.maxTasks).map((t) => ({
      label: t.label,
      source: t.source,
      ...(t.group !== undefined ? { group: t.group } : {}),
      runnable: runnable(t),
      ...(t.problemMatchers.length > 0 ? { problem_matchers: [...t.problemMatchers] } : {}),
      ...(t.detail !== undefined ? { detail: t.detail.slice(0, 200) } : {}),
    }));
    return { tasks, truncated: all.length > tasks.length };
  },
});

/** The one task a label (and source) names, or NOT_FOUND naming what exists, or INVALID_ARGUMENTS when two match. */
function pick(all: readonly TaskEntry[], label: string, source: string | undefined): TaskEntry {
  const named = all.filter((t) => t.label === label);
  const found = source === undefined ? named : named.filter((t) => t.source === source);
  if (found.length === 1) return found[0] as TaskEntry;
  if (found.length === 0) {
    const existing = all.slice(0, TASK_LIMITS.maxNamed).map((t) => ({ label: t.label, source: t.source }));
    throw new ToolError('NOT_FOUND', `No task ${JSON.stringify(label)}${source !== undefined ? ` from ${source}` : ''} in this folder; ${all.length === 0 ? 'it has no tasks' : `it has ${all.length}`}.`, {
      hint: 'Call tasks for the labels and sources.',
      details: { label, tasks: existing, ...(all.length > existing.length ? { more: all.length - existing.length } : {}) },
    });
  }
  throw new InvalidArgumentsError(`${found.length} tasks are labelled ${JSON.stringify(label)}; name the source.`, {
    field: 'source',
    details: { sources: found.map((t) => t.source) },
  });
}

/** The process's status once it ended, or undefined when it still runs after `ms` (or the call was cancelled). */
async function ended(processes: TaskToolDeps['processes'], id: string, ms: number, signal: AbortSignal): Promise<ReturnType<TaskToolDeps['processes']['status']> | undefined> {
  const now = processes.status(id);
  if (now.state === 'exited' || ms <= 0) return now.state === 'exited' ? now : undefined;
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      sub.dispose();
      signal.removeEventListener('abort', done);
      const s = processes.status(id);
      resolve(s.state === 'exited' ? s : undefined);
    };
    const timer = setTimeout(done, ms);
    const sub = processes.onDidExit((pid) => {
      if (pid === id) done();
    });
    signal.addEventListener('abort', done);
    // It may have ended between the first look and the subscription.
    if (processes.status(id).state === 'exited') done();
  });
}

function within<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)))]).finally(() => clearTimeout(timer));
}

export const taskRunTool = defineTool({
  name: 'task_run',
  title: 'Run a task',
  description:
    'Runs a task as exec_command does (same sandbox, approvals, terminal); read_process reads it. wait_ms: waits for its ' +
    'end, then exit_code and what its problem matchers found.',
  kind: 'exec',
  input: {
    workspace_id: z.string().min(1),
    label: z.string().min(1),
    source: z.string().optional(),
    wait_ms: z.number().int().min(0).max(TASK_LIMITS.maxWaitMs).optional(),
  },
  output: {
    ...execCommandTool.output,
    command: z.array(z.string()),
    cwd: z.string(),
    exit_code: z.number().optional(),
    problems: z.object({ items: z.array(diagnosticSchema), counts: diagnosticsReportSchema.shape.counts, truncated: z.boolean() }).optional(),
  },
  create: (deps: TaskToolDeps) => async (args, { signal, session, agent }) => {
    const port = portOf(deps);
    const ws = deps.workspaces.get(args.workspace_id);
    const entry = pick(await tasksOf(port, ws), args.label, args.source);
    const folders = deps.workspaces.list().map((w) => ({ name: w.name, root: w.root }));
    const { argv, cwd } = resolveTask(entry, { name: ws.name, root: ws.root }, folders);
    const request = { workspace_id: ws.id, command: argv, ...(cwd !== '' ? { cwd } : {}), occupancy: entry.background === true ? ('shared' as const) : ('exclusive' as const) };
    let started: { process_id: string; dispatch_status: 'confirmed' | 'unknown' };
    try {
      // exec_command's own operation: its profile check, approvals, holds, occupancy, ledger, sandbox and terminal.
      started = (await deps.runner.run(execCommandTool.name, request, signal, callerOf({ session, agent }))) as typeof started;
    } catch (err) {
      // A held task run is an exec_command hold: operation_resume starts it (without the problem matchers).
      if (ToolError.is(err, 'APPROVAL_REQUIRED')) {
        throw new ToolError('APPROVAL_REQUIRED', err.message, { ...(err.hint !== undefined ? { hint: err.hint } : {}), details: { ...err.details, task: { label: entry.label, source: entry.source } } });
      }
      throw err;
    }
    const id = started.process_id;
    const matched =
      entry.problemMatchers.length > 0
        ? port
            .matchProblems(
              entry,
              {
                read: async (cursor, waitMs) => deps.processes.read(id, cursor, 64 * 1024, waitMs),
                exitCode: () => deps.processes.status(id).exit_code,
              },
              new AbortController().signal,
            )
            .catch((err: unknown) => {
              deps.logger.error(`[tasks] the problem matchers of "${entry.label}" failed`, describeErrorWithStack(err));
              return undefined;
            })
        : undefined;
    const base = { ...started, command: argv, cwd };
    if (args.wait_ms === undefined) return base;
    const status = await ended(deps.processes, id, args.wait_ms, signal);
    if (!status) return base;
    const withExit = { ...base, ...(status.exit_code !== undefined ? { exit_code: status.exit_code } : {}) };
    if (!matched) return withExit;
    const found = await within(matched, TASK_LIMITS.matcherGraceMs);
    if (!found) return withExit;
    const report = await workspaceDiagnostics(deps, ws, found);
    return { ...withExit, problems: report };
  },
});

/** The task tools (TOOLS.md "Tasks"), in tools/list order. */
export const TASK_TOOLS = [tasksTool, taskRunTool] as const;

export function taskTools(deps: TaskToolDeps): AnyTool[] {
  return [tasksTool.create(deps), taskRunTool.create(deps)];
}
