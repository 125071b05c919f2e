import { asError, describeError } from '../../../base/describeError';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { Workspace } from '../../../kernel/workspaces';
import type { Logger } from '../../../base/logger';
import { SpawnError } from './processBackend';
import type { ProcessRecord } from './processRecord';
import type { Occupant } from './processTypes';
import type { SupervisorSettings } from './supervisorSettings';

/** The errors the process service answers with, each saying what to do next. */

export function notFoundError(processId: string, settings: SupervisorSettings): ToolError {
  const minutes = Math.round(settings.exitedTtlMs / 60_000);
  return new ToolError('PROCESS_NOT_FOUND', `No process with id ${JSON.stringify(processId)}.`, {
    hint: `Use the process_id returned by exec_command. Exited processes are forgotten after ${minutes} minute(s) or once ${settings.maxExited} newer ones have exited, and one that ended before a window reload is forgotten (process_status still answers from the command log). Do not start a duplicate command without checking the workspace first.`,
    details: { process_id: processId },
  });
}

/** Why `command` may not start in `workspace` now, or nothing. */
export function execRefusal(workspace: Workspace, command: readonly string[], shuttingDown: boolean): Error | undefined {
  if (shuttingDown) {
    return new ToolError('EXEC_DISABLED', 'CodeSpace is shutting down: no process may start.', {
      hint: 'Retry once VS Code has reloaded the window.',
    });
  }
  if (!workspace.canExec) {
    return new ToolError('EXEC_DISABLED', `Workspace ${workspace.id} does not allow commands (profile ${workspace.profile}${workspace.trusted ? '' : ', Restricted Mode'}).`, {
      hint: workspace.trusted ? 'Ask the developer to set codespace.profile to "exec".' : 'Ask the developer to trust the workspace.',
      details: { workspace_id: workspace.id, profile: workspace.profile, trusted: workspace.trusted },
    });
  }
  if (command.length === 0 || command.some((a) => typeof a !== 'string' || a.includes('\0')) || command[0] === '') {
    return new RangeError('command must be a non-empty array of strings without NUL bytes, with a non-empty program name.');
  }
  return undefined;
}

export function exitedError(rec: ProcessRecord, what: string): ToolError {
  return new ToolError('PROCESS_EXITED', `Process ${rec.id} has exited: cannot ${what}.`, {
    hint: 'Read its remaining output with read_process and its end with process_status.',
    details: { process_id: rec.id, termination: rec.termination ?? 'unknown' },
  });
}

export function busyError(workspaceId: string, occupant: Occupant): ToolError {
  return new ToolError('WORKSPACE_BUSY', `Workspace ${workspaceId} is occupied by process ${occupant.process_id} (${JSON.stringify(occupant.command)}).`, {
    hint: 'Wait for it to finish (read_process with wait_ms, then process_status) or stop it with terminate_process; avoid a tight retry loop. A long-lived server or watcher can be started with occupancy "shared".',
    details: { workspace_id: workspaceId, occupant: { process_id: occupant.process_id, command: [...occupant.command] } },
  });
}

/** What an agent is told when a backend could not be loaded or could not start `command`. */
export function spawnFailure(logger: Logger, err: unknown, command: readonly string[], tty: boolean, cwd?: string): ToolError | InvalidArgumentsError {
  if (ToolError.is(err) || err instanceof InvalidArgumentsError) return err;
  const program = command[0] ?? '';
  if (SpawnError.is(err)) {
    switch (err.reason) {
      case 'not_found':
        return new ToolError('NOT_FOUND', `Command not found: ${JSON.stringify(program)}.`, {
          hint: 'The command runs without a shell: give a program on PATH or a path relative to cwd. For shell syntax, run ["sh", "-c", "..."] explicitly.',
          details: { command: [...command] },
        });
      case 'not_executable':
        return new ToolError('NOT_FOUND', `${JSON.stringify(program)} exists but is not an executable program.`, {
          hint: 'Run it through its interpreter (for example ["sh", "script.sh"] or ["node", "script.js"]), or make it executable.',
          details: { command: [...command] },
        });
      case 'too_large':
        return new InvalidArgumentsError(err.message);
      case 'outside':
        return new ToolError('PATH_OUTSIDE_WORKSPACE', 'The working directory lies outside the workspace (it was replaced by a symbolic link to somewhere else).', {
          hint: 'Pass cwd as a folder inside the workspace.',
          details: cwd === undefined ? {} : { cwd },
        });
      case 'bad_cwd':
        return new ToolError('NOT_FOUND', 'The working directory does not exist or is not a folder.', {
          hint: 'Pass cwd as an existing folder relative to the workspace root, or omit it for the root.',
          details: cwd === undefined ? {} : { cwd },
        });
      case 'unavailable':
        return new ToolError('EXEC_DISABLED', tty ? 'Terminal (PTY) processes are unavailable in this VS Code: the terminal backend could not be loaded.' : 'Processes are unavailable in this VS Code.', {
          hint: tty ? 'Run the command without "tty": true.' : 'Ask the developer to check the CodeSpace log.',
          details: { tty },
        });
      case 'isolation':
        return new ToolError('EXEC_DISABLED', err.message, {
          hint: 'Ask the developer: the command sandbox (codespace.exec.isolation) cannot run commands here; the CodeSpace log and workspace_info say why.',
          details: { command: [...command], isolation: true },
        });
      case 'failed':
        break;
    }
  }
  logger.error(asError(err));
  return new ToolError('INTERNAL', `The process could not be started: ${describeError(err)}`, {
    hint: 'Check the command and arguments; the CodeSpace log has details.',
    details: { command: [...command] },
  });
}
