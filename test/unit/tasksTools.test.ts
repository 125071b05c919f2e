/**
 * VS Code tasks (src/features/tasks) through a real MCP client on the assembled services, with a stand-in for the
 * editor's tasks: `tasks` lists a folder's tasks, `task_run` starts one through exec_command's own operation (so the
 * approval settings hold it exactly as they hold exec_command, and read_process reads it), waits for its end and
 * reports what its problem matchers found as the diagnostics tool reports them; bad inputs are refused.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_APPROVAL_POLICY } from '../../src/kernel/approvals/approvalService';
import type { ApprovalPolicy } from '../../src/kernel/approvals/approvalService';
import { assembleServices } from '../../src/app/assembleServices';
import type { AssembledServices } from '../../src/app/assembleServices';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import type { FolderInfo } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import type { FileDiagnostics } from '../../src/features/editor';
import type { TaskEntry, TaskOutput, TasksPort } from '../../src/features/tasks';
import { unitAssembleOptions } from './helpers/assembleOptions';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

/** The editor's tasks, standing in: a matcher that reads `file(line,col): error TSn: text` lines of the output. */
class FakeTasks implements TasksPort {
  entries: TaskEntry[] = [];
  matched: string[] = [];
  fail = false;
  async list(): Promise<TaskEntry[]> {
    return this.entries;
  }
  async matchProblems(entry: TaskEntry, output: TaskOutput): Promise<FileDiagnostics[]> {
    if (this.fail) throw new Error('the editor refused the task');
    let cursor = 0;
    let text = '';
    for (;;) {
      const r = await output.read(cursor, 1000);
      text += r.chunk;
      cursor = r.cursor;
      if (r.eof) break;
    }
    this.matched.push(entry.label);
    const root = entry.folder as string;
    const found: FileDiagnostics[] = [];
    for (const m of text.matchAll(/^(\S+)\((\d+),(\d+)\): error TS(\d+): (.*)$/gm)) {
      const [, file, line, col, code, message] = m as unknown as string[];
      found.push({ path: path.resolve(root, file as string), diagnostics: [{ range: { start: { line: Number(line), character: Number(col) }, end: { line: Number(line), character: Number(col) } }, severity: 'error', message: message as string, source: 'ts', code: code as string }] });
    }
    return found;
  }
}

