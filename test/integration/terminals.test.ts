import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { call, connectToFirstFolder } from './helpers';

const SHOW = 'codespace.showProcessTerminal';
const PREFIX = 'CodeSpace: ';

interface Status {
  state: 'running' | 'exited';
  exit_code?: number;
  ended_at?: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

const agentTerminals = (): vscode.Terminal[] => vscode.window.terminals.filter((t) => t.name.startsWith(PREFIX));

/** Everything the terminal's Pseudoterminal (passed back as is in its creation options) writes from now on. */
function capture(terminal: vscode.Terminal): { text(): string; dispose(): void } {
  const options = terminal.creationOptions as vscode.ExtensionTerminalOptions;
  assert.ok(options.pty, 'an extension terminal with a Pseudoterminal');
  let text = '';
  const sub = options.pty.onDidWrite((data) => (text += data));
  return { text: () => text, dispose: () => sub.dispose() };
}

async function setSetting(key: string, value: number | undefined): Promise<void> {
  await vscode.workspace.getConfiguration('codespace').update(key, value, vscode.ConfigurationTarget.Global);
}

describe('Agent terminals: a cap on open ones, others on demand, finished ones close by themselves', () => {
  let client: Client;
  let wsId: string;
  let own: vscode.Terminal;
  const started: string[] = [];

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
    for (const t of agentTerminals()) t.dispose();
    await waitFor('no agent terminal left from other suites', () => (agentTerminals().length === 0 ? true : undefined));
    own = vscode.window.createTerminal({ name: 'developer-own' });
  });

  afterEach(async () => {
    await setSetting('terminals.maxLiveMirrors', undefined);
    await setSetting('terminals.closeExitedAfterSeconds', undefined);
    for (const id of started.splice(0)) {
      try {
        await call(client, 'terminate_process', { process_id: id });
      } catch {
        // already forgotten
      }
    }
    for (const t of agentTerminals()) t.dispose();
    await waitFor('the agent terminals to close', () => (agentTerminals().length === 0 ? true : undefined));
    assert.ok(vscode.window.terminals.includes(own), "the developer's own terminal is still open");
    assert.equal(own.exitStatus, undefined, "the developer's own terminal was not ended");
  });

  after(async () => {
    own?.dispose();
    await client?.close();
  });

  async function exec(command: string[]): Promise<string> {
    const r = await call<{ process_id: string; dispatch_status: string }>(client, 'exec_command', { workspace_id: wsId, command, occupancy: 'shared' });
    assert.equal(r.dispatch_status, 'confirmed');
    started.push(r.process_id);
    return r.process_id;
  }

  function exited(id: string): Promise<Status> {
    return waitFor(`${id} to exit`, async () => {
      const s = await call<Status>(client, 'process_status', { process_id: id });
      return s.state === 'exited' ? s : undefined;
    });
  }

  it('opens at most maxLiveMirrors terminals; Show Agent Process Terminal opens another with its output so far', async function () {
    this.timeout(60_000);
    await setSetting('terminals.maxLiveMirrors', 2);
    let peak = 0;
    const sample = (): void => void (peak = Math.max(peak, agentTerminals().length));
    const opened = vscode.window.onDidOpenTerminal(sample);
    const sampler = setInterval(sample, 5);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        ids.push(await exec(['sh', '-c', `echo hi-${i}; sleep 2`]));
        sample();
      }
      await Promise.all(ids.map((id) => exited(id)));
      sample();
    } finally {
      clearInterval(sampler);
      opened.dispose();
    }
    const names = ids.map((_, i) => `${PREFIX}sh -c echo hi-${i}; sleep 2`);
    assert.equal(peak, 2, `at most 2 agent terminals were open at once (seen: ${peak})`);
    assert.deepEqual(
      names.filter((n) => agentTerminals().some((t) => t.name === n)),
      names.slice(0, 2),
      'the first two got a terminal; the others none, not even once slots freed up',
    );

    // Unmirrored processes are still supervised and readable as always.
    const read = await call<{ chunk: string; eof: boolean }>(client, 'read_process', { process_id: ids[4], cursor: 0 });
    assert.equal(read.chunk, 'hi-4\n');
    assert.equal(read.eof, true);

    await vscode.commands.executeCommand(SHOW, ids[3]);
    const terminal = vscode.window.terminals.find((t) => t.name === names[3]);
    assert.ok(terminal, 'the command opened the terminal of an unmirrored process');
    const seen = capture(terminal);
    try {
      const text = await waitFor('the replayed output and the exit line', () => (seen.text().includes('[process exited with code 0]') ? seen.text() : undefined));
      assert.match(text, /hi-3\r\n/, `the output so far is replayed: ${JSON.stringify(text)}`);
    } finally {
      seen.dispose();
    }
    await waitFor('the shown terminal to be the active one', () => (vscode.window.activeTerminal === terminal ? true : undefined));
    // To stay within 2, a finished terminal made room (the extension host hears of a close a moment later).
    await waitFor('2 agent terminals', () => (agentTerminals().length === 2 ? true : undefined));
    assert.ok(vscode.window.terminals.includes(terminal), 'the asked-for terminal stays');

    // Showing it again shows the same terminal, not a second one.
    await vscode.commands.executeCommand(SHOW, ids[3]);
    assert.equal(vscode.window.terminals.filter((t) => t.name === names[3]).length, 1);
  });

  it('closes a finished command’s terminal closeExitedAfterSeconds after its exit', async function () {
    this.timeout(30_000);
    await setSetting('terminals.closeExitedAfterSeconds', 1);
    const id = await exec(['sh', '-c', 'echo bye; sleep 0.3']);
    const terminal = await waitFor('its terminal', () => vscode.window.terminals.find((t) => t.name === `${PREFIX}sh -c echo bye; sleep 0.3`));
    let closedAt = 0;
    const sub = vscode.window.onDidCloseTerminal((t) => {
      if (t === terminal) closedAt = Date.now();
    });
    try {
      const status = await exited(id);
      await waitFor('the finished terminal to close by itself', () => (closedAt > 0 ? true : undefined), 8000);
      const after = closedAt - Date.parse(status.ended_at as string);
      assert.ok(after >= 950 && after < 8000, `closed ${after} ms after the exit`);
    } finally {
      sub.dispose();
    }
  });

  it('keeps a finished command’s terminal open with closeExitedAfterSeconds 0', async function () {
    this.timeout(30_000);
    await setSetting('terminals.closeExitedAfterSeconds', 0);
    const id = await exec(['sh', '-c', 'echo stay']);
    const terminal = await waitFor('its terminal', () => vscode.window.terminals.find((t) => t.name === `${PREFIX}sh -c echo stay`));
    await exited(id);
    await sleep(2500);
    assert.ok(vscode.window.terminals.includes(terminal), 'still open 2.5 s after the exit');
  });

  it('rejects a process id it does not know, clearly', async () => {
    await assert.rejects(
      Promise.resolve(vscode.commands.executeCommand(SHOW, 'p-does-not-exist')),
      (err: Error) => /no agent process "p-does-not-exist"/.test(err.message),
    );
  });
});
