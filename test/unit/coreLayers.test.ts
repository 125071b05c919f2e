/**
 * The layers inside src/core are a lint error, not a convention: the project's own ESLint configuration (through
 * ESLint's API, only the import rule) refuses a planted upward import or an import between folders of one layer,
 * accepts the downward ones, and finds none in the code as it is.
 */
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { ESLint } from 'eslint';

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/** The repository's configuration, with only the import rule, on plain syntax (no type information needed). */
function importLinter(): ESLint {
  return new ESLint({
    cwd: REPO_ROOT,
    ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-imports',
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
  });
}

async function importErrors(file: string, source: string): Promise<string[]> {
  const [result] = await importLinter().lintText(source, { filePath: path.join(REPO_ROOT, file) });
  assert.ok(result, 'ESLint linted the snippet');
  return result.messages.map((m) => `${m.ruleId ?? '(fatal)'}: ${m.message}`);
}

describe('lint layers inside src/core', function () {
  this.timeout(60_000);

  it('refuses an upward import: the ledger importing the runner', async () => {
    const errors = await importErrors('src/core/ledger/planted.ts', "import type { OperationRunner } from '../runner/operationRunner';\nexport type X = OperationRunner;\n");
    assert.equal(errors.length, 1, errors.join('\n'));
    assert.match(errors[0] as string, /^no-restricted-imports: .*core layer "policy and records" \(ledger\) imports only its own folder and lower layers \(base, ports\)/);
  });

  it('refuses an upward import from the lowest layers: a port or a base file importing a service or a tool', async () => {
    assert.equal((await importErrors('src/core/ports/planted.ts', "import { ToolError } from '../errors';\nimport type { Limits } from '../policy/limits';\nexport type X = [ToolError, Limits];\n")).length, 1);
    assert.equal((await importErrors('src/core/planted.ts', "import type { ToolContext } from './tools/tool';\nexport type X = ToolContext;\n")).length, 1);
    assert.equal((await importErrors('src/core/util/planted.ts', "import type { Logger } from '../ports/logger';\nexport type X = Logger;\n")).length, 1);
  });

  it('refuses the runner importing a tool, and a service importing another service of its layer', async () => {
    assert.equal((await importErrors('src/core/runner/planted.ts', "import type { ToolContext } from '../tools/tool';\nexport type X = ToolContext;\n")).length, 1);
    assert.equal((await importErrors('src/core/approvals/planted.ts', "import { unifiedDiff } from '../patch/diff';\nexport const x = unifiedDiff;\n")).length, 1);
    assert.equal((await importErrors('src/core/process/planted.ts', "import type { SteeringService } from '../steering/steeringService';\nexport type X = SteeringService;\n")).length, 1);
  });

  it('accepts downward imports', async () => {
    assert.deepEqual(await importErrors('src/core/process/planted.ts', "import type { Limits } from '../policy/limits';\nimport { Emitter } from '../../base/emitter';\nexport type X = [Limits, Emitter<number>];\n"), []);
    assert.deepEqual(await importErrors('src/core/runner/planted.ts', "import type { ApprovalService } from '../approvals/approvalService';\nexport type X = ApprovalService;\n"), []);
    assert.deepEqual(await importErrors('src/core/tools/planted.ts', "import type { OperationSpec } from '../runner/operationRunner';\nexport type X = OperationSpec<object, unknown>;\n"), []);
  });

  it('finds no import that runs back up in src/core as it is', async () => {
    const results = await importLinter().lintFiles(['src/core']);
    const found = results.flatMap((r) => r.messages.map((m) => `${path.relative(REPO_ROOT, r.filePath)}:${m.line}: ${m.message}`));
    assert.ok(results.length > 50, `linted ${results.length} files`);
    assert.deepEqual(found, []);
  });
});
