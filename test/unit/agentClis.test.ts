// The real agent CLIs start the bridge as they start any MCP server (their own environment and working directory),
// from the exact text Connect an Agent copies, in a fresh home: Claude Code, Codex and Gemini CLI, installed from npm
// into a cache folder on first use (CODESPACE_AGENT_CLIS names another). Their environments differ (Codex passes a
// short fixed list, Gemini CLI drops *_TOKEN variables); the bridge finds the window from the user alone and reads
// the token file. Nothing leaves 127.0.0.1: Codex is given a model provider on a closed local port, or a scripted one
// (helpers/scriptedProvider.ts) that records the tools of each turn.
import * as assert from 'node:assert/strict';
import { execFile, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { loadMachine } from '../../bench/machineLoad';
import { SHIPPED } from '../../src/bridge/shippedCatalogue';
import { agentConnections, mergeMcpJson } from '../../src/features/connect/common/connection';
import type { AgentConnection, BridgeCommand } from '../../src/features/connect/common/connection';
import { silentLogger } from '../../src/base/logger';
import { discoveryDir } from '../../src/features/connect/node/discoveryFiles';
import { WindowPublisher } from '../../src/features/connect/node/windowPublisher';
import { LAUNCHER_HOME_PATH, launcherPath, writeLauncher } from '../../src/features/connect/node/bridgeLauncher';
import type { RunningHost } from './helpers/httpFixture';
import { startHost } from './helpers/httpFixture';
import { namespaceTools, startScriptedProvider } from './helpers/scriptedProvider';

const execFileP = promisify(execFile);
const BRIDGE = path.join(__dirname, '..', '..', 'src', 'bridge', 'main.js');
/** The versions these tests ran against (December 2026). */
const CLIS = { '@openai/codex': '0.171.0', '@anthropic-ai/claude-code': '2.1.197', '@google/gemini-cli': '0.61.0' } as const;

function cliCache(): string {
  if (process.env.CODESPACE_AGENT_CLIS) return process.env.CODESPACE_AGENT_CLIS;
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cache, 'codespace-test', `agent-clis-${Object.values(CLIS).join('-')}`);
}

