// `npm start`: builds the extension and opens it in VS Code on a sample workspace.
// Desktop VS Code (`code` on PATH) when present, otherwise the same browser-served VS Code the tests use
// (code-server on 127.0.0.1, installed on first use), whose URL is printed. Either way it prints how to connect
// an agent. Options: --browser (use the browser-served VS Code even when `code` exists), --folder <path>.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, ensureVsCodeHost, makeTmpRoot, removeDir, startCodeServer, workbenchUrl } from './vscodeHost.mjs';

const args = process.argv.slice(2);
const forceBrowser = args.includes('--browser');
const folderArg = args.indexOf('--folder') >= 0 ? args[args.indexOf('--folder') + 1] : undefined;

const CONNECT_HELP = `
How to connect an agent
  1. In VS Code, click "CodeSpace :<port>" in the status bar (or run "CodeSpace: Copy Connection Settings").
  2. The clipboard now holds the URL, the token, and ready-to-paste settings:
       Codex        ~/.codex/config.toml  [mcp_servers.codespace] url + bearer_token_env_var
       Claude Code  claude mcp add --transport http codespace <url> --header "Authorization: Bearer <token>"
       VS Code      .vscode/mcp.json (or nothing to do: the extension offers itself to VS Code's agent mode)
  3. Ask your agent to call workspace_info.
`;

function run(cmd, cmdArgs) {
  const r = spawnSync(cmd, cmdArgs, { cwd: REPO_ROOT, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** A writable copy of the sample workspace, kept between runs, so the fixtures in the repo stay pristine. */
function sampleWorkspace() {
  if (folderArg) return path.resolve(folderArg);
  const dest = path.join(REPO_ROOT, '.vscode-test', 'sample-workspace');
  if (!existsSync(dest)) cpSync(path.join(REPO_ROOT, 'test', 'fixtures', 'workspace'), dest, { recursive: true });
  return dest;
}

if (!existsSync(path.join(REPO_ROOT, 'node_modules'))) run('npm', ['install', '--no-audit', '--no-fund']);
run(process.execPath, ['esbuild.mjs']);
const folder = sampleWorkspace();

const code = forceBrowser ? undefined : which('code');
if (code) {
  console.log(`[start] opening desktop VS Code on ${folder} with the extension under development`);
  run(code, ['--new-window', `--extensionDevelopmentPath=${REPO_ROOT}`, folder]);
  console.log(CONNECT_HELP);
} else {
  await ensureVsCodeHost();
  const tmpRoot = makeTmpRoot('codespace-start-');
  const server = await startCodeServer({ tmpRoot, openPath: folder });
  const url = workbenchUrl({ base: server.base, port: server.port, openPath: folder, kind: 'folder', extensionDevelopmentPath: REPO_ROOT });
  console.log(`\n[start] VS Code (browser) is serving on 127.0.0.1 only. Open this URL in a browser on this machine:\n\n  ${url}\n`);
  console.log('[start] It runs without a password, bound to loopback; stop it with Ctrl+C.');
  console.log(CONNECT_HELP);
  const stop = async () => {
    await server.stop();
    removeDir(tmpRoot);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  // Keep running until interrupted.
  setInterval(() => {}, 1 << 30);
}
