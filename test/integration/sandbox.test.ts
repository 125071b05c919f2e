import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { call, connectToFirstFolder, folder } from './helpers';

interface Info {
  execution: { isolation: { command_sandbox: { enabled: boolean; kind: string; reason?: string } }; network: string };
}

/**
 * The command sandbox as users get it: the extension reads codespace.exec.isolation (default `auto`) and this
 * machine has bubblewrap (CI installs it), so agents' commands run in bwrap.
 */
describe('Command sandbox inside VS Code', () => {
  let client: Client;
  let wsId: string;

  before(async () => {
    ({ client, wsId } = await connectToFirstFolder());
  });

  after(async () => {
    await client?.close();
  });

  it('workspace_info reports bubblewrap with the network blocked', async () => {
    const info = await call<Info>(client, 'workspace_info', { workspace_id: wsId });
    assert.deepEqual(info.execution.isolation.command_sandbox, { enabled: true, kind: 'bubblewrap' }, JSON.stringify(info.execution));
    assert.equal(info.execution.network, 'blocked');
  });

  it('a command cannot write .vscode/x, but can write elsewhere in the folder', async () => {
    const root = folder(0).uri.fsPath;
    const name = `sandbox-${Date.now()}`;
    const { process_id } = await call<{ process_id: string }>(client, 'exec_command', {
      workspace_id: wsId,
      command: ['sh', '-c', `mkdir -p .vscode 2>/dev/null; echo evil > .vscode/${name} && echo WROTE-VSCODE; echo ok > ${name}.txt && echo WROTE-ROOT`],
      occupancy: 'shared',
    });
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 100; i++) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id, cursor, wait_ms: 1000 });
      out += r.chunk;
      cursor = r.cursor;
      if (r.eof) break;
    }
    assert.doesNotMatch(out, /WROTE-VSCODE/);
    assert.match(out, /WROTE-ROOT/);
    assert.equal(fs.existsSync(path.join(root, '.vscode', name)), false);
    assert.equal(fs.readFileSync(path.join(root, `${name}.txt`), 'utf8'), 'ok\n');
    fs.rmSync(path.join(root, `${name}.txt`), { force: true });
  });
});
