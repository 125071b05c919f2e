import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../../../../base/errors';
import { checkPath } from '../../../../base/paths';
import type { ProcessToolDeps } from './processTools';
import { hashArguments } from '../../../../base/canonicalJson';
import { defineOperationTool } from '../../../../kernel/tool';
import { holdReason } from '../../../../kernel/approvals/holdPolicy';

const argument = z.string().refine((s) => !s.includes('\0'), { message: 'Arguments must not contain NUL bytes.' });

/** Longest path (PATH_MAX less its NUL) and path component (NAME_MAX) the OS accepts, in UTF-8 bytes. */
const MAX_PATH_BYTES = 4095;
const MAX_NAME_BYTES = 255;
const utf8 = new TextEncoder();

/** Refuses, before touching the file system, a cwd the OS would refuse with ENAMETOOLONG. */
function checkCwdLength(cwd: string, root: string): void {
  for (const part of cwd.split('/')) {
    const n = utf8.encode(part).length;
    if (n > MAX_NAME_BYTES) throw new InvalidArgumentsError(`cwd has a folder name of ${n} bytes; the system limit is ${MAX_NAME_BYTES} bytes per name (NAME_MAX).`);
  }
  const n = utf8.encode(root).length + 1 + utf8.encode(cwd).length;
  if (n > MAX_PATH_BYTES) throw new InvalidArgumentsError(`cwd makes a path of ${n} bytes; the system limit is ${MAX_PATH_BYTES} bytes (PATH_MAX).`);
}

/** The cwd through the one path check (a folder this time); refusals also name it in `details.cwd`. */
async function checkCwd(deps: Pick<ProcessToolDeps, 'fs'>, root: string, cwd: string): Promise<{ abs: string; rel: string }> {
  try {
    return await checkPath(deps.fs, root, cwd, 'folder', { allowRoot: true });
  } catch (err) {
    if (!ToolError.is(err) || err.details === undefined) throw err;
    throw new ToolError(err.code, `cwd: ${err.message}`, { hint: err.hint ?? 'Pass an existing folder relative to the workspace root, or omit cwd to run in the root.', details: { ...err.details, cwd: err.details.path } });
  }
}

export const execCommandTool = defineOperationTool({
  name: 'exec_command',
  title: 'Run a command',
  description:
    'Starts a command and returns its process_id at once. command is an argv array run without a shell (use [\'sh\', ' +
    '\'-c\', \'...\'] for one). Then read_process (wait_ms), and judge it by process_status. While it runs, patches and ' +
    'other commands get WORKSPACE_BUSY unless occupancy is \'shared\' (servers, watchers).',
  kind: 'exec',
  input: {
    workspace_id: z.string().min(1),
    command: z
      .array(argument)
      .min(1)
      .refine((argv) => argv[0] !== '', { message: 'The program name (command[0]) must not be empty.' }),
    tty: z.boolean().optional(),
    cwd: z.string().optional(),
    occupancy: z
      .enum(['exclusive', 'shared'])
      .optional(),
    work_id: z.string().optional(),
  },
  output: {
    process_id: z.string(),
    dispatch_status: z.enum(['confirmed', 'unknown']),
  },
  operation: (deps: Pick<ProcessToolDeps, 'workspaces' | 'fs' | 'processes' | 'processCapabilities' | 'exec'>) => ({
    tool: 'exec_command',
    // Held by codespace.approvals.commands: every command, or none.
    hold: {
      reason: (intent, policy, context) => holdReason({ acts: 'command', sensitive_paths: intent.sensitive_paths }, policy, context),
      description: { reviews: 'every command', nothing: 'started' },
    },
    async prepare(args) {
      const ws = deps.workspaces.get(args.workspace_id, args.work_id);
      if (!deps.processCapabilities().available) {
        throw new ToolError('EXEC_DISABLED', 'This CodeSpace server cannot run processes: no process backend could be loaded.', {
          hint: 'Call workspace_info: execution.process.available says whether commands can run here.',
        });
      }
      checkCwdLength(args.cwd ?? '', ws.root);
      const { abs, rel } = await checkCwd(deps, ws.root, args.cwd ?? '');
      const tty = args.tty ?? false;
      const occupancy = args.occupancy ?? 'exclusive';
      const shown = args.command.join(' ');
      return {
        workspace: ws,
        title: `exec_command: ${shown.length > 80 ? `${shown.slice(0, 79)}…` : shown}`,
        intent: {
          request_hash: hashArguments({ tool: 'exec_command', ...args }),
          command: { argv: [...args.command], cwd: rel, tty, occupancy, env_changes: deps.exec.envChanges() },
          sensitive_paths: [],
        },
        holdable: true,
        occupies: occupancy === 'exclusive',
        ...(args.work_id !== undefined ? { work_id: args.work_id } : {}),
        commit: () =>
          deps.processes.exec(ws, args.command, {
            cwd: abs,
            root: ws.root,
            tty,
            occupancy,
            env: deps.exec.env(),
            timeoutMs: deps.exec.timeoutMs(),
          }),
        release: () => undefined,
      };
    },
  }),
});
