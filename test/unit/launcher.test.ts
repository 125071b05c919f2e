// The stable launcher ~/.codespace/bin/codespace-mcp: a real file run as agents run it (exact environments, no
// PATH), across an update of the installed extension (the folder it was written by removed, newer ones installed).
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { silentLogger } from '../../src/base/logger';
import { WindowPublisher } from '../../src/features/connect/node/windowPublisher';
import { DISCOVERY_DIR_ENV } from '../../src/features/connect/node/discoveryFiles';
import type { LauncherTarget } from '../../src/features/connect/node/bridgeLauncher';
import { launcherPath, writeLauncher } from '../../src/features/connect/node/bridgeLauncher';
import { exactEnvClient } from './helpers/exactEnvClient';
import type { RunningHost } from './helpers/httpFixture';
import { startHost } from './helpers/httpFixture';

const BRIDGE = path.join(__dirname, '..', '..', 'src', 'bridge', 'main.js');
const PREFIX = 'codespace.codespace-vscode-';

describe('codespace-mcp launcher (survives updates, needs no PATH)', function () {
  this.timeout(120_000);
  let tmp: string;
  let home: string;
  let extensions: string;
  let root: string;
  let dir: string;
  let host: RunningHost;
  let publisher: WindowPublisher;

  /** An installed copy of the extension whose dist/stdio.js says its version, then runs the real bridge. */
  function install(version: string): string {
    const ext = path.join(extensions, `${PREFIX}${version}`);
    fs.mkdirSync(path.join(ext, 'dist'), { recursive: true });
    fs.writeFileSync(path.join(ext, 'dist', 'stdio.js'), `process.stderr.write('bridge of ${version}\\n');\nrequire(${JSON.stringify(BRIDGE)});\n`);
    return ext;
  }

  function target(extensionRoot: string, runtime = process.execPath): LauncherTarget {
    return { extensionRoot, extensionsDirs: [extensions], folderPrefix: PREFIX, runtime };
  }

  /** Starts the launcher as an agent would, with exactly `env`, and reads a file through the window. */
  async function readThrough(env: Record<string, string>): Promise<string> {
    const c = await exactEnvClient(launcherPath(home), ['--workspace', root], { env: { [DISCOVERY_DIR_ENV]: dir, ...env }, cwd: tmp });
    try {
      const r = (await c.client.callTool({ name: 'read', arguments: { workspace_id: 'demo', path: 'which.txt' } })) as CallToolResult;
      assert.equal((r.structuredContent as { content: string }).content, 'here', c.stderr.join(''));
      return c.stderr.join('');
    } finally {
      await c.close();
    }
  }

  before(async () => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-launcher-')));
    home = path.join(tmp, 'home');
    extensions = path.join(home, '.vscode', 'extensions');
    root = path.join(tmp, 'project');
    dir = path.join(tmp, 'discovery');
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(path.join(root, 'which.txt'), 'here');
    host = await startHost(root);
    publisher = new WindowPublisher({ server: host.host, folders: () => [root], token: () => host.token.value, publishToken: () => true, version: 't', logger: silentLogger, dir });
    publisher.refresh();
  });

  after(async () => {
    publisher.dispose();
    await host.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('runs the bridge of the extension that wrote it, under an agent\'s reduced environment and under an empty one', async () => {
    const a = install('0.1.0');
    const file = writeLauncher(target(a), launcherPath(home));
    assert.equal(file, path.join(home, '.codespace', 'bin', 'codespace-mcp'));
    assert.equal(fs.statSync(file).mode & 0o777, 0o755);
    const user = os.userInfo();
    const codexEnv = { HOME: home, LANG: 'C.UTF-8', LOGNAME: user.username, PATH: process.env.PATH ?? '', SHELL: '/bin/sh', TERM: 'xterm', TMPDIR: path.join(tmp, 'agent-tmp'), USER: user.username };
    assert.match(await readThrough(codexEnv), /bridge of 0\.1\.0/);
    assert.match(await readThrough({}), /bridge of 0\.1\.0/, 'no PATH, no HOME: the runtime is named by absolute path');
  });

  it('after an update removed that folder, runs the newest installed copy (0.10.0 after 0.9.0), with the same launcher', async () => {
    fs.rmSync(path.join(extensions, `${PREFIX}0.1.0`), { recursive: true });
    install('0.9.0');
    install('0.10.0-linux-x64');
    install('x.y.z'); // not a version: never chosen
    fs.mkdirSync(path.join(extensions, `${PREFIX}2.0.0`)); // no dist/stdio.js: a half-removed folder
    assert.match(await readThrough({}), /bridge of 0\.10\.0-linux-x64/);
  });

  it('falls back to node on PATH when the editor\'s runtime is gone, runs in an ES module scope, and says when nothing is installed', async () => {
    const b = install('3.0.0');
    writeLauncher(target(b, path.join(tmp, 'gone', 'code')), launcherPath(home));
    assert.match(await readThrough({ PATH: path.dirname(process.execPath) }), /bridge of 3\.0\.0/);
    // A package.json that makes the folder an ES module scope does not break the launcher.
    fs.writeFileSync(path.join(home, '.codespace', 'package.json'), '{"type":"module"}');
    writeLauncher(target(b), launcherPath(home));
    assert.match(await readThrough({}), /bridge of 3\.0\.0/);

    fs.rmSync(extensions, { recursive: true });
    const r = spawnSync(launcherPath(home), ['--check'], { env: {}, encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /No CodeSpace extension is installed where this launcher looks \(.*codespace\.codespace-vscode-3\.0\.0.*\)\. Install CodeSpace in VS Code and start VS Code once/);
  });
});