/** Installs the pinned CLIs once (npm, with their per-platform native packages) and returns the bin folder. */
function installClis(): string {
  const prefix = cliCache();
  const bin = path.join(prefix, 'node_modules', '.bin');
  const installed = Object.entries(CLIS).every(([name, version]) => {
    try {
      return (JSON.parse(fs.readFileSync(path.join(prefix, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version === version;
    } catch {
      return false;
    }
  });
  if (!installed) {
    fs.mkdirSync(prefix, { recursive: true });
    const npm = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', prefix, ...Object.entries(CLIS).map(([n, v]) => `${n}@${v}`)], { encoding: 'utf8', timeout: 900_000 });
    assert.equal(npm.status, 0, `installing the agent CLIs failed:\n${npm.stdout}\n${npm.stderr}`);
  }
  return bin;
}

describe('real agent CLIs start the bridge from what Connect an Agent copies', function () {
  this.timeout(20 * 60_000);
  let tmp: string;
  let root: string;
  let bin: string;
  let host: RunningHost;
  let publisher: WindowPublisher;
  let connections: Record<AgentConnection['id'], AgentConnection>;
  let launcher: BridgeCommand;

  /** A fresh home with the launcher of an installed extension, as a user has after installing CodeSpace. */
  function freshHome(name: string): string {
    const home = path.join(tmp, name);
    const ext = path.join(home, '.vscode', 'extensions', 'codespace.codespace-vscode-0.1.0');
    fs.mkdirSync(path.join(ext, 'dist'), { recursive: true });
    fs.writeFileSync(path.join(ext, 'dist', 'stdio.js'), `require(${JSON.stringify(BRIDGE)});\n`);
    writeLauncher({ extensionRoot: ext, extensionsDirs: [path.dirname(ext)], folderPrefix: 'codespace.codespace-vscode-', runtime: process.execPath }, launcherPath(home));
    return home;
  }

  /** The user's environment in a terminal: the CLIs add or remove what they do. */
  function userEnv(home: string): NodeJS.ProcessEnv {
    return { HOME: home, PATH: `${bin}:${process.env.PATH ?? ''}`, LANG: 'C.UTF-8', TERM: 'xterm', USER: os.userInfo().username, LOGNAME: os.userInfo().username, DISABLE_AUTOUPDATER: '1', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', NO_UPDATE_NOTIFIER: '1' };
  }

  /** Runs the copied text in a shell, as a user pastes it (the shell expands `~`; `#` lines are comments). */
  async function paste(text: string, home: string): Promise<string> {
    const { stdout, stderr } = await execFileP('/bin/sh', ['-c', text], { cwd: root, env: userEnv(home), timeout: 180_000 });
    return stdout + stderr;
  }

  async function run(command: string, args: string[], home: string): Promise<string> {
    const r = await execFileP(path.join(bin, command), args, { cwd: root, env: userEnv(home), timeout: 180_000 }).catch((err: { stdout?: string; stderr?: string }) => err);
    return `${r.stdout ?? ''}${r.stderr ?? ''}`;
  }

  /** Runs a CLI with stdin closed (`codex exec` otherwise waits for more of its prompt on stdin); output and errors. */
  function runClosedStdin(command: string, args: string[], home: string): Promise<string> {
    return new Promise((resolve) => {
      const child = spawn(path.join(bin, command), args, { cwd: root, env: userEnv(home), stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 });
      const output: string[] = [];
      child.stdout.setEncoding('utf8').on('data', (c: string) => output.push(c));
      child.stderr.setEncoding('utf8').on('data', (c: string) => output.push(c));
      child.once('close', (code, signal) => resolve(`${output.join('')}\n(exit ${code ?? signal})`));
    });
  }

  /**
   * A fresh home with Codex configured from the copied text: `codex mcp add`, then every `# key = value` line it
   * asks for under the server's table; and a model provider at `baseUrl`.
   */
  async function codexHome(name: string, baseUrl: string): Promise<string> {
    const home = freshHome(name);
    await paste(connections.codex.text, home);
    const config = path.join(home, '.codex', 'config.toml');
    let toml = fs.readFileSync(config, 'utf8');
    assert.match(toml, /\[mcp_servers\.codespace\]\ncommand = "[^"]*\/\.codespace\/bin\/codespace-mcp"/);
    const settings = connections.codex.text.split('\n').flatMap((l) => /^# ([a-z_]+ = .+)$/.exec(l)?.[1] ?? []);
    assert.deepEqual(settings, ['required = true', 'startup_timeout_sec = 30', 'default_tools_approval_mode = "approve"']);
    toml = toml.replace(/(\[mcp_servers\.codespace\]\n)/, `$1${settings.join('\n')}\n`);
    fs.writeFileSync(config, `model_provider = "local"\nmodel = "scripted"\n\n[model_providers.local]\nname = "local"\nbase_url = "${baseUrl}"\nwire_api = "responses"\n\n${toml}`);
    const loaded = await run('codex', ['mcp', 'get', 'codespace'], home);
    assert.match(loaded, /enabled: true/, 'the configuration loads');
    assert.match(loaded, /startup_timeout_sec: 30/, loaded);
    return home;
  }

  before(async function () {
    this.timeout(20 * 60_000);
    bin = installClis();
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-clis-')));
    root = path.join(tmp, 'project');
    fs.mkdirSync(root);
    fs.writeFileSync(path.join(root, 'which.txt'), 'here');
    host = await startHost(root);
    // Published where a window publishes (the user's own discovery folder, not a test folder): no CLI passes a
    // variable that could name another.
    publisher = new WindowPublisher({ server: host.host, folders: () => [root], token: () => host.token.value, publishToken: () => true, version: 't', logger: silentLogger, dir: discoveryDir({ env: {} }) });
    publisher.refresh();
    launcher = { command: '/unused', args: [], homePath: LAUNCHER_HOME_PATH };
    connections = Object.fromEntries(agentConnections({ url: 'http://127.0.0.1:1/mcp', token: 'unused', serverName: 'codespace', bridge: launcher }).map((c) => [c.id, c])) as typeof connections;
  });

  after(async () => {
    publisher?.dispose();
    await host?.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it(`Claude Code ${CLIS['@anthropic-ai/claude-code']}: the copied command, and the project's .mcp.json, are connected`, async () => {
    const home = freshHome('claude-home');
    await paste(connections.claude.text, home);
    assert.match(await run('claude', ['mcp', 'list'], home), /codespace: .*codespace-mcp.* - ✔ Connected/);
    await run('claude', ['mcp', 'remove', 'codespace'], home);

    const merged = mergeMcpJson(undefined, '.mcp.json', 'codespace', launcher);
    assert.ok(merged.ok);
    fs.writeFileSync(path.join(root, '.mcp.json'), merged.text);
    try {
      // The approval a user gives project servers when Claude Code first asks.
      fs.mkdirSync(path.join(home, '.claude'), { recursive: true });
      fs.writeFileSync(path.join(home, '.claude', 'settings.json'), JSON.stringify({ enableAllProjectMcpServers: true }));
      assert.match(await run('claude', ['mcp', 'list'], home), /codespace: \$\{HOME\}\/\.codespace\/bin\/codespace-mcp --workspace \. - ✔ Connected/);
    } finally {
      fs.rmSync(path.join(root, '.mcp.json'), { force: true });
    }
  });

  it(`Gemini CLI ${CLIS['@google/gemini-cli']}: disabled until the folder is trusted, then connected; nothing written into the workspace`, async () => {
    const home = freshHome('gemini-home');
    await paste(connections.gemini.text, home);
    assert.equal(fs.existsSync(path.join(root, '.gemini')), false, '--scope user keeps .gemini/settings.json out of the workspace');
    assert.match(await run('gemini', ['mcp', 'list'], home), /codespace: .*codespace-mcp .*- Disabled/);
    fs.writeFileSync(path.join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [root]: 'TRUST_FOLDER' }));
    assert.match(await run('gemini', ['mcp', 'list'], home), /✓ codespace: .*codespace-mcp .*- Connected/);
  });

  it(`Codex ${CLIS['@openai/codex']}: \`codex exec\` starts the bridge with its reduced environment and opens a session on the window`, async () => {
    const home = await codexHome('codex-home', 'http://127.0.0.1:9/v1');

    const before = host.host.sessionCount;
    const codex = spawn(path.join(bin, 'codex'), ['exec', '--skip-git-repo-check', 'say hi'], { cwd: root, env: userEnv(home), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const output: string[] = [];
    codex.stdout.setEncoding('utf8').on('data', (c: string) => output.push(c));
    codex.stderr.setEncoding('utf8').on('data', (c: string) => output.push(c));
    const exited = new Promise<void>((resolve) => codex.once('exit', () => resolve()));
    try {
      const deadline = Date.now() + 180_000;
      while (host.host.sessionCount <= before && codex.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      assert.ok(host.host.sessionCount > before, `codex opened no session on the window:\n${output.join('')}`);
      assert.doesNotMatch(output.join(''), /MCP client for `codespace` failed to start/);
    } finally {
      if (codex.exitCode === null && codex.pid !== undefined) process.kill(-codex.pid, 'SIGTERM');
      await exited;
    }
  });
  /** Runs of `codex exec` (CODESPACE_CODEX_RUNS; 20 for the figure in the report, a few in the suite). */
  const CODEX_RUNS = Number(process.env.CODESPACE_CODEX_RUNS ?? 3);

  it(`Codex ${CLIS['@openai/codex']}: with the copied settings, \`codex exec\`'s first turn lists the CodeSpace tools, every run, on a loaded machine`, async () => {
    const provider = await startScriptedProvider();
    const load = loadMachine();
    try {
      const home = await codexHome('codex-turns-home', provider.baseUrl);
      const expected = SHIPPED.tools.map((t) => t.name).sort();
      const missing: string[] = [];
      for (let i = 0; i < CODEX_RUNS; i++) {
        const seen = provider.requests.length;
        const out = await runClosedStdin('codex', ['exec', '--skip-git-repo-check', `run ${i}: say done`], home);
        const first = provider.requests[seen];
        if (!first) {
          missing.push(`run ${i}: no model request at all:\n${out}`);
          continue;
        }
        const listed = namespaceTools(first, 'mcp__codespace').sort();
        if (JSON.stringify(listed) !== JSON.stringify(expected)) missing.push(`run ${i}: the first turn listed ${listed.length} CodeSpace tools (${listed.join(', ')}):\n${out}`);
      }
      assert.deepEqual(missing, [], `${missing.length} of ${CODEX_RUNS} runs without the CodeSpace tools on the first turn`);
    } finally {
      await load.stop();
      await provider.close();
    }
  });
});
