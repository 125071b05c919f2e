/** Ready-to-paste client configurations for the endpoint. Pure text: the vscode layer copies or shows it. */
export interface ConnectionInfo {
  readonly url: string;
  readonly token: string;
  readonly serverName: string;
}

export const TOKEN_ENV_VAR = 'CODESPACE_TOKEN';

export function connectionSnippets(info: ConnectionInfo): { codex: string; claudeCode: string; vscodeMcpJson: string; plain: string } {
  const codex = [
    '# ~/.codex/config.toml',
    `[mcp_servers.${info.serverName}]`,
    `url = "${info.url}"`,
    `bearer_token_env_var = "${TOKEN_ENV_VAR}"`,
    '',
    '# then, in the shell that starts codex:',
    `export ${TOKEN_ENV_VAR}='${info.token}'`,
  ].join('\n');
  const claudeCode = `claude mcp add --transport http ${info.serverName} ${info.url} --header "Authorization: Bearer ${info.token}"`;
  const vscodeMcpJson = JSON.stringify(
    {
      servers: {
        [info.serverName]: { type: 'http', url: info.url, headers: { Authorization: `Bearer \${input:${info.serverName}-token}` } },
      },
      inputs: [{ type: 'promptString', id: `${info.serverName}-token`, description: 'CodeSpace token', password: true }],
    },
    null,
    2,
  );
  const plain = `URL: ${info.url}\nToken: ${info.token}\nHeader: Authorization: Bearer ${info.token}`;
  return { codex, claudeCode, vscodeMcpJson, plain };
}

/** The whole text that "Copy Connection Settings" puts on the clipboard. */
export function connectionText(info: ConnectionInfo): string {
  const s = connectionSnippets(info);
  return [
    '# CodeSpace MCP endpoint',
    s.plain,
    '',
    '## Codex',
    s.codex,
    '',
    '## Claude Code',
    s.claudeCode,
    '',
    '## VS Code (.vscode/mcp.json; paste the token when asked)',
    s.vscodeMcpJson,
    '',
  ].join('\n');
}
