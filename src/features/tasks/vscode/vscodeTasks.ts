import * as vscode from 'vscode';
import type { FileDiagnostics } from '../../editor';
import type { TaskArg, TaskEntry, TaskExecution, TaskOutput, TaskQuoting, TasksPort } from '../common/tasksPort';

/**
 * TasksPort on `vscode.tasks`. Listing converts the editor's tasks to plain entries, unresolved. Problem matching runs
 * a task of our own (type `codespace`, contributed in package.json) with the original task's problem matchers and a
 * CustomExecution whose pseudoterminal shows the output of the process exec_command started: VS Code applies a
 * task's matchers to whatever its terminal shows, and reports what they find as diagnostics (owner and source of the
 * matcher). That terminal starts no process; the agent's own terminal is the one the developer watches.
 */

/** After our task ended, the editor's report counts as complete once no diagnostics changed for this long. */
const QUIET_MS = 500;
/** The longest wait for that quiet after the task ended. */
const MAX_SETTLE_MS = 5000;
/** How long the editor has to open our task's terminal, and to report its end once the output ended. */
const OPEN_GRACE_MS = 30_000;
/** One read of the process's output waits at most this long for more. */
const READ_WAIT_MS = 5000;

const QUOTING: Record<number, TaskQuoting> = {
  [vscode.ShellQuoting.Escape]: 'escape',
  [vscode.ShellQuoting.Strong]: 'strong',
  [vscode.ShellQuoting.Weak]: 'weak',
};

function argOf(a: string | vscode.ShellQuotedString): TaskArg {
  if (typeof a === 'string') return { value: a };
  const quoting = QUOTING[a.quoting];
  return { value: a.value, ...(quoting !== undefined ? { quoting } : {}) };
}

function optionsOf(o: { cwd?: string; env?: { [key: string]: string } } | undefined): { cwd?: string; env?: Record<string, string> } {
  return { ...(o?.cwd !== undefined ? { cwd: o.cwd } : {}), ...(o?.env !== undefined ? { env: { ...o.env } } : {}) };
}

function executionOf(x: vscode.Task['execution']): TaskExecution {
  if (x === undefined) return { kind: 'none' };
  if (x instanceof vscode.ShellExecution) {
    const o = x.options;
    return {
      kind: 'shell',
      ...(x.commandLine !== undefined ? { commandLine: x.commandLine } : {}),
      ...(x.command !== undefined ? { command: argOf(x.command) } : {}),
      args: (x.args ?? []).map(argOf),
      ...(o?.executable !== undefined ? { executable: o.executable } : {}),
      ...(o?.shellArgs !== undefined ? { shellArgs: [...o.shellArgs] } : {}),
      options: optionsOf(o),
    };
  }
  if (x instanceof vscode.ProcessExecution) return { kind: 'process', process: x.process, args: [...x.args], options: optionsOf(x.options) };
  // A CustomExecution, or an execution of a kind this adapter does not know: only its extension can run it.
  return { kind: 'custom' };
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v : [v]).filter((m): m is string => typeof m === 'string' && m !== '');

/**
 * What the editor hands extensions of a tasks.json task without: its named problem matchers (resolved to objects,
 * which `Task.problemMatchers` leaves out, as it holds names only) and its `dependsOn`. Read from the folder's `tasks`
 * configuration by label. Inline matchers (objects) have no name a task of ours could use: left out.
 */
function configured(scope: vscode.WorkspaceFolder, label: string): { matchers: string[]; dependsOn: string[] } {
  const tasks = vscode.workspace.getConfiguration('tasks', scope.uri).get<unknown[]>('tasks') ?? [];
  for (const c of tasks) {
    if (typeof c !== 'object' || c === null) continue;
    const { label: l, taskName, problemMatcher, dependsOn } = c as { label?: unknown; taskName?: unknown; problemMatcher?: unknown; dependsOn?: unknown };
    if ((l ?? taskName) !== label) continue;
    // dependsOn names a task by its label, or by an object naming it (`{ type, script }` of a detected task).
    const deps = (Array.isArray(dependsOn) ? dependsOn : dependsOn === undefined ? [] : [dependsOn]).map((d) => (typeof d === 'string' ? d : JSON.stringify(d)));
    return { matchers: strings(problemMatcher), dependsOn: deps };
  }
  return { matchers: [], dependsOn: [] };
}

