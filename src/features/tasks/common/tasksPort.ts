/**
 * The editor's tasks (tasks.json and those extensions detect, such as npm scripts), in plain types. The VS Code
 * adapter (src/features/tasks/vscode/) answers from `vscode.tasks`; plain-Node hosts have none, and the task tools
 * answer UNAVAILABLE.
 *
 * A task is described as the editor holds it, before any variable is resolved: the core
 * (src/features/tasks/common/resolveTask.ts) decides what it resolves and what it refuses, and runs the result
 * through exec_command's own operation. Paths are absolute, in the host OS's form.
 */
import type { FileDiagnostics } from '../../editor';

/** How a shell argument is quoted (vscode.ShellQuoting): absent, quoted only when it needs to be. */
export type TaskQuoting = 'escape' | 'strong' | 'weak';

export interface TaskArg {
  readonly value: string;
  readonly quoting?: TaskQuoting;
}

/** The options of a shell or process execution, unresolved. */
export interface TaskExecOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
}

export type TaskExecution =
  /** A ShellExecution: `commandLine`, or `command` with `args`, run by `executable` (with `shellArgs`). */
  | { readonly kind: 'shell'; readonly commandLine?: string; readonly command?: TaskArg; readonly args: readonly TaskArg[]; readonly executable?: string; readonly shellArgs?: readonly string[]; readonly options: TaskExecOptions }
  /** A ProcessExecution: `process` with `args`, no shell. */
  | { readonly kind: 'process'; readonly process: string; readonly args: readonly string[]; readonly options: TaskExecOptions }
  /** A CustomExecution: only the extension that made it can run it, in the extension host. */
  | { readonly kind: 'custom' }
  /** No execution (a task that only runs the tasks it depends on). */
  | { readonly kind: 'none' };

export interface TaskEntry {
  /** The task's name (tasks.json `label`, or what its extension named it, e.g. an npm script's name). */
  readonly label: string;
  /** Where it comes from: `Workspace` for tasks.json, otherwise the providing extension's source (`npm`, ...). */
  readonly source: string;
  /** `build`, `test`, ... when the task is in a group. */
  readonly group?: string;
  readonly detail?: string;
  /** Absolute path of the folder the task belongs to; undefined for a task of the whole workspace or global. */
  readonly folder: string | undefined;
  /** A background task (a watcher, a server): it runs with occupancy `shared`, the others `exclusive`. */
  readonly background?: boolean;
  /** The tasks it runs first (tasks.json `dependsOn`): task_run does not run such a task. */
  readonly dependsOn?: readonly string[];
  /** The names of its problem matchers (`$tsc`, ...). */
  readonly problemMatchers: readonly string[];
  readonly execution: TaskExecution;
}

/** Output of the process a task run started, read by cursor (the supervisor's read). */
export interface TaskOutput {
  read(cursor: number, waitMs: number): Promise<{ readonly chunk: string; readonly cursor: number; readonly eof: boolean }>;
  /** The exit code once the process ended (undefined when it ended otherwise, or runs on). */
  exitCode(): number | undefined;
}

export interface TasksPort {
  /** The tasks the editor knows (tasks.json and every task provider's), unresolved. */
  list(): Promise<TaskEntry[]>;
  /**
   * Runs the task's problem matchers over `output`: a task of the editor with the same matchers whose terminal
   * shows that output (no process of its own). Resolves, once the output ended and the editor's report went quiet
   * (or `signal` aborted), with the diagnostics of the files whose diagnostics changed meanwhile.
   */
  matchProblems(entry: TaskEntry, output: TaskOutput, signal: AbortSignal): Promise<FileDiagnostics[]>;
}
