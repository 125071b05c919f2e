// Smoke test of the in-host harness: the launcher opened the multi-root fixture workspace.
import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { readRunnerInfo } from './index';

describe('integration harness', () => {
  it('opens the two fixture folders of multi.code-workspace', () => {
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.equal(folders.length, 2, `workspace folders: ${folders.map((f) => f.uri.toString()).join(', ')}`);
    assert.equal(vscode.workspace.workspaceFile !== undefined, true, 'a .code-workspace file is open');
  });

  it('finds README.md in the first folder through workspace.fs', async () => {
    const first = vscode.workspace.workspaceFolders?.[0];
    assert.ok(first, 'no workspace folder');
    const stat = await vscode.workspace.fs.stat(vscode.Uri.joinPath(first.uri, 'README.md'));
    assert.equal(stat.type, vscode.FileType.File);
    assert.ok(stat.size > 0);
  });

  it('reads the launcher info when the offline runner started the suite', function () {
    const info = readRunnerInfo();
    // @vscode/test-electron writes no info file: nothing to check under that launcher, and mocha says so.
    if (info === undefined) this.skip();
    assert.equal(info.runner, 'code-server');
    assert.ok(info.screenshotDir && info.screenshotDir.length > 0);
  });
});