describe('VS Code tasks: the tasks and task_run tools', function () {
  this.timeout(30_000);
  let base: string;
  let root: string;
  let storage: string;
  let fake: FakeTasks;
  let policy: ApprovalPolicy;
  let assembled: AssembledServices | undefined;
  let h: Harness | undefined;

  const shellTask = (label: string, commandLine: string, extra: Partial<TaskEntry> = {}): TaskEntry => ({ label, source: 'Workspace', folder: root, problemMatchers: [], execution: { kind: 'shell', commandLine, args: [], options: {} }, ...extra });

  async function open(options: { tasks?: TasksPort | undefined; profile?: FolderInfo['profile']; enabled?: string[] } = {}): Promise<Harness> {
    const folders: FolderInfo[] = [{ root, name: 'proj', profile: options.profile ?? 'exec' }];
    const source = new InMemoryWorkspaceSource(folders);
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-tasks-storage-'));
    const tasks = 'tasks' in options ? options.tasks : fake;
    // The tasks group is served only when the developer turns it on (codespace.tools.enabledGroups).
    const enabled = options.enabled ?? ['tasks'];
    assembled = await assembleServices(unitAssembleOptions(new WorkspaceRegistry(source), storage, { approvalPolicy: () => policy, enabledToolGroups: () => enabled, ...(tasks ? { tasks } : {}) }));
    h = await connectHarness(folders, { assembled, source });
    return h;
  }

  async function readAll(processId: string): Promise<string> {
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 100; i++) {
      const r = ok<{ chunk: string; cursor: number; eof: boolean }>(await (h as Harness).call('read_process', { process_id: processId, cursor, wait_ms: 1000 }));
      out += r.chunk;
      cursor = r.cursor;
      if (r.eof) return out;
    }
    throw new Error('the process did not end');
  }

  beforeEach(async () => {
    base = await makeTree({ 'proj/src/a.ts': 'let a: number = "x";\n', 'proj/sub/.keep': '' }, 'codespace-tasks-');
    root = path.join(base, 'proj');
    fake = new FakeTasks();
    policy = DEFAULT_APPROVAL_POLICY;
  });
  afterEach(async () => {
    await h?.close();
    h = undefined;
    await assembled?.shutdown();
    assembled = undefined;
    await removeTree(storage);
    await removeTree(base);
  });

  it("lists the folder's tasks with their source, group, matchers and whether task_run can run them", async () => {
    fake.entries = [
      shellTask('build', 'tsc -p .', { group: 'build', problemMatchers: ['$tsc'], detail: 'tsc -p .' }),
      { label: 'test', source: 'npm', folder: root, problemMatchers: [], execution: { kind: 'shell', command: { value: 'npm' }, args: [{ value: 'run' }, { value: 'test' }], options: {} }, group: 'test' },
      { label: 'watch', source: 'ext', folder: root, problemMatchers: [], execution: { kind: 'custom' } },
      shellTask('serve', 'node app.js', { dependsOn: ['build'] }),
      shellTask('elsewhere', 'true', { folder: path.join(base, 'other') }),
      shellTask('global', 'true', { folder: undefined }),
    ];
    await open();
    const r = ok<{ tasks: Record<string, unknown>[]; truncated: boolean }>(await (h as Harness).call('tasks', { workspace_id: 'proj' }));
    assert.deepEqual(r, {
      tasks: [
        { label: 'build', source: 'Workspace', group: 'build', runnable: true, problem_matchers: ['$tsc'], detail: 'tsc -p .' },
        { label: 'test', source: 'npm', group: 'test', runnable: true },
        { label: 'watch', source: 'ext', runnable: false },
        { label: 'serve', source: 'Workspace', runnable: false },
      ],
      truncated: false,
    });
  });

  it('the tools are served only when the tasks group is turned on', async () => {
    fake.entries = [shellTask('build', 'true')];
    await open({ enabled: [] });
    const names = (await (h as Harness).client.listTools()).tools.map((t) => t.name);
    assert.ok(!names.includes('tasks') && !names.includes('task_run'), names.join(', '));
    const off = toolError(await (h as Harness).call('task_run', { workspace_id: 'proj', label: 'build' }));
    assert.equal(off.code, 'TOOL_DISABLED');
    assert.equal(off.details?.group, 'tasks');
    assert.deepEqual((assembled as AssembledServices).supervisor.list(), [], 'nothing started');
  });

  it('without the editor both tools answer UNAVAILABLE', async () => {
    await open({ tasks: undefined });
    assert.equal(toolError(await (h as Harness).call('tasks', { workspace_id: 'proj' })).code, 'UNAVAILABLE');
    assert.equal(toolError(await (h as Harness).call('task_run', { workspace_id: 'proj', label: 'x' })).code, 'UNAVAILABLE');
  });

  it('runs a task as an exec_command process: read_process reads it, wait_ms gives its exit code and the problems its matchers found', async () => {
    const out = path.join(base, 'elsewhere.ts');
    fake.entries = [
      shellTask('check', `printf 'src/a.ts(1,5): error TS2322: Type string is not assignable.\\n${out}(2,1): error TS1: outside\\n'; exit 2`, { problemMatchers: ['$tsc'] }),
      { label: 'node', source: 'Workspace', folder: root, problemMatchers: [], execution: { kind: 'process', process: 'sh', args: ['-c', 'pwd; echo "$GREETING"'], options: { cwd: '${workspaceFolder}/sub', env: { GREETING: 'hi' } } } },
    ];
    await open();
    const run = ok<{ process_id: string; command: string[]; cwd: string; exit_code?: number; problems?: { items: Record<string, unknown>[]; counts: Record<string, number>; truncated: boolean } }>(
      await (h as Harness).call('task_run', { workspace_id: 'proj', label: 'check', wait_ms: 20_000 }),
    );
    assert.equal(run.command[0], 'sh');
    assert.equal(run.cwd, '');
    assert.equal(run.exit_code, 2);
    assert.deepEqual(run.problems, {
      items: [{ path: 'src/a.ts', range: { start: { line: 1, character: 5 }, end: { line: 1, character: 5 } }, severity: 'error', message: 'Type string is not assignable.', source: 'ts', code: '2322' }],
      counts: { error: 1, warning: 0, information: 0, hint: 0 },
      truncated: false,
    }, 'only files inside the workspace, by workspace-relative path');
    assert.match(await readAll(run.process_id), /error TS2322/);
    const status = ok<{ command: string[] }>(await (h as Harness).call('process_status', { process_id: run.process_id }));
    assert.deepEqual(status.command, run.command, 'the process is the one exec_command started');
    assert.equal((assembled as AssembledServices).supervisor.status(run.process_id).occupancy, 'exclusive', 'a task that is not a background task occupies the workspace');

    // Without wait_ms: the process id at once, no exit code; the cwd and the environment of the task.
    const second = ok<{ process_id: string; command: string[]; cwd: string; exit_code?: number }>(await (h as Harness).call('task_run', { workspace_id: 'proj', label: 'node' }));
    assert.equal(second.exit_code, undefined);
    assert.deepEqual(second.command, ['env', 'GREETING=hi', 'sh', '-c', 'pwd; echo "$GREETING"']);
    assert.equal(second.cwd, 'sub');
    assert.equal(await readAll(second.process_id), `${path.join(root, 'sub')}\nhi\n`);
  });

  it('problem matchers that fail leave the run alone: its exit code, no problems', async () => {
    fake.fail = true;
    fake.entries = [shellTask('check', 'echo "a.ts(1,1): error TS1: x"; exit 1', { problemMatchers: ['$tsc'] })];
    await open();
    const run = ok<{ exit_code?: number; problems?: unknown }>(await (h as Harness).call('task_run', { workspace_id: 'proj', label: 'check', wait_ms: 20_000 }));
    assert.equal(run.exit_code, 1);
    assert.equal(run.problems, undefined);
  });

  it('with commands: confirm a task run is held exactly as exec_command is: nothing starts until operation_resume after a grant', async () => {
    policy = { ...DEFAULT_APPROVAL_POLICY, commands: 'confirm' };
    fake.entries = [shellTask('write', 'echo ran > ran.txt', { background: true })];
    await open();
    const e = toolError(await (h as Harness).call('task_run', { workspace_id: 'proj', label: 'write' }));
    assert.equal(e.code, 'APPROVAL_REQUIRED');
    assert.deepEqual(e.details?.task, { label: 'write', source: 'Workspace' });
    const id = e.details?.approval_id as string;
    const hold = (assembled as AssembledServices).approvals.get(id);
    assert.equal(hold?.tool, 'exec_command', 'the hold is an exec_command hold');
    assert.deepEqual(hold?.command?.argv, ['sh', '-c', 'echo ran > ran.txt']);
    assert.equal(hold?.command?.occupancy, 'shared', 'a background task shares the workspace');
    assert.deepEqual((assembled as AssembledServices).supervisor.list(), []);
    // exec_command with the same argv is held the same way.
    const direct = toolError(await (h as Harness).call('exec_command', { workspace_id: 'proj', command: ['sh', '-c', 'echo ran > ran.txt'], occupancy: 'shared' }));
    assert.equal(direct.code, 'APPROVAL_REQUIRED');
    assert.equal(direct.details?.reason, e.details?.reason);
    await (assembled as AssembledServices).approvals.resolve(id, 'grant', { by: 'reviewer' });
    const started = ok<{ process_id: string }>(await (h as Harness).call('operation_resume', { approval_id: id, wait_ms: 1000 }));
    await readAll(started.process_id);
    assert.equal(await fsp.readFile(path.join(root, 'ran.txt'), 'utf8'), 'ran\n');
  });

  it('a folder whose profile does not allow commands refuses a task run as it refuses exec_command', async () => {
    fake.entries = [shellTask('write', 'echo ran > ran.txt')];
    await open({ profile: 'write' });
    const e = toolError(await (h as Harness).call('task_run', { workspace_id: 'proj', label: 'write' }));
    const direct = toolError(await (h as Harness).call('exec_command', { workspace_id: 'proj', command: ['true'] }));
    assert.equal(e.code, direct.code);
    assert.notEqual(e.code, 'INTERNAL');
    await assert.rejects(fsp.stat(path.join(root, 'ran.txt')));
  });

  it('refuses an unknown label (naming the tasks), an ambiguous one (naming the sources), a custom task, a cwd outside the folder', async () => {
    fake.entries = [
      shellTask('build', 'true'),
      { ...shellTask('build', 'true'), source: 'npm' },
      { label: 'watch', source: 'ext', folder: root, problemMatchers: [], execution: { kind: 'custom' } },
      { label: 'out', source: 'Workspace', folder: root, problemMatchers: [], execution: { kind: 'process', process: 'ls', args: [], options: { cwd: '${workspaceFolder}/..' } } },
      { label: 'link', source: 'Workspace', folder: root, problemMatchers: [], execution: { kind: 'process', process: 'ls', args: [], options: { cwd: 'escape' } } },
    ];
    await fsp.symlink(os.tmpdir(), path.join(root, 'escape'));
    await open();
    const call = (args: Record<string, unknown>): ReturnType<Harness['call']> => (h as Harness).call('task_run', { workspace_id: 'proj', ...args });
    const unknown = toolError(await call({ label: 'nope' }));
    assert.equal(unknown.code, 'NOT_FOUND');
    assert.deepEqual((unknown.details?.tasks as { label: string }[]).map((t) => t.label), ['build', 'build', 'watch', 'out', 'link']);
    const ambiguous = toolError(await call({ label: 'build' }));
    assert.equal(ambiguous.code, 'INVALID_ARGUMENTS');
    assert.deepEqual(ambiguous.details?.sources, ['Workspace', 'npm']);
    assert.equal(toolError(await call({ label: 'build', source: 'pip' })).code, 'NOT_FOUND');
    const custom = toolError(await call({ label: 'watch' }));
    assert.equal(custom.code, 'UNAVAILABLE');
    assert.equal(custom.details?.reason, 'custom_execution');
    assert.equal(toolError(await call({ label: 'out' })).code, 'PATH_OUTSIDE_WORKSPACE');
    // A cwd through a symbolic link out of the folder: exec_command's own path check refuses it.
    const link = toolError(await call({ label: 'link' }));
    assert.equal(link.code, 'PATH_OUTSIDE_WORKSPACE');
    assert.equal(link.details?.cwd, 'escape');
    assert.deepEqual((assembled as AssembledServices).supervisor.list(), [], 'nothing started');
    // The one with the source given runs.
    const run = ok<{ exit_code?: number }>(await call({ label: 'build', source: 'npm', wait_ms: 20_000 }));
    assert.equal(run.exit_code, 0);
  });
});
