/**
 * VS Code tasks (src/features/tasks): what a task becomes before exec_command runs it. The argv of shell and process
 * executions, the variables resolved and those refused, the cwd mapped into the folder or refused, and the tasks
 * CodeSpace does not run (CustomExecution, no command).
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { quoteShellArg, resolveTask } from '../../src/features/tasks/common/resolveTask';
import type { TaskEntry, TaskExecution } from '../../src/features/tasks';

const root = path.join(path.sep, 'home', 'dev', 'proj');
const folder = { name: 'proj', root };
const other = { name: 'lib', root: path.join(path.sep, 'home', 'dev', 'lib') };

function task(execution: TaskExecution, label = 't'): TaskEntry {
  return { label, source: 'Workspace', folder: root, problemMatchers: [], execution };
}
const shell = (x: Partial<Extract<TaskExecution, { kind: 'shell' }>>): TaskEntry => task({ kind: 'shell', args: [], options: {}, ...x });
const proc = (process: string, args: string[], options = {}): TaskEntry => task({ kind: 'process', process, args, options });

function refusal(fn: () => unknown): ToolError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ToolError) return err;
    throw err;
  }
  assert.fail('expected a refusal');
}

describe('VS Code tasks: resolving a task for exec_command', () => {
  it('a shell command line runs as sh -c with the variables of its folder resolved', () => {
    const r = resolveTask(shell({ commandLine: 'tsc -p ${workspaceFolder}/tsconfig.json && echo ${workspaceFolderBasename}${pathSeparator}x${/}y' }), folder, [folder]);
    assert.deepEqual(r.argv, ['sh', '-c', `tsc -p ${root}/tsconfig.json && echo proj${path.sep}x${path.sep}y`]);
    assert.equal(r.cwd, '');
  });

  it('command and args are joined as VS Code quotes them: whitespace quoted, globs and $VARS left to the shell', () => {
    const r = resolveTask(shell({ command: { value: 'npm' }, args: [{ value: 'run' }, { value: 'a b' }, { value: '*.ts' }, { value: "it's" , quoting: 'strong' }, { value: 'x"$y', quoting: 'weak' }, { value: 'a b', quoting: 'escape' }] }), folder, [folder]);
    assert.deepEqual(r.argv, ['sh', '-c', `npm run 'a b' *.ts 'it'\\''s' "x\\"\\$y" a\\ b`]);
    assert.equal(quoteShellArg({ value: '' }), "''");
  });

  it('a command without args is the command line itself; the shell and its args come from the options', () => {
    const r = resolveTask(shell({ command: { value: 'make all' }, executable: '/bin/bash', shellArgs: ['-lc'] }), folder, [folder]);
    assert.deepEqual(r.argv, ['/bin/bash', '-lc', 'make all']);
  });

  it('a process runs without a shell; ${workspaceFolder:name} names another served folder', () => {
    const r = resolveTask(proc('node', ['${workspaceFolder:lib}/build.js', '--out', '${workspaceRoot}/out']), folder, [folder, other]);
    assert.deepEqual(r.argv, ['node', `${other.root}/build.js`, '--out', `${root}/out`]);
  });

  it('options.env goes on the command as env NAME=value, so the reviewer sees it; a bad name is refused', () => {
    const r = resolveTask(proc('node', ['x.js'], { env: { NODE_ENV: 'test', OUT: '${workspaceFolder}/o' } }), folder, [folder]);
    assert.deepEqual(r.argv, ['env', 'NODE_ENV=test', `OUT=${root}/o`, 'node', 'x.js']);
    const e = refusal(() => resolveTask(proc('node', [], { env: { 'A=B': 'x' } }), folder, [folder]));
    assert.equal(e.code, 'UNAVAILABLE');
    assert.equal(e.details?.reason, 'env_name');
  });

  it('the cwd becomes workspace-relative (absolute, relative or from a variable)', () => {
    assert.equal(resolveTask(proc('ls', [], { cwd: '${workspaceFolder}/src/app' }), folder, [folder]).cwd, 'src/app');
    assert.equal(resolveTask(proc('ls', [], { cwd: 'src' }), folder, [folder]).cwd, 'src');
    assert.equal(resolveTask(proc('ls', [], { cwd: root }), folder, [folder]).cwd, '');
  });

  it('a cwd outside the folder is PATH_OUTSIDE_WORKSPACE, also a sibling with the same prefix', () => {
    for (const cwd of ['..', '/tmp', '${workspaceFolder}/../x', `${root}-sibling`, '${workspaceFolder:lib}']) {
      const e = refusal(() => resolveTask(proc('ls', [], { cwd }), folder, [folder, other]));
      assert.equal(e.code, 'PATH_OUTSIDE_WORKSPACE', cwd);
      assert.equal(e.details?.cwd !== undefined, true);
    }
  });

  it('variables CodeSpace cannot know are refused by name, wherever they are', () => {
    const cases: [TaskEntry, string[]][] = [
      [shell({ commandLine: 'tsc ${file} ${input:pick}' }), ['file', 'input:pick']],
      [proc('${config:python.path}', []), ['config:python.path']],
      [proc('node', ['${command:extension.pick}']), ['command:extension.pick']],
      [proc('node', [], { cwd: '${fileDirname}' }), ['fileDirname']],
      [proc('node', [], { env: { HOME2: '${env:HOME}' } }), ['env:HOME']],
      [proc('node', ['${workspaceFolder:nope}']), ['workspaceFolder:nope']],
    ];
    for (const [t, names] of cases) {
      const e = refusal(() => resolveTask(t, folder, [folder]));
      assert.equal(e.code, 'UNAVAILABLE');
      assert.equal(e.details?.reason, 'unresolved_variable');
      assert.deepEqual(e.details?.variables, names);
    }
  });

  it('a CustomExecution task is refused, saying only its extension runs it, outside the sandbox; so is a task with no command', () => {
    const custom = refusal(() => resolveTask({ ...task({ kind: 'custom' }, 'watch'), source: 'ext' }, folder, [folder]));
    assert.equal(custom.code, 'UNAVAILABLE');
    assert.equal(custom.details?.reason, 'custom_execution');
    assert.match(custom.message, /CustomExecution/);
    assert.match(custom.message, /sandbox/);
    assert.equal(refusal(() => resolveTask(task({ kind: 'none' }), folder, [folder])).details?.reason, 'no_execution');
    assert.equal(refusal(() => resolveTask(shell({ commandLine: '  ' }), folder, [folder])).details?.reason, 'no_execution');
  });

  it('a task that first runs others (dependsOn) is refused, naming them: running only its own command would not be the task', () => {
    const e = refusal(() => resolveTask({ ...shell({ commandLine: 'node dist/app.js' }), dependsOn: ['build', 'lint'] }, folder, [folder]));
    assert.equal(e.code, 'UNAVAILABLE');
    assert.equal(e.details?.reason, 'depends_on');
    assert.deepEqual(e.details?.depends_on, ['build', 'lint']);
  });
});
