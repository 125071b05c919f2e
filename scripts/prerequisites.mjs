// What the test command needs from the machine, outside npm: the programs the tests run (ripgrep, bubblewrap, git,
// Chromium) and, while a VS Code test host still has to be installed, what building its native modules takes.
// `npm test` checks them first (scripts/test.mjs); docs/TESTING.md says what happens when some are missing.
// Usage: node scripts/prerequisites.mjs [--build] [--install]
//   prints what is missing and the one command that installs it (exit 1), or nothing (exit 0);
//   --build also checks the build dependencies; --install runs that command when it may (root, apt-get).
// Plain Node only: it runs before `npm ci` in .ci/run.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Programs every run needs: [command on PATH, Debian package, why]. */
const PROGRAMS = [
  ['rg', 'ripgrep', 'content search (unit tests and the VS Code hosts)'],
  ['bwrap', 'bubblewrap', 'the command sandbox'],
  ['git', 'git', 'git work-tree tests'],
  ['chromium', 'chromium', 'the browser that drives VS Code'],
];
/** Needed only to build a VS Code host's native modules (first install). */
const BUILD_PROGRAMS = [
  ['make', 'make', 'node-gyp'],
  ['g++', 'g++', 'node-gyp'],
  ['python3', 'python3', 'node-gyp'],
  ['pkg-config', 'pkg-config', 'native module builds'],
];
/** Headers of the native modules' libraries, relative to the include folder: [header, Debian package]. */
const BUILD_HEADERS = [
  ['krb5.h', 'libkrb5-dev'],
  ['X11/Xlib.h', 'libx11-dev'],
  ['X11/extensions/XKBfile.h', 'libxkbfile-dev'],
  ['libsecret-1/libsecret/secret.h', 'libsecret-1-dev'],
];

/** The executable `name` on `pathValue` (a PATH string), or undefined. */
export function findOnPath(name, pathValue = process.env.PATH ?? '') {
  for (const dir of pathValue.split(path.delimiter)) {
    if (dir === '') continue;
    const file = path.join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * What is missing, as `{ what, pkg, why }` entries (empty: all there).
 * @param {{ needBuild?: boolean, pathValue?: string, includeDir?: string }} options
 *   needBuild: also the build dependencies of a VS Code host; pathValue: the PATH to search (default the
 *   process's); includeDir: where C headers live (default /usr/include).
 */
export function checkPrerequisites({ needBuild = false, pathValue = process.env.PATH ?? '', includeDir = '/usr/include' } = {}) {
  const missing = [];
  const programs = needBuild ? [...PROGRAMS, ...BUILD_PROGRAMS] : PROGRAMS;
  for (const [command, pkg, why] of programs) {
    if (!findOnPath(command, pathValue)) missing.push({ what: command, pkg, why });
  }
  if (needBuild) {
    for (const [header, pkg] of BUILD_HEADERS) {
      if (!existsSync(path.join(includeDir, header))) missing.push({ what: header, pkg, why: 'building the VS Code test host' });
    }
  }
  return missing;
}

/** The one command that installs the missing packages (sudo unless root). */
export function installCommand(missing, { root = isRoot() } = {}) {
  const pkgs = [...new Set(missing.map((m) => m.pkg))];
  const sudo = root ? '' : 'sudo ';
  return `${sudo}apt-get update && ${sudo}apt-get install -y --no-install-recommends ${pkgs.join(' ')}`;
}

/** A message naming each missing thing and the command that installs them all. */
export function formatMissing(missing, options) {
  const lines = missing.map((m) => `  - ${m.what} (Debian package ${m.pkg}): ${m.why}`);
  return ['The tests need programs this machine does not have:', ...lines, 'Install them with:', `  ${installCommand(missing, options)}`].join('\n');
}

export function isRoot() {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}

/** True when this process may install packages itself: root, with apt-get on PATH. */
export function mayInstall(pathValue = process.env.PATH ?? '', root = isRoot()) {
  return root && findOnPath('apt-get', pathValue) !== undefined;
}

/** Runs apt-get for the missing packages (root only); throws when it fails. */
export function installMissing(missing) {
  const pkgs = [...new Set(missing.map((m) => m.pkg))];
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update', '-qq'], ['install', '-y', '-qq', '--no-install-recommends', ...pkgs]]) {
    console.log(`[prerequisites] apt-get ${args.join(' ')}`);
    const r = spawnSync('apt-get', args, { stdio: 'inherit', env });
    if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
  }
}

/**
 * Checks, and installs what is missing when it may (root with apt-get). Returns true when everything is there
 * afterwards; otherwise prints what is missing with the command that installs it and returns false.
 */
export function ensurePrerequisites({ needBuild = false } = {}) {
  let missing = checkPrerequisites({ needBuild });
  if (missing.length === 0) return true;
  if (mayInstall()) {
    console.log(`[prerequisites] installing ${missing.map((m) => m.pkg).join(' ')} (running as root with apt-get)`);
    installMissing(missing);
    missing = checkPrerequisites({ needBuild });
    if (missing.length === 0) return true;
  }
  console.error(formatMissing(missing));
  return false;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const needBuild = args.includes('--build');
  if (args.includes('--install')) {
    process.exit(ensurePrerequisites({ needBuild }) ? 0 : 1);
  }
  const missing = checkPrerequisites({ needBuild });
  if (missing.length > 0) console.error(formatMissing(missing));
  process.exit(missing.length > 0 ? 1 : 0);
}