function entryOf(t: vscode.Task): TaskEntry {
  const scope = t.scope;
  const folder = typeof scope === 'object' && scope !== undefined && scope.uri.scheme === 'file' ? scope.uri.fsPath : undefined;
  const own = t.source === 'Workspace' && typeof scope === 'object' ? configured(scope, t.name) : undefined;
  const matchers = t.problemMatchers.length === 0 && own ? own.matchers : t.problemMatchers;
  return {
    label: t.name,
    source: t.source,
    ...(t.group !== undefined ? { group: t.group.id } : {}),
    ...(t.detail !== undefined ? { detail: t.detail } : {}),
    folder,
    ...(t.isBackground ? { background: true } : {}),
    ...(own && own.dependsOn.length > 0 ? { dependsOn: own.dependsOn } : {}),
    problemMatchers: [...matchers],
    execution: executionOf(t.execution),
  };
}

let runs = 0;

export class VsCodeTasks implements TasksPort {
  constructor(
    /** The editor's diagnostics of these files (the editor module's language features). */
    private readonly diagnostics: (paths: readonly string[]) => Promise<FileDiagnostics[]>,
  ) {}

  async list(): Promise<TaskEntry[]> {
    return (await vscode.tasks.fetchTasks()).filter((t) => t.definition.type !== 'codespace').map(entryOf);
  }

  async matchProblems(entry: TaskEntry, output: TaskOutput, signal: AbortSignal): Promise<FileDiagnostics[]> {
    const run = `${Date.now().toString(36)}-${++runs}`;
    const changed = new Set<string>();
    let lastChange = Date.now();
    /** When our task ended, and whether a report came after that. */
    let endedAt: number | undefined;
    let reportedAfterEnd = false;
    const subs: vscode.Disposable[] = [];
    subs.push(
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const u of e.uris) if (u.scheme === 'file') changed.add(u.fsPath);
        lastChange = Date.now();
        if (endedAt !== undefined) reportedAfterEnd = true;
      }),
    );
    const write = new vscode.EventEmitter<string>();
    const close = new vscode.EventEmitter<number>();
    subs.push(write, close);
    let stopped = false;
    let opened = false;
    /** Settled once the output ended and the pseudoterminal closed. */
    let pumped: Promise<void> | undefined;
    const pump = async (): Promise<void> => {
      let cursor = 0;
      try {
        while (!stopped && !signal.aborted) {
          const r = await output.read(cursor, READ_WAIT_MS);
          if (r.chunk !== '') write.fire(r.chunk.replace(/\r?\n/g, '\r\n'));
          cursor = r.cursor;
          if (r.eof) break;
        }
      } catch {
        // The process is gone (its record too): the terminal ends with what it showed.
      } finally {
        close.fire(output.exitCode() ?? 0);
      }
    };
    const pty: vscode.Pseudoterminal = {
      onDidWrite: write.event,
      onDidClose: close.event,
      open: () => {
        opened = true;
        pumped = pump();
      },
      close: () => {
        stopped = true;
      },
    };
    const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file' && f.uri.fsPath === entry.folder);
    const task = new vscode.Task({ type: 'codespace', label: entry.label, run }, folder ?? vscode.TaskScope.Workspace, entry.label, 'CodeSpace', new vscode.CustomExecution(async () => pty), [...entry.problemMatchers]);
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Never, focus: false, echo: false, panel: vscode.TaskPanelKind.Shared, showReuseMessage: false };
    try {
      const ended = new Promise<void>((resolve) => {
        subs.push(
          vscode.tasks.onDidEndTask((e) => {
            if (e.execution.task.definition.run === run) resolve();
          }),
        );
        signal.addEventListener('abort', () => resolve());
      });
      await vscode.tasks.executeTask(task);
      // Never waits forever on the editor: a terminal it did not open, or an end it did not report, ends the wait
      // (the output's end, then OPEN_GRACE_MS).
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<void>((resolve) => {
        timer = setTimeout(function check() {
          if (!opened) resolve();
          else void pumped?.then(() => (timer = setTimeout(resolve, OPEN_GRACE_MS)));
        }, OPEN_GRACE_MS);
      });
      await Promise.race([ended, stuck]).finally(() => clearTimeout(timer));
      // The matchers' report may come after the end (late on a loaded machine): wait for a report after the end and
      // then QUIET_MS without another, at most MAX_SETTLE_MS (a run whose matchers found nothing may report nothing).
      endedAt = Date.now();
      const end = endedAt + MAX_SETTLE_MS;
      const settled = (): boolean => reportedAfterEnd && Date.now() - lastChange >= QUIET_MS;
      while (!signal.aborted && Date.now() < end && !settled()) await new Promise((r) => setTimeout(r, 100));
      if (changed.size === 0) return [];
      return (await this.diagnostics([...changed])).filter((f) => f.diagnostics.length > 0);
    } finally {
      stopped = true;
      for (const s of subs) s.dispose();
    }
  }
}
