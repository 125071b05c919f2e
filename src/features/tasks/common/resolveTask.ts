import * as path from 'node:path';
import { ToolError } from '../../../base/errors';
import { isInside } from '../../../base/paths';
import type { TaskArg, TaskEntry } from './tasksPort';

/**
 * What a task becomes before exec_command runs it: an argv and a workspace-relative cwd. Only variables whose value
 * is known here without the editor's UI or another extension are resolved (TOOLS.md "Tasks"); any other refuses
 * the run, naming them. The cwd is only mapped to the workspace-relative form exec_command takes: exec_command's
 * own path check then confines it (real path, symbolic links) as it does every cwd.
 */

/** A served folder, for `${workspaceFolder}` and `${workspaceFolder:name}`. */
export interface TaskFolder {
  readonly name: string;
  readonly root: string;
}

export interface ResolvedTask {
  readonly argv: string[];
  /** Workspace-relative, `/`-separated; "" for the root. */
  readonly cwd: string;
}

/** The shell of a ShellExecution that names none (VS Code would take the user's default profile). */
export const DEFAULT_SHELL = 'sh';

/** Variables resolved from the folder alone; everything else is refused. */
const VARIABLE = /\$\{([^}]*)\}/g;

function unresolved(label: string, names: readonly string[]): ToolError {
  return new ToolError('UNAVAILABLE', `Task "${label}" uses ${names.map((n) => `\${${n}}`).join(', ')}, which CodeSpace does not resolve (only \${workspaceFolder}, \${workspaceFolder:name}, \${workspaceFolderBasename}, \${workspaceRoot}, \${pathSeparator} and \${/}).`, {
    hint: 'Run the command with exec_command, with the values written out.',
    details: { reason: 'unresolved_variable', variables: names.slice(0, 20) },
  });
}

class Resolver {
  readonly missing = new Set<string>();

  constructor(
    private readonly folder: TaskFolder,
    private readonly folders: readonly TaskFolder[],
  ) {}

  text(value: string): string {
    return value.replace(VARIABLE, (whole, name: string) => {
      const v = this.value(name);
      if (v === undefined) {
        this.missing.add(name);
        return whole;
      }
      return v;
    });
  }

  private value(name: string): string | undefined {
    if (name === 'workspaceFolder' || name === 'workspaceRoot') return this.folder.root;
    if (name === 'workspaceFolderBasename') return path.basename(this.folder.root);
    if (name === 'pathSeparator' || name === '/') return path.sep;
    const named = /^workspaceFolder:(.+)$/.exec(name);
    if (named) return this.folders.find((f) => f.name === named[1])?.root;
    return undefined;
  }
}

/** One shell argument as VS Code quotes it for a POSIX shell: without a quoting, quoted only when it holds whitespace. */
export function quoteShellArg(arg: TaskArg): string {
  const v = arg.value;
  const strong = (): string => `'${v.replace(/'/g, `'\\''`)}'`;
  switch (arg.quoting) {
    case 'strong':
      return strong();
    case 'weak':
      return `"${v.replace(/(["\\$`])/g, '\\$1')}"`;
    case 'escape':
      return v.replace(/([^A-Za-z0-9_\-.,:/@%+=])/g, '\\$1');
    default:
      return v === '' || /\s/.test(v) ? strong() : v;
  }
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The argv and cwd of a task of `folder`: a ShellExecution runs as [shell, ...shellArgs, command line], a
 * ProcessExecution as [process, ...args]; `options.env` becomes `env NAME=value ...` before it (exec_command takes no
 * environment of its own, and so the variables are on the command the developer approves). Throws UNAVAILABLE for a
 * task CodeSpace cannot run itself, PATH_OUTSIDE_WORKSPACE for a cwd outside the folder.
 */
export function resolveTask(entry: TaskEntry, folder: TaskFolder, folders: readonly TaskFolder[]): ResolvedTask {
  const x = entry.execution;
  if (x.kind === 'custom') {
    throw new ToolError('UNAVAILABLE', `Task "${entry.label}" (${entry.source}) is run by its extension inside the editor (CustomExecution), outside the command sandbox and exec_command's approvals; CodeSpace does not run it.`, {
      hint: 'Ask the developer to run it (Terminal > Run Task), or run the underlying command with exec_command.',
      details: { reason: 'custom_execution', label: entry.label, source: entry.source },
    });
  }
  if (x.kind === 'none') {
    throw new ToolError('UNAVAILABLE', `Task "${entry.label}" (${entry.source}) has no command of its own (it only runs the tasks it depends on).`, {
      hint: 'Run the tasks it depends on one by one.',
      details: { reason: 'no_execution', label: entry.label, source: entry.source },
    });
  }
  if (entry.dependsOn !== undefined && entry.dependsOn.length > 0) {
    throw new ToolError('UNAVAILABLE', `Task "${entry.label}" first runs ${entry.dependsOn.map((d) => JSON.stringify(d)).join(', ')} (dependsOn); task_run runs one task's own command, so it does not run this one.`, {
      hint: 'Run the tasks it depends on with task_run, in order, then its own command with exec_command.',
      details: { reason: 'depends_on', label: entry.label, depends_on: entry.dependsOn.slice(0, 20) },
    });
  }
  const r = new Resolver(folder, folders);
  let argv: string[];
  if (x.kind === 'shell') {
    const line = x.commandLine !== undefined ? r.text(x.commandLine) : x.command === undefined ? '' : x.args.length === 0 ? r.text(x.command.value) : [x.command, ...x.args].map((a) => quoteShellArg({ ...a, value: r.text(a.value) })).join(' ');
    if (line.trim() === '') throw new ToolError('UNAVAILABLE', `Task "${entry.label}" has an empty command line.`, { details: { reason: 'no_execution', label: entry.label, source: entry.source } });
    argv = [r.text(x.executable ?? DEFAULT_SHELL), ...(x.shellArgs ?? ['-c']).map((a) => r.text(a)), line];
  } else {
    argv = [r.text(x.process), ...x.args.map((a) => r.text(a))];
  }
  const env = Object.entries(x.options.env ?? {}).map(([k, v]) => {
    if (!ENV_NAME.test(k)) throw new ToolError('UNAVAILABLE', `Task "${entry.label}" sets the environment variable ${JSON.stringify(k)}, which is not a portable name.`, { details: { reason: 'env_name', label: entry.label } });
    return `${k}=${r.text(v)}`;
  });
  const cwdText = x.options.cwd === undefined ? undefined : r.text(x.options.cwd);
  if (r.missing.size > 0) throw unresolved(entry.label, [...r.missing]);
  if (argv[0] === '') throw new ToolError('UNAVAILABLE', `Task "${entry.label}" names no program.`, { details: { reason: 'no_execution', label: entry.label, source: entry.source } });
  const abs = cwdText === undefined ? folder.root : path.resolve(folder.root, cwdText);
  if (!isInside(folder.root, abs)) {
    throw new ToolError('PATH_OUTSIDE_WORKSPACE', `Task "${entry.label}" runs in ${JSON.stringify(cwdText)}, which is not inside workspace folder ${folder.name}; exec_command runs commands only inside it.`, {
      hint: 'Run the command with exec_command from a folder of the workspace.',
      details: { cwd: cwdText, label: entry.label },
    });
  }
  const cwd = path.relative(folder.root, abs).split(path.sep).join('/');
  return { argv: env.length > 0 ? ['env', ...env, ...argv] : argv, cwd };
}
