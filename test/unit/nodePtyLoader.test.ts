// Which node-pty the extension runs on: VS Code's own copy first (a candidate under the editor's application root),
// the bundled copy as the fallback, each failure named. Real folders and the real node-pty of this checkout.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SpawnError } from '../../src/features/processes/common/processBackend';
import { InMemoryLogger } from '../../src/base/logger';
import { NodePtyBackend } from '../../src/features/processes/node/nodePtyBackend';
import { loadNodePty, nodePtyCandidates, vscodeNodePtyDirs } from '../../src/features/processes/node/nodePtyLoader';
import { z } from 'zod';
import { ToolError } from '../../src/base/errors';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import type { ToolContract } from '../../src/kernel/tool';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { workspaceInfoTool } from '../../src/features/files/common/workspaceInfo';
import { assembleServices } from '../../src/app/assembleServices';
import type { AssembledServices } from '../../src/app/assembleServices';
import { createdTool, unitAssembleOptions } from './helpers/assembleOptions';
import type { NodePtyCandidate } from '../../src/features/processes/node/nodePtyLoader';

const realPtyDir = path.dirname(require.resolve('node-pty/package.json'));
const realVersion = (JSON.parse(fs.readFileSync(path.join(realPtyDir, 'package.json'), 'utf8')) as { version: string }).version;
const baseEnv: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), LANG: 'C.UTF-8' };

let tmp: string;

/** A folder that looks like node-pty (package.json) whose index.js is `body`. */
function fakeNodePty(dir: string, body: string, version = '9.9.9-fake'): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'node-pty', version, main: 'index.js' }));
  fs.writeFileSync(path.join(dir, 'index.js'), body);
  return dir;
}

/** Runs `printf` in a PTY through the backend and returns its output. */
async function runInPty(backend: NodePtyBackend): Promise<string> {
  const handle = await backend.spawn({ file: '/usr/bin/printf', args: ['pty-%s', 'ok'], cwd: tmp, env: baseEnv, tty: true });
  let out = '';
  handle.onData((b) => (out += Buffer.from(b).toString('utf8')));
  await new Promise<void>((resolve) => handle.onExit(() => resolve()));
  return out;
}

