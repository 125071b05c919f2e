import * as assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as vscode from 'vscode';
import type { ReviewCommentsForTests } from '../../src/features/review/vscode/reviewComments';
import { toProposalUri } from '../../src/features/review/vscode/proposalUri';
import { activateExtension, call, callError, connectToFirstFolder, folder } from './helpers';

// Line comments on either side of a held patch's diff (the proposal, and the file before it, a deleted file too), through the extension's comment controller (the same code path as the
// comment widget's Add Comment), sent with Request Changes: a real MCP client's operation_resume gets a
// changes_requested result with each comment's path, range and quoted lines, and nothing is written.

const enc = new TextEncoder();
const dec = new TextDecoder();

interface Sent {
  ok: boolean;
  comments?: number;
  code?: string;
  message?: string;
}

describe('line comments on a held patch, sent with Request Changes', function () {
  this.timeout(120_000);
  let client: Client;
  let wsId: string;
  let comments: ReviewCommentsForTests;
  const root = (): vscode.Uri => folder(0).uri;

  before(async () => {
    const api = (await activateExtension()) as unknown as { reviewCommentsForTests: ReviewCommentsForTests };
    comments = api.reviewCommentsForTests;
    ({ client, wsId } = await connectToFirstFolder());
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', 'confirm', vscode.ConfigurationTarget.Global);
  });
  after(async () => {
    await vscode.workspace.getConfiguration('codespace').update('approvals.patches', undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await client?.close();
  });

  async function write(rel: string, text: string): Promise<void> {
    await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(root(), ...rel.split('/')), enc.encode(text));
  }
  async function readDisk(rel: string): Promise<string | undefined> {
    try {
      return dec.decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(root(), ...rel.split('/'))));
    } catch {
      return undefined;
    }
  }
  async function hold(dir: string, key: string): Promise<string> {
    await write(`${dir}/a.ts`, 'export const a = 1;\nexport const keep = 0;\n');
    await write(`${dir}/c.ts`, 'export const gone = 1;\r\nexport const last = 2;');
    const version = (await call<{ version: string }>(client, 'read', { workspace_id: wsId, path: `${dir}/a.ts` })).version;
    const cVersion = (await call<{ version: string }>(client, 'read', { workspace_id: wsId, path: `${dir}/c.ts` })).version;
    const patch = [
      '*** Begin Patch',
      `*** Update File: ${dir}/a.ts`,
      '-export const a = 1;',
      '+export const a = 2;',
      '+export const extra = 3;',
      `*** Add File: ${dir}/b.ts`,
      '+export const b = 1;',
      '+export const c = 2;',
      '+export const d = 3;',
      `*** Delete File: ${dir}/c.ts`,
      '*** End Patch',
    ].join('\n');
    const err = await callError(client, 'apply_patch', { workspace_id: wsId, patch, expected_versions: { [`${dir}/a.ts`]: version, [`${dir}/c.ts`]: cVersion }, operation_key: key });
    assert.equal(err.code, 'APPROVAL_REQUIRED', err.message);
    return err.details?.approval_id as string;
  }

  it('comments on two files survive a reload of the threads; Request Changes sends them with ranges and quoted lines; nothing is written', async () => {
    const dir = `comments-${Date.now()}`;
    const id = await hold(dir, `comments-${Date.now()}`);
    const a = toProposalUri({ approvalId: id, side: 'proposed', path: `${dir}/a.ts` });
    const b = toProposalUri({ approvalId: id, side: 'proposed', path: `${dir}/b.ts` });

    // Nothing to send yet: the command says so and the hold stays pending.
    const empty = await vscode.commands.executeCommand<Sent>('codespace.requestChanges', id);
    assert.equal(empty.code, 'NO_COMMENTS');

    const before = (p: string): vscode.Uri => toProposalUri({ approvalId: id, side: 'before', path: `${dir}/${p}` });
    // What the reviewer types reaches the agent exactly: leading spaces of indented code, tabs, CR LF inside,
    // trailing whitespace, emoji and CJK extension B (outside the BMP).
    const exact = '    if (x) {\r\n\treturn 1;\r\n    }  \u{1F600} \u{20BB7}\n';
    await comments.add(a, 1, 2, 'Why a second export here?');
    await comments.add(b, 2, 3, '  Name these after what they count.  ');
    await comments.add(b, 1, 1, 'Keep b.');
    // The old side: the lines the patch replaces, and a file it deletes (CRLF, no final newline).
    await comments.add(before('a.ts'), 1, 1, exact);
    await comments.add(before('c.ts'), 2, 2, 'Still used in main.ts.');
    // A side with no file on it takes none: an added file's before, a deleted file's proposal.
    await comments.add(before('b.ts'), 1, 1, 'not kept');
    await comments.add(toProposalUri({ approvalId: id, side: 'proposed', path: `${dir}/c.ts` }), 1, 1, 'not kept');

    const expected = [
      { path: `${dir}/a.ts`, side: 'old', range: { start_line: 1, end_line: 1 }, quoted: 'export const a = 1;', body: exact },
      { path: `${dir}/a.ts`, side: 'new', range: { start_line: 1, end_line: 2 }, quoted: 'export const a = 2;\nexport const extra = 3;', body: 'Why a second export here?' },
      { path: `${dir}/b.ts`, side: 'new', range: { start_line: 1, end_line: 1 }, quoted: 'export const b = 1;', body: 'Keep b.' },
      { path: `${dir}/b.ts`, side: 'new', range: { start_line: 2, end_line: 3 }, quoted: 'export const c = 2;\nexport const d = 3;', body: '  Name these after what they count.  ' },
      { path: `${dir}/c.ts`, side: 'old', range: { start_line: 2, end_line: 2 }, quoted: 'export const last = 2;', body: 'Still used in main.ts.' },
    ];
    const target = `approval:${id}` as const;
    assert.deepEqual(comments.drafts(target), expected);
    assert.equal(comments.threads().filter((t) => t.uri.includes(dir)).length, 5);

    // A window reload: the threads go, and come back from workspaceState with the same comments, on their sides.
    comments.reload();
    const names = new Map([a, b, before('a.ts'), before('c.ts')].map((u, i) => [u.toString(), ['a', 'b', 'a-before', 'c-before'][i]]));
    const shown = comments.threads().filter((t) => names.has(t.uri));
    assert.deepEqual(
      shown.map((t) => [names.get(t.uri), t.start_line, t.end_line, t.bodies]).sort((x, y) => (JSON.stringify(x) < JSON.stringify(y) ? -1 : 1)),
      [
        ['a', 1, 2, ['Why a second export here?']],
        ['a-before', 1, 1, [exact]],
        ['b', 1, 1, ['Keep b.']],
        ['b', 2, 3, ['  Name these after what they count.  ']],
        ['c-before', 2, 2, ['Still used in main.ts.']],
      ],
    );
    assert.deepEqual(comments.drafts(target), expected);

    const waiting = client.callTool({ name: 'operation_resume', arguments: { approval_id: id, wait_ms: 30_000 } }) as Promise<CallToolResult>;
    const sent = await vscode.commands.executeCommand<Sent>('codespace.requestChanges', id, 'see the comments');
    assert.equal(sent.ok, true, JSON.stringify(sent));
    assert.equal(sent.comments, 5);
    const r = await waiting;
    assert.notEqual(r.isError, true, JSON.stringify(r.content));
    assert.deepEqual(r.structuredContent, { status: 'changes_requested', comments: expected, reviewer_note: 'see the comments' });
    const again = (await client.callTool({ name: 'operation_resume', arguments: { approval_id: id, wait_ms: 0 } })) as CallToolResult;
    assert.deepEqual(again.structuredContent, r.structuredContent, 'a repeat resume is stable');

    assert.equal(await readDisk(`${dir}/a.ts`), 'export const a = 1;\nexport const keep = 0;\n', 'nothing written');
    assert.equal(await readDisk(`${dir}/b.ts`), undefined, 'nothing added');
    assert.equal(await readDisk(`${dir}/c.ts`), 'export const gone = 1;\r\nexport const last = 2;', 'nothing deleted');
    assert.deepEqual(comments.drafts(target), [], 'sent comments are no longer drafts');
    assert.equal(comments.threads().filter((t) => t.uri.includes(dir)).length, 0, 'their threads are gone');
    comments.reload();
    assert.equal(comments.threads().filter((t) => t.uri.includes(dir)).length, 0, 'and do not come back after a reload');
  });

  it('a hold decided another way drops its unsent comments', async () => {
    const dir = `comments-deny-${Date.now()}`;
    const id = await hold(dir, `comments-deny-${Date.now()}`);
    await comments.add(toProposalUri({ approvalId: id, side: 'proposed', path: `${dir}/b.ts` }), 1, 1, 'Not this.');
    assert.equal(comments.drafts(`approval:${id}`).length, 1);
    const decision = await vscode.commands.executeCommand<{ ok: boolean }>('codespace.denyReview', id, 'no');
    assert.equal(decision.ok, true);
    assert.deepEqual(comments.drafts(`approval:${id}`), []);
    comments.reload();
    assert.equal(comments.threads().filter((t) => t.uri.includes(dir)).length, 0);
  });
});
