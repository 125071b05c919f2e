// End to end: the extension running in a real VS Code (code-server + headless Chromium), a real MCP SDK client
// in this Node process talking to it over HTTP with the token a user would copy from the editor.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startWorkbench } from './index';
import type { Workbench } from './index';
import { call, callError, connect, copyConnectionSettings } from './mcpClient';

describe('an agent working in VS Code over MCP', function () {
  this.timeout(5 * 60_000);
  let wb: Workbench;
  let url: string;
  let token: string;
  let client: Client;
  let wsId: string;

  /** Copies the connection settings the way a user does: palette command, then the clipboard. */
  async function copySettings(): Promise<void> {
    ({ url, token } = await copyConnectionSettings(wb));
  }

  before(async () => {
    wb = await startWorkbench({ workspace: 'workspace' });
    await wb.waitForActivation();
    await copySettings();
    client = await connect(url, token);
  });

  after(async () => {
    await client?.close().catch(() => undefined);
    if (wb) {
      await wb.screenshot('e2e-final').catch(() => undefined);
      await wb.stop();
    }
  });

  it('shows the server state and port in the status bar', async () => {
    const port = new URL(url).port;
    const item = wb.page.locator('.statusbar-item', { hasText: `CodeSpace :${port}` }).first();
    await item.waitFor({ timeout: 60_000 });
    await wb.screenshot('e2e-statusbar');
  });

  it('lists the tools and calls each inspect tool', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ['workspace_info', 'find', 'read', 'apply_patch', 'operation_status', 'exec_command', 'read_process', 'process_status']) assert.ok(names.includes(n), n);
    const all = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    assert.equal(all.workspaces.length, 1);
    wsId = all.workspaces[0]!.id;
    const info = await call<{ trusted: boolean; execution: { files: { write: { available: boolean } } } }>(client, 'workspace_info', { workspace_id: wsId });
    assert.equal(info.trusted, true);
    assert.equal(info.execution.files.write.available, true);
    const found = await call<{ paths: string[] }>(client, 'find', { workspace_id: wsId, pattern: '**/*.ts' });
    assert.ok(found.paths.includes('src/hello.ts'), found.paths.join(','));
    const read = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: 'README.md' });
    assert.equal(read.content, wb.readWorkspaceFile('README.md'));
  });

  it('read → preview → apply → read back → recover by key after a lost response', async () => {
    const before = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: 'src/hello.ts' });
    const firstLine = before.content.split('\n')[0] as string;
    const patch = `*** Begin Patch\n*** Update File: src/hello.ts\n@@\n-${firstLine}\n+// edited by the e2e agent\n+${firstLine}\n*** End Patch\n`;
    const preview = await call<{ status: string; files: { diff: string; after_version: string }[] }>(client, 'apply_patch', {
      workspace_id: wsId, patch, expected_versions: { 'src/hello.ts': before.version }, operation_key: 'e2e-preview', check_only: true,
    });
    assert.equal(preview.status, 'checked');
    assert.match(preview.files[0]!.diff, /\+\/\/ edited by the e2e agent/);
    assert.equal(wb.readWorkspaceFile('src/hello.ts'), before.content, 'a preview writes nothing');

    // The agent sends the apply but "loses" the response: it never looks at it.
    const applyArgs = { workspace_id: wsId, patch, expected_versions: { 'src/hello.ts': before.version }, operation_key: 'e2e-apply' };
    await client.callTool({ name: 'apply_patch', arguments: applyArgs });
    // Recovery: ask by key, then resend with the same key: the stored result, no second write.
    const status = await call<{ status: string; events: { type: string }[] }>(client, 'operation_status', { operation_key: 'e2e-apply' });
    assert.equal(status.status, 'applied');
    const abs = path.join(wb.workspaceDir, 'src/hello.ts');
    const mtime = (await fsp.stat(abs)).mtimeMs;
    const again = await call<{ status: string; files: { after_version: string }[] }>(client, 'apply_patch', applyArgs);
    assert.equal(again.status, 'applied');
    assert.equal((await fsp.stat(abs)).mtimeMs, mtime, 'the retry wrote nothing');
    const after = await call<{ content: string; version: string }>(client, 'read', { workspace_id: wsId, path: 'src/hello.ts' });
    assert.ok(after.content.startsWith('// edited by the e2e agent\n'));
    assert.equal(after.version, again.files[0]!.after_version);
    assert.equal(after.version, preview.files[0]!.after_version, 'the preview predicted the written version');
  });

  it('runs a command: poll by cursor, exit code, cancel, output_lost', async () => {
    const ok = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: wsId, command: ['sh', '-c', 'echo one; echo two; exit 3'] });
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 50; i++) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id: ok.process_id, cursor, wait_ms: 2000 });
      out += r.chunk;
      cursor = r.cursor;
      if (r.eof) break;
    }
    assert.match(out, /one\s+two/);
    const st = await call<{ state: string; termination: string; exit_code: number }>(client, 'process_status', { process_id: ok.process_id });
    assert.deepEqual([st.state, st.termination, st.exit_code], ['exited', 'exited', 3]);

    const long = await call<{ process_id: string }>(client, 'exec_command', {
      workspace_id: wsId, command: ['sh', '-c', 'echo "agent: watching src for changes"; ls -l src; sleep 600'], tty: true,
    });
    const busy = await callError(client, 'exec_command', { workspace_id: wsId, command: ['true'] });
    assert.equal(busy.code, 'WORKSPACE_BUSY');
    // The developer sees the agent's process live in the terminal panel, next to the file it patched.
    const explorer = wb.page.locator('.explorer-folders-view');
    // src/ may already be expanded: apply_patch opened hello.ts in a background tab to collect its diagnostics, and
    // in an empty editor area that tab was the active one for a moment, which the explorer reveals.
    // The reveal may also land while this looks, so expand src only when its row says it is collapsed, and look again
    // (a click on a row that has just been expanded would fold it away).
    const hello = explorer.locator('.monaco-list-row', { hasText: 'hello.ts' }).first();
    const src = explorer.locator('.monaco-list-row', { hasText: /^src$/ }).first();
    for (let i = 0; i < 60 && !(await hello.isVisible()); i++) {
      if ((await src.getAttribute('aria-expanded')) === 'false') await src.click();
      await new Promise((r) => setTimeout(r, 500));
    }
    await hello.click();
    await wb.page.locator('.view-lines', { hasText: 'edited by the e2e agent' }).first().waitFor({ timeout: 30_000 });
    // The terminal list names the process after its command.
    await wb.page.locator('.terminal-tabs-entry, .tabs-list .monaco-list-row, .single-terminal-tab', { hasText: 'CodeSpace' }).first().waitFor({ timeout: 30_000 });
    await new Promise((r) => setTimeout(r, 1500)); // let the terminal paint the output before the screenshot
    await wb.screenshot('e2e-agent-terminal');
    await call(client, 'terminate_process', { process_id: long.process_id });
    const ended = await call<{ state: string; termination: string }>(client, 'process_status', { process_id: long.process_id });
    assert.deepEqual([ended.state, ended.termination], ['exited', 'terminated']);

    const flood = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: wsId, command: ['sh', '-c', 'head -c 2000000 /dev/zero | tr "\\0" x'] });
    for (let i = 0; i < 50; i++) {
      const s = await call<{ state: string }>(client, 'process_status', { process_id: flood.process_id });
      if (s.state === 'exited') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const first = await call<{ output_lost: boolean; retained_from: number }>(client, 'read_process', { process_id: flood.process_id, cursor: 0 });
    assert.equal(first.output_lost, true);
    assert.ok(first.retained_from > 0);
  });

  it('keeps the operation ledger across a window reload, and an agent process runs on under the same id', async () => {
    // A dev server, then the developer reloads the window. Its pid is looked up from outside by its command line:
    // inside the command sandbox the process has its own PID namespace, so `$$` would name another process here.
    // Unique to this run: another run on the machine (another checkout's, or the other VS Code's) has its own.
    const MARK = String(100_000_000 + Math.floor(Math.random() * 800_000_000));
    const started = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: wsId, command: ['sh', '-c', `echo started > server.pid; exec sleep ${MARK}`], occupancy: 'shared' });
    const findPid = (): number | undefined => {
      for (const entry of fs.readdirSync('/proc')) {
        if (!/^\d+$/.test(entry)) continue;
        try {
          if (fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1') === `sleep\0${MARK}\0`) return Number(entry);
        } catch {
          // gone meanwhile
        }
      }
      return undefined;
    };
    let pid: number | undefined;
    for (let i = 0; i < 100 && pid === undefined; i++) {
      await new Promise((r) => setTimeout(r, 100));
      pid = findPid();
    }
    assert.ok(pid !== undefined && pid > 1, 'the process is running');
    const alive = (p: number): boolean => {
      try {
        process.kill(p, 0); // signal 0 only checks that the process exists
        return true;
      } catch {
        return false;
      }
    };
    assert.equal(alive(pid), true);
    await client.close();
    await wb.page.reload();
    await wb.page.locator('.monaco-workbench').first().waitFor({ timeout: 120_000 });
    await copySettings();
    client = await connect(url, token);
    const status = await call<{ status: string; operation_key: string }>(client, 'operation_status', { operation_key: 'e2e-apply' });
    assert.equal(status.status, 'applied');
    // The reloaded window listened before its token came from SecretStorage, checking tokens by the verifier the
    // first activation kept (VS Code writes the log file a few seconds after the line).
    await wb.waitForExtensionLog(/\[activate\] ready in .*tokens checked by their verifiers until they load/, 60_000);
    assert.ok(/\[activate\] ready in .* ms \(activate\(\) to listening\)[^\n]* token [\d.]+,/.test(wb.readExtensionLog()), 'the first activation waited for the token');
    // The process host kept it: the same process_id answers, and terminate_process ends it.
    assert.equal(alive(pid), true, 'the reload left the process running');
    const running = await call<{ state: string }>(client, 'process_status', { process_id: started.process_id });
    assert.equal(running.state, 'running');
    await call(client, 'terminate_process', { process_id: started.process_id });
    for (let i = 0; i < 100 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(pid), false, 'terminate_process ended it');
  });

  it('leaves the token in no file: settings, logs, ledger and workspace are clean', async () => {
    // Everything this run wrote on disk lives under the run's temp folder: user data (settings, logs, global and
    // workspace storage with the ledger) and the workspace copy. SecretStorage keeps its value in the browser.
    const top = path.dirname(wb.userDataDir);
    const hits: string[] = [];
    let scanned = 0;
    const walk = async (dir: string): Promise<void> => {
      for (const e of await fsp.readdir(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (e.isFile()) {
          scanned++;
          if ((await fsp.readFile(p)).includes(token)) hits.push(path.relative(top, p));
        }
      }
    };
    await walk(top);
    assert.ok(scanned > 10, `scanned ${scanned} files`);
    await wb.waitForExtensionLog(/\[http\] listening/); // the log was written, and was among the files scanned
    assert.deepEqual(hits, []);
  });
});