describe('node-pty loader', () => {
  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(fs.realpathSync(os.tmpdir()), 'codespace-ptyload-'));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('tries VS Code\'s application root first, in its known layouts, then the extension\'s copies', () => {
    const c = nodePtyCandidates({ appRoot: '/app', extensionRoot: '/ext' });
    assert.deepEqual(c, [
      { source: 'vscode', dir: path.join('/app', 'node_modules', 'node-pty') },
      { source: 'vscode', dir: path.join('/app', 'node_modules.asar.unpacked', 'node-pty') },
      { source: 'vscode', dir: path.join('/app', 'node_modules.asar', 'node-pty') },
      { source: 'bundled', dir: path.join('/ext', 'dist', 'node-pty') },
      { source: 'bundled', dir: path.join('/ext', 'node_modules', 'node-pty') },
    ]);
  });

  it('falls back to the bundled copy when the editor has none, and runs a PTY command with it', async () => {
    const appRoot = path.join(tmp, 'app');
    fs.mkdirSync(appRoot);
    const candidates: NodePtyCandidate[] = [...vscodeNodePtyDirs(appRoot).map((dir) => ({ source: 'vscode' as const, dir })), { source: 'bundled', dir: realPtyDir }];
    const load = loadNodePty(candidates);
    assert.equal(load.source, 'bundled');
    assert.equal(load.dir, realPtyDir);
    assert.equal(load.version, realVersion);
    assert.deepEqual(
      load.failures.map((f) => [f.source, f.reason]),
      [
        ['vscode', 'no node-pty package there'],
        ['vscode', 'no node-pty package there'],
        ['vscode', 'no node-pty package there'],
      ],
    );

    const log = new InMemoryLogger();
    const backend = new NodePtyBackend({ candidates, logger: log, graceMs: 500 });
    assert.deepEqual(backend.origin(), { source: 'bundled', version: realVersion });
    assert.equal(await runInPty(backend), 'pty-ok');
    const lines = log.lines.filter((l) => l.startsWith('[info] [pty]'));
    assert.equal(lines.length, 1, 'the choice is logged once');
    assert.match(lines[0] ?? '', /loaded from the extension \(bundled copy\).*skipped: vscode .*no node-pty package there/);
  });

  it('skips an editor copy that does not load (a binary for another runtime) and says why', () => {
    const broken = fakeNodePty(path.join(tmp, 'app', 'node_modules', 'node-pty'), "throw new Error('The module pty.node was compiled against a different Node.js version');");
    const load = loadNodePty([{ source: 'vscode', dir: broken }, { source: 'bundled', dir: realPtyDir }]);
    assert.equal(load.source, 'bundled');
    assert.equal(load.failures.length, 1);
    assert.match(load.failures[0]?.reason ?? '', /did not load: The module pty\.node was compiled against a different Node\.js version/);
  });

  it('skips a copy without the spawn function this extension calls', () => {
    const odd = fakeNodePty(path.join(tmp, 'odd'), 'module.exports = { fork() {} };');
    const load = loadNodePty([{ source: 'vscode', dir: odd }, { source: 'bundled', dir: realPtyDir }]);
    assert.equal(load.source, 'bundled');
    assert.equal(load.failures[0]?.reason, 'it loaded but has no spawn function');
  });

  it('skips a folder whose package is not node-pty', () => {
    const dir = path.join(tmp, 'other');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'not-node-pty', version: '1.0.0' }));
    fs.writeFileSync(path.join(dir, 'index.js'), 'module.exports = { spawn() {} };');
    const load = loadNodePty([{ source: 'vscode', dir }]);
    assert.equal(load.module, undefined);
    assert.equal(load.failures[0]?.reason, 'no node-pty package there');
  });

  it('prefers the editor\'s copy when it loads (asar-unpacked layout)', async () => {
    const appRoot = path.join(tmp, 'app');
    const unpacked = path.join(appRoot, 'node_modules.asar.unpacked');
    fs.mkdirSync(unpacked, { recursive: true });
    fs.symlinkSync(realPtyDir, path.join(unpacked, 'node-pty'));
    const candidates = nodePtyCandidates({ appRoot, extensionRoot: path.join(tmp, 'no-extension') });
    const backend = new NodePtyBackend({ candidates, graceMs: 500 });
    assert.deepEqual(backend.origin(), { source: 'vscode', version: realVersion });
    assert.equal(await runInPty(backend), 'pty-ok');
  });

  it('with no copy that loads: no PTY, an error naming every candidate, and workspace_info\'s reason', async () => {
    const broken = fakeNodePty(path.join(tmp, 'b'), "throw new Error('no binary for this platform');");
    const log = new InMemoryLogger();
    const backend = new NodePtyBackend({ candidates: [{ source: 'vscode', dir: path.join(tmp, 'none') }, { source: 'bundled', dir: broken }], logger: log });
    assert.equal(backend.available(), false);
    const origin = backend.origin();
    assert.equal(origin?.source, 'none');
    assert.match(origin?.reason ?? '', /vscode .*none: no node-pty package there; bundled .*b: it did not load: no binary for this platform/);
    await assert.rejects(
      backend.spawn({ file: '/usr/bin/true', args: [], cwd: tmp, env: baseEnv, tty: true }),
      (e: unknown) => SpawnError.is(e, 'unavailable') && /no binary for this platform/.test(e.message),
    );
    assert.equal(log.lines.filter((l) => l.startsWith('[warn] [pty] node-pty could not be loaded')).length, 1);
  });

  describe('through the assembled services, as the extension wires it', () => {
    /** Services on a workspace `proj` whose terminal backend looks for node-pty in `candidates`. */
    async function assemble(candidates: NodePtyCandidate[]) {
      const root = path.join(tmp, 'proj');
      fs.mkdirSync(root, { recursive: true });
      return assembleServices(
        unitAssembleOptions(new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root, name: 'proj', profile: 'exec' }])), path.join(tmp, 'storage'), {
          logger: new InMemoryLogger(),
          env: () => baseEnv,
          nodePty: candidates,
        }),
      );
    }
    async function call(tool: ToolContract, args: Record<string, unknown>, assembled: AssembledServices): Promise<Record<string, unknown>> {
      const result = (await createdTool(assembled, tool).handler(z.object(tool.input).strict().parse(args), { signal: new AbortController().signal })) as Record<string, unknown>;
      z.object(tool.output).strict().parse(result);
      return result;
    }
    const ptyOf = (info: Record<string, unknown>) => (info.execution as { process: { pty?: unknown; capabilities: { pty: boolean } } }).process;

    it("workspace_info names VS Code's copy when it loads", async () => {
      const appRoot = path.join(tmp, 'app');
      fs.mkdirSync(path.join(appRoot, 'node_modules'), { recursive: true });
      fs.symlinkSync(realPtyDir, path.join(appRoot, 'node_modules', 'node-pty'));
      const a = await assemble(nodePtyCandidates({ appRoot, extensionRoot: path.join(tmp, 'none') }));
      try {
        const p = ptyOf(await call(workspaceInfoTool, { workspace_id: 'proj' }, a));
        assert.deepEqual(p.pty, { available: true, source: 'vscode', version: realVersion });
        assert.equal(p.capabilities.pty, true);
      } finally {
        await a.shutdown();
      }
    });

    it('workspace_info says why no copy loaded, a tty command is refused and pipes still run', async () => {
      const a = await assemble([{ source: 'vscode', dir: path.join(tmp, 'nothing') }]);
      try {
        const p = ptyOf(await call(workspaceInfoTool, { workspace_id: 'proj' }, a));
        const pty = p.pty as { available: boolean; source: string; reason: string };
        assert.equal(pty.available, false);
        assert.equal(pty.source, 'none');
        assert.match(pty.reason, /nothing: no node-pty package there/);
        assert.equal(p.capabilities.pty, false);
        await assert.rejects(call(execCommandTool, { workspace_id: 'proj', command: ['true'], tty: true }, a), (e: unknown) => ToolError.is(e, 'EXEC_DISABLED'));
        const started = await call(execCommandTool, { workspace_id: 'proj', command: ['true'] }, a);
        assert.equal(started.dispatch_status, 'confirmed');
      } finally {
        await a.shutdown();
      }
    });
  });
});
