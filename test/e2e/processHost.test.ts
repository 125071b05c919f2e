// End to end: agent processes run in the process host beside the window. A real MCP client starts a dev server and
// a long test run, then the window reloads (the developer's Reload Window) and the extension host is killed with
// SIGKILL; each time the client reconnects and reads both processes on from the same cursors, without a gap.
// Stopping VS Code altogether leaves nothing running once the host's grace period has passed. The window's state (the
// operation ledger) comes back with the processes, also when VS Code gives the new extension host another storage
// folder because the reloaded page's old extension host still runs (code-server 4.139 often keeps it).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { discoveryDirs, readAllRecords } from '../../src/features/connect/node/discoveryFiles';
import { HOST_GRACE_ENV } from '../../src/features/processes/node/processHost/hostBackends';
import { findFiles } from './files';
import { startWorkbench } from './index';
import type { Workbench } from './index';
import { call, callError, connect, copyConnectionSettings } from './mcpClient';

/**
 * The grace period the host waits for a window to come back, shortened for this test through HOST_GRACE_ENV (the
 * extension host inherits code-server's environment, and code-server ours); the default is DEFAULT_HOST_GRACE_MS.
 * A reload takes the next extension host 5-8 s to attach on a lightly loaded machine, and far longer under load: a
 * grace of 15 s ran out under load once, and the host ended the processes before the reloaded window came back.
 */
const HOST_GRACE_MS = 45_000;

/** A command printing `tick N` (N from 0) every 50 ms. */
const TICKER = ['sh', '-c', 'i=0; while :; do echo "tick $i"; i=$((i+1)); sleep 0.05; done'];

function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
    return !stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return false;
  }
}

function ppid(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'latin1');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 120_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

