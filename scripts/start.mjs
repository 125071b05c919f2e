// `npm start`: builds the extension and opens it in VS Code on a sample workspace.
// Desktop VS Code (`code` on PATH) when present, otherwise the same browser-served VS Code the tests use
// (code-server on 127.0.0.1, installed on first use), whose URL is printed. Either way it prints how to connect
// an agent, and when the extension is ready (its endpoint listens). Options: --browser (use the browser-served
// VS Code even when `code` exists), --folder <path>.
//
// The sample workspace is a copy of test/fixtures/workspace kept outside this repository
// (`$XDG_CACHE_HOME/codespace-sample` or `~/.cache/codespace-sample`): inside it, VS Code would find the
// repository's git folder above and prompt about it.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, ensureVsCodeHost, makeTmpRoot, removeDir, startCodeServer, workbenchUrl } from './vscodeHost.mjs';

const args = process.argv.slice(2);
const forceBrowser = args.includes('--browser');
const folderArg = args.indexOf('--folder') >= 0 ? args[args.indexOf('--folder') + 1] : undefined;

/** How to connect an agent to this development window: the bridge of this checkout (no launcher is written here). */
function connectHelp(folder) {
  const bridge = `node ${path.join(REPO_ROOT, 'dist', 'stdio.js')} --workspace ${folder}`;
  return `
Connect an agent (in VS Code): F1, then "CodeSpace: Connect an Agent", and pick yours. From this checkout the
bridge is \`node <repo>/dist/stdio.js\` (an installed extension copies ~/.codespace/bin/codespace-mcp instead):
       Claude Code  claude mcp add codespace -- ${bridge}
       Codex        codex mcp add codespace -- ${bridge}
       Gemini CLI   gemini mcp add --scope user codespace ${bridge}
       VS Code      nothing to do: the extension offers itself to VS Code's agent mode
  Then ask your agent to call workspace_info. docs/CONNECT.md says what each CLI shows.
`;
}

function run(cmd, cmdArgs) {
  const r = spawnSync(cmd, cmdArgs, { cwd: REPO_ROOT, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

function which(cmd) {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** A writable copy of the sample workspace, kept between runs outside the repository (no parent git folder). */
function sampleWorkspace() {
  if (folderArg) return path.resolve(folderArg);
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const dest = path.join(cache, 'codespace-sample');
  if (!existsSync(dest)) cpSync(path.join(REPO_ROOT, 'test', 'fixtures', 'workspace'), dest, { recursive: true });
  return dest;
}

/** When a file was created (its birth time where the file system keeps one, else its last change). */
function createdAt(file) {
  const st = statSync(file);
  return st.birthtimeMs > 0 ? st.birthtimeMs : st.mtimeMs;
}

/** Files named CodeSpace.log under `dir` (the extension's log channel) created since `since` (ms): a new window's. */
function extensionLogs(dir, since) {
  const out = [];
  const walk = (d, depth) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = path.join(d, e.name);
      if (e.isDirectory() && depth < 8) walk(full, depth + 1);
      else if (e.isFile() && e.name === 'CodeSpace.log' && createdAt(full) >= since) out.push(full);
    }
  };
  walk(dir, 0);
  return out;
}

/**
 * Waits until the extension logs that its endpoint listens (`[activate] ready in ...`) under `logsDir`, then prints
 * it. Gives up quietly after `timeoutMs` (the log may live elsewhere, e.g. a portable VS Code).
 */
async function announceReady(logsDir, since, timeoutMs, folder) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    for (const file of extensionLogs(logsDir, since)) {
      const ready = /\[activate\] ready in ([\d.]+) ms .* on port (\d+)/.exec(readFileSync(file, 'utf8'));
      if (ready) {
        console.log(`\n[start] CodeSpace is ready: MCP endpoint http://127.0.0.1:${ready[2]}/mcp (activated in ${ready[1]} ms).`);
        console.log(connectHelp(folder));
        return true;
      }
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

/** Where desktop VS Code keeps its logs (the default user data dir). */
function desktopLogsDir() {
  if (process.platform === 'darwin') return path.join(os.homedir(), 'Library', 'Application Support', 'Code', 'logs');
  if (process.platform === 'win32') return path.join(process.env.APPDATA ?? os.homedir(), 'Code', 'logs');
  return path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), '.config'), 'Code', 'logs');
}

if (!existsSync(path.join(REPO_ROOT, 'node_modules'))) run('npm', ['install', '--no-audit', '--no-fund']);
run(process.execPath, ['esbuild.mjs']);
const folder = sampleWorkspace();

const code = forceBrowser ? undefined : which('code');
if (code) {
  console.log(`[start] opening desktop VS Code on ${folder} with the extension under development`);
  const since = Date.now();
  run(code, ['--new-window', `--extensionDevelopmentPath=${REPO_ROOT}`, folder]);
  if (!(await announceReady(desktopLogsDir(), since, 90_000, folder))) {
    console.log('[start] VS Code is open; its CodeSpace log did not say "ready" yet (CodeSpace: Show Log tells).');
    console.log(connectHelp(folder));
  }
} else {
  await ensureVsCodeHost();
  const tmpRoot = makeTmpRoot('codespace-start-');
  const server = await startCodeServer({ tmpRoot, openPath: folder });
  const url = workbenchUrl({ base: server.base, port: server.port, openPath: folder, kind: 'folder', extensionDevelopmentPath: REPO_ROOT });
  console.log(`\n[start] VS Code (browser) is serving on 127.0.0.1 only. Open this URL in a browser on this machine:\n\n  ${url}\n`);
  console.log('[start] It runs without a password, bound to loopback; stop it with Ctrl+C.');
  console.log('[start] The extension starts when the page opens; this prints when it is ready.');
  const stop = async () => {
    await server.stop();
    removeDir(tmpRoot);
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  // Keep running until interrupted.
  setInterval(() => {}, 1 << 30);
  void announceReady(path.join(server.userDataDir, 'logs'), 0, 24 * 3600_000, folder);
}
