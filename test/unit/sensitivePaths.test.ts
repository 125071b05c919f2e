import * as assert from 'node:assert/strict';
import { isSensitivePath, sensitivePaths } from '../../src/kernel/approvals/sensitivePaths';

describe('sensitive paths (held for the reviewer under approvals "sensitive")', () => {
  const sensitive = [
    '.vscode/settings.json',
    '.vscode/tasks.json',
    '.git/config',
    '.git/hooks/pre-commit',
    '.git',
    '.github/workflows/ci.yml',
    '.env',
    '.env.local',
    'packages/api/.env.production',
    '.codex/config.toml',
    '.claude/settings.json',
    '.cursor/rules/x.mdc',
    'nested/repo/.git/config',
    'pkg/.vscode/launch.json',
    '.VSCode/settings.json',
    '.GitHub/Workflows/release.yml',
    './.vscode/settings.json',
  ];
  const ordinary = ['src/env.ts', 'README.md', '.gitignore', '.github/README.md', '.github/ISSUE_TEMPLATE/bug.md', 'docs/vscode/notes.md', 'environment.yml', 'a/.envelope/x', 'claude.md'];

  for (const p of sensitive) it(`flags ${p}`, () => assert.equal(isSensitivePath(p), true));
  for (const p of ordinary) it(`leaves ${p} alone`, () => assert.equal(isSensitivePath(p), false));

  it('lists the sensitive ones once, in order', () => {
    assert.deepEqual(sensitivePaths(['a.ts', '.env', '.git/config', '.env']), ['.env', '.git/config']);
  });
});
