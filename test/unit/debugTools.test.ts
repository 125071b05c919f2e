import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { TOOL_GROUPS, toolGroupOf } from '../../src/app/catalogue';
import type { AssembleOptions, AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { DEBUG_LIMITS } from '../../src/features/debug/common/debugSessions';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import { TOOL_LIST_BUDGET_BYTES, measureToolList } from '../../bench/toolListSize';
import { unitAssembleOptions } from './helpers/assembleOptions';
import { FakeDebug } from './helpers/fakeDebug';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

const DEBUG_NAMES = ['debug_start', 'debug_breakpoints', 'debug_control', 'debug_wait', 'debug_stack', 'debug_variables', 'debug_evaluate'];
const APP = 'const a = 1;\nconst b = a + 1;\nconsole.log(b);\n';

describe('debug tools (debug port)', () => {
  let base: string;
  let root: string;
  let storage: string;
  let fake: FakeDebug;
  let assembled: AssembledServices;
  let h: Harness;
  let enabled: string[] = ['debug'];

  async function open(extra: Partial<AssembleOptions> = {}, profile: 'exec' | 'write' = 'exec'): Promise<void> {
    const folders = [{ root, name: 'proj', profile }];
    const source = new InMemoryWorkspaceSource(folders);
    assembled = await assembleServices(unitAssembleOptions(new WorkspaceRegistry(source), storage, { debug: fake, enabledToolGroups: () => enabled, ...extra }));
    h = await connectHarness(folders, { assembled, source });
  }

  beforeEach(async () => {
    base = await makeTree({ 'proj/app.js': APP, 'proj/lib/util.js': 'module.exports = 1;\n', 'outside/secret.js': 'x\n' }, 'codespace-debug-');
    root = path.join(base, 'proj');
    await fsp.symlink(path.join(base, 'outside'), path.join(root, 'linked'));
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-debug-storage-'));
    fake = new FakeDebug();
    enabled = ['debug'];
    await open();
  });
  afterEach(async () => {
    await h.close();
    await assembled.shutdown();
    await removeTree(base);
    await fsp.rm(storage, { recursive: true, force: true });
  });

  /** Starts a session through the hold: debug_start is held, the reviewer grants, operation_resume starts it. */
  async function start(args: Record<string, unknown> = { program: 'app.js' }): Promise<string> {
    const held = toolError(await h.call('debug_start', { workspace_id: 'proj', ...args }));
    assert.equal(held.code, 'APPROVAL_REQUIRED');
    const id = held.details?.approval_id as string;
    await assembled.approvals.resolve(id, 'grant', { by: 'reviewer' });
    return ok<{ session_id: string }>(await h.call('operation_resume', { approval_id: id, wait_ms: 1000 })).session_id;
  }

  function stopAt(session: string, epochFrames: { id: number; line: number }[]): void {
    fake.frames = epochFrames.map((f) => ({ id: f.id, name: `fn${f.id}`, path: path.join(root, 'app.js'), line: f.line, column: 1 }));
    fake.events.emit({ session, kind: 'stopped', reason: 'breakpoint', threadId: 7 });
  }

  it('is the debug group, served only when the operator turns it on; the default surface stays in budget', async () => {
    assert.deepEqual(TOOL_GROUPS.debug.map((t) => t.name), DEBUG_NAMES);
    for (const n of DEBUG_NAMES) assert.equal(toolGroupOf(n), 'debug');
    const all = await measureToolList(h.client, h.client.transport as Transport);
    assert.ok(DEBUG_NAMES.every((n) => all.tools.some((t) => t.name === n)));
    enabled = [];
    assembled.toolGroups.refresh();
    const byDefault = await measureToolList(h.client, h.client.transport as Transport);
    assert.ok(!byDefault.tools.some((t) => DEBUG_NAMES.includes(t.name)));
    assert.ok(byDefault.bytes <= TOOL_LIST_BUDGET_BYTES, `${byDefault.bytes} bytes`);
    const off = toolError(await h.call('debug_wait', { session_id: 's1' }));
    assert.equal(off.code, 'TOOL_DISABLED');
    assert.deepEqual(off.details, { group: 'debug', setting: 'codespace.tools.enabledGroups' });
    // Nor can a start be held through approval_create while the group is off.
    const viaHold = toolError(await h.call('approval_create', { workspace_id: 'proj', tool: 'debug_start', request: { workspace_id: 'proj', program: 'app.js' } }));
    assert.equal(viaHold.code, 'TOOL_DISABLED');
    assert.equal(assembled.approvals.pending().length, 0);
    assert.equal(fake.starts.length, 0);
  });

  it('answers UNAVAILABLE in a host without the editor\'s debugger; workspace_info says a start is held', async () => {
    const info = ok<{ execution: { isolation: { debuggee?: unknown } }; notes: string[] }>(await h.call('workspace_info', { workspace_id: 'proj' }));
    assert.deepEqual(info.execution.isolation.debuggee, { sandboxed: false, start: 'held' });
    assert.ok(info.notes.some((n) => /debug_start is always held/.test(n)));
    await h.close();
    await assembled.shutdown();
    await open({ debug: undefined });
    assert.equal(toolError(await h.call('debug_wait', { session_id: 's1' })).code, 'UNAVAILABLE');
    assert.equal(toolError(await h.call('debug_start', { workspace_id: 'proj', program: 'app.js' })).code, 'UNAVAILABLE');
    const none = ok<{ execution: { isolation: { debuggee?: unknown } } }>(await h.call('workspace_info', { workspace_id: 'proj' }));
    assert.equal(none.execution.isolation.debuggee, undefined);
  });

  it('holds every start under the default approval settings, saying why, and starts only once granted', async () => {
    const held = toolError(await h.call('debug_start', { workspace_id: 'proj', program: 'app.js', args: ['--x'] }));
    assert.equal(held.code, 'APPROVAL_REQUIRED');
    assert.match(held.message, /outside the command sandbox/);
    assert.equal(fake.starts.length, 0, 'nothing started before the grant');
    const hold = assembled.approvals.get(held.details?.approval_id as string);
    assert.deepEqual(hold?.command?.argv, ['node', 'app.js', '--x']);
    await assembled.approvals.resolve(held.details?.approval_id as string, 'grant', { by: 'reviewer' });
    const started = ok<{ session_id: string }>(await h.call('operation_resume', { approval_id: held.details?.approval_id, wait_ms: 1000 }));
    assert.equal(started.session_id, 's1');
    assert.deepEqual(fake.starts, [{ root, program: { path: path.join(root, 'app.js'), args: ['--x'], stopOnEntry: false } }]);
    // A denied start never starts.
    const again = toolError(await h.call('debug_start', { workspace_id: 'proj', configuration: 'Tests' }));
    await assembled.approvals.resolve(again.details?.approval_id as string, 'deny', { by: 'reviewer' });
    assert.equal(toolError(await h.call('operation_resume', { approval_id: again.details?.approval_id, wait_ms: 1000 })).code, 'APPROVAL_DENIED');
    assert.equal(fake.starts.length, 1);
    // The agent may ask for the hold itself; it still starts nothing until granted.
    const asked = ok<{ approval_id: string; command: { argv: string[] } }>(await h.call('approval_create', { workspace_id: 'proj', tool: 'debug_start', request: { workspace_id: 'proj', program: 'lib/util.js', stop_on_entry: true } }));
    assert.deepEqual(asked.command.argv, ['node', 'lib/util.js']);
    assert.equal(fake.starts.length, 1);
    await assembled.approvals.resolve(asked.approval_id, 'grant', { by: 'reviewer' });
    ok(await h.call('operation_resume', { approval_id: asked.approval_id, wait_ms: 1000 }));
    assert.deepEqual(fake.starts[1]?.program, { path: path.join(root, 'lib', 'util.js'), args: [], stopOnEntry: true });
  });

  it('refuses a bad start before holding it: unknown configuration (listing the names), outside program, both or neither, no exec profile', async () => {
    const unknown = toolError(await h.call('debug_start', { workspace_id: 'proj', configuration: 'Nope' }));
    assert.equal(unknown.code, 'NOT_FOUND');
    assert.match(unknown.message, /"Run app", "Tests"/);
    assert.deepEqual(unknown.details?.configurations, ['Run app', 'Tests']);
    assert.equal(toolError(await h.call('debug_start', { workspace_id: 'proj', program: 'linked/secret.js' })).code, 'PATH_OUTSIDE_WORKSPACE');
    assert.equal(toolError(await h.call('debug_start', { workspace_id: 'proj', program: '../outside/secret.js' })).code, 'PATH_OUTSIDE_WORKSPACE');
    assert.equal(toolError(await h.call('debug_start', { workspace_id: 'proj', program: 'missing.js' })).code, 'NOT_FOUND');
    assert.equal(toolError(await h.call('debug_start', { workspace_id: 'proj' })).code, 'INVALID_ARGUMENTS');
    assert.equal(toolError(await h.call('debug_start', { workspace_id: 'proj', program: 'app.js', configuration: 'Tests' })).code, 'INVALID_ARGUMENTS');
    assert.equal(toolError(await h.call('debug_start', { workspace_id: 'proj', configuration: 'Tests', args: ['a'] })).code, 'INVALID_ARGUMENTS');
    assert.equal(assembled.approvals.pending().length, 0, 'no hold for a refused request');
    await h.close();
    await assembled.shutdown();
    await open({}, 'write');
    assert.equal(toolError(await h.call('debug_start', { workspace_id: 'proj', program: 'app.js' })).code, 'EXEC_DISABLED');
    assert.equal(toolError(await h.call('debug_breakpoints', { workspace_id: 'proj' })).code, 'EXEC_DISABLED');
  });

  it('sets, lists and clears the agent\'s breakpoints; sees the developer remove one; checks paths and lines first', async () => {
    fake.bps.push({ id: 'dev1', path: path.join(root, 'app.js'), line: 1, enabled: true });
    const set = ok<{ breakpoints: { id: string; path: string; line: number; condition?: string; log_message?: string }[] }>(
      await h.call('debug_breakpoints', { workspace_id: 'proj', set: [{ path: 'app.js', line: 2, condition: 'a > 0' }, { path: 'lib/util.js', line: 1, log_message: 'util {a}' }] }),
    );
    assert.deepEqual(set.breakpoints.map((b) => [b.path, b.line, b.condition, b.log_message]), [['app.js', 2, 'a > 0', undefined], ['lib/util.js', 1, undefined, 'util {a}']]);
    assert.ok(!set.breakpoints.some((b) => b.id === 'dev1'), 'only the agent\'s are listed');
    const past = toolError(await h.call('debug_breakpoints', { workspace_id: 'proj', set: [{ path: 'app.js', line: 1 }, { path: 'app.js', line: 99 }] }));
    assert.equal(past.code, 'INVALID_ARGUMENTS');
    assert.match(past.message, /line 99 is past the end of app\.js/);
    assert.equal(fake.bps.length, 3, 'a bad position sets none of the call');
    assert.equal(toolError(await h.call('debug_breakpoints', { workspace_id: 'proj', set: [{ path: 'linked/secret.js', line: 1 }] })).code, 'PATH_OUTSIDE_WORKSPACE');
    assert.equal(toolError(await h.call('debug_breakpoints', { workspace_id: 'proj', set: [{ path: '/etc/passwd', line: 1 }] })).code, 'PATH_OUTSIDE_WORKSPACE');
    assert.equal(toolError(await h.call('debug_breakpoints', { workspace_id: 'proj', clear: ['dev1'] })).code, 'INVALID_ARGUMENTS');
    const [first, second] = set.breakpoints;
    fake.removeByDeveloper(second?.id as string);
    const seen = ok<{ breakpoints: { id: string }[]; removed?: string[] }>(await h.call('debug_breakpoints', { workspace_id: 'proj' }));
    assert.deepEqual(seen.removed, [second?.id]);
    assert.deepEqual(seen.breakpoints.map((b) => b.id), [first?.id]);
    const cleared = ok<{ breakpoints: unknown[]; removed?: string[] }>(await h.call('debug_breakpoints', { workspace_id: 'proj', clear: [first?.id] }));
    assert.deepEqual(cleared, { breakpoints: [] }, 'its own clearing is not reported as removed, and the report was given once');
    assert.deepEqual(fake.bps.map((b) => b.id), ['dev1']);
  });

  it('waits for a stop: reason, thread, top frames with workspace paths only, bounded output', async () => {
    const s = await start();
    const running = ok<{ state: string; output: string }>(await h.call('debug_wait', { session_id: s, wait_ms: 0 }));
    assert.equal(running.state, 'running');
    const waiting = h.call('debug_wait', { session_id: s, wait_ms: 5000 });
    fake.events.emit({ session: s, kind: 'output', category: 'stdout', output: 'y'.repeat(DEBUG_LIMITS.maxOutputChars + 10) });
    fake.events.emit({ session: s, kind: 'output', category: 'telemetry', output: 'never' });
    fake.frames = [
      { id: 1, name: 'main', path: path.join(root, 'app.js'), line: 2, column: 3 },
      { id: 2, name: 'inner', path: path.join(base, 'outside', 'secret.js'), line: 1, column: 1 },
      { id: 3, name: 'linked', path: path.join(root, 'linked', 'secret.js'), line: 1, column: 1 },
      { id: 4, name: 'internal', source: 'node:internal/main', line: 9, column: 1 },
    ];
    fake.events.emit({ session: s, kind: 'stopped', reason: 'breakpoint', threadId: 7 });
    const stopped = ok<{ state: string; stop: number; reason: string; thread_id: number; frames: Record<string, unknown>[]; output: string; output_dropped?: number }>(await waiting);
    assert.equal(stopped.state, 'stopped');
    assert.equal(stopped.stop, 1);
    assert.equal(stopped.reason, 'breakpoint');
    assert.equal(stopped.thread_id, 7);
    assert.deepEqual(stopped.frames, [
      { id: 1, name: 'main', workspace_id: 'proj', path: 'app.js', line: 2, column: 3 },
      { id: 2, name: 'inner', source: 'secret.js', line: 1, column: 1 },
      { id: 3, name: 'linked', source: 'secret.js', line: 1, column: 1 },
      { id: 4, name: 'internal', source: 'node:internal/main', line: 9, column: 1 },
    ]);
    assert.ok(!JSON.stringify(stopped).includes(base), 'no absolute path');
    assert.equal(stopped.output.length, DEBUG_LIMITS.maxOutputChars);
    assert.equal(stopped.output_dropped, 10);
    assert.equal(ok<{ output: string }>(await h.call('debug_wait', { session_id: s, wait_ms: 0 })).output, '', 'output is read once');
    const t0 = Date.now();
    const timedOut = ok<{ state: string }>(await h.call('debug_control', { session_id: s, action: 'continue' }));
    assert.equal(timedOut.state, 'running');
    assert.equal(ok<{ state: string }>(await h.call('debug_wait', { session_id: s, wait_ms: 200 })).state, 'running');
    assert.ok(Date.now() - t0 >= 190, 'waited wait_ms');
    assert.equal(toolError(await h.call('debug_wait', { session_id: s, wait_ms: DEBUG_LIMITS.maxWaitMs + 1 })).code, 'INVALID_ARGUMENTS');
  });

  it('controls a stopped thread and refuses what the state does not allow', async () => {
    const s = await start();
    assert.equal(toolError(await h.call('debug_control', { session_id: s, action: 'step_over' })).code, 'NOT_STOPPED');
    assert.equal(toolError(await h.call('debug_evaluate', { session_id: s, expression: 'a' })).code, 'NOT_STOPPED');
    assert.equal(toolError(await h.call('debug_stack', { session_id: s })).code, 'NOT_STOPPED');
    assert.equal(ok<{ state: string }>(await h.call('debug_control', { session_id: s, action: 'pause' })).state, 'running');
    stopAt(s, [{ id: 1, line: 2 }]);
    for (const action of ['step_over', 'step_in', 'step_out', 'continue']) {
      ok(await h.call('debug_control', { session_id: s, action }));
      stopAt(s, [{ id: 1, line: 2 }]);
    }
    assert.deepEqual(fake.controls.map((c) => [c.action, c.threadId]), [['pause', 1], ['next', 7], ['stepIn', 7], ['stepOut', 7], ['continue', 7]]);
    assert.equal(toolError(await h.call('debug_wait', { session_id: 'nope' })).code, 'INVALID_ARGUMENTS');
    assert.equal(ok<{ state: string }>(await h.call('debug_control', { session_id: s, action: 'stop' })).state, 'terminated');
    assert.deepEqual(fake.stopped, [s]);
    const ended = toolError(await h.call('debug_control', { session_id: s, action: 'continue' }));
    assert.equal(ended.code, 'DEBUG_SESSION_ENDED');
    assert.match(ended.message, /debug_control stop ended it/);
  });

  it('says a session the developer stopped has ended, and reports the exit code of one that exited', async () => {
    const s = await start();
    fake.events.emit({ session: s, kind: 'terminated' });
    const ended = toolError(await h.call('debug_evaluate', { session_id: s, expression: 'a' }));
    assert.equal(ended.code, 'DEBUG_SESSION_ENDED');
    assert.match(ended.message, /stopped outside your calls/);
    assert.equal(ok<{ state: string }>(await h.call('debug_wait', { session_id: s })).state, 'terminated', 'debug_wait answers for an ended session');
    const s2 = await start();
    fake.events.emit({ session: s2, kind: 'exited', exitCode: 3 });
    fake.events.emit({ session: s2, kind: 'terminated' });
    const w = ok<{ state: string; exit_code: number }>(await h.call('debug_wait', { session_id: s2 }));
    assert.deepEqual([w.state, w.exit_code], ['terminated', 3]);
    assert.match(toolError(await h.call('debug_stack', { session_id: s2 })).message, /exited with code 3/);
  });

  it('refuses frame ids and variable refs of an earlier stop (STALE_REFERENCE) and ids never given', async () => {
    const s = await start();
    stopAt(s, [{ id: 1, line: 2 }]);
    fake.scopeList = [{ name: 'Local', ref: 10, expensive: false }];
    fake.vars.set(10, [{ name: 'obj', value: '{…}', ref: 11 }]);
    fake.vars.set(11, [{ name: 'x', value: '1', ref: 0 }]);
    ok(await h.call('debug_wait', { session_id: s, wait_ms: 0 }));
    ok(await h.call('debug_variables', { session_id: s, frame_id: 1 }));
    ok(await h.call('debug_control', { session_id: s, action: 'step_over' }));
    const running = toolError(await h.call('debug_variables', { session_id: s, ref: 11 }));
    assert.equal(running.code, 'NOT_STOPPED');
    stopAt(s, [{ id: 5, line: 3 }]);
    const staleFrame = toolError(await h.call('debug_variables', { session_id: s, frame_id: 1 }));
    assert.equal(staleFrame.code, 'STALE_REFERENCE');
    assert.match(staleFrame.message, /frame_id 1 is from stop 1 .* now at stop 2/);
    assert.deepEqual(staleFrame.details, { frame_id: 1, issued_at_stop: 1, stop: 2, state: 'stopped' });
    assert.equal(toolError(await h.call('debug_variables', { session_id: s, ref: 11 })).code, 'STALE_REFERENCE');
    assert.equal(toolError(await h.call('debug_evaluate', { session_id: s, expression: 'a', frame_id: 1 })).code, 'STALE_REFERENCE');
    const never = toolError(await h.call('debug_variables', { session_id: s, frame_id: 99 }));
    assert.equal(never.code, 'INVALID_ARGUMENTS');
    // The current stop's ids work once read afresh.
    const stack = ok<{ frames: { id: number }[] }>(await h.call('debug_stack', { session_id: s }));
    assert.deepEqual(stack.frames.map((f) => f.id), [5]);
    ok(await h.call('debug_variables', { session_id: s, frame_id: 5 }));
    assert.equal(ok<{ result: string }>(await h.call('debug_evaluate', { session_id: s, expression: 'a', frame_id: 5 })).result, 'value of a');
    assert.equal(toolError(await h.call('debug_variables', { session_id: s })).code, 'INVALID_ARGUMENTS', 'frame_id or ref');
  });

  it('bounds variables, stacks and results, and says by how much', async () => {
    const s = await start();
    fake.frames = Array.from({ length: 130 }, (_, i) => ({ id: i + 1, name: `f${i}`, path: path.join(root, 'app.js'), line: 1, column: 1 }));
    fake.events.emit({ session: s, kind: 'stopped', reason: 'pause', threadId: 1 });
    const page = ok<{ frames: unknown[]; total: number; next_start: number }>(await h.call('debug_stack', { session_id: s }));
    assert.deepEqual([page.frames.length, page.total, page.next_start], [20, 130, 20]);
    const last = ok<{ frames: unknown[]; next_start?: number }>(await h.call('debug_stack', { session_id: s, start: 120, count: 100 }));
    assert.deepEqual([last.frames.length, last.next_start], [10, undefined]);
    assert.equal(toolError(await h.call('debug_stack', { session_id: s, count: 101 })).code, 'INVALID_ARGUMENTS');
    fake.scopeList = [{ name: 'Local', ref: 10, expensive: false }, { name: 'Global', ref: 20, expensive: true }];
    fake.vars.set(10, [
      { name: 'long', value: 'v'.repeat(DEBUG_LIMITS.maxValueChars + 50), type: 'string', ref: 0 },
      { name: 'arr', value: 'Array(400)', ref: 30 },
    ]);
    fake.vars.set(30, Array.from({ length: 400 }, (_, i) => ({ name: String(i), value: String(i), ref: 0 })));
    fake.vars.set(20, [{ name: 'never', value: 'read', ref: 0 }]);
    const frame = ok<{ scopes: unknown[]; variables: { name: string; value: string; ref?: number }[]; omitted?: number }>(await h.call('debug_variables', { session_id: s, frame_id: 1, depth: 2 }));
    assert.deepEqual(frame.scopes, [{ name: 'Local', ref: 10 }, { name: 'Global', ref: 20, expensive: true }]);
    assert.equal(frame.variables[0]?.name, 'Local.long');
    assert.equal(frame.variables[0]?.value, `${'v'.repeat(DEBUG_LIMITS.maxValueChars)}… (+50 chars)`);
    assert.deepEqual(frame.variables[1], { name: 'Local.arr', value: 'Array(400)', ref: 30 });
    assert.equal(frame.variables[2]?.name, 'Local.arr[0]');
    assert.equal(frame.variables.length, 102, 'depth 2 expands arr to the default count of 100');
    assert.equal(frame.omitted, 300);
    assert.ok(!frame.variables.some((v) => v.name.startsWith('Global')), 'an expensive scope is not read');
    const children = ok<{ variables: { name: string }[]; next_start?: number; omitted?: number }>(await h.call('debug_variables', { session_id: s, ref: 30, start: 350, count: 40 }));
    assert.deepEqual([children.variables[0]?.name, children.variables.length, children.next_start, children.omitted], ['350', 40, 390, 10]);
    const whole = ok<{ variables: unknown[]; omitted?: number }>(await h.call('debug_variables', { session_id: s, ref: 30, count: DEBUG_LIMITS.maxVariables }));
    assert.deepEqual([whole.variables.length, whole.omitted], [DEBUG_LIMITS.maxVariables, 100]);
    const big = ok<{ result: string }>(await h.call('debug_evaluate', { session_id: s, expression: 'big' }));
    assert.equal(big.result, `${'x'.repeat(DEBUG_LIMITS.maxResultChars)}… (+1000 chars)`);
    assert.deepEqual(fake.evaluations.at(-1), { frameId: 1, expression: 'big' }, 'the top frame by default');
  });
});
