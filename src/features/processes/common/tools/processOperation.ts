import type { OperationSpec } from '../../../../kernel/runner/operationRunner';
import type { ProcessToolDeps } from './processTools';

/**
 * The operation of a tool that acts on a running process (input, resize, terminate): the runner checks the
 * profile of the process's workspace; nothing is held, nothing occupies the workspace.
 */
export function processOperation<A extends { readonly process_id: string }, R>(
  deps: Pick<ProcessToolDeps, 'processes' | 'workspaces'>,
  tool: string,
  describe: (args: A, command: readonly string[]) => string,
  run: (args: A) => Promise<R>,
  check?: (args: A) => void,
): OperationSpec<A, R> {
  return {
    tool,
    workspaceOf: (args) => deps.processes.info(args.process_id).workspace_id,
    async prepare(args) {
      check?.(args);
      const info = deps.processes.info(args.process_id);
      return {
        workspace: deps.workspaces.get(info.workspace_id),
        title: `${tool}: ${describe(args, info.command)}`,
        // Never held, so nothing binds to it: not worth hashing every keystroke's data.
        intent: { request_hash: `${tool}:${args.process_id}`, sensitive_paths: [] },
        holdable: false,
        occupies: false,
        commit: () => run(args),
        release: () => undefined,
      };
    },
  };
}
