import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

/** The part of a host's description the tested functions read. */
interface HostPaths {
  key: string;
  node?: { version: string };
  nodeBin: string;
  nodeDir?: string;
}
/** The subset of scripts/installVsCodeHost.mjs tested here. */
interface InstallModule {
  HOST_KEYS: string[];
  selectHosts(value?: string): string[];
  hostPaths(key: string): HostPaths;
  installEnv(outerEnv: NodeJS.ProcessEnv, p: HostPaths): NodeJS.ProcessEnv;
  nativePackages(nodeModules: string): string[];
}

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** Runs `npm <args>` in `cwd` with exactly `env`; resolves with its stdout, rejects on a non-zero exit. */
function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`npm ${args.join(' ')} exited ${code}: ${err}`))));
  });
}

describe('VS Code test hosts: which run, and how they install (scripts/installVsCodeHost.mjs)', () => {
  let m: InstallModule;
  let tmp: string;

  before(async () => {
    m = (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts', 'installVsCodeHost.mjs')).href)) as InstallModule;
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-host-install-'));
  });
  after(async () => {
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('runs the suites on the oldest and the newest VS Code unless CODESPACE_TEST_VSCODE names one', () => {
    assert.deepEqual(m.HOST_KEYS, ['1.100', '1.139']);
    assert.deepEqual(m.selectHosts(undefined), ['1.100', '1.139']);
    assert.deepEqual(m.selectHosts(''), ['1.100', '1.139']);
    assert.deepEqual(m.selectHosts('all'), ['1.100', '1.139']);
    assert.deepEqual(m.selectHosts('1.139'), ['1.139']);
    assert.deepEqual(m.selectHosts('1.100, 1.100'), ['1.100']);
    assert.throws(() => m.selectHosts('1.99'), /unknown VS Code version "1\.99"; use 1\.100, 1\.139 or all/);
  });

  it("keeps an outer npm run's variables out of the host's npm install, so npm reports the Node it runs on", async () => {
    const pkg = path.join(tmp, 'ua');
    await fsp.mkdir(pkg, { recursive: true });
    // What code-server's postinstall reads: npm's user agent, which names the Node that npm runs on.
    await fsp.writeFile(
      path.join(pkg, 'package.json'),
      JSON.stringify({ name: 'ua', private: true, scripts: { ua: 'node -e "console.log(process.env.npm_config_user_agent)"' } }),
    );
    // What `npm test` (npm 11 on another Node) leaves in the environment of the scripts it runs.
    const outer: NodeJS.ProcessEnv = {
      ...process.env,
      npm_config_user_agent: 'npm/11.0.0 node/v20.0.0 linux x64 workspaces/false',
      npm_lifecycle_event: 'test',
      npm_config_ignore_scripts: 'true',
      NPM_CONFIG_PREFIX: path.join(tmp, 'elsewhere'),
      NODE: '/somewhere/else/node',
    };
    const env = m.installEnv(outer, m.hostPaths('1.100'));
    for (const key of Object.keys(env)) assert.ok(!/^npm_/i.test(key) || ['npm_config_yes', 'npm_config_unsafe_perm'].includes(key), key);
    assert.equal(env.NODE, undefined);
    const seen = await npm(['run', '--silent', 'ua'], pkg, env);
    assert.match(seen, new RegExp(`node/${process.version.replace(/\./g, '\\.')} `));
    // The same run with the outer variables shows what the host's postinstall would have read instead.
    const unfiltered = await npm(['run', '--silent', 'ua'], pkg, { ...outer, npm_config_ignore_scripts: undefined });
    assert.match(unfiltered, /node\/v20\.0\.0 /);
  });

  it("puts a host's own Node first on PATH and its headers in npm_config_nodedir", () => {
    const p = m.hostPaths('1.139');
    assert.ok(p.node && p.nodeDir);
    const env = m.installEnv({ PATH: '/usr/bin' }, p);
    assert.equal(env.PATH, `${path.dirname(p.nodeBin)}${path.delimiter}/usr/bin`);
    assert.equal(env.npm_config_nodedir, p.nodeDir);
  });

  it('finds every package that builds native code, scoped and nested bindings included, but not node-addon-api', async () => {
    const nm = path.join(tmp, 'node_modules');
    const pkg = async (name: string, files: string[]): Promise<void> => {
      for (const f of ['package.json', ...files]) {
        const file = path.join(nm, name, f);
        await fsp.mkdir(path.dirname(file), { recursive: true });
        await fsp.writeFile(file, f === 'package.json' ? JSON.stringify({ name }) : '{}');
      }
    };
    await pkg('plain', ['index.js']);
    await pkg('kerberos', ['binding.gyp']);
    await pkg('@vscode/spdlog', ['binding.gyp']);
    await pkg('@vscode/iconv-lite-umd', ['lib/index.js']);
    await pkg('ssh2', ['lib/protocol/crypto/binding.gyp']);
    await pkg('node-addon-api', ['binding.gyp']);
    assert.deepEqual(m.nativePackages(nm), ['@vscode/spdlog', 'kerberos', 'ssh2']);
    assert.deepEqual(m.nativePackages(path.join(tmp, 'absent')), []);
  });
});
