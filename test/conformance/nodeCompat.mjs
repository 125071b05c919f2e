// Loaded with `node --import` before the conformance CLI (test/unit/conformance.test.ts).
//
// WORKAROUND: @modelcontextprotocol/conformance 0.1.16 imports `globSync` from node:fs, which exists from Node 22
// on; on Node 20 (this project's engines.node is >=20) the whole CLI fails to load with "The requested module 'fs'
// does not provide an export named 'globSync'". Only its `tier-check` command uses it, never the server scenarios
// run here, so this hook rewrites that one import of the CLI's bundle to a stand-in that throws if it is ever
// called. It can go when the tests run on Node 22 or later.
import { register } from 'node:module';

register(
  'data:text/javascript,' +
    encodeURIComponent(`
export async function load(url, context, next) {
  const result = await next(url, context);
  if (!url.includes('/@modelcontextprotocol/conformance/dist/') || result.source === undefined) return result;
  const source = String(result.source);
  if (!source.includes('globSync as o,')) return result;
  return {
    ...result,
    source: source.replace('globSync as o,', '') + '\\nfunction o(){throw new Error("globSync is not available on this Node version");}\\n',
  };
}
`),
);
