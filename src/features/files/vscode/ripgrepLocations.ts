import * as path from 'node:path';

/**
 * Where VS Code keeps the ripgrep its own search runs, under its application root (`vscode.env.appRoot`), most
 * likely first. Two package layouts:
 * - `@vscode/ripgrep/bin/rg`: one binary, downloaded for the platform at install (VS Code up to about 1.10x);
 * - `@vscode/ripgrep-universal/bin/<platform>-<arch>/rg`: every platform's binary in one package (1.139 and later).
 * Each in `node_modules` of a plain install or code-server, and in `node_modules.asar.unpacked` of a packaged
 * desktop build (a binary cannot run from inside the asar archive, so VS Code unpacks it next to it).
 * Kept free of the `vscode` module so plain-Node tests can check it against fake layouts.
 */
export function bundledRipgrepCandidates(appRoot: string, platform: NodeJS.Platform = process.platform, arch: string = process.arch): string[] {
  const exe = platform === 'win32' ? 'rg.exe' : 'rg';
  const out: string[] = [];
  for (const dir of ['node_modules', 'node_modules.asar.unpacked']) {
    out.push(path.join(appRoot, dir, '@vscode', 'ripgrep', 'bin', exe));
    out.push(path.join(appRoot, dir, '@vscode', 'ripgrep-universal', 'bin', `${platform}-${arch}`, exe));
  }
  return out;
}
