import * as assert from 'node:assert/strict';
import { agentConnections, mergeMcpJson, shellQuote } from '../../src/core/connection';

const bridge = { command: 'node', args: ["/home/a b/.vscode/extensions/codespace.codespace-vscode-0.1.0/dist/stdio.js"] };
const info = { url: 'http://127.0.0.1:4567/mcp', token: 'TOKEN'.repeat(9), serverName: 'codespace', bridge };

describe('Connect an Agent: commands and project files', () => {
  it('gives each agent its exact command, the bridge first, and the token only to the generic HTTP entry', () => {
    const all = agentConnections(info);
    const byId = Object.fromEntries(all.map((c) => [c.id, c]));
    assert.deepEqual(all.map((c) => c.id), ['codex', 'codex-http', 'claude', 'claude-http', 'vscode', 'cursor', 'gemini', 'http', 'stdio']);
    assert.equal(byId.codex?.text, "codex mcp add codespace -- node '/home/a b/.vscode/extensions/codespace.codespace-vscode-0.1.0/dist/stdio.js'");
    assert.equal(byId.claude?.text, "claude mcp add codespace -- node '/home/a b/.vscode/extensions/codespace.codespace-vscode-0.1.0/dist/stdio.js'");
    assert.match(byId['codex-http']?.text ?? '', /url = "http:\/\/127\.0\.0\.1:4567\/mcp"\nbearer_token_env_var = "CODESPACE_MCP_TOKEN"/);
    assert.equal(byId['claude-http']?.text, "claude mcp add --transport http codespace http://127.0.0.1:4567/mcp --header 'Authorization: Bearer ${CODESPACE_MCP_TOKEN}'");
    for (const c of all) {
      if (c.id === 'http') assert.ok(c.text.includes(info.token));
      else assert.ok(!c.text.includes(info.token), `${c.id} never carries the token`);
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
