import * as assert from 'node:assert/strict';
import { agentConnections, mergeMcpJson, shellQuote } from '../../src/features/connect/common/connection';

const bridge = { command: 'node', args: ["/home/a b/.vscode/extensions/codespace.codespace-vscode-0.1.0/dist/stdio.js"] };
const info = { url: 'http://127.0.0.1:4567/mcp', token: 'TOKEN'.repeat(9), serverName: 'codespace', bridge };

describe('Connect an Agent: commands and project files', () => {
  it('gives each agent its exact command, the bridge first, and the token only to the generic HTTP entry', () => {
    const all = agentConnections(info);
    const byId = Object.fromEntries(all.map((c) => [c.id, c]));
    assert.deepEqual(all.map((c) => c.id), ['codex', 'codex-http', 'claude', 'claude-http', 'vscode', 'cursor', 'gemini', 'antigravity', 'http', 'stdio']);
    assert.equal(byId.codex?.text.split('\n')[0], "codex mcp add codespace -- node '/home/a b/.vscode/extensions/codespace.codespace-vscode-0.1.0/dist/stdio.js'");
    assert.equal(byId.claude?.text, "claude mcp add codespace -- node '/home/a b/.vscode/extensions/codespace.codespace-vscode-0.1.0/dist/stdio.js'");
    assert.match(byId['codex-http']?.text ?? '', /url = "http:\/\/127\.0\.0\.1:4567\/mcp"\nbearer_token_env_var = "CODESPACE_MCP_TOKEN"/);
    assert.equal(byId['claude-http']?.text, "claude mcp add --transport http codespace http://127.0.0.1:4567/mcp --header 'Authorization: Bearer ${CODESPACE_MCP_TOKEN}'");
    for (const c of all) {
      if (c.id === 'http') assert.ok(c.text.includes(info.token));
      else assert.ok(!c.text.includes(info.token), `${c.id} never carries the token`);
    }
  });

  it('with an agent credential, every entry carries it (never the window token): CLI env options, JSON env, the header', () => {
    const credential = `csa_${'x'.repeat(43)}`;
    const byId = Object.fromEntries(agentConnections({ ...info, agentCredential: credential }).map((c) => [c.id, c]));
    const node = "node '/home/a b/.vscode/extensions/codespace.codespace-vscode-0.1.0/dist/stdio.js'";
    assert.equal(byId.codex?.text.split('\n')[0], `codex mcp add codespace --env CODESPACE_AGENT_TOKEN=${credential} -- ${node}`);
    assert.equal(byId.claude?.text, `claude mcp add codespace -e CODESPACE_AGENT_TOKEN=${credential} -- ${node}`);
    assert.equal(byId.gemini?.text.split('\n')[0], `gemini mcp add --scope user -e CODESPACE_AGENT_TOKEN=${credential} codespace ${node}`);
    assert.equal(byId.stdio?.text, `env CODESPACE_AGENT_TOKEN=${credential} ${node}`);
    assert.equal(byId.http?.text, `URL: http://127.0.0.1:4567/mcp\nHeader: Authorization: Bearer ${credential}`);
    for (const id of ['vscode', 'cursor', 'antigravity']) assert.ok(byId[id]?.text.includes(`"CODESPACE_AGENT_TOKEN": "${credential}"`), id);
    for (const c of Object.values(byId)) {
      assert.ok(c.text.includes(credential), `${c.id} carries the credential`);
      assert.ok(!c.text.includes(info.token), `${c.id} never carries the window token`);
    }
  });

  it('names the stable launcher: ~ in commands, ${HOME} / ${userHome} in project files, no machine path in any of them', () => {
    const launcher = { command: '/home/ann/.codespace/bin/codespace-mcp', args: [], homePath: '.codespace/bin/codespace-mcp' };
    const byId = Object.fromEntries(agentConnections({ ...info, bridge: launcher }).map((c) => [c.id, c]));
    assert.equal(
      byId.codex?.text,
      [
        'codex mcp add codespace -- ~/.codespace/bin/codespace-mcp',
        '# Then add these lines under [mcp_servers.codespace] in ~/.codex/config.toml:',
        '# required = true',
        '# startup_timeout_sec = 30',
        '# default_tools_approval_mode = "approve"',
        '# required: codex exec stops with an error when CodeSpace fails to start, instead of running on without its tools.',
        '# startup_timeout_sec: how long Codex waits for the tool list; the bridge answers at once, this leaves room for a loaded machine.',
        '# default_tools_approval_mode: codex exec runs with approval policy "never" and otherwise refuses tools that need approval (apply_patch, exec_command).',
      ].join('\n'),
    );
    assert.equal(byId.claude?.text, 'claude mcp add codespace -- ~/.codespace/bin/codespace-mcp');
    assert.match(byId.gemini?.text ?? '', /^gemini mcp add --scope user codespace ~\/\.codespace\/bin\/codespace-mcp\n# Gemini CLI disables MCP servers in a folder it does not trust.*\n.*trustedFolders\.json as \{"<folder>": "TRUST_FOLDER"\}/);
    assert.deepEqual(JSON.parse(byId.antigravity?.text ?? ''), { mcpServers: { codespace: { command: '/home/ann/.codespace/bin/codespace-mcp', args: [] } } });
    const project = mergeMcpJson(undefined, '.mcp.json', 'codespace', launcher);
    assert.ok(project.ok);
    assert.deepEqual(JSON.parse(project.text), { mcpServers: { codespace: { command: '${HOME}/.codespace/bin/codespace-mcp', args: ['--workspace', '.'] } } });
    const vscodeFile = mergeMcpJson(undefined, '.vscode/mcp.json', 'codespace', launcher);
    assert.ok(vscodeFile.ok);
    assert.deepEqual(JSON.parse(vscodeFile.text), { servers: { codespace: { type: 'stdio', command: '${userHome}/.codespace/bin/codespace-mcp', args: ['--workspace', '${workspaceFolder}'] } } });
    for (const target of ['.mcp.json', '.vscode/mcp.json', '.cursor/mcp.json'] as const) {
      const merged = mergeMcpJson(undefined, target, 'codespace', launcher);
      assert.ok(merged.ok && !merged.text.includes('/home/ann'), `${target} names no path of this machine`);
    }
  });

  it('quotes shell words so a path with spaces or quotes stays one word', () => {
    assert.equal(shellQuote('/usr/bin/node'), '/usr/bin/node');
    assert.equal(shellQuote("it's here"), `'it'\\''s here'`);
    assert.equal(shellQuote('$(rm -rf ~)'), "'$(rm -rf ~)'");
  });

  it('merges the bridge entry into a project file, keeping other servers, and refuses what it cannot keep', () => {
    const fresh = mergeMcpJson(undefined, '.mcp.json', 'codespace', bridge);
    assert.ok(fresh.ok);
    assert.deepEqual(JSON.parse(fresh.text), { mcpServers: { codespace: { command: 'node', args: [...bridge.args, '--workspace', '.'] } } });

    const existing = JSON.stringify({ servers: { other: { type: 'http', url: 'https://x' } }, inputs: [{ id: 'k' }] });
    const merged = mergeMcpJson(existing, '.vscode/mcp.json', 'codespace', bridge);
    assert.ok(merged.ok);
    const doc = JSON.parse(merged.text) as { servers: Record<string, unknown>; inputs: unknown[] };
    assert.deepEqual(doc.servers.other, { type: 'http', url: 'https://x' });
    assert.deepEqual(doc.servers.codespace, { type: 'stdio', command: 'node', args: [...bridge.args, '--workspace', '${workspaceFolder}'] });
    assert.deepEqual(doc.inputs, [{ id: 'k' }]);
    assert.ok(!merged.text.includes('Bearer'), 'never a token or header');

    const jsonc = mergeMcpJson('{\n  // mine\n  "servers": {}\n}', '.vscode/mcp.json', 'codespace', bridge);
    assert.equal(jsonc.ok, false);
    assert.match(jsonc.ok ? '' : jsonc.reason, /not plain JSON/);
    assert.equal(mergeMcpJson('[1]', '.mcp.json', 'codespace', bridge).ok, false);
    assert.equal(mergeMcpJson('{"mcpServers": 3}', '.mcp.json', 'codespace', bridge).ok, false);
  });
});
