/** Ready-to-paste client configurations for the endpoint. Pure text: the vscode layer copies or shows it. */
export interface ConnectionInfo {
  readonly url: string;
  readonly token: string;
  readonly serverName: string;
}

/** Set in the terminals of a CodeSpace window (codespace.terminal.environment), read by the bridge and by clients. */
export const URL_ENV_VAR = 'CODESPACE_MCP_URL';
export const TOKEN_ENV_VAR = 'CODESPACE_MCP_TOKEN';
/** An agent's own credential ("Connect an Agent"): the bridge sends it instead of the window's token. */
export const AGENT_TOKEN_ENV_VAR = 'CODESPACE_AGENT_TOKEN';

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

/**
 * How to start the stdio bridge on this machine: the stable launcher `~/.codespace/bin/codespace-mcp` of an
 * installed extension (`homePath` says where it is below the home folder, the same on every machine and after every
 * update), else `node <extension>/dist/stdio.js` (a development checkout, Windows).
 */
export interface BridgeCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** The launcher's path relative to the user's home, when `command` is the launcher. */
  readonly homePath?: string;
}

/** One entry of "CodeSpace: Connect an Agent…": what is copied, and which project file it may write. */
export interface AgentConnection {
  readonly id: 'codex' | 'codex-http' | 'claude' | 'claude-http' | 'vscode' | 'cursor' | 'gemini' | 'antigravity' | 'http' | 'stdio';
  readonly label: string;
  readonly detail: string;
  /** Copied to the clipboard. Contains the token only for `http` (a generic client has no other way). */
  readonly text: string;
  /** A project file this entry can write instead (merged into an existing file), never with the token inline. */
  readonly projectFile?: McpJsonTarget;
}

export type McpJsonTarget = '.vscode/mcp.json' | '.mcp.json' | '.cursor/mcp.json';

/** A POSIX-shell word: bare when safe, else single-quoted. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_/.:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The bridge as a shell command line: `~/.codespace/bin/codespace-mcp` (the shell expands `~`), or quoted words. */
function bridgeLine(b: BridgeCommand): string {
  if (b.homePath !== undefined) return [`~/${b.homePath}`, ...b.args.map(shellQuote)].join(' ');
  return [b.command, ...b.args].map(shellQuote).join(' ');
}

/**
 * The launcher as each project file's client expands it, so a committed file works on every teammate's machine:
 * Claude Code expands `${HOME}` in `.mcp.json`; VS Code and Cursor expand `${userHome}` in their mcp.json.
 */
function projectCommand(target: McpJsonTarget, b: BridgeCommand): string {
  if (b.homePath === undefined) return b.command;
  return target === '.mcp.json' ? `\${HOME}/${b.homePath}` : `\${userHome}/${b.homePath}`;
}

/** The server entry a project file gets: the bridge, finding the window by the project folder. */
export function mcpJsonEntry(target: McpJsonTarget, b: BridgeCommand): Record<string, unknown> {
  const command = projectCommand(target, b);
  if (target === '.vscode/mcp.json') return { type: 'stdio', command, args: [...b.args, '--workspace', '${workspaceFolder}'] };
  return { command, args: [...b.args, '--workspace', '.'] };
}

/** The key a project file keeps its servers under. */
export function mcpJsonServersKey(target: McpJsonTarget): 'servers' | 'mcpServers' {
  return target === '.vscode/mcp.json' ? 'servers' : 'mcpServers';
}

/**
 * Merges our entry into a project file's text (undefined: no file yet). Other servers and keys are kept; a file
 * that is not plain JSON (comments, trailing commas) is refused rather than rewritten without them.
 */
export function mergeMcpJson(existing: string | undefined, target: McpJsonTarget, serverName: string, b: BridgeCommand): { ok: true; text: string } | { ok: false; reason: string } {
  let doc: Record<string, unknown> = {};
  if (existing !== undefined && existing.trim() !== '') {
    try {
      const parsed: unknown = JSON.parse(existing);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { ok: false, reason: `${target} does not hold a JSON object.` };
      doc = parsed as Record<string, unknown>;
    } catch {
      return { ok: false, reason: `${target} is not plain JSON (comments or trailing commas?); CodeSpace does not rewrite it. Add the entry by hand: it is on the clipboard.` };
    }
  }
  const key = mcpJsonServersKey(target);
  const servers = doc[key];
  if (servers !== undefined && (typeof servers !== 'object' || servers === null || Array.isArray(servers))) return { ok: false, reason: `"${key}" in ${target} is not an object.` };
  const next = { ...doc, [key]: { ...(servers as Record<string, unknown> | undefined), [serverName]: mcpJsonEntry(target, b) } };
  return { ok: true, text: `${JSON.stringify(next, null, 2)}\n` };
}

/**
 * The lines the Codex text asks for under the server's table (codex 0.171.0 config.toml keys, `McpServerConfig` in
 * codex-rs): Codex gives a server `startup_timeout_sec` (10 s unless set) to answer `initialize` and `tools/list`
 * and, unless `required`, runs on without its tools and says nothing in `codex exec`.
 */
export const CODEX_SERVER_SETTINGS: readonly { readonly line: string; readonly why: string }[] = [
  { line: 'required = true', why: 'required: codex exec stops with an error when CodeSpace fails to start, instead of running on without its tools.' },
  { line: 'startup_timeout_sec = 30', why: 'startup_timeout_sec: how long Codex waits for the tool list; the bridge answers at once, this leaves room for a loaded machine.' },
  { line: 'default_tools_approval_mode = "approve"', why: 'default_tools_approval_mode: codex exec runs with approval policy "never" and otherwise refuses tools that need approval (apply_patch, exec_command).' },
];

