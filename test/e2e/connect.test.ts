// End to end: connecting agents with no port or token typed by hand. Two VS Code windows (two browser pages on two
// folders of one code-server: two extension hosts) publish two discovery records; the codespace-mcp bridge
// (dist/stdio.js) under a real MCP SDK client picks its window by path and by the terminal environment, and keeps
// its session across window reloads; a command typed into a VS Code terminal sees CODESPACE_MCP_URL/TOKEN, a
// process CodeSpace starts does not.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { execFile } from 'node:child_process';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Page } from 'playwright-core';
import type { FoundRecord } from '../../src/features/connect/common/record';
import { DISCOVERY_DIR_ENV, readRecords, readToken } from '../../src/features/connect/node/discoveryFiles';
import { REPO_ROOT, startWorkbench } from './index';
import type { Workbench } from './index';
import { call } from './mcpClient';

const BRIDGE = path.join(REPO_ROOT, 'dist', 'stdio.js');
const execFileP = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('connecting an agent to the right window', function () {
  this.timeout(10 * 60_000);
  let wb: Workbench;
  let runtime: string;
  let dir: string;
  let savedRuntime: string | undefined;
  let page2: Page | undefined;
  let root1: string;
  let root2: string;
  const clients: Client[] = [];
  const bridgeLog: string[] = [];

  async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 120_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = probe();
      if (v !== undefined) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(250);
    }
  }

  const recordOf = (root: string): FoundRecord | undefined => readRecords(dir).find((f) => f.record.workspaceFolders.includes(root));

  async function bridge(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BRIDGE, ...args],
      cwd: options.cwd ?? os.tmpdir(),
      env: { PATH: process.env.PATH ?? '', [DISCOVERY_DIR_ENV]: dir, ...options.env },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (c: Buffer) => bridgeLog.push(c.toString('utf8')));
    const client = new Client({ name: 'e2e-bridge', version: '1' });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function workspaceOf(client: Client): Promise<string> {
    const info = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    assert.equal(info.workspaces.length, 1);
    return info.workspaces[0]?.id as string;
  }

  async function reloadAndWait(page: Page, root: string, previousCreatedAt: string): Promise<FoundRecord> {
    await page.reload();
    await page.locator('.monaco-workbench').first().waitFor({ timeout: 120_000 });
    return waitFor('the reloaded window record', () => {
      const f = recordOf(root);
      return f && f.record.createdAt !== previousCreatedAt ? f : undefined;
    });
  }

  before(async () => {
    // A discovery folder of this run only (CODESPACE_DISCOVERY_DIR): the extension hosts inherit it from code-server,
    // which inherits ours.
    runtime = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-e2e-run-'));
    fs.chmodSync(runtime, 0o700);
    dir = path.join(runtime, 'codespace');
    savedRuntime = process.env[DISCOVERY_DIR_ENV];
    process.env[DISCOVERY_DIR_ENV] = dir;
    wb = await startWorkbench({ workspace: 'workspace' });
    await wb.waitForActivation();
    root1 = fs.realpathSync(wb.workspaceDir);
    root2 = fs.realpathSync(path.join(path.dirname(wb.workspaceDir), 'workspace2'));
    assert.ok(fs.existsSync(root2), 'the second fixture folder was copied');
  });

  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await page2?.close().catch(() => undefined);
    if (wb) {
      await wb.screenshot('e2e-connect-final').catch(() => undefined);
      await wb.stop();
    }
    if (savedRuntime === undefined) delete process.env[DISCOVERY_DIR_ENV];
    else process.env[DISCOVERY_DIR_ENV] = savedRuntime;
    fs.rmSync(runtime, { recursive: true, force: true });
  });

  it('two windows: two servers on two ports, two records; the bridge picks its window by path', async () => {
    const first = await waitFor('the first window record', () => recordOf(root1));
    page2 = await wb.browser.newPage();
    const url2 = new URL(wb.url);
    url2.searchParams.set('folder', root2);
    await page2.goto(url2.toString(), { timeout: wb.navigationTimeoutMs });
    await page2.locator('.monaco-workbench').first().waitFor({ timeout: 120_000 });
    const second = await waitFor('the second window record', () => recordOf(root2));
    assert.notEqual(first.record.port, second.record.port);
    assert.notEqual(first.record.pid, second.record.pid, 'two extension hosts');
    for (const f of [first, second]) {
      assert.equal(fs.lstatSync(f.file).mode & 0o777, 0o600);
      assert.ok(!fs.readFileSync(f.file, 'utf8').includes('"token"'), 'no token in the record');
    }
    assert.equal(fs.lstatSync(dir).mode & 0o777, 0o700);

    const c2 = await bridge(['--workspace', path.join(root2, 'docs')]);
    const id2 = await workspaceOf(c2);
    const readme2 = await call<{ content: string }>(c2, 'read', { workspace_id: id2, path: 'README.md' });
    assert.equal(readme2.content, fs.readFileSync(path.join(root2, 'README.md'), 'utf8'));
    const c1 = await bridge([], { cwd: path.join(root1, 'src') });
    const id1 = await workspaceOf(c1);
    const readme1 = await call<{ content: string }>(c1, 'read', { workspace_id: id1, path: 'README.md' });
    assert.equal(readme1.content, fs.readFileSync(path.join(root1, 'README.md'), 'utf8'));
  });

  it('a command typed into a VS Code terminal sees the variables; a process CodeSpace starts does not; the bridge uses them', async () => {
    const { page } = wb;
    await wb.runCommand('Terminal: Create New Terminal');
    const textarea = page.locator('.terminal-wrapper.active .xterm-helper-textarea, .xterm-helper-textarea').last();
    await textarea.waitFor({ state: 'attached', timeout: 60_000 });
    // Keys typed before the shell is up can be lost (a loaded machine takes seconds to start it): the command is typed
    // again, after Ctrl+C clears whatever half of it arrived, until its file appears (it overwrites the file).
    const envFile = (): string | undefined => {
      const t = wb.readWorkspaceFile('terminal-env.txt');
      return t && t.includes('CODESPACE_MCP_TOKEN=') ? t : undefined;
    };
    let text: string | undefined;
    for (const deadline = Date.now() + 120_000; text === undefined; ) {
      if (Date.now() > deadline) throw new Error('timed out waiting for terminal-env.txt');
      await textarea.focus();
      await page.keyboard.press('Control+C');
      await page.keyboard.type('env | grep ^CODESPACE_MCP_ > terminal-env.txt\n', { delay: 10 });
      text = await waitFor('terminal-env.txt', envFile, 15_000).catch(() => undefined);
    }
    const env = Object.fromEntries(text.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    const first = recordOf(root1) as FoundRecord;
    assert.equal(env.CODESPACE_MCP_URL, first.record.url, 'the terminal names its own window');
    assert.ok((env.CODESPACE_MCP_TOKEN ?? '').length >= 40);

    // From that environment, with the working directory in the other window's folder: the environment decides.
    const client = await bridge([], { cwd: root2, env: { CODESPACE_MCP_URL: env.CODESPACE_MCP_URL as string, CODESPACE_MCP_TOKEN: env.CODESPACE_MCP_TOKEN as string } });
    const id = await workspaceOf(client);
    await call(client, 'exec_command', { workspace_id: id, command: ['sh', '-c', 'env > agent-env.txt'] });
    const agentEnv = await waitFor('agent-env.txt', () => {
      const t = wb.readWorkspaceFile('agent-env.txt');
      return t && t.includes('PATH=') ? t : undefined;
    }, 60_000);
    assert.doesNotMatch(agentEnv, /CODESPACE_MCP_(URL|TOKEN)/, 'agent processes never get the window variables');
    assert.ok(!agentEnv.includes(env.CODESPACE_MCP_TOKEN as string), 'nor the token under another name');
  });

  it('a real client on the bridge keeps working across window reloads, with the same port and with a new one', async () => {
    const client = await bridge(['--workspace', root1]);
    const id = await workspaceOf(client);
    const before = recordOf(root1) as FoundRecord;

    // A plain reload: the window asks for its previous port again and gets it.
    const again = await reloadAndWait(wb.page, root1, before.record.createdAt);
    assert.equal(again.record.port, before.record.port, 'the port survives a reload');
    assert.equal((await call<{ content: string }>(client, 'read', { workspace_id: id, path: 'README.md' })).content.length > 0, true);

    // A reload while another program takes the port the moment it is free: the window gets another port.
    let squatter: http.Server | undefined;
    let stop = false;
    const grab = (async () => {
      while (!stop && !squatter) {
        const candidate = http.createServer((_req, res) => res.writeHead(404).end());
        const ok = await new Promise<boolean>((resolve) => {
          candidate.once('error', () => resolve(false));
          candidate.listen(again.record.port, '127.0.0.1', () => resolve(true));
        });
        if (ok) squatter = candidate;
        else await sleep(5);
      }
    })();
    try {
      const moved = await reloadAndWait(wb.page, root1, again.record.createdAt);
      stop = true;
      await grab;
      assert.ok(squatter, 'the old port was taken during the reload');
      assert.notEqual(moved.record.port, again.record.port, 'the reloaded window listens elsewhere');
      assert.equal(readRecords(dir).filter((f) => f.record.workspaceFolders.includes(root1)).length, 1, 'the old record is gone');
      const read = await call<{ content: string }>(client, 'read', { workspace_id: id, path: 'README.md' });
      assert.equal(read.content, fs.readFileSync(path.join(root1, 'README.md'), 'utf8'));
      assert.match(bridgeLog.join(''), /session re-initialized/);
    } finally {
      stop = true;
      const s = squatter;
      if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
    }
  });

  it('clients nobody here wrote: inspector-cli over HTTP and over the bridge; mcp-remote and the bridge each run read → patch → run', async () => {
    const found = recordOf(root1) as FoundRecord;
    const token = readToken(found) as string;
    assert.ok(token, 'the window publishes its token file');
    const inspector = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'inspector-cli', 'build', 'index.js');
    // The inspector CLI looks for its package.json relative to the working directory but imports it relative to
    // itself, so it fails from any other folder (modelcontextprotocol/inspector#1334): run it from its build folder,
    // as that workaround says. The bridge finds its window by --workspace, not by that directory.
    const runInspector = async (target: string[], args: string[]): Promise<unknown> => {
      const { stdout } = await execFileP(process.execPath, [inspector, ...target, ...args], { cwd: path.dirname(inspector), env: { ...process.env }, timeout: 120_000 });
      return JSON.parse(stdout) as unknown;
    };
    const overHttp = [found.record.url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`];
    const overBridge = [process.execPath, BRIDGE, '--workspace', root1];
    for (const target of [overHttp, overBridge]) {
      const listed = (await runInspector(target, ['--method', 'tools/list'])) as { tools: { name: string }[] };
      assert.ok(listed.tools.some((t) => t.name === 'read') && listed.tools.some((t) => t.name === 'apply_patch'), `tools listed via ${target[0]}`);
      const info = (await runInspector(target, ['--method', 'tools/call', '--tool-name', 'workspace_info'])) as { structuredContent: { workspaces: { id: string }[] } };
      const id = info.structuredContent.workspaces[0]?.id as string;
      const read = (await runInspector(target, ['--method', 'tools/call', '--tool-name', 'read', '--tool-arg', `workspace_id=${id}`, '--tool-arg', 'path=README.md'])) as { structuredContent: { content: string } };
      assert.equal(read.structuredContent.content, fs.readFileSync(path.join(root1, 'README.md'), 'utf8'));
    }

    const remote = new Client({ name: 'e2e-mcp-remote', version: '1' });
    const remoteTransport = new StdioClientTransport({
      command: process.execPath,
      args: [path.join(REPO_ROOT, 'node_modules', 'mcp-remote', 'dist', 'proxy.js'), found.record.url, '--header', `Authorization:Bearer ${token}`],
      env: { PATH: process.env.PATH ?? '', HOME: fs.mkdtempSync(path.join(runtime, 'home-')) },
      stderr: 'pipe',
    });
    await remote.connect(remoteTransport);
    clients.push(remote);
    await readPatchRun(remote, 'mcp-remote');
    await readPatchRun(await bridge(['--workspace', root1]), 'bridge');
  });

  /** The loop an agent runs: read a file, patch it with the version read, run a command that sees the change. */
  async function readPatchRun(client: Client, who: string): Promise<void> {
    const id = await workspaceOf(client);
    const file = `loop-${who}.txt`;
    fs.writeFileSync(path.join(root1, file), 'one\n');
    const before = await call<{ content: string; version: string }>(client, 'read', { workspace_id: id, path: file });
    assert.equal(before.content, 'one\n');
    const patched = await call<{ status: string }>(client, 'apply_patch', {
      workspace_id: id,
      patch: `*** Begin Patch\n*** Update File: ${file}\n@@\n-one\n+two by ${who}\n*** End Patch\n`,
      expected_versions: { [file]: before.version },
      operation_key: `loop-${who}`,
    });
    assert.equal(patched.status, 'applied');
    const started = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: id, command: ['cat', file] });
    let output = '';
    let cursor = 0;
    for (let i = 0; i < 50; i++) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id: started.process_id, cursor, wait_ms: 2000 });
      output += r.chunk;
      cursor = r.cursor;
      if (r.eof) break;
    }
    assert.match(output, new RegExp(`two by ${who}`), `${who}: the command sees the patched file`);
  }

  it('a second window on the same folder stays a second window: both records stay and the bridge names both; gone, its record goes', async () => {
    const first = recordOf(root1) as FoundRecord;
    const page3 = await wb.browser.newPage();
    try {
      const url3 = new URL(wb.url);
      url3.searchParams.set('folder', root1);
      await page3.goto(url3.toString(), { timeout: wb.navigationTimeoutMs });
      await page3.locator('.monaco-workbench').first().waitFor({ timeout: 120_000 });
      // The new window asked the first one whether its window answers; it does, so it keeps its record and port.
      const both = await waitFor('a second record on the same folder', () => {
        const all = readRecords(dir).filter((f) => f.record.workspaceFolders.includes(root1));
        return all.length === 2 ? all : undefined;
      });
      assert.ok(both.some((f) => f.file === first.file && f.record.port === first.record.port), 'the first window keeps its record and port');
      // The bridge answers initialize from its shipped catalogue at once; the first call finds the window, and says
      // why it cannot choose one.
      const ambiguous = await bridge(['--workspace', root1]);
      await assert.rejects(call(ambiguous, 'workspace_info', {}), /2 VS Code windows have a workspace folder containing/);
    } finally {
      // The page goes without a word to the server (no unload handlers run): where the server keeps its extension
      // host for a reconnection, that host notices its window is gone and withdraws.
      await page3.close({ runBeforeUnload: false });
    }
    await waitFor('one record on the folder again', () => (readRecords(dir).filter((f) => f.record.workspaceFolders.includes(root1)).length === 1 ? true : undefined), 180_000);
    assert.equal(recordOf(root1)?.file, first.file, 'the first window is the one left');
  });

  it('closing a window removes its record', async () => {
    assert.ok(recordOf(root2), 'the second window is published');
    await page2?.close({ runBeforeUnload: true });
    page2 = undefined;
    await waitFor('the second record to go', () => (recordOf(root2) ? undefined : true), 180_000);
  });
});
