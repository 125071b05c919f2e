// Connecting agents, inside the real extension host: this window's discovery record and token file, the
// environment its terminals get (and its refresh on token rotation), and Connect an Agent's copy and write.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { FoundRecord } from '../../src/features/connect/common/record';
import { discoveryDir, readRecords, readToken } from '../../src/features/connect/node/discoveryFiles';
import { activateExtension, connectionFromCommand, folder } from './helpers';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** The record this extension host published (its pid is ours: the suite runs in the same process). */
function ownRecord(): FoundRecord | undefined {
  return readRecords(discoveryDir()).find((f) => f.record.pid === process.pid);
}

let terminals = 0;
/** Runs `env` in a new VS Code terminal of the first folder and returns the CODESPACE_MCP_* variables it saw. */
async function terminalEnv(): Promise<Record<string, string>> {
  const out = path.join(folder(0).uri.fsPath, `.terminal-env-${++terminals}.txt`);
  const terminal = vscode.window.createTerminal({ name: 'env probe', shellPath: '/bin/sh', shellArgs: ['-c', `env > '${out}.tmp' && mv '${out}.tmp' '${out}'`], cwd: folder(0).uri });
  try {
    const text = await waitFor('the terminal to write its environment', () => (fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : undefined));
    const vars: Record<string, string> = {};
    for (const line of text.split('\n')) if (line.startsWith('CODESPACE_MCP_')) vars[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
    return vars;
  } finally {
    terminal.dispose();
    fs.rmSync(out, { force: true });
  }
}

describe('connecting agents (inside VS Code)', function () {
  this.timeout(120_000);
  let url: string;
  let token: string;

  before(async () => {
    await activateExtension();
    ({ url, token } = await connectionFromCommand());
  });

  it('publishes this window: port, pid, folders, no token in the record, the token in its own 0600 file', async () => {
    const found = await waitFor('the record', ownRecord);
    assert.equal(found.record.url, url);
    assert.deepEqual(found.record.workspaceFolders, (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath));
    assert.ok(!fs.readFileSync(found.file, 'utf8').includes(token));
    assert.equal(fs.lstatSync(found.file).mode & 0o777, 0o600);
    assert.equal(readToken(found), token);
  });

  it('gives terminals this window\'s URL and token, refreshed when the token rotates, and none when turned off', async () => {
    assert.deepEqual(await terminalEnv(), { CODESPACE_MCP_URL: url, CODESPACE_MCP_TOKEN: token });
    assert.equal(await vscode.commands.executeCommand('codespace.rotateToken', { confirm: false }), true);
    const rotated = await connectionFromCommand();
    assert.notEqual(rotated.token, token);
    assert.deepEqual(await terminalEnv(), { CODESPACE_MCP_URL: url, CODESPACE_MCP_TOKEN: rotated.token });
    assert.equal(readToken(ownRecord() as FoundRecord), rotated.token, 'the token file follows the rotation');
    token = rotated.token;

    const config = vscode.workspace.getConfiguration('codespace');
    await config.update('terminal.environment', false, vscode.ConfigurationTarget.Global);
    try {
      assert.deepEqual(await terminalEnv(), {});
    } finally {
      await config.update('terminal.environment', undefined, vscode.ConfigurationTarget.Global);
    }
    assert.deepEqual(await terminalEnv(), { CODESPACE_MCP_URL: url, CODESPACE_MCP_TOKEN: token });
  });

  it('Connect an Agent copies the bridge command and writes .mcp.json without the token, keeping other servers', async () => {
    const copied = await vscode.commands.executeCommand<{ id: string; copied: boolean }>('codespace.connectAgent', { id: 'codex' });
    assert.deepEqual(copied, { id: 'codex', copied: true, agent: { id: 'codex', name: 'codex' } });
    const text = await vscode.env.clipboard.readText();
    assert.ok(!text.includes(token), 'the agent\'s own credential, not the window token');
    const m = /^codex mcp add codespace --env CODESPACE_AGENT_TOKEN=csa_[A-Za-z0-9_-]{43} -- node (\S+)\n.*^# required = true\n# startup_timeout_sec = 30\n# default_tools_approval_mode = "approve"$/ms.exec(text);
    assert.ok(m, text);
    assert.ok(fs.existsSync(m[1] as string) && (m[1] as string).endsWith(path.join('dist', 'stdio.js')), 'the bridge path exists');

    const file = path.join(folder(0).uri.fsPath, '.mcp.json');
    fs.writeFileSync(file, JSON.stringify({ mcpServers: { other: { command: 'other-server' } } }));
    try {
      const wrote = await vscode.commands.executeCommand<{ wrote?: string }>('codespace.connectAgent', { id: 'claude', write: true });
      assert.equal(wrote?.wrote, file);
      const written = fs.readFileSync(file, 'utf8');
      assert.ok(!written.includes(token), 'no token in the project file');
      const doc = JSON.parse(written) as { mcpServers: Record<string, { command: string; args?: string[] }> };
      assert.deepEqual(doc.mcpServers.other, { command: 'other-server' });
      assert.equal(doc.mcpServers.codespace?.command, 'node');
      assert.deepEqual(doc.mcpServers.codespace?.args?.slice(1), ['--workspace', '.']);
    } finally {
      fs.rmSync(file, { force: true });
    }
  });
});
