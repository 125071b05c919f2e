import * as assert from 'node:assert/strict';
import * as childProcess from 'node:child_process';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import * as vscode from 'vscode';
import { activateExtension, call, callError, connectClient, connectionFromCommand } from './helpers';

interface Read {
  chunk: string;
  cursor: number;
  eof: boolean;
  output_lost: boolean;
}

interface Status {
  state: 'running' | 'exited';
  termination?: string;
  exit_code?: number;
  command: string[];
  tty: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `probe` until it returns a value (not undefined), or fails naming `what`. */
async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/**
 * Everything the terminal's Pseudoterminal writes from now on. The extension passes its Pseudoterminal in the
 * terminal's creation options, which the extension host hands back as is.
 */
function capture(terminal: vscode.Terminal): { text(): string; dispose(): void } {
  const options = terminal.creationOptions as vscode.ExtensionTerminalOptions;
  assert.ok(options.pty, 'the terminal is an extension terminal with a Pseudoterminal');
  let text = '';
  const sub = options.pty.onDidWrite((data) => (text += data));
  return { text: () => text, dispose: () => sub.dispose() };
}

describe('Processes inside VS Code: terminals and the MCP process tools', () => {
  let client: Client;
  let workspaceId: string;
  const started: string[] = [];

  before(async () => {
    await activateExtension();
    const { url, token } = await connectionFromCommand();
    client = await connectClient(url, token);
    const info = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    // The second folder: other suites patch the first, and a live command occupies its workspace.
    const ws = info.workspaces[1] ?? info.workspaces[0];
    assert.ok(ws, 'a workspace is open');
    workspaceId = ws.id;
  });

  afterEach(async () => {
    for (const id of started.splice(0)) {
      try {
        await call(client, 'terminate_process', { process_id: id });
      } catch {
        // forgotten or already gone
      }
    }
    for (const t of vscode.window.terminals) if (t.name.startsWith('CodeSpace: ')) t.dispose();
  });

  after(async () => {
    await client?.close();
  });

  async function exec(command: string[], tty = false): Promise<string> {
    const r = await call<{ process_id: string; dispatch_status: string }>(client, 'exec_command', { workspace_id: workspaceId, command, tty });
    assert.equal(r.dispatch_status, 'confirmed');
    started.push(r.process_id);
    return r.process_id;
  }

  function terminalNamed(name: string): Promise<vscode.Terminal> {
    return waitFor(`a terminal named ${JSON.stringify(name)}`, () => vscode.window.terminals.find((t) => t.name === name));
  }

  /** read_process by cursor with wait_ms until `pattern` shows up in the output; returns all output read. */
  async function readUntil(id: string, pattern: RegExp, ms = 15_000): Promise<string> {
    let cursor = 0;
    let out = '';
    return waitFor(`${pattern} in the output of ${id}`, async () => {
      const r = await call<Read>(client, 'read_process', { process_id: id, cursor, wait_ms: 1000 });
      out += r.chunk;
      cursor = r.cursor;
      if (pattern.test(out)) return out;
      if (r.eof) throw new Error(`${id} ended without ${pattern}; output: ${JSON.stringify(out)}`);
      return undefined;
    }, ms);
  }

  /** Reads to eof, as an agent polls: by cursor, with wait_ms. */
  async function readToEof(id: string): Promise<string> {
    let cursor = 0;
    let out = '';
    await waitFor(`eof of ${id}`, async () => {
      const r = await call<Read>(client, 'read_process', { process_id: id, cursor, wait_ms: 2000 });
      assert.ok(r.cursor >= cursor, 'the cursor never goes back');
      out += r.chunk;
      cursor = r.cursor;
      return r.eof ? true : undefined;
    });
    return out;
  }

  function exitedStatus(id: string): Promise<Status> {
    return waitFor(`${id} to exit`, async () => {
      const s = await call<Status>(client, 'process_status', { process_id: id });
      return s.state === 'exited' ? s : undefined;
    });
  }

  it('shows a command started over MCP in a terminal named after it', async () => {
    const id = await exec(['sh', '-c', 'echo hello-from-agent; sleep 30'], true);
    const terminal = await terminalNamed('CodeSpace: sh -c echo hello-from-agent; sleep 30');
    assert.equal((terminal.creationOptions as vscode.ExtensionTerminalOptions).isTransient, true, 'not restored after a reload');
    assert.match(await readUntil(id, /hello-from-agent/), /hello-from-agent\r\n/, 'a PTY ends lines with CRLF');
    const s = await call<Status>(client, 'process_status', { process_id: id });
    assert.equal(s.state, 'running');
    assert.equal(s.tty, true);
  });

  it('shortens a long command in the terminal name', async () => {
    await exec(['sh', '-c', 'sleep 30 # a very long comment that makes the command line long'], false);
    const t = await terminalNamed('CodeSpace: sh -c sleep 30 # a very long comment th…');
    assert.ok(t);
  });

  it('sends what the developer types to a PTY process and mirrors its output and end', async () => {
    const id = await exec(['sh', '-c', 'read line; echo "got:$line"'], true);
    const terminal = await terminalNamed('CodeSpace: sh -c read line; echo "got:$line"');
    const seen = capture(terminal);
    try {
      terminal.sendText('typed-by-user'); // through the Pseudoterminal's handleInput
      assert.match(await readUntil(id, /got:typed-by-user/), /typed-by-user/);
      const status = await exitedStatus(id);
      assert.equal(status.exit_code, 0);
      const text = await waitFor('the exit line in the terminal', () => (seen.text().includes('[process exited with code 0]') ? seen.text() : undefined));
      assert.match(text, /got:typed-by-user\r\n/, 'live output reached the terminal');
      assert.ok(vscode.window.terminals.includes(terminal), 'the terminal stays open after the exit');
    } finally {
      seen.dispose();
    }
  });

  it('gives a pipe process line input with echo, and CRLF line ends in the terminal', async () => {
    const id = await exec(['sh', '-c', 'read l;echo got:$l;echo 2nd;exit 4'], false);
    const terminal = await terminalNamed('CodeSpace: sh -c read l;echo got:$l;echo 2nd;exit 4');
    const seen = capture(terminal);
    try {
      terminal.sendText('typed-into-pipe');
      assert.equal(await readToEof(id), 'got:typed-into-pipe\n2nd\n', 'the agent reads the bytes as written');
      const status = await exitedStatus(id);
      assert.equal(status.termination, 'exited');
      assert.equal(status.exit_code, 4);
      const text = await waitFor('the exit line', () => (seen.text().includes('[process exited with code 4]') ? seen.text() : undefined));
      assert.ok(text.includes('typed-into-pipe\r\n'), `the typed line is echoed: ${JSON.stringify(text)}`);
      assert.ok(text.includes('got:typed-into-pipe\r\n2nd\r\n'), `lone LF shown as CRLF: ${JSON.stringify(text)}`);
    } finally {
      seen.dispose();
    }
  });

  it('closing the terminal terminates the process', async () => {
    const id = await exec(['sh', '-c', 'sleep 30; echo close-test'], true);
    const terminal = await terminalNamed('CodeSpace: sh -c sleep 30; echo close-test');
    terminal.dispose();
    const status = await exitedStatus(id);
    assert.equal(status.termination, 'terminated');
  });

  it('resizing the terminal in the editor resizes the PTY', async () => {
    const id = await exec(['sh', '-c', 'while read x; do stty size; done'], true);
    const terminal = await terminalNamed('CodeSpace: sh -c while read x; do stty size; done');
    terminal.show(true);
    const sizeNow = async (): Promise<string> => {
      const before = (await call<Read>(client, 'read_process', { process_id: id, cursor: 0 })).cursor;
      terminal.sendText('size');
      let cursor = before;
      let out = '';
      return waitFor('a `stty size` answer', async () => {
        const r = await call<Read>(client, 'read_process', { process_id: id, cursor, wait_ms: 1000 });
        out += r.chunk;
        cursor = r.cursor;
        return /^(\d+ \d+)\r?$/m.exec(out)?.[1];
      });
    };
    const first = await sizeNow();
    await vscode.commands.executeCommand('workbench.action.toggleMaximizedPanel');
    try {
      await waitFor('the PTY to follow the maximized panel', async () => {
        const s = await sizeNow();
        return s !== first ? s : undefined;
      });
    } finally {
      await vscode.commands.executeCommand('workbench.action.toggleMaximizedPanel');
    }
  });

  it('runs a command, polls it by cursor with wait_ms and reports how it ended', async () => {
    const id = await exec(['sh', '-c', 'for i in 1 2 3; do echo line-$i; sleep 0.2; done']);
    assert.equal(await readToEof(id), 'line-1\nline-2\nline-3\n');
    const status = await exitedStatus(id);
    assert.equal(status.termination, 'exited');
    assert.equal(status.exit_code, 0);
    assert.deepEqual(status.command, ['sh', '-c', 'for i in 1 2 3; do echo line-$i; sleep 0.2; done']);
  });

  it('reports the exit code of a failing command', async () => {
    const id = await exec(['sh', '-c', 'exit 3']);
    assert.equal(await readToEof(id), '');
    const status = await exitedStatus(id);
    assert.equal(status.termination, 'exited');
    assert.equal(status.exit_code, 3);
  });

  it('answers WORKSPACE_BUSY to a second exclusive command while the first runs', async () => {
    const first = await exec(['sh', '-c', 'sleep 30 # occupant']);
    const e = await callError(client, 'exec_command', { workspace_id: workspaceId, command: ['echo', 'second'] });
    assert.equal(e.code, 'WORKSPACE_BUSY');
    assert.equal((e.details?.occupant as { process_id?: string } | undefined)?.process_id, first);
    const ended = await call<Status>(client, 'terminate_process', { process_id: first });
    assert.equal(ended.termination, 'terminated');
    const next = await exec(['echo', 'second']);
    assert.equal(await readToEof(next), 'second\n');
  });
  // Last in this suite: a flood leaves the workbench busy rendering for a while.
  it('mirrors a flood only as fast as the terminal takes it, showing what it skipped, while the agent reads it all', async function () {
    this.timeout(420_000);
    const MIB = 1024 * 1024;
    // 256 MiB: enough to overrun any terminal, few enough for a loaded test machine (the bench floods 1 GiB).
    const total = 256 * MIB;
    const script = `head -c ${total} /dev/zero | tr '\\0' a; echo; echo flood-done`;
    const { url, token } = await connectionFromCommand();
    // The agent runs in a process of its own, so what grows here is the extension's memory, not the client's.
    const reader = childProcess.spawn(process.execPath, [path.join(__dirname, 'floodReader.js'), url, token, workspaceId, script], {
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    reader.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    reader.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const readerDone = new Promise<number | null>((resolve) => reader.once('exit', (code) => resolve(code)));

    const before = process.memoryUsage().rss;
    let peak = before;
    let atPeak = process.memoryUsage();
    const sampler = setInterval(() => {
      const m = process.memoryUsage();
      if (m.rss > peak) [peak, atPeak] = [m.rss, m];
    }, 20);
    let shownChars = 0;
    let markers = 0;
    let sub: vscode.Disposable | undefined;
    let terminal: vscode.Terminal | undefined;
    try {
      terminal = await terminalNamed('CodeSpace: sh -c head -c 268435456 /dev/zero | tr …');
      // Count what the terminal is given, without keeping it.
      sub = (terminal.creationOptions as vscode.ExtensionTerminalOptions).pty.onDidWrite((data) => {
        shownChars += data.length;
        if (/\[… \d+ bytes not shown …\]/.test(data)) markers++;
      });
      assert.equal(await readerDone, 0, `the reader failed: ${stderr}`);
      const result = JSON.parse(stdout) as { process_id: string; cursor: number; tail: string; exit_code?: number };
      started.push(result.process_id);
      assert.equal(result.exit_code, 0);
      assert.match(result.tail, /a\r\nflood-done\r\n$/, 'the agent read to the end');
      assert.equal(result.cursor, total + '\r\nflood-done\r\n'.length);
    } finally {
      clearInterval(sampler);
      sub?.dispose();
      reader.kill();
      // The workbench may still be rendering the backlog: close this terminal so nothing after it waits on that.
      terminal?.dispose();
    }
    // The RSS figures are printed, not asserted: during such a flood the extension host's heap also grows for
    // reasons outside the mirror (the same flood with the mirror switched off grows it by about as much).
    const growthMib = (peak - before) / MIB;
    console.log(`      ${total / MIB} MiB flood: extension host RSS ${Math.round(before / MIB)} MiB before, peak +${growthMib.toFixed(1)} MiB; terminal given ${Math.round(shownChars / MIB)} Mi characters, ${markers} "not shown" marker(s); at the peak (MiB) ${Object.entries(atPeak).map(([k, v]) => `${k} ${Math.round(v / MIB)}`).join(', ')}`);
    assert.ok(markers > 0, 'the terminal fell behind and says so');
    assert.ok(shownChars < total, `the terminal was given ${shownChars} characters of ${total} bytes: it was paced, not flooded`);
  });
});
