// The dependency rule of docs/ARCHITECTURE.md as one lint rule: every import in src is resolved to the file it names,
// both ends are placed in the module map (base, kernel, features/<feature>/<side>, mcp, app, the editor shell, the
// bridge, the panel page), and an import the map does not allow is an error that says why.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The sides of a module: common runs in plain Node; node adds the OS; vscode adds the editor. */
const SIDES = ['common', 'node', 'vscode'];
const isIndex = (name) => /^index(\.ts)?$/.test(name);

/** Where a file of src sits in the module map; undefined outside src. */
export function place(file) {
  const rel = path.relative(ROOT, file).split(path.sep).join('/');
  if (!rel.startsWith('src/')) return undefined;
  const parts = rel.slice(4).split('/');
  const [top] = parts;
  if (top === 'features') {
    const [, feature, ...rest] = parts;
    if (rest.length === 0) return { unit: 'feature', feature, side: 'common', index: true, rel };
    if (rest.length === 1) {
      if (SIDES.includes(rest[0])) return { unit: 'feature', feature, side: rest[0], index: true, rel };
      return { unit: 'feature', feature, side: 'common', index: isIndex(rest[0]), rel };
    }
    const side = SIDES.includes(rest[0]) ? rest[0] : 'common';
    return { unit: 'feature', feature, side, index: rest.length === 2 && isIndex(rest[1]), rel };
  }
  if (top === 'base' || top === 'kernel') return { unit: top, side: SIDES.includes(parts[1]) && parts.length > 2 ? parts[1] : 'common', rel };
  // extension.ts and the activation pieces it starts (src/vscode/activation) compose everything.
  if (top === 'extension.ts' || top === 'extension' || rel.startsWith('src/vscode/activation/')) return { unit: 'extension', rel };
  return { unit: top, rel };
}

/** Whether a file on `from` side may use a file on `to` side: common is plain Node; node and vscode build on common. */
const sideOk = (from, to) => to === 'common' || to === from;
const FOUNDATION = ['base', 'kernel'];
/** Why `from` may not import `to`, or undefined when it may. */
export function refusal(from, to) {
  if (FOUNDATION.includes(to.unit) && !sideOk(from.side ?? 'vscode', to.side)) {
    if (!(['app', 'extension', 'bridge', 'mcp'].includes(from.unit) && to.side === 'node') && !(['extension', 'vscode'].includes(from.unit) && to.side === 'vscode'))
      return `the ${from.side ?? from.unit} side may not use src/${to.unit}/${to.side}: common code runs in plain Node, node code never loads vscode.`;
  }
  switch (from.unit) {
    case 'base':
      return to.unit === 'base' ? undefined : 'src/base is the bottom of every layer: it imports only src/base.';
    case 'kernel':
      return FOUNDATION.includes(to.unit) ? undefined : 'the kernel imports only src/base and itself: features plug into it (their tools, hooks and services), it never names one.';
    case 'mcp':
      return [...FOUNDATION, 'mcp'].includes(to.unit) ? undefined : 'src/mcp serves the kernel: it imports src/base and src/kernel only, never a feature.';
    case 'shared':
      return to.unit === 'shared' ? undefined : 'src/shared holds message types only and imports nothing else of ours.';
    case 'webview-ui':
      return ['shared', 'webview-ui'].includes(to.unit) ? undefined : 'The panel page runs in a browser: it imports only src/shared.';
    case 'bridge':
      if (['base', 'bridge'].includes(to.unit)) return undefined;
      if (to.unit === 'feature' && to.feature === 'connect' && to.index && to.side !== 'vscode') return undefined;
      // Build time only: the catalogue the bridge ships is computed from the window's own definition.
      if (from.rel === 'src/bridge/catalogueSource.ts' && ['mcp', 'app', 'kernel'].includes(to.unit)) return undefined;
      return "The stdio bridge runs outside the editor: it imports src/base and the connect feature's indexes only.";
    case 'app':
      if (to.unit === 'feature' && to.side === 'vscode') return 'src/app composes the modules in plain Node: their editor sides are wired by src/extension.ts.';
      return [...FOUNDATION, 'mcp', 'app', 'feature'].includes(to.unit) ? undefined : 'src/app composes base, kernel, mcp and the features only.';
    case 'vscode':
      if ([...FOUNDATION, 'shared', 'vscode'].includes(to.unit)) return undefined;
      if (to.unit === 'feature' && to.index && to.side !== 'node') return undefined;
      if (to.unit === 'feature') return `the editor shell uses a feature through its index (src/features/${to.feature}/index.ts or vscode/index.ts), never its files.`;
      return 'the editor shell imports base, kernel, shared and the features\' indexes; src/extension.ts wires the rest together.';
    case 'feature': {
      if (FOUNDATION.includes(to.unit)) return undefined;
      if (to.unit === 'shared' && from.side === 'vscode') return undefined;
      if (to.unit !== 'feature') return `a feature imports src/base, src/kernel and other features' indexes only, not ${to.rel}.`;
      if (to.feature === from.feature) {
        if (from.index) return to.side === from.side ? undefined : 'an index re-exports its own side only.';
        return sideOk(from.side, to.side) ? undefined : `the ${from.side} side of a feature may not import its ${to.side} side: common is plain Node, node and vscode each build on common only.`;
      }
      if (!to.index) return `features use each other only through an index: import src/features/${to.feature}/${to.side === 'common' ? '' : `${to.side}/`}index.ts, not ${to.rel}.`;
      return sideOk(from.side, to.side) ? undefined : `the ${from.side} side of ${from.feature} may not import the ${to.side} side of ${to.feature}.`;
    }
    default:
      return undefined;
  }
}

const mayImportVscode = (p) => p.side === 'vscode' || p.unit === 'vscode' || p.unit === 'extension';
const mayImportAdapters = (p) => !(FOUNDATION.includes(p.unit) && p.side === 'common') && !(p.unit === 'feature' && p.side === 'common');

export const moduleBoundaries = {
  meta: { type: 'problem', schema: [], docs: { description: 'The module map of docs/ARCHITECTURE.md' } },
  create(context) {
    const from = place(context.filename);
    if (!from) return {};
    const check = (node, spec) => {
      if (typeof spec !== 'string') return;
      if (spec === 'vscode') {
        if (!mayImportVscode(from)) context.report({ node, message: `Only the vscode side of a module, src/vscode and src/extension.ts may import vscode: ${from.rel} must run in plain Node.` });
        return;
      }
      if (/^(@modelcontextprotocol\/|express$|node-pty$)/.test(spec)) {
        if (!mayImportAdapters(from)) context.report({ node, message: `${from.rel} must not know the MCP SDK, express or node-pty: that belongs in an adapter (src/mcp, a module's node side).` });
        return;
      }
      if (!spec.startsWith('.')) return;
      const to = place(path.resolve(path.dirname(context.filename), spec));
      if (!to) return;
      const why = refusal(from, to);
      if (why) context.report({ node, message: `${from.rel} may not import ${to.rel}: ${why} See docs/ARCHITECTURE.md.` });
    };
    return {
      ImportDeclaration: (n) => check(n, n.source.value),
      ExportAllDeclaration: (n) => check(n, n.source.value),
      ExportNamedDeclaration: (n) => n.source && check(n, n.source.value),
      ImportExpression: (n) => n.source.type === 'Literal' && check(n, n.source.value),
      CallExpression: (n) =>
        n.callee.type === 'Identifier' && n.callee.name === 'require' && n.arguments[0]?.type === 'Literal' && check(n, n.arguments[0].value),
    };
  },
};
