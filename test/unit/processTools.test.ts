import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { ToolError } from '../../src/base/errors';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import type { Profile } from '../../src/kernel/workspaceSource';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import type { AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { createdTool, unitAssembleOptions } from './helpers/assembleOptions';
import type { ProcessSupervisor } from '../../src/features/processes/common/supervisor';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { processResizeTool } from '../../src/features/processes/common/tools/processResize';
import { processStatusTool } from '../../src/features/processes/common/tools/processStatus';
import { PROCESS_TOOLS } from '../../src/features/processes/common/tools/processTools';
import { readProcessTool } from '../../src/features/processes/common/tools/readProcess';
import { terminateProcessTool } from '../../src/features/processes/common/tools/terminateProcess';
import type { ToolContext, ToolContract } from '../../src/kernel/tool';
import { workspaceInfoTool } from '../../src/features/files/common/workspaceInfo';
import { writeStdinTool } from '../../src/features/processes/common/tools/writeStdin';
import { ChildProcessBackend } from '../../src/features/processes/node/childProcessBackend';
import { NodePtyBackend } from '../../src/features/processes/node/nodePtyBackend';


describe('process tools', function () {
  this.timeout(30_000);

  let tmp: string;
  let root: string;
  let outside: string;
  let source: InMemoryWorkspaceSource;
  let supervisor: ProcessSupervisor;
  let services: AssembledServices;
  let assembled: AssembledServices;
  let envSetting: Record<string, string>;

  const folders = (profile: Profile = 'exec') => [{ root, name: 'proj', profile }];

  beforeEach(async () => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-proc-')));
    root = path.join(tmp, 'proj');
    outside = path.join(tmp, 'proj-secrets');
    fs.mkdirSync(path.join(root, 'sub'), { recursive: true });
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(root, 'file.txt'), 'x');
    fs.symlinkSync(outside, path.join(root, 'escape'));
    source = new InMemoryWorkspaceSource(folders());
    const pty = new NodePtyBackend({ graceMs: 500 });
    const pipes = new ChildProcessBackend({ graceMs: 500 });
    envSetting = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' };
    assembled = await assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(source), path.join(tmp, 'storage'), {
        env: () => envSetting,
        backends: { tty: () => pty, pipes: () => pipes },
      }),
    );
    services = assembled;
    supervisor = assembled.supervisor;
  });

  afterEach(async () => {
    await assembled.shutdown();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const ctx = (): ToolContext => ({ signal: new AbortController().signal });

  /** Parses the arguments with the tool's own schema (as the MCP host does), runs it, checks the result schema. */
  async function call(tool: ToolContract, args: Record<string, unknown>, s: AssembledServices = services): Promise<Record<string, unknown>> {
    const parsed = z.object(tool.input).strict().parse(args);
    const result = (await createdTool(s, tool).handler(parsed, ctx())) as Record<string, unknown>;
    z.object(tool.output).strict().parse(result);
    return result;
  }

  async function readAll(processId: string): Promise<string> {
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 100; i++) {
      const r = await call(readProcessTool, { process_id: processId, cursor, wait_ms: 1000 });
      out += r.chunk as string;
      cursor = r.cursor as number;
      if (r.eof) return out;
    }
    throw new Error('no eof');
  }

  const rejectsWith = (p: Promise<unknown>, code: ToolError['code']) => assert.rejects(p, (e: unknown) => ToolError.is(e, code));

  it('exports the six process tools with the contract names and kinds', () => {
    assert.deepEqual(
      PROCESS_TOOLS.map((t) => [t.name, t.kind]),
      [
        ['exec_command', 'exec'],
        ['read_process', 'processRead'],
        ['process_status', 'processRead'],
        ['write_stdin', 'processControl'],
        ['process_resize', 'processControl'],
        ['terminate_process', 'processKill'],
      ],
    );
  });

  it('runs a command in a confined cwd, reads it and reports how it ended', async () => {
    const started = await call(execCommandTool, { workspace_id: 'proj', command: ['pwd'], cwd: 'sub' });
    assert.equal(started.dispatch_status, 'confirmed');
    const id = started.process_id as string;
    assert.equal(await readAll(id), path.join(root, 'sub') + '\n');
    const status = await call(processStatusTool, { process_id: id });
    assert.equal(status.state, 'exited');
    assert.equal(status.termination, 'exited');
    assert.equal(status.exit_code, 0);
    assert.deepEqual(status.command, ['pwd']);
    assert.equal(status.tty, false);
    const root0 = await call(execCommandTool, { workspace_id: 'proj', command: ['pwd'] });
    assert.equal(await readAll(root0.process_id as string), root + '\n');
  });

  it('refuses a cwd outside the workspace, through a symlink, or that is not a folder', async () => {
    await rejectsWith(call(execCommandTool, { workspace_id: 'proj', command: ['pwd'], cwd: '../proj-secrets' }), 'PATH_OUTSIDE_WORKSPACE');
    await rejectsWith(call(execCommandTool, { workspace_id: 'proj', command: ['pwd'], cwd: '/tmp' }), 'PATH_OUTSIDE_WORKSPACE');
    await rejectsWith(call(execCommandTool, { workspace_id: 'proj', command: ['pwd'], cwd: 'escape' }), 'PATH_OUTSIDE_WORKSPACE');
    await rejectsWith(call(execCommandTool, { workspace_id: 'proj', command: ['pwd'], cwd: 'file.txt' }), 'NOT_FOUND');
    await rejectsWith(call(execCommandTool, { workspace_id: 'proj', command: ['pwd'], cwd: 'missing' }), 'NOT_FOUND');
    assert.deepEqual(supervisor.list(), []);
  });

  it('checks the workspace and its profile', async () => {
    await rejectsWith(call(execCommandTool, { workspace_id: 'nope', command: ['true'] }), 'WORKSPACE_NOT_FOUND');
    source.set(folders('write'));
    await rejectsWith(call(execCommandTool, { workspace_id: 'proj', command: ['true'] }), 'EXEC_DISABLED');
    source.set(folders('exec'), false);
    await rejectsWith(call(execCommandTool, { workspace_id: 'proj', command: ['true'] }), 'EXEC_DISABLED');
    assert.deepEqual(supervisor.list(), []);
  });

  it('answers EXEC_DISABLED when no process backend can load, and starts nothing', async () => {
    const broken = await assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(source), path.join(tmp, 'storage-broken'), {
        env: () => envSetting,
        backends: {
          tty: () => {
            throw new Error('node-pty could not load');
          },
          pipes: () => {
            throw new Error('no pipes either');
          },
        },
      }),
    );
    try {
      await rejectsWith(call(execCommandTool, { workspace_id: 'proj', command: ['true'] }, broken), 'EXEC_DISABLED');
      assert.deepEqual(broken.supervisor.list(), []);
      const info = await call(workspaceInfoTool, { workspace_id: 'proj' }, broken);
      assert.equal((info.execution as { process: { available: boolean } }).process.available, false);
    } finally {
      await broken.shutdown();
    }
  });

  it('rejects malformed commands at the schema (protocol error)', () => {
    const schema = z.object(execCommandTool.input).strict();
    assert.equal(schema.safeParse({ workspace_id: 'proj', command: [] }).success, false);
    assert.equal(schema.safeParse({ workspace_id: 'proj', command: [''] }).success, false);
    assert.equal(schema.safeParse({ workspace_id: 'proj', command: ['echo', 'a\0b'] }).success, false);
    assert.equal(schema.safeParse({ workspace_id: 'proj', command: 'echo hi' }).success, false);
    assert.equal(schema.safeParse({ workspace_id: 'proj', command: ['echo'], tty_size: [1, 2] }).success, false);
    const resize = z.object(processResizeTool.input).strict();
    assert.equal(resize.safeParse({ process_id: 'p', rows: 0, cols: 80 }).success, false);
    assert.equal(resize.safeParse({ process_id: 'p', rows: 24, cols: 1001 }).success, false);
    assert.equal(resize.safeParse({ process_id: 'p', rows: 24.5, cols: 80 }).success, false);
  });

  it('keeps CODESPACE_ variables and registered secrets out of the child environment', async () => {
    envSetting = { ...envSetting, CODESPACE_TOKEN: 'abc', SAFE: 'yes', LEAK: 'secret-token-123456' };
    supervisor.addSecret('secret-token-123456');
    const { process_id } = await call(execCommandTool, { workspace_id: 'proj', command: ['env'] });
    const out = await readAll(process_id as string);
    assert.match(out, /SAFE=yes/);
    assert.doesNotMatch(out, /CODESPACE_|secret-token|LEAK/);
  });

  it('drives stdin, resize and terminate, and reports occupancy', async () => {
    const cat = await call(execCommandTool, { workspace_id: 'proj', command: ['cat'] });
    const id = cat.process_id as string;
    await rejectsWith(call(execCommandTool, { workspace_id: 'proj', command: ['true'] }), 'WORKSPACE_BUSY');
    const shared = await call(execCommandTool, { workspace_id: 'proj', command: ['sleep', '1000'], occupancy: 'shared', tty: true });
    assert.deepEqual(await call(writeStdinTool, { process_id: id, data: 'hi\n' }), { process_id: id, bytes_written: 3 });
    const r = await call(readProcessTool, { process_id: id, cursor: 0, wait_ms: 5000 });
    assert.equal(r.chunk, 'hi\n');
    await rejectsWith(call(processResizeTool, { process_id: id, rows: 30, cols: 100 }), 'NOT_A_TTY');
    assert.deepEqual(await call(processResizeTool, { process_id: shared.process_id, rows: 30, cols: 100 }), { process_id: shared.process_id, rows: 30, cols: 100 });
    const done = await call(terminateProcessTool, { process_id: id });
    assert.equal(done.state, 'exited');
    assert.equal(done.termination, 'terminated');
    await rejectsWith(call(writeStdinTool, { process_id: id, data: 'x' }), 'PROCESS_EXITED');
    const again = await call(terminateProcessTool, { process_id: id });
    assert.equal(again.termination, 'terminated');
    const next = await call(execCommandTool, { workspace_id: 'proj', command: ['true'] });
    await readAll(next.process_id as string);
    await call(terminateProcessTool, { process_id: shared.process_id });
    await rejectsWith(call(processStatusTool, { process_id: 'p_ffffffffffffffff' }), 'PROCESS_NOT_FOUND');
  });
});
