// The VSIX a user installs: `npm run package` builds it (or CODESPACE_VSIX names one already built), code-server
// installs it from the file into a fresh extensions dir, and a window opened WITHOUT extensionDevelopmentPath
// runs it. A real MCP client then connects with the settings a user copies and runs a PTY command, which must
// run on the node-pty VS Code itself ships (not the fallback the VSIX carries).
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { pathToFileURL } from 'node:url';
import * as yauzl from 'yauzl';
import * as yazl from 'yazl';
import { exactEnvClient } from '../unit/helpers/exactEnvClient';
import { EXTENSION_ID, REPO_ROOT, startWorkbench } from './index';
import type { Workbench } from './index';
import { call, connect, copyConnectionSettings } from './mcpClient';

/**
 * The same VSIX as the next version: `version` in extension/package.json and in the manifest's Identity, every other
 * byte as built. What an update installs, without building twice.
 */
async function bumpVsix(source: string, dest: string, version: string): Promise<void> {
  const entries: { name: string; data: Buffer }[] = [];
  await new Promise<void>((resolve, reject) => {
    yauzl.open(source, { lazyEntries: true }, (err, zip) => {
      if (err) return reject(err);
      zip.on('error', reject);
      zip.on('end', () => resolve());
      zip.on('entry', (entry) => {
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        zip.openReadStream(entry, (e, stream) => {
          if (e) return reject(e);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            entries.push({ name: entry.fileName, data: Buffer.concat(chunks) });
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
  const out = new yazl.ZipFile();
  for (const { name, data } of entries) {
    let bytes = data;
    if (name === 'extension/package.json') bytes = Buffer.from(JSON.stringify({ ...(JSON.parse(data.toString('utf8')) as object), version }, null, 2));
    if (name === 'extension.vsixmanifest') bytes = Buffer.from(data.toString('utf8').replace(/(<Identity [^>]*Version=")[^"]*"/, `$1${version}"`));
    out.addBuffer(bytes, name);
  }
  out.end();
  await new Promise<void>((resolve, reject) => out.outputStream.pipe(fs.createWriteStream(dest)).on('close', resolve).on('error', reject));
}

/** The node-pty of the offline VS Code (code-server) under test, 1.100's or 1.139's: what the extension must load. */
async function vscodeNodePtyVersion(): Promise<string> {
  const href = pathToFileURL(path.join(REPO_ROOT, 'scripts', 'installVsCodeHost.mjs')).href;
  const { hostPaths } = (await import(href)) as { hostPaths(): { packageJson: string } };
  const file = path.join(path.dirname(hostPaths().packageJson), 'lib', 'vscode', 'node_modules', 'node-pty', 'package.json');
  return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
}

function buildVsix(dir: string): string {
  if (process.env.CODESPACE_VSIX) return path.resolve(process.env.CODESPACE_VSIX);
  const out = path.join(dir, 'codespace.vsix');
  const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts', 'package.mjs'), '--out', out], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, `npm run package failed:\n${r.stdout}\n${r.stderr}`);
  return out;
}

describe('the packaged VSIX, installed into VS Code', function () {
  this.timeout(10 * 60_000);
  let tmp: string;
  let wb: Workbench;
  let client: Client;
  let wsId: string;
  let vsix: string;
  let home: string;
  const savedHome = process.env.HOME;

  before(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-vsix-'));
    vsix = buildVsix(tmp);
    // A home of this run: the installed extension writes its launcher there (code-server inherits the variable).
    home = path.join(tmp, 'home');
    fs.mkdirSync(home);
    process.env.HOME = home;
    wb = await startWorkbench({ workspace: 'workspace', installVsix: [vsix] });
    await wb.waitForActivation();
    const { url, token } = await copyConnectionSettings(wb);
    client = await connect(url, token, 'vsix-agent');
  });

  after(async () => {
    process.env.HOME = savedHome;
    await client?.close().catch(() => undefined);
    if (wb) {
      await wb.screenshot('e2e-vsix').catch(() => undefined);
      await wb.stop();
    }
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('runs as an installed extension, not from the repository', () => {
    assert.ok(!wb.url.includes('extensionDevelopmentPath'), 'the window has no extension under development');
    const installed = fs.readdirSync(wb.extensionsDir).filter((d) => d.toLowerCase().startsWith(`${EXTENSION_ID.toLowerCase()}-`));
    assert.equal(installed.length, 1, `one installed copy in ${wb.extensionsDir}: ${fs.readdirSync(wb.extensionsDir).join(', ')}`);
    const root = path.join(wb.extensionsDir, installed[0]!);
    for (const f of ['dist/extension.js', 'dist/webview/panel.js', 'dist/node-pty/lib/index.js', 'dist/node-pty/build/Release/pty.node', 'media/icon.png', 'LICENSE.txt']) {
      assert.ok(fs.existsSync(path.join(root, f)), `the VSIX carries ${f}`);
    }
    for (const f of ['src', 'test', 'node_modules', 'dist/extension.js.map']) assert.ok(!fs.existsSync(path.join(root, f)), `the VSIX leaves out ${f}`);
    const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { contributes: { walkthroughs?: { steps: unknown[] }[] } };
    assert.equal(manifest.contributes.walkthroughs?.[0]?.steps.length, 4, 'the walkthrough has four steps');
  });

  it("runs a PTY command on VS Code's own node-pty, and workspace_info and the log say so", async () => {
    const all = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    wsId = all.workspaces[0]!.id;
    const info = await call<{ execution: { process: { available: boolean; capabilities: { pty: boolean }; pty?: { available: boolean; source: string; version?: string } } } }>(client, 'workspace_info', { workspace_id: wsId });
    assert.equal(info.execution.process.capabilities.pty, true);
    assert.deepEqual(info.execution.process.pty, { available: true, source: 'vscode', version: await vscodeNodePtyVersion() });

    const started = await call<{ process_id: string }>(client, 'exec_command', { workspace_id: wsId, command: ['sh', '-c', 'if [ -t 0 ] && [ -t 1 ]; then echo on-a-terminal; fi; stty size; exit 4'], tty: true });
    let cursor = 0;
    let out = '';
    for (let i = 0; i < 50; i++) {
      const r = await call<{ chunk: string; cursor: number; eof: boolean }>(client, 'read_process', { process_id: started.process_id, cursor, wait_ms: 2000 });
      out += r.chunk;
      cursor = r.cursor;
      if (r.eof) break;
    }
    assert.match(out, /on-a-terminal\r?\n24 80\r?\n/, `the command ran on a 24x80 pseudo-terminal: ${JSON.stringify(out)}`);
    const st = await call<{ state: string; exit_code: number }>(client, 'process_status', { process_id: started.process_id });
    assert.deepEqual([st.state, st.exit_code], ['exited', 4]);

    const log = await wb.waitForExtensionLog(/\[pty\] node-pty /);
    assert.match(log, new RegExp(`\\[pty\\] node-pty ${(await vscodeNodePtyVersion()).replace(/\./g, '\\.')} loaded from VS Code's application: \\S*node_modules[/\\\\]node-pty`));
    assert.match(log, /\[activate\] ready in \d+(\.\d+)? ms \(activate\(\) to listening\)/);
  });

  it('writes the stable launcher; the same launcher starts the bridge under Codex\'s environment before and after an update', async () => {
    const launcher = path.join(home, '.codespace', 'bin', 'codespace-mcp');
    assert.equal(fs.statSync(launcher).mode & 0o777, 0o755, 'written at activation');
    const installed = (): string[] => fs.readdirSync(wb.extensionsDir).filter((d) => d.startsWith(`${EXTENSION_ID}-`));
    const [first] = installed();
    await wb.waitForExtensionLog(new RegExp(`\\[connect\\] bridge launcher \\S+codespace-mcp runs \\S*${first!.replace(/\./g, '\\.')}/dist/stdio\\.js`));
    const user = os.userInfo();
    // What Codex gives an MCP server, in its working directory (the project).
    const codexEnv = { HOME: home, LANG: 'C.UTF-8', LOGNAME: user.username, PATH: '/usr/bin:/bin', SHELL: '/bin/sh', TERM: 'xterm', TMPDIR: path.join(tmp, 'agent-tmp'), USER: user.username };
    const readme = async (): Promise<string> => {
      const c = await exactEnvClient(launcher, [], { env: codexEnv, cwd: fs.realpathSync(wb.workspaceDir) });
      try {
        const info = await call<{ workspaces: { id: string }[] }>(c.client, 'workspace_info', {});
        return (await call<{ content: string }>(c.client, 'read', { workspace_id: info.workspaces[0]!.id, path: 'README.md' })).content;
      } finally {
        await c.close();
      }
    };
    const expected = fs.readFileSync(path.join(wb.workspaceDir, 'README.md'), 'utf8');
    assert.equal(await readme(), expected);

    // The update: code-server installs the next version beside the running one; the old folder goes, as VS Code
    // removes it at its next start. The launcher is not rewritten in between.
    const next = path.join(tmp, 'codespace-next.vsix');
    await bumpVsix(vsix, next, '99.0.0');
    const host = (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts', 'vscodeHost.mjs')).href)) as { installExtension(o: { vsix: string; userDataDir: string; extensionsDir: string }): void };
    host.installExtension({ vsix: next, userDataDir: wb.userDataDir, extensionsDir: wb.extensionsDir });
    fs.rmSync(path.join(wb.extensionsDir, first!), { recursive: true, force: true });
    assert.deepEqual(installed(), [`${EXTENSION_ID}-99.0.0`]);
    assert.equal(await readme(), expected, 'the same launcher runs the new version\'s bridge');
  });
});
