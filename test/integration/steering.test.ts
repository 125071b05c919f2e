/**
 * Steering in the real editor: the /inbox API opened with the token the extension keeps in SecretStorage (read the
 * way a user does, with "CodeSpace: Copy Inbox Token"), distinct from the /mcp token; a queued instruction reaches a
 * subscribed SDK client as notifications/resources/updated and every later result as coordination; rotation applies.
 */
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import * as vscode from 'vscode';
import { activateExtension, call, connectClient, connectionFromCommand } from './helpers';

function inboxRequest(url: URL, method: string, path: string, token: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      { host: url.hostname, port: url.port, method, path, agent: false, headers: { authorization: `Bearer ${token}`, ...(text !== undefined ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, json: raw === '' ? undefined : (JSON.parse(raw) as Record<string, unknown>) });
        });
      },
    );
    req.on('error', reject);
    if (text !== undefined) req.write(text);
    req.end();
  });
}

describe('steering in the editor: /inbox with its SecretStorage token, resource updates', function () {
  this.timeout(120000);
  let client: Client | undefined;

  after(async () => {
    await client?.close();
  });

  it('queues through /inbox; the subscribed agent hears of it and claims it; the tokens never cross', async () => {
    await activateExtension();
    const { url, token } = await connectionFromCommand();
    client = await connectClient(url, token);
    const info = await call<{ workspaces: { id: string }[] }>(client, 'workspace_info', {});
    const wsId = info.workspaces[0]?.id as string;

    const copied = await vscode.commands.executeCommand<{ url: string | undefined }>('codespace.copyInboxToken');
    const inboxToken = await vscode.env.clipboard.readText();
    assert.ok(copied.url?.endsWith('/inbox'), JSON.stringify(copied));
    assert.ok(inboxToken.length >= 32);
    assert.notEqual(inboxToken, token, 'a different secret from the /mcp token');
    const base = new URL(copied.url as string);

    const work = await call<{ work_id: string }>(client, 'work_open', { workspace_id: wsId, title: 'Editor steering' });
    const uri = `codespace://steering/${work.work_id}`;
    let heard!: () => void;
    const updated = new Promise<void>((resolve) => (heard = resolve));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      if (n.params.uri === uri) heard();
    });
    await client.subscribeResource({ uri });

    assert.equal((await inboxRequest(base, 'GET', '/inbox/works', token)).status, 401, 'the /mcp token does not open /inbox');
    const works = await inboxRequest(base, 'GET', '/inbox/works?status=open', inboxToken);
    assert.equal(works.status, 200);
    assert.ok((works.json?.works as { id: string }[]).some((w) => w.id === work.work_id));
    const created = await inboxRequest(base, 'POST', `/inbox/works/${work.work_id}/instructions`, inboxToken, { text: 'rename the helper', queue: true });
    assert.equal(created.status, 201, JSON.stringify(created.json));

    await Promise.race([updated, new Promise((_, reject) => setTimeout(() => reject(new Error('no resources/updated notification')), 30000))]);
    const next = await call<{ coordination?: { work_id: string; queued_instructions: number } }>(client, 'workspace_info', {});
    assert.deepEqual(next.coordination, { work_id: work.work_id, queued_instructions: 1 });
    const claimed = await call<{ instruction?: { text: string } }>(client, 'steer_claim_next', { work_id: work.work_id });
    assert.equal(claimed.instruction?.text, 'rename the helper');

    assert.equal(await vscode.commands.executeCommand<boolean>('codespace.rotateInboxToken', { confirm: false }), true);
    await vscode.commands.executeCommand('codespace.copyInboxToken');
    const rotated = await vscode.env.clipboard.readText();
    assert.notEqual(rotated, inboxToken);
    assert.equal((await inboxRequest(base, 'GET', '/inbox/works', inboxToken)).status, 401, 'the old inbox token is dead');
    assert.equal((await inboxRequest(base, 'GET', '/inbox/works', rotated)).status, 200);
    assert.ok(await call(client, 'workspace_info', {}), 'rotating the inbox token leaves the agent connected');
  });
});
