import { z } from 'zod';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import { hashArguments } from '../../../base/canonicalJson';
import { checkPath } from '../../../base/paths';
import { defineOperationTool } from '../../../kernel/tool';
import type { DebugToolDeps } from './debugTools';
import { debuggerOf } from './debugTools';
import { DEBUGGEE_NOT_SANDBOXED } from './debugPort';


export const debugStartTool = defineOperationTool({
  name: 'debug_start',
  title: 'Start debugging',
  description:
    'Starts a debug session: a launch.json configuration by name, or a JavaScript program (Node). The debuggee is not ' +
    'sandboxed, so the start is held for the developer (APPROVAL_REQUIRED, then operation_resume). Then debug_wait.',
  kind: 'debugStart',
  input: {
    workspace_id: z.string().min(1),
    configuration: z.string().min(1).optional(),
    program: z.string().min(1).optional(),
    args: z.array(z.string()).optional(),
    stop_on_entry: z.boolean().optional(),
  },
  output: {
    session_id: z.string(),
    name: z.string(),
  },
  operation: (deps: Pick<DebugToolDeps, 'workspaces' | 'fs' | 'debug' | 'sessions' | 'served'>) => ({
    tool: 'debug_start',
    // Always held, whatever codespace.approvals.commands says: approving is how the developer lets an unsandboxed
    // program start.
    hold: {
      reason: () => 'confirm',
      description: { reviews: DEBUGGEE_NOT_SANDBOXED, nothing: 'started' },
    },
    async prepare(args) {
      if (deps.served && !deps.served()) {
        throw new ToolError('TOOL_DISABLED', 'debug_start is not served: the debug group is off (codespace.tools.enabledGroups, codespace.tools.disabledGroups).', {
          hint: 'Only the developer can turn the debug group on.',
          details: { group: 'debug' },
        });
      }
      const { port, sessions } = debuggerOf(deps);
      const ws = deps.workspaces.get(args.workspace_id);
      if ((args.configuration === undefined) === (args.program === undefined)) {
        throw new InvalidArgumentsError('Pass either configuration (a launch.json name) or program (a JavaScript file), not both or neither.', { field: 'configuration' });
      }
      if (args.configuration !== undefined && (args.args !== undefined || args.stop_on_entry !== undefined)) {
        throw new InvalidArgumentsError('args and stop_on_entry go with program; a launch configuration carries its own.', { field: args.args !== undefined ? 'args' : 'stop_on_entry' });
      }
      let argv: string[];
      let start: () => Promise<{ session: string; name: string }>;
      if (args.configuration !== undefined) {
        const name = args.configuration;
        const names = port.configurations(ws.root);
        if (!names.includes(name)) {
          throw new ToolError('NOT_FOUND', `No launch configuration "${name}" in ${ws.name}; it has ${names.length === 0 ? 'none' : names.map((n) => `"${n}"`).join(', ')}.`, {
            hint: names.length === 0 ? 'Pass program (a JavaScript file) instead, or ask the developer to add one to .vscode/launch.json.' : 'Pass one of the names given.',
            details: { field: 'configuration', configurations: [...names] },
          });
        }
        argv = ['launch.json', name];
        start = () => port.start({ root: ws.root, configuration: name });
      } else {
        const { abs, rel } = await checkPath(deps.fs, ws.root, args.program as string, 'file');
        const programArgs = args.args ?? [];
        argv = ['node', rel, ...programArgs];
        start = () => port.start({ root: ws.root, program: { path: abs, args: programArgs, stopOnEntry: args.stop_on_entry ?? false } });
      }
      return {
        workspace: ws,
        title: `debug_start: ${argv.join(' ').slice(0, 80)}`,
        intent: {
          request_hash: hashArguments({ tool: 'debug_start', ...args }),
          command: { argv, cwd: '', tty: false, occupancy: 'shared', env_changes: {} },
          sensitive_paths: [],
        },
        holdable: true,
        occupies: false,
        commit: async () => {
          const started = await start();
          sessions.started(started.session, ws.id);
          return { session_id: started.session, name: started.name };
        },
        release: () => undefined,
      };
    },
  }),
});