describe('agent processes outlive a window reload (the process host)', function () {
  this.timeout(10 * 60_000);
  let wb: Workbench | undefined;
  let client: Client;
  let wsId: string;
  const texts = new Map<string, string>();
  const cursors = new Map<string, number>();
  let server = '';
  let testRun = '';
  const OPERATION_KEY = 'e2e-state-across-reloads';

  /** The patch applied before the reloads is still in the window's ledger (its state folder was found again). */
  async function ledgerKept(): Promise<void> {
    const op = await call<{ operation_key: string; status: string }>(client, 'operation_status', { operation_key: OPERATION_KEY });
    assert.equal(op.operation_key, OPERATION_KEY);
    assert.equal(op.status, 'applied');
    const said = wb!.readExtensionLog().split('\n').filter((l) => l.includes('[state]'));
    console.log(`      the window's state after the reload: ${said.length > 0 ? said[said.length - 1] : 'in the storage folder VS Code gave'}`);
  }

  async function reconnect(): Promise<void> {
    await client?.close().catch(() => undefined);
    const { url, token } = await copyConnectionSettings(wb as Workbench);
    client = await connect(url, token);
  }

  /** Reads `id` on from its cursor until `more` further ticks arrived; checks that no tick is missing or repeated. */
  async function readOn(id: string, more: number): Promise<void> {
    let text = texts.get(id) ?? '';
    const want = (text.match(/tick \d+/g) ?? []).length + more;
    let cursor = cursors.get(id) ?? 0;
    await waitFor(`${more} more ticks of ${id}`, async () => {
      const r = await call<{ chunk: string; cursor: number; output_lost: boolean }>(client, 'read_process', { process_id: id, cursor, wait_ms: 2000 });
      assert.equal(r.output_lost, false);
      text += r.chunk;
      cursor = r.cursor;
      return (text.match(/tick \d+/g) ?? []).length >= want ? true : undefined;
    });
    const ticks = [...text.matchAll(/tick (\d+)/g)].map((m) => Number(m[1]));
    ticks.forEach((n, i) => assert.equal(n, i, `${id}: tick ${i} expected, got ${n} (a gap or a repeat across the reload)`));
    texts.set(id, text);
    cursors.set(id, cursor);
  }

  function hostRecord(): { pid: number } {
    const files = findFiles((wb as Workbench).userDataDir, /^process-host-\d+\.json$/);
    assert.equal(files.length, 1, `one process host record: ${files.join(', ')}`);
    return JSON.parse(fs.readFileSync(files[0] as string, 'utf8')) as { pid: number };
  }

  let savedGrace: string | undefined;

  before(async () => {
    savedGrace = process.env[HOST_GRACE_ENV];
    process.env[HOST_GRACE_ENV] = String(HOST_GRACE_MS);
    wb = await startWorkbench({ workspace: 'workspace' });
    await wb.waitForActivation();
    await reconnect();
    const all = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    wsId = all.workspaces[0]!.id;
  });

  // On a failure, what the extension and the host said about taking the processes over (the CI log is all there is).
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed' || !wb) return;
    // VS Code writes the extension's log file seconds after the lines: wait for the last ones.
    await new Promise((r) => setTimeout(r, 8000));
    const said = wb.readExtensionLog().split('\n').filter((l) => /process-host|\[window\]|\[discovery\]|activate/.test(l));
    const hostLogs = findFiles(wb.userDataDir, /^process-host\.log$/).map((f) => fs.readFileSync(f, 'utf8'));
    console.log(`--- extension log (process host lines):\n${said.slice(-40).join('\n')}\n--- process-host.log:\n${hostLogs.join('\n').split('\n').slice(-40).join('\n')}`);
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    if (wb) {
      await wb.screenshot('e2e-process-host').catch(() => undefined);
      await wb.stop();
    }
    if (savedGrace === undefined) delete process.env[HOST_GRACE_ENV];
    else process.env[HOST_GRACE_ENV] = savedGrace;
  });

  it('says so in workspace_info, and starts a dev server and a long test run there', async () => {
    const info = await call<{ execution: { process: { capabilities: { lifetime: string } } } }>(client, 'workspace_info', { workspace_id: wsId });
    assert.equal(info.execution.process.capabilities.lifetime, 'process-host');
    // Before the commands: the long test run occupies the workspace (a patch would wait for its turn).
    const patch = '*** Begin Patch\n*** Add File: state-across-reloads.txt\n+kept in the ledger\n*** End Patch\n';
    const applied = await call<{ status: string }>(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: {}, operation_key: OPERATION_KEY });
    assert.equal(applied.status, 'applied');
    await ledgerKept();
    server = (await call<{ process_id: string }>(client, 'exec_command', { workspace_id: wsId, command: TICKER, tty: true, occupancy: 'shared' })).process_id;
    testRun = (await call<{ process_id: string }>(client, 'exec_command', { workspace_id: wsId, command: TICKER })).process_id;
    await readOn(server, 5);
    await readOn(testRun, 5);
  });

  it('the extension host killed with SIGKILL: the next one takes both over from the same cursors', async () => {
    const host = hostRecord().pid;
    // Seen from the host: its parent is the extension host that started it (it is detached, not waited for).
    const exthost = ppid(host);
    assert.ok(exthost > 1 && fs.readFileSync(`/proc/${exthost}/cmdline`, 'latin1').length > 0, 'the host still has the extension host as its parent');
    process.kill(exthost, 'SIGKILL');
    await waitFor('the extension host to be gone', () => (alive(exthost) ? undefined : true));
    assert.equal(alive(host), true, 'the process host outlives the killed extension host');
    await client.close().catch(() => undefined);
    // A new extension host for the window (what the developer gets by reloading it).
    await wb!.page.reload();
    await wb!.page.locator('.monaco-workbench').first().waitFor({ timeout: 120_000 });
    await reconnect();
    await readOn(server, 10);
    await readOn(testRun, 10);
    assert.equal(hostRecord().pid, host, 'the same host');
    await ledgerKept();
  });

  it('a window reload: both read on from the same cursors, occupancy and input still hold', async () => {
    const host = hostRecord().pid;
    await client.close();
    await wb!.page.reload();
    await wb!.page.locator('.monaco-workbench').first().waitFor({ timeout: 120_000 });
    await reconnect();
    await readOn(server, 10);
    await readOn(testRun, 10);
    assert.equal(hostRecord().pid, host, 'the same host');
    await ledgerKept();
    const status = await call<{ state: string }>(client, 'process_status', { process_id: testRun });
    assert.equal(status.state, 'running');
    const busy = await callError(client, 'exec_command', { workspace_id: wsId, command: ['true'] });
    assert.equal(busy.code, 'WORKSPACE_BUSY');
    // The terminal mirror is back: a terminal tab named after the command.
    await wb!.page.locator('.terminal-tabs-entry, .single-terminal-tab, .terminal-tab', { hasText: 'sh' }).first().waitFor({ timeout: 60_000 });
  });

  it("the page crashes and the window is opened again: the new extension host takes the processes and the window's state over", async () => {
    const host = hostRecord().pid;
    const record = readAllRecords(discoveryDirs()).find((f) => f.record.workspaceFolders.includes(wb!.workspaceDir));
    assert.ok(record, "the window's discovery record");
    const previous = record.record.pid;
    await client.close();
    // The page's renderer dies, so the server hears nothing and keeps the page's extension host for a reconnection:
    // that one still holds the workspace's first storage folder, and VS Code gives the next extension host `<folder>-1`.
    await wb!.reopen();
    const lingered = alive(previous);
    await reconnect();
    await readOn(server, 10);
    await readOn(testRun, 10);
    assert.equal(hostRecord().pid, host, 'the same host');
    await ledgerKept();
    assert.ok(lingered, `the server keeps the crashed page's extension host (pid ${previous}) for a reconnection`);
    const log = await wb!.waitForExtensionLog(/\[state\] this window's state is in .* \(taken over from this window's previous extension host\)/, 120_000);
    assert.match(log, /\[state\] released .* for a newer extension host of this window/, 'the previous extension host released the state before the new one took it');
  });

  it('VS Code stopped for good: the host ends every process and exits at once, without waiting out its grace period', async () => {
    const host = hostRecord().pid;
    const children = fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e)).map(Number).filter((p) => {
      try {
        return ppid(p) === host;
      } catch {
        return false;
      }
    });
    assert.ok(children.length >= 2, `the host runs the processes (children: ${children.join(', ')})`);
    await client.close().catch(() => undefined);
    const stopped = Date.now();
    await wb!.stop();
    wb = undefined;
    await waitFor('the process host to exit', () => (alive(host) ? undefined : true), HOST_GRACE_MS + 90_000);
    for (const p of children) await waitFor(`process ${p} to be gone`, () => (alive(p) ? undefined : true), 30_000);
    // The server that started the extension host is gone with VS Code: no window can come back, so the host does
    // not wait (a reload or a killed extension host, above, leaves the server running, and the host waits).
    const took = Date.now() - stopped;
    assert.ok(took < HOST_GRACE_MS / 2, `the host ended its processes ${took} ms after VS Code stopped, not after its ${HOST_GRACE_MS} ms grace period`);
  });
});
