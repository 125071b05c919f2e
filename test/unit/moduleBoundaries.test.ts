/**
 * The module map of docs/ARCHITECTURE.md is a lint error, not a convention: the project's own ESLint configuration
 * (through ESLint's API, with only the module rule) refuses a planted import across modules that the map forbids,
 * accepts the allowed ones, and finds none in src as it is.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ESLint } from 'eslint';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const RULE = 'codespace/module-boundaries';

/** The repository's configuration, with only the module rule, on plain syntax (no type information needed). */
function moduleLinter(): ESLint {
  return new ESLint({
    cwd: REPO_ROOT,
    ruleFilter: ({ ruleId }) => ruleId === RULE,
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });
}

async function importErrors(file: string, source: string): Promise<string[]> {
  const [result] = await moduleLinter().lintText(source, { filePath: path.join(REPO_ROOT, file) });
  assert.ok(result, 'ESLint linted the snippet');
  return result.messages.map((m) => `${m.ruleId ?? '(fatal)'}: ${m.message}`);
}

/** Asserts that `source`, planted at `file`, gets exactly one error of the module rule, matching `why`. */
async function refused(file: string, source: string, why: RegExp): Promise<void> {
  const errors = await importErrors(file, source);
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.ok((errors[0] as string).startsWith(`${RULE}: `), errors[0]);
  assert.match(errors[0] as string, why);
}

describe('lint: the module map', function () {
  this.timeout(60_000);

  it('refuses a feature reaching into another feature past its index', async () => {
    await refused(
      'src/features/patches/common/planted.ts',
      "import type { ProcessSupervisor } from '../../processes/common/supervisor';\nexport type X = ProcessSupervisor;\n",
      /features use each other only through an index: import src\/features\/processes\/index\.ts/,
    );
    await refused(
      'src/features/review/vscode/planted.ts',
      "import { WorkReviews } from '../../works/vscode/workReview';\nexport const x = WorkReviews;\n",
      /src\/features\/works\/vscode\/index\.ts/,
    );
  });

  it('accepts the same use through the index, and a feature using its own files', async () => {
    assert.deepEqual(await importErrors('src/features/patches/common/planted.ts', "import type { ProcessSupervisor } from '../../processes';\nexport type X = ProcessSupervisor;\n"), []);
    assert.deepEqual(await importErrors('src/features/patches/node/planted.ts', "import type { PatchService } from '../common/patchService';\nexport type X = PatchService;\n"), []);
    assert.deepEqual(await importErrors('src/features/works/vscode/planted.ts', "import * as vscode from 'vscode';\nimport { Emitter } from '../../../base/emitter';\nexport const x = [vscode, Emitter];\n"), []);
  });

  it('keeps the sides apart: common is plain Node, node never loads vscode', async () => {
    await refused('src/features/processes/common/planted.ts', "import * as vscode from 'vscode';\nexport const x = vscode;\n", /must run in plain Node/);
    await refused('src/features/processes/common/planted.ts', "import { SurvivorRegistry } from '../node/survivors';\nexport const x = SurvivorRegistry;\n", /common side of a feature may not import its node side/);
    await refused('src/features/processes/node/planted.ts', "import { processSettings } from '../vscode/processSettings';\nexport const x = processSettings;\n", /node side of a feature may not import its vscode side/);
    await refused('src/features/patches/common/planted.ts', "import express from 'express';\nexport const x = express;\n", /must not know the MCP SDK, express or node-pty/);
  });

  it('keeps the foundation below every feature: base, kernel and mcp name no feature', async () => {
    await refused('src/base/planted.ts', "import { ToolDispatcher } from '../kernel/dispatch';\nexport const x = ToolDispatcher;\n", /src\/base is the bottom of every layer/);
    await refused('src/kernel/planted.ts', "import type { SteeringService } from '../features/works';\nexport type X = SteeringService;\n", /the kernel imports only src\/base and itself/);
    await refused('src/kernel/runner/planted.ts', "import type { PatchService } from '../../features/patches/common/patchService';\nexport type X = PatchService;\n", /the kernel imports only src\/base and itself/);
    await refused('src/mcp/planted.ts', "import type { PatchService } from '../features/patches';\nexport type X = PatchService;\n", /src\/mcp serves the kernel/);
  });

  it('keeps the shell and the features apart: a feature never imports the shell, the shell uses indexes', async () => {
    await refused('src/features/works/vscode/planted.ts', "import { registerCommands } from '../../../vscode/commands';\nexport const x = registerCommands;\n", /a feature imports src\/base, src\/kernel and other features' indexes only/);
    await refused('src/vscode/planted.ts', "import { PatchService } from '../features/patches/common/patchService';\nexport const x = PatchService;\n", /the editor shell uses a feature through its index/);
    await refused('src/webview-ui/planted.ts', "import { Emitter } from '../base/emitter';\nexport const x = Emitter;\n", /The panel page runs in a browser/);
  });

  it('finds no forbidden import in src as it is', async function () {
    // Parses every file of src (about 5 s on a quiet machine; past 60 s beside an e2e suite on two cores).
    this.timeout(300_000);
    const results = await moduleLinter().lintFiles(['src']);
    const found = results.flatMap((r) => r.messages.map((m) => `${path.relative(REPO_ROOT, r.filePath)}:${m.line}: ${m.message}`));
    assert.ok(results.length > 150, `linted ${results.length} files`);
    assert.deepEqual(found, []);
  });
});
