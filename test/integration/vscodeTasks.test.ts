import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { call, callError, connectToFirstFolder, folder, pollFor } from './helpers';

interface Listed {
  label: string;
  source: string;
  group?: string;
  runnable: boolean;
  problem_matchers?: string[];
}
interface Run {
  process_id: string;
  command: string[];
  cwd: string;
  exit_code?: number;
  problems?: { items: { path: string; severity: string; message: string; source?: string; code?: string; range: { start: { line: number; character: number } } }[]; counts: Record<string, number>; truncated: boolean };
}

/**
 * The task tools against VS Code's own tasks: a tasks.json task with the `$tsc` problem matcher runs the repository's
 * TypeScript compiler in the command sandbox, and its result carries the type error the matcher found; an npm script
 * the npm extension detects is listed; a CustomExecution task is refused with the reason; bad inputs are refused.
 * The fixture (a tsconfig project with a type error, a package.json, .vscode/tasks.json) is written into the first
 * folder and removed afterwards.
 */
describe('VS Code tasks (tasks, task_run) inside VS Code', function () {
  this.timeout(180_000);
  let client: Client;
  let wsId: string;
  let root: string;
  const id = `${process.pid}-${Date.now().toString(36)}`;
  const dir = `tasks-${id}`;
  const label = (name: string): string => `cs-${name}-${id}`;
  const tasksJson = (): string => path.join(root, '.vscode', 'tasks.json');
  let tasksJsonBefore: string | undefined;
  let npmLabel: string;
  const custom = new vscode.EventEmitter<string>();
  let provider: vscode.Disposable | undefined;

  const list = async (): Promise<Listed[]> => (await call<{ tasks: Listed[] }>(client, 'tasks', { workspace_id: wsId })).tasks;

  async function readAll(processId: string): Promise<string> {
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 120; i++) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id: processId, cursor, wait_ms: 1000 });
      out += r.chunk;
      cursor = r.cursor;
      if (r.eof) return out;
    }
    throw new Error(`process ${processId} did not end: ${out}`);
  }

  const tools = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('codespace');
  let enabledBefore: unknown;

  before(async () => {
    // The tasks group is served only when turned on, from user settings.
    enabledBefore = tools().inspect('tools.enabledGroups')?.globalValue;
    await tools().update('tools.enabledGroups', ['tasks'], vscode.ConfigurationTarget.Global);
    ({ client, wsId } = await connectToFirstFolder());
    await pollFor('the tasks group to be served', async () => ((await client.listTools()).tools.some((t) => t.name === 'task_run') ? true : undefined));
    root = folder(0).uri.fsPath;
    fs.mkdirSync(path.join(root, dir), { recursive: true });
    fs.writeFileSync(path.join(root, dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [] }, files: ['bad.ts'] }));
    fs.writeFileSync(path.join(root, dir, 'bad.ts'), 'export const n: number = "not a number";\n');
    fs.writeFileSync(path.join(root, dir, 'package.json'), JSON.stringify({ name: `tasks-${id}`, version: '1.0.0', private: true, scripts: { [label('npm')]: 'echo from-npm' } }));
    // A task provider of CustomExecution tasks, as an extension would contribute one.
    provider = vscode.tasks.registerTaskProvider('codespace-test-custom', {
      provideTasks: () => [new vscode.Task({ type: 'codespace-test-custom' }, folder(0), label('custom'), 'codespace-test', new vscode.CustomExecution(async () => ({ onDidWrite: custom.event, open: () => undefined, close: () => undefined })))],
      resolveTask: () => undefined,
    });
    // The npm extension names a script of a package.json below the folder `<script> - <folder>`: found by listing.
    npmLabel = (await pollFor('the npm script to be detected', async () => (await list()).find((t) => t.source === 'npm' && t.label.startsWith(label('npm'))), 60_000)).label;
    tasksJsonBefore = fs.existsSync(tasksJson()) ? fs.readFileSync(tasksJson(), 'utf8') : undefined;
    // The repository's TypeScript compiler, run by the extension host's own node: both outside the folder, readable
    // in the sandbox (its root is read-only, not hidden).
    const tsc = fs.realpathSync(path.resolve(__dirname, '..', '..', '..', 'node_modules', 'typescript', 'lib', 'tsc.js'));
    const tasks = [
      { label: label('tsc'), type: 'process', command: process.execPath, args: [tsc, '-p', `\${workspaceFolder}/${dir}/tsconfig.json`, '--pretty', 'false'], problemMatcher: '$tsc', group: 'build' },
      { label: label('sandbox'), type: 'shell', command: `mkdir -p .vscode; echo x > .vscode/${label('sandbox')} && echo WROTE || echo REFUSED`, options: { cwd: '${workspaceFolder}' } },
      { label: label('outside'), type: 'shell', command: 'ls', options: { cwd: '${workspaceFolder}/..' } },
      { label: label('input'), type: 'shell', command: 'echo ${input:what}' },
      { label: label('compound'), type: 'shell', command: 'echo after', dependsOn: [label('sandbox')] },
      // The same label as the detected npm script: ambiguous without a source.
      { label: npmLabel, type: 'shell', command: 'echo from-tasks-json' },
    ];
    fs.mkdirSync(path.dirname(tasksJson()), { recursive: true });
    fs.writeFileSync(tasksJson(), JSON.stringify({ version: '2.0.0', tasks, inputs: [{ id: 'what', type: 'promptString', description: 'what' }] }, null, 2));
    await pollFor('tasks.json to be read', async () => ((await list()).some((t) => t.label === label('tsc')) ? true : undefined), 60_000);
  });

  after(async () => {
    await tools().update('tools.enabledGroups', enabledBefore, vscode.ConfigurationTarget.Global);
    provider?.dispose();
    custom.dispose();
    if (root) {
      if (tasksJsonBefore === undefined) fs.rmSync(tasksJson(), { force: true });
      else fs.writeFileSync(tasksJson(), tasksJsonBefore);
      fs.rmSync(path.join(root, dir), { recursive: true, force: true });
      fs.rmSync(path.join(root, '.vscode', label('sandbox')), { force: true });
    }
    await client?.close();
  });

  it('lists tasks.json tasks, the detected npm script and the CustomExecution task, saying which task_run can run', async () => {
    const tasks = await list();
    const by = (l: string, source?: string): Listed | undefined => tasks.find((t) => t.label === l && (source === undefined || t.source === source));
    assert.deepEqual(by(label('tsc')), { label: label('tsc'), source: 'Workspace', group: 'build', runnable: true, problem_matchers: ['$tsc'] });
    assert.equal(by(npmLabel, 'npm')?.runnable, true, JSON.stringify(tasks));
    assert.equal(by(npmLabel, 'Workspace')?.runnable, true);
    assert.deepEqual(by(label('custom')), { label: label('custom'), source: 'codespace-test', runnable: false });
    assert.equal(by(label('compound'))?.runnable, false, 'a task with dependsOn');
  });

  it('runs the $tsc task sandboxed, through exec_command; the result carries the type error its matcher found', async () => {
    const info = await call<{ execution: { isolation: { command_sandbox: { enabled: boolean; kind: string } } } }>(client, 'workspace_info', { workspace_id: wsId });
    assert.deepEqual(info.execution.isolation.command_sandbox, { enabled: true, kind: 'bubblewrap' }, 'commands, and so task runs, are sandboxed');
    const run = await call<Run>(client, 'task_run', { workspace_id: wsId, label: label('tsc'), wait_ms: 50_000 });
    assert.equal(run.command[0], process.execPath);
    assert.equal(run.cwd, '');
    assert.notEqual(run.exit_code, undefined, 'tsc ended within wait_ms');
    assert.notEqual(run.exit_code, 0);
    const output = await readAll(run.process_id);
    assert.match(output, /bad\.ts\(1,14\): error TS2322/);
    const status = await call<{ command: string[] }>(client, 'process_status', { process_id: run.process_id });
    assert.deepEqual(status.command, run.command, 'the process is an exec_command process');
    // A known gap (docs/TOOLS.md, task_run): on VS Code 1.100, once the TypeScript server runs in the window (an
    // earlier test opened a TypeScript project), the $tsc matcher reports nothing for the task's output: the result
    // then has no finding of it. Seen in the full suite; 1.139 reports it, and 1.100 does in a window without it.
    if (vscode.version.startsWith('1.100.') && vscode.extensions.getExtension('vscode.typescript-language-features')?.isActive) {
      assert.ok(!(run.problems?.items ?? []).some((d) => d.path === `${dir}/bad.ts` && d.code !== '2322'), 'nothing made up');
      console.log(`      [known gap] VS Code ${vscode.version} with the TypeScript server running: problems ${JSON.stringify(run.problems?.counts ?? null)}`);
      return;
    }
    assert.ok(run.problems, `the result carries the matcher's problems: ${JSON.stringify(run)}`);
    const item = run.problems.items.find((d) => d.path === `${dir}/bad.ts`);
    assert.ok(item, JSON.stringify(run.problems));
    assert.equal(item.severity, 'error');
    assert.equal(item.code, '2322');
    assert.equal(item.source, 'ts');
    assert.deepEqual(item.range.start, { line: 1, character: 14 });
    assert.ok((run.problems.counts.error ?? 0) >= 1);
    // The diagnostics tool sees the same problem (the matcher's, for a file no editor has open).
    const diag = await call<{ diagnostics: { path: string; code?: string }[] }>(client, 'diagnostics', { workspace_id: wsId });
    assert.ok(diag.diagnostics.some((d) => d.path === `${dir}/bad.ts` && d.code === '2322'), JSON.stringify(diag));
  });

  it("a task's command gets exec_command's sandbox: it cannot write .vscode", async () => {
    const run = await call<Run>(client, 'task_run', { workspace_id: wsId, label: label('sandbox'), wait_ms: 30_000 });
    assert.equal(run.command[0], 'sh');
    assert.match(await readAll(run.process_id), /REFUSED/);
    assert.equal(fs.existsSync(path.join(root, '.vscode', label('sandbox'))), false);
  });

  it('the detected npm script runs when its source is named; the label alone is ambiguous', async () => {
    const ambiguous = await callError(client, 'task_run', { workspace_id: wsId, label: npmLabel });
    assert.equal(ambiguous.code, 'INVALID_ARGUMENTS');
    assert.deepEqual([...((ambiguous.details?.sources as string[]) ?? [])].sort(), ['Workspace', 'npm']);
    const run = await call<Run>(client, 'task_run', { workspace_id: wsId, label: npmLabel, source: 'Workspace', wait_ms: 30_000 });
    assert.equal(run.exit_code, 0);
    assert.match(await readAll(run.process_id), /from-tasks-json/);
  });

  it('refuses a CustomExecution task with the reason, an unknown label listing the tasks, a cwd outside the folder, an input variable, dependsOn', async () => {
    const customRun = await callError(client, 'task_run', { workspace_id: wsId, label: label('custom') });
    assert.equal(customRun.code, 'UNAVAILABLE');
    assert.equal(customRun.details?.reason, 'custom_execution');
    assert.match(customRun.message, /CustomExecution/);
    const unknown = await callError(client, 'task_run', { workspace_id: wsId, label: label('nope') });
    assert.equal(unknown.code, 'NOT_FOUND');
    assert.ok((unknown.details?.tasks as { label: string }[]).some((t) => t.label === label('tsc')));
    const outside = await callError(client, 'task_run', { workspace_id: wsId, label: label('outside') });
    assert.equal(outside.code, 'PATH_OUTSIDE_WORKSPACE');
    const input = await callError(client, 'task_run', { workspace_id: wsId, label: label('input') });
    assert.equal(input.code, 'UNAVAILABLE');
    assert.deepEqual(input.details?.variables, ['input:what']);
    const compound = await callError(client, 'task_run', { workspace_id: wsId, label: label('compound') });
    assert.equal(compound.code, 'UNAVAILABLE');
    assert.deepEqual(compound.details?.depends_on, [label('sandbox')]);
  });
});
