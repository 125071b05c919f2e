// End-to-end tests run in Node, not in the extension host: `node scripts/runVsCodeTests.mjs e2e` runs mocha
// over out/test/e2e/**/*.test.js, and each test starts its own VS Code with startWorkbench() from ./host.
// This module is the one import tests need.
export { EXTENSION_ID, REPO_ROOT, RESULTS_DIR, startWorkbench } from './host';
export type { StartWorkbenchOptions, Workbench } from './host';