/**
 * What "Connect an Agent…" offers. The bridge comes first for every agent that starts MCP servers itself: it
 * needs no port and no token in any configuration file (it finds the window and reads the token itself).
 */
export function agentConnections(info: { url: string; token: string; serverName: string; bridge: BridgeCommand; agentCredential?: string }): AgentConnection[] {
  const { serverName: name, url, bridge } = info;
  const credential = info.agentCredential;
  // With an agent credential, every entry carries it: the bridge's environment (through `env`, so one command line
  // works in every agent's configuration), a JSON entry's `env`, or the HTTP header instead of the window's token.
  // The CLIs that add a server take its environment as an option (codex --env, claude and gemini -e); a plain
  // command line sets it with env(1).
  const envOption = (flag: string): string => (credential !== undefined ? `${flag} ${AGENT_TOKEN_ENV_VAR}=${shellQuote(credential)} ` : '');
  const line = credential !== undefined ? `env ${AGENT_TOKEN_ENV_VAR}=${shellQuote(credential)} ${bridgeLine(bridge)}` : bridgeLine(bridge);
  const withEnv = (entry: Record<string, unknown>): Record<string, unknown> => (credential !== undefined ? { ...entry, env: { [AGENT_TOKEN_ENV_VAR]: credential } } : entry);
  const header = credential ?? info.token;
  const json = (target: McpJsonTarget) => JSON.stringify({ [mcpJsonServersKey(target)]: { [name]: withEnv(mcpJsonEntry(target, bridge)) } }, null, 2);
  return [
    {
      id: 'codex',
      label: 'Codex CLI',
      detail: 'Through the CodeSpace bridge: no port or token in ~/.codex/config.toml. Includes the start-up settings and the one `codex exec` needs for tools that write.',
      text: [
        `codex mcp add ${name} ${envOption('--env')}-- ${bridgeLine(bridge)}`,
        `# Then add these lines under [mcp_servers.${name}] in ~/.codex/config.toml:`,
        ...CODEX_SERVER_SETTINGS.map((s) => `# ${s.line}`),
        ...CODEX_SERVER_SETTINGS.map((s) => `# ${s.why}`),
      ].join('\n'),
    },
    {
      id: 'codex-http',
      label: 'Codex CLI (HTTP)',
      detail: `Direct HTTP; the token comes from ${TOKEN_ENV_VAR}, set in this window's terminals.`,
      text: [`# ~/.codex/config.toml`, `[mcp_servers.${name}]`, `url = "${url}"`, credential !== undefined ? `http_headers = { Authorization = "Bearer ${credential}" }` : `bearer_token_env_var = "${TOKEN_ENV_VAR}"`].join('\n'),
    },
    {
      id: 'claude',
      label: 'Claude Code',
      detail: 'Through the CodeSpace bridge: no port or token in any configuration. Or write the project\'s .mcp.json.',
      text: `claude mcp add ${name} ${envOption('-e')}-- ${bridgeLine(bridge)}`,
      projectFile: '.mcp.json',
    },
    {
      id: 'claude-http',
      label: 'Claude Code (HTTP)',
      detail: `Direct HTTP with the header, expanded from ${TOKEN_ENV_VAR} by Claude Code (some versions do not: prefer the bridge).`,
      text: `claude mcp add --transport http ${name} ${url} --header 'Authorization: Bearer ${credential ?? `\${${TOKEN_ENV_VAR}}`}'`,
    },
    {
      id: 'vscode',
      label: 'VS Code (mcp.json)',
      detail: 'VS Code\'s own agent already lists "CodeSpace (this window)". For a project entry: .vscode/mcp.json with the bridge.',
      text: json('.vscode/mcp.json'),
      projectFile: '.vscode/mcp.json',
    },
    {
      id: 'cursor',
      label: 'Cursor',
      detail: '.cursor/mcp.json (or ~/.cursor/mcp.json) with the bridge.',
      text: json('.cursor/mcp.json'),
      projectFile: '.cursor/mcp.json',
    },
    {
      id: 'gemini',
      label: 'Gemini CLI',
      detail: 'Through the CodeSpace bridge, in your user settings (without --scope user it writes .gemini/settings.json into the workspace). The server stays disabled until you trust the folder.',
      text: [
        `gemini mcp add --scope user ${envOption('-e')}${name} ${bridgeLine(bridge)}`,
        `# Gemini CLI disables MCP servers in a folder it does not trust: trust the workspace when it asks (or /permissions),`,
        `# or add it to ~/.gemini/trustedFolders.json as {"<folder>": "TRUST_FOLDER"}.`,
      ].join('\n'),
    },
    {
      id: 'antigravity',
      label: 'Antigravity CLI (agy)',
      detail: 'Through the CodeSpace bridge: paste into ~/.gemini/antigravity-cli/mcp_config.json (all workspaces) or .agents/mcp_config.json (one workspace).',
      text: JSON.stringify({ mcpServers: { [name]: withEnv({ command: bridge.command, args: [...bridge.args] }) } }, null, 2),
    },
    {
      id: 'http',
      label: 'Generic HTTP client',
      detail: 'URL and bearer token. The clipboard then holds the token: paste it only into your client.',
      text: `URL: ${url}\nHeader: Authorization: Bearer ${header}`,
    },
    {
      id: 'stdio',
      label: 'Generic stdio client',
      detail: 'The bridge command: MCP on stdin/stdout, finds this window by --workspace, the terminal environment or its working directory.',
      text: line,
    },
  ];
}
