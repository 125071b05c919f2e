import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import type { HostMessage, PanelState } from '../../src/shared/panelProtocol';
import { EXTENSION_ID, call, callError, connectToFirstFolder, folder, pollFor } from './helpers';

interface Frame {
  id: number;
  name: string;
  path?: string;
  source?: string;
  line: number;
}
interface Wait {
  state: string;
  stop: number;
  reason?: string;
  frames?: Frame[];
  output: string;
  exit_code?: number;
}
interface Variable {
  name: string;
  value: string;
  ref?: number;
}

/** The test-only part of the extension's exports (see PanelForTests in src/vscode/panel/panelView.ts). */
interface PanelForTests {
  handleMessage(message: unknown): Promise<HostMessage | undefined>;
  lastState(): PanelState | undefined;
}

const CONFIG_NAME = 'CodeSpace debug fixture';

/**
 * The debug tools against the built-in JavaScript debugger (ms-vscode.js-debug) on test/fixtures/debug-program/app.js,
 * copied into the first folder. One program session carries breakpoints, a conditional one, a logpoint, steps,
 * variables, evaluation and the run to its end; a second, from a launch configuration, is stopped by the developer.
 */
describe('debug tools inside VS Code (built-in JavaScript debugger)', function () {
  this.timeout(120_000);
  let client: Client;
  let wsId: string;
  let session: string;
  let output = '';
  const dir = `debug-${process.pid}-${Date.now().toString(36)}`;
  const rel = (p: string): string => `${dir}/${p}`;
  const ids: Record<string, string> = {};
  const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration('codespace');
  const launchFile = (): string => path.join(folder(0).uri.fsPath, '.vscode', 'launch.json');
  let launchExisted = false;

  async function wait(ms = 30_000): Promise<Wait> {
    const w = await call<Wait>(client, 'debug_wait', { session_id: session, wait_ms: ms });
    output += w.output;
    return w;
  }

  /** Starts a session: held, approved by the developer in the panel, then resumed. */
  async function start(args: Record<string, unknown>): Promise<string> {
    const held = await callError(client, 'debug_start', { workspace_id: wsId, ...args });
    assert.equal(held.code, 'APPROVAL_REQUIRED', held.message);
    assert.match(held.message, /outside the command sandbox/);
    assert.equal(vscode.debug.activeDebugSession, undefined, 'nothing started before the approval');
    const panel = vscode.extensions.getExtension<{ panelForTests?: PanelForTests }>(EXTENSION_ID)?.exports.panelForTests;
    assert.ok(panel);
    await vscode.commands.executeCommand('codespace.showPanel');
    await pollFor('the panel shows the held start', () => (panel.lastState()?.holds.some((h) => h.approvalId === held.details?.approval_id && h.state === 'pending') ? true : undefined));
    const reply = await panel.handleMessage({ type: 'approve', requestId: `debug-${Date.now()}`, approvalId: held.details?.approval_id });
    assert.ok(reply?.type === 'reply' && reply.ok, JSON.stringify(reply));
    const started = await call<{ session_id: string }>(client, 'operation_resume', { approval_id: held.details?.approval_id, wait_ms: 30_000 });
    return started.session_id;
  }

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    assert.ok(vscode.extensions.getExtension('ms-vscode.js-debug'), 'the built-in JavaScript debugger is installed');
    const repo = vscode.extensions.getExtension(EXTENSION_ID)?.extensionPath;
    assert.ok(repo);
    fs.cpSync(path.join(repo, 'test', 'fixtures', 'debug-program'), path.join(folder(0).uri.fsPath, dir), { recursive: true });
    await config().update('tools.enabledGroups', ['debug'], vscode.ConfigurationTarget.Global);
    launchExisted = fs.existsSync(launchFile());
    await vscode.workspace
      .getConfiguration('launch', folder(0).uri)
      .update('configurations', [{ type: 'pwa-node', request: 'launch', name: CONFIG_NAME, program: `\${workspaceFolder}/${dir}/app.js`, stopOnEntry: true }], vscode.ConfigurationTarget.WorkspaceFolder);
    await pollFor('the debug tools are served', async () => ((await client.listTools()).tools.some((t) => t.name === 'debug_start') ? true : undefined));
  });

  after(async () => {
    if (vscode.debug.activeDebugSession) await vscode.debug.stopDebugging();
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints.filter((b) => Object.values(ids).includes(b.id)));
    await vscode.workspace.getConfiguration('launch', folder(0).uri).update('configurations', undefined, vscode.ConfigurationTarget.WorkspaceFolder);
    // Only the file this test made: the folder's .vscode holds other tests' settings.json, which VS Code keeps a model of
    // (removing the folder made the next folder-settings write fail: "the content of the file is newer").
    if (!launchExisted) fs.rmSync(launchFile(), { force: true });
    await config().update('tools.enabledGroups', undefined, vscode.ConfigurationTarget.Global);
    await client?.close();
    fs.rmSync(path.join(folder(0).uri.fsPath, dir), { recursive: true, force: true });
  });

  it('refuses bad input before anything starts: a breakpoint outside the workspace or past the end, an unknown configuration', async () => {
    const outside = await callError(client, 'debug_breakpoints', { workspace_id: wsId, set: [{ path: '../outside.js', line: 1 }] });
    assert.equal(outside.code, 'PATH_OUTSIDE_WORKSPACE', outside.message);
    const past = await callError(client, 'debug_breakpoints', { workspace_id: wsId, set: [{ path: rel('app.js'), line: 99 }] });
    assert.equal(past.code, 'INVALID_ARGUMENTS');
    assert.match(past.message, /line 99 is past the end/);
    const unknown = await callError(client, 'debug_start', { workspace_id: wsId, configuration: 'No such configuration' });
    assert.equal(unknown.code, 'NOT_FOUND');
    assert.ok((unknown.details?.configurations as string[]).includes(CONFIG_NAME), unknown.message);
    assert.equal((await callError(client, 'debug_start', { workspace_id: wsId })).code, 'INVALID_ARGUMENTS');
  });

  it('sets the agent\'s breakpoints as ordinary editor breakpoints: conditional, a logpoint, a plain one', async () => {
    const r = await call<{ breakpoints: { id: string; line: number }[] }>(client, 'debug_breakpoints', {
      workspace_id: wsId,
      set: [
        { path: rel('app.js'), line: 3, condition: 'n === 3' },
        { path: rel('app.js'), line: 9, log_message: 'logged {i}' },
        { path: rel('app.js'), line: 13 },
      ],
    });
    assert.deepEqual(r.breakpoints.map((b) => b.line), [3, 9, 13]);
    [ids.cond, ids.log, ids.plain] = r.breakpoints.map((b) => b.id) as [string, string, string];
    const editor = vscode.debug.breakpoints.filter((b): b is vscode.SourceBreakpoint => b instanceof vscode.SourceBreakpoint && Object.values(ids).includes(b.id));
    assert.equal(editor.length, 3, 'they are in vscode.debug.breakpoints');
    assert.equal(editor.find((b) => b.id === ids.cond)?.condition, 'n === 3');
    assert.equal(editor.find((b) => b.id === ids.log)?.logMessage, 'logged {i}');
    assert.equal(editor.find((b) => b.id === ids.cond)?.location.uri.fsPath, path.join(folder(0).uri.fsPath, dir, 'app.js'));
  });

  it('starts the program once the developer approves; stops at the conditional breakpoint; reads variables and evaluates', async () => {
    session = await start({ program: rel('app.js'), args: ['label-x'] });
    const w = await wait();
    assert.equal(w.state, 'stopped', JSON.stringify(w));
    assert.equal(w.reason, 'breakpoint');
    assert.deepEqual([w.frames?.[0]?.path, w.frames?.[0]?.line], [rel('app.js'), 3], `${JSON.stringify(w.frames)} root ${folder(0).uri.fsPath}`);
    assert.ok(!JSON.stringify(w).includes(folder(0).uri.fsPath), 'no absolute path');
    const top = w.frames?.[0]?.id as number;
    const vars = await call<{ scopes: { name: string }[]; variables: Variable[] }>(client, 'debug_variables', { session_id: session, frame_id: top });
    assert.ok(vars.variables.some((v) => v.name.endsWith('.n') && v.value === '3'), `n is 3, as the condition asks: ${JSON.stringify(vars)}`);
    const ev = await call<{ result: string }>(client, 'debug_evaluate', { session_id: session, expression: 'n * 10' });
    assert.equal(ev.result, '30');
    // The logpoint ran for i = 1 and 2 before the stop.
    await pollFor('the logpoint output', async () => ((await wait(0)) && /logged 1[\s\S]*logged 2/.test(output) ? true : undefined), 10_000);
    assert.ok(!/logged 3/.test(output));
  });

  it('steps; the frame ids of the earlier stop are refused', async () => {
    const before = (await wait(0)).frames?.[0]?.id as number;
    // A step may already have stopped again when the request returns.
    const stepped = await call<{ state: string }>(client, 'debug_control', { session_id: session, action: 'step_over' });
    assert.ok(['running', 'stopped'].includes(stepped.state), stepped.state);
    const w = await wait();
    assert.equal(w.state, 'stopped');
    assert.equal(w.frames?.[0]?.line, 4);
    const stale = await callError(client, 'debug_variables', { session_id: session, frame_id: before });
    assert.equal(stale.code, 'STALE_REFERENCE', stale.message);
    const staleEval = await callError(client, 'debug_evaluate', { session_id: session, expression: 'n', frame_id: before });
    assert.equal(staleEval.code, 'STALE_REFERENCE');
  });

  it('sees the developer remove a breakpoint; continues; refuses evaluate while running; reads a value\'s children', async () => {
    vscode.debug.removeBreakpoints(vscode.debug.breakpoints.filter((b) => b.id === ids.cond));
    const listed = await call<{ breakpoints: { id: string }[]; removed?: string[] }>(client, 'debug_breakpoints', { workspace_id: wsId });
    assert.deepEqual(listed.removed, [ids.cond]);
    assert.deepEqual(listed.breakpoints.map((b) => b.id).sort(), [ids.log, ids.plain].sort());
    await call(client, 'debug_control', { session_id: session, action: 'continue' });
    // The program waits 1.5 s before the next breakpoint.
    const running = await callError(client, 'debug_evaluate', { session_id: session, expression: 'total' });
    assert.equal(running.code, 'NOT_STOPPED');
    const w = await wait();
    assert.equal(w.state, 'stopped');
    assert.equal(w.frames?.[0]?.line, 13);
    const info = await call<{ result: string; ref?: number }>(client, 'debug_evaluate', { session_id: session, expression: 'info' });
    assert.ok(info.ref, JSON.stringify(info));
    const children = await call<{ variables: Variable[] }>(client, 'debug_variables', { session_id: session, ref: info.ref, depth: 2 });
    assert.equal(children.variables.find((v) => v.name === 'total')?.value, '30');
    assert.equal(children.variables.find((v) => v.name === 'label')?.value, "'label-x'");
    assert.equal(children.variables.find((v) => v.name === 'list[1]')?.value, '20');
    const page = await call<{ variables: Variable[]; next_start?: number }>(client, 'debug_variables', { session_id: session, ref: info.ref, count: 1 });
    assert.equal(page.variables.length, 1);
    assert.equal(page.next_start, 1);
  });

  it('continues to the end: the session ends, and a call on it says so', async () => {
    await call(client, 'debug_breakpoints', { workspace_id: wsId, clear: [ids.log, ids.plain] });
    await call(client, 'debug_control', { session_id: session, action: 'continue' });
    const w = await pollFor('the session ends', async () => {
      const x = await wait(5000);
      return x.state === 'terminated' ? x : undefined;
    });
    assert.equal(w.state, 'terminated');
    assert.match(output, /done 30 label-x/);
    assert.equal((await callError(client, 'debug_control', { session_id: session, action: 'continue' })).code, 'DEBUG_SESSION_ENDED');
  });

  it('starts a launch configuration by name; the developer stops it; the agent is told', async () => {
    session = await start({ configuration: CONFIG_NAME });
    const w = await wait();
    assert.equal(w.state, 'stopped', JSON.stringify(w));
    const live = await pollFor('the session in the editor', () => vscode.debug.activeDebugSession);
    await vscode.debug.stopDebugging(live.parentSession ?? live);
    await pollFor('the session ends', async () => ((await wait(5000)).state === 'terminated' ? true : undefined));
    const ended = await callError(client, 'debug_stack', { session_id: session });
    assert.equal(ended.code, 'DEBUG_SESSION_ENDED');
  });
});
