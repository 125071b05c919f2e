// An esbuild plugin for the stdio bridge (dist/stdio.js): src/bridge/shippedCatalogue.ts becomes the catalogue the
// bridge answers with before it has found the window, computed here at build time from the same definition the
// window serves (src/bridge/catalogueSource.ts: the tool catalogue and src/mcp/toolSchemas.ts). The bridge then
// answers `initialize` and `tools/list` without loading the tools or converting their schemas.
// test/unit/bridgeStart.test.ts compares generateShippedCatalogue() with what a real window serves.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import * as esbuild from 'esbuild';

/** The catalogue, computed by bundling src/bridge/catalogueSource.ts (packages external) and running it. */
export async function generateShippedCatalogue(root = process.cwd()) {
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const built = await esbuild.build({
    entryPoints: [path.join(root, 'src', 'bridge', 'catalogueSource.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const module = { exports: {} };
  new Function('module', 'exports', 'require', built.outputFiles[0].text)(module, module.exports, createRequire(path.join(root, 'package.json')));
  return module.exports.computeShippedCatalogue(version);
}

export function shippedCatalogue() {
  return {
    name: 'shipped-catalogue',
    setup(build) {
      build.onResolve({ filter: /^\.\/shippedCatalogue$/ }, (args) => {
        if (!args.importer.includes(`${path.sep}src${path.sep}bridge${path.sep}`)) return undefined;
        return { path: 'shipped-catalogue', namespace: 'codespace-shipped-catalogue' };
      });
      build.onLoad({ filter: /.*/, namespace: 'codespace-shipped-catalogue' }, async () => ({
        contents: `export const SHIPPED = ${JSON.stringify(await generateShippedCatalogue())};\n`,
        loader: 'js',
      }));
    },
  };
}
