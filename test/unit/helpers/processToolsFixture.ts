import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { WorkspaceRegistry } from '../../../src/kernel/workspaces';
import { silentLogger } from '../../../src/base/logger';
import type { Logger } from '../../../src/base/logger';
import { InMemoryWorkspaceSource } from '../../../src/kernel/workspaceSource';
import type { AssembledServices } from '../../../src/app/assembleServices';
import { assembleServices } from '../../../src/app/assembleServices';
import { createdTool, unitAssembleOptions } from './assembleOptions';
import type { ProcessSupervisor } from '../../../src/features/processes/common/supervisor';
import { readProcessTool } from '../../../src/features/processes/common/tools/readProcess';
import type { ToolContext, ToolContract } from '../../../src/kernel/tool';
import { ChildProcessBackend } from '../../../src/features/processes/node/childProcessBackend';
import { NodePtyBackend } from '../../../src/features/processes/node/nodePtyBackend';
import type { IsolationSettings } from '../../../src/features/processes/node/sandbox/commandSandbox';

/** A workspace `proj` (exec profile) in a fresh temporary folder, with the real backends behind the process tools. */
export interface ProcessToolsFixture {
  /** Real path of the temporary folder holding `proj` (and whatever a test puts beside it). */
  readonly tmp: string;
  /** Real path of the workspace root. */
  readonly root: string;
  readonly supervisor: ProcessSupervisor;
  readonly services: AssembledServices;
  /** The child environment setting (mutable). */
  env: Record<string, string>;
  /** Parses the arguments with the tool's schema (as the MCP host does), runs it, checks the result schema. */
  call(tool: ToolContract, args: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** read_process from cursor 0 until eof. */
  readAll(processId: string): Promise<string>;
  dispose(): Promise<void>;
}

export interface ProcessToolsFixtureOptions {
  /** Run commands in the command sandbox with these settings (default: no sandbox). */
  readonly isolation?: IsolationSettings;
  /** Where the services log (default: nowhere). */
  readonly logger?: Logger;
}

export async function processToolsFixture(options: ProcessToolsFixtureOptions = {}): Promise<ProcessToolsFixture> {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-proc-')));
  const root = path.join(tmp, 'proj');
  fs.mkdirSync(root);
  const source = new InMemoryWorkspaceSource([{ root, name: 'proj', profile: 'exec' }]);
  const pty = new NodePtyBackend({ graceMs: 500 });
  const pipes = new ChildProcessBackend({ graceMs: 500 });
  let assembled: AssembledServices | undefined;
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
  assembled = await assembleServices(
    unitAssembleOptions(new WorkspaceRegistry(source), path.join(tmp, 'storage'), {
      logger: options.logger ?? silentLogger,
      env: () => fixture.env,
      ...(options.isolation
        ? {
            isolation: options.isolation,
            sandboxedBackends: (sandbox) => {
              const spty = new NodePtyBackend({ graceMs: 500, sandbox });
              const spipes = new ChildProcessBackend({ graceMs: 500, sandbox });
              return { tty: () => spty, pipes: () => spipes };
            },
          }
        : { backends: { tty: () => pty, pipes: () => pipes } }),
    }),
  );
  const supervisor = assembled.supervisor;
  const fixture: ProcessToolsFixture = {
    tmp,
    root,
    supervisor,
    env,
    services: assembled,
    async call(tool, args) {
      const parsed = z.object(tool.input).strict().parse(args);
      const ctx: ToolContext = { signal: new AbortController().signal };
      const result = (await createdTool(fixture.services, tool).handler(parsed, ctx)) as Record<string, unknown>;
      z.object(tool.output).strict().parse(result);
      return result;
    },
    async readAll(processId) {
      let cursor = 0;
      let out = '';
      for (let i = 0; i < 200; i++) {
        const r = await fixture.call(readProcessTool, { process_id: processId, cursor, wait_ms: 1000 });
        out += r.chunk as string;
        cursor = r.cursor as number;
        if (r.eof) return out;
      }
      throw new Error(`no eof; output so far: ${JSON.stringify(out.slice(-300))}`);
    },
    async dispose() {
      await assembled?.shutdown();
      assembled = undefined;
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
  return fixture;
}
