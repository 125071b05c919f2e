/**
 * Agent identities: each agent's own credential (AgentCredentials: SecretStorage for the credential, only its
 * SHA-256 in the global state), the one self-review check (src/kernel/identity.ts) across sessions, and the endpoint
 * (a real host on 127.0.0.1, real MCP clients of both eras): two agents, a hold one of them asked for, a work one of
 * them made, and revocation (401 for its credential, its sessions closed at once).
 */
import { FakeLanguage } from './helpers/fakeLanguage';
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ToolError } from '../../src/base/errors';
import type { Authors, Caller } from '../../src/kernel/identity';
import { agentIdOf, assertNotOwn, withAuthor } from '../../src/kernel/identity';
import { InMemoryWorkspaceSource } from '../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../src/kernel/workspaces';
import { InMemoryLogger, silentLogger } from '../../src/base/logger';
import { contentVersion } from '../../src/features/patches/common/version';
import { AGENTS_KEY, AGENT_SECRET_PREFIX, AgentCredentialError, AgentCredentials } from '../../src/features/connect/vscode/agentCredentials';
import { AgentDirectory } from '../../src/features/connect/vscode/agentDirectory';
import { upstreamHeaders } from '../../src/bridge/upstreamHeaders';
import type { AssembledServices } from '../../src/app/assembleServices';
import { assembleServices } from '../../src/app/assembleServices';
import { unitAssembleOptions } from './helpers/assembleOptions';
import { GitWorktreeFactory } from '../../src/features/works/node/gitWorktreeFactory';
import { makeRepo } from './helpers/gitRepo';
import type { RunningHost } from './helpers/httpFixture';
import { INIT_BODY, MCP_HEADERS, rawRequest, startHost } from './helpers/httpFixture';
import { makeTree, removeTree, toolError } from './helpers/workspaceFixture';
import type { HostMessage, PanelState } from '../../src/shared/panelProtocol';
import { parsePageMessage } from '../../src/shared/panelProtocol';
import { PanelController } from '../../src/vscode/panel/panelController';
import { FakeActivity, FakeApprovals } from './helpers/panelPorts';

/** SecretStorage and a Memento in memory, shaped as VS Code's. */
type Secrets = ConstructorParameters<typeof AgentCredentials>[0];
type Memento = ConstructorParameters<typeof AgentCredentials>[1];

function fakeStorage(): { secrets: Secrets; state: Map<string, unknown>; memento: Memento } {
  const kept = new Map<string, string>();
  const state = new Map<string, unknown>();
  const secrets = {
    get: (k: string) => Promise.resolve(kept.get(k)),
    store: (k: string, v: string) => { kept.set(k, v); return Promise.resolve(); },
    delete: (k: string) => { kept.delete(k); return Promise.resolve(); },
    keys: () => Promise.resolve([...kept.keys()]),
    onDidChange: () => ({ dispose: () => undefined }),
  } as unknown as Secrets;
  const memento = {
    get: <T>(k: string, d?: T) => (state.has(k) ? (state.get(k) as T) : d),
    update: (k: string, v: unknown) => { state.set(k, v); return Promise.resolve(); },
  } as Memento;
  return { secrets, state, memento };
}

function refusal(run: () => void): ToolError {
  try {
    run();
  } catch (err) {
    assert.ok(err instanceof ToolError, String(err));
    return err;
  }
  assert.fail('expected a refusal');
}

describe('agent identity: the one self-review check', () => {
  const codex = { id: 'codex', name: 'Codex' };
  const claude = { id: 'claude-code', name: 'claude-code' };
  const authors: Authors = withAuthor(withAuthor({ sessions: [], agents: [] }, { session: 's1', agent: codex }), { session: 's2', agent: codex });

  it('refuses the same agent from any session, for every action, and names why', () => {
    for (const action of ['review', 'commit', 'resolve'] as const) {
      const e = refusal(() => assertNotOwn({ session: 'brand-new-session', agent: codex }, authors, { kind: 'hold', id: 'h1', action }));
      assert.equal(e.code, 'PERMISSION_DENIED');
      assert.equal(e.details?.reason, 'self_review');
      assert.equal(e.details?.by, 'agent');
      assert.equal(e.details?.approval_id, 'h1');
      assert.equal(e.details?.agent, 'Codex');
      // Without a session at all (the 2026 era) the agent is still itself.
      assert.equal(refusal(() => assertNotOwn({ agent: codex }, authors, { kind: 'work', id: 'w1', action })).details?.work_id, 'w1');
    }
  });

  it('lets another agent do it; a session that authored stays refused whoever uses it', () => {
    for (const action of ['review', 'commit', 'resolve'] as const) assertNotOwn({ session: 's9', agent: claude }, authors, { kind: 'work', id: 'w1', action });
    assert.equal(refusal(() => assertNotOwn({ session: 's1', agent: claude }, authors, { kind: 'work', id: 'w1', action: 'review' })).details?.by, 'session');
  });

  it('with the window token (no agent): review by session as before; commit and resolve are not checked', () => {
    const own: Caller = { session: 's1' };
    assert.equal(refusal(() => assertNotOwn(own, authors, { kind: 'work', id: 'w1', action: 'review' })).details?.by, 'session');
    assert.equal(refusal(() => assertNotOwn({}, authors, { kind: 'work', id: 'w1', action: 'review' })).details?.by, 'no_identity');
    assertNotOwn({ session: 's7' }, authors, { kind: 'work', id: 'w1', action: 'review' });
    assertNotOwn(own, authors, { kind: 'work', id: 'w1', action: 'commit' });
    assertNotOwn(own, authors, { kind: 'hold', id: 'h1', action: 'resolve' });
    assertNotOwn({}, authors, { kind: 'hold', id: 'h1', action: 'resolve' });
  });

  it('keeps authors deduplicated and returns the same object when nothing is new', () => {
    assert.equal(withAuthor(authors, { session: 's1', agent: codex }), authors);
    assert.deepEqual(withAuthor(authors, { session: 's3' }), { sessions: ['s1', 's2', 's3'], agents: ['codex'] });
  });

  it('makes an id of a name, and refuses names that give none', () => {
    assert.deepEqual(agentIdOf('  Claude Code  '), { id: 'claude-code' });
    assert.deepEqual(agentIdOf('codex'), { id: 'codex' });
    for (const bad of ['', '   ', '!!!', '..', 'a\u0007b', 'x'.repeat(61)]) assert.ok('error' in agentIdOf(bad), bad);
  });
});

describe('agent credentials (SecretStorage + SHA-256 verifiers)', () => {
  it('issues one credential per agent: the secret in SecretStorage, only its digest in the global state', async () => {
    const s = fakeStorage();
    const creds = new AgentCredentials(s.secrets, s.memento);
    const a = await creds.issue('Codex');
    const b = await creds.issue('claude-code');
    assert.match(a.credential, /^csa_[A-Za-z0-9_-]{43}$/);
    assert.notEqual(a.credential, b.credential);
    assert.equal(await s.secrets.get(`${AGENT_SECRET_PREFIX}codex`), a.credential);
    const stored = JSON.stringify(s.state.get(AGENTS_KEY));
    assert.ok(!stored.includes(a.credential.slice(4)) && !stored.includes(b.credential.slice(4)), 'no credential in the global state');
    assert.deepEqual(creds.verify(a.credential), { id: 'codex', name: 'Codex' });
    assert.deepEqual(creds.verify(b.credential), { id: 'claude-code', name: 'claude-code' });
    assert.equal(creds.verify(`${a.credential}x`), undefined);
    assert.equal(creds.verify('T'.repeat(43)), undefined);
    // A second store over the same state (another window, a restart) verifies without the keychain.
    assert.deepEqual(new AgentCredentials(fakeStorage().secrets, s.memento).verify(b.credential), { id: 'claude-code', name: 'claude-code' });
  });

  it('replacing or revoking a credential stops the old one at once and tells the listeners', async () => {
    const s = fakeStorage();
    const creds = new AgentCredentials(s.secrets, s.memento);
    const revoked: string[] = [];
    creds.onDidRevoke((agent) => revoked.push(agent.id));
    const first = await creds.issue('codex');
    const second = await creds.issue('CODEX');
    assert.equal(second.replaced, true);
    assert.equal(creds.verify(first.credential), undefined);
    assert.equal(creds.verify(second.credential)?.id, 'codex');
    assert.deepEqual(revoked, ['codex']);
    await creds.revoke('codex');
    assert.equal(creds.verify(second.credential), undefined);
    assert.equal(await s.secrets.get(`${AGENT_SECRET_PREFIX}codex`), undefined);
    assert.deepEqual(revoked, ['codex', 'codex']);
    await assert.rejects(creds.revoke('codex'), AgentCredentialError);
    await assert.rejects(creds.issue('???'), AgentCredentialError);
  });
});

describe('the bridge forwards an agent credential', () => {
  it('sends CODESPACE_AGENT_TOKEN when set, the window token otherwise', () => {
    const target = { url: 'http://127.0.0.1:1/mcp', token: 'window-token', describe: '' };
    assert.deepEqual(upstreamHeaders(target, { CODESPACE_AGENT_TOKEN: 'csa_abc' }), { Authorization: 'Bearer csa_abc' });
    assert.deepEqual(upstreamHeaders(target, {}), { Authorization: 'Bearer window-token' });
    assert.deepEqual(upstreamHeaders(target, { CODESPACE_AGENT_TOKEN: '' }), { Authorization: 'Bearer window-token' });
  });
});

interface McpCaller {
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

async function connect(h: RunningHost, credential: string, era: 'modern' | 'legacy' = 'legacy'): Promise<McpCaller> {
  const url = new URL(`http://127.0.0.1:${h.port}/mcp`);
  const requestInit = { headers: { Authorization: `Bearer ${credential}` } };
  if (era === 'modern') {
    const client = new ClientV2({ name: 'agent-2026', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new TransportV2(url, { requestInit }));
    return { call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>, close: () => client.close() };
  }
  const client = new Client({ name: 'agent-2025', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit }));
  return { call: (name, args) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>, close: () => client.close() };
}

describe('agent identities over HTTP (real host, real MCP clients)', function () {
  let lang: FakeLanguage;
  this.timeout(120_000);
  let root: string;
  let h: RunningHost;
  let creds: AgentCredentials;
  let directory: AgentDirectory;
  let codex: string;
  let claude: string;
  const open: McpCaller[] = [];
  const client = async (credential: string, era: 'modern' | 'legacy' = 'legacy'): Promise<McpCaller> => {
    const c = await connect(h, credential, era);
    open.push(c);
    return c;
  };
  const holdRequest = (key: string) => ({ workspace_id: 'demo', request: { patch: `*** Begin Patch\n*** Add File: ${key}.txt\n+${key}\n*** End Patch\n`, expected_versions: {}, operation_key: key } });

  before(async () => {
    root = await makeTree({ 'hello.txt': 'hi\n' }, 'codespace-agents-');
    const s = fakeStorage();
    creds = new AgentCredentials(s.secrets, s.memento);
    codex = (await creds.issue('codex')).credential;
    claude = (await creds.issue('claude-code')).credential;
    lang = new FakeLanguage();
    h = await startHost(root, 0, { agents: creds, language: lang, approvalPolicy: () => ({ patches: 'confirm', commands: 'off', agentMayResolve: true }) });
    directory = new AgentDirectory(creds, silentLogger);
    directory.attach(h.host);
  });
  after(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    directory.dispose();
    await h.stop();
    await removeTree(root);
  });

  it('an agent cannot resolve its own hold from a second session (or the 2026 era); another agent can', async () => {
    const codexFirst = await client(codex);
    const codexSecond = await client(codex);
    const codexModern = await client(codex, 'modern');
    const claudeSession = await client(claude);
    const created = await codexFirst.call('approval_create', holdRequest('one'));
    assert.equal(created.isError, undefined, JSON.stringify(created.content));
    const hold = created.structuredContent as { approval_id: string };
    assert.equal(h.services.approvals.get(hold.approval_id)?.requested_by_agent, 'codex');
    for (const own of [codexSecond, codexModern, codexFirst]) {
      const e = toolError(await own.call('approval_resolve', { approval_id: hold.approval_id, decision: 'grant' }));
      assert.equal(e.code, 'PERMISSION_DENIED', e.message);
      assert.equal(e.details?.reason, 'self_review');
      assert.equal(e.details?.by, 'agent');
    }
    assert.equal(h.services.approvals.get(hold.approval_id)?.state, 'pending');
    const granted = await claudeSession.call('approval_resolve', { approval_id: hold.approval_id, decision: 'grant' });
    assert.equal(granted.isError, undefined, JSON.stringify(granted.content));
    assert.equal(h.services.approvals.get(hold.approval_id)?.decided_by_agent, 'claude-code');
  });

  it('a held edit a language server proposed (rename_symbol) is the agent\'s own too: no session of it may grant it', async () => {
    lang.renameAnswer = (p) => Promise.resolve({ edits: [{ path: p, edits: [{ range: { start: { line: 1, character: 1 }, end: { line: 1, character: 3 } }, newText: 'yo' }], documentText: 'hi\n', dirty: false }], fileOperations: 0 });
    const first = await client(codex);
    const second = await client(codex);
    const held = toolError(await first.call('rename_symbol', { workspace_id: 'demo', path: 'hello.txt', line: 1, character: 1, new_name: 'yo', operation_key: 'rename-held' }));
    assert.equal(held.code, 'APPROVAL_REQUIRED', held.message);
    const id = String(held.details?.approval_id);
    assert.equal(h.services.approvals.get(id)?.requested_by_agent, 'codex');
    const e = toolError(await second.call('approval_resolve', { approval_id: id, decision: 'grant' }));
    assert.equal(e.details?.reason, 'self_review');
    assert.equal(h.services.approvals.get(id)?.state, 'pending');
  });

  it('a hold asked for in the 2026 era (no session) is still the agent\'s own in a 2025 session', async () => {
    const modern = await client(claude, 'modern');
    const created = await modern.call('approval_create', holdRequest('two'));
    assert.equal(created.isError, undefined, JSON.stringify(created.content));
    const id = (created.structuredContent as { approval_id: string }).approval_id;
    const legacy = await client(claude);
    assert.equal(toolError(await legacy.call('approval_resolve', { approval_id: id, decision: 'deny' })).details?.by, 'agent');
    const other = await client(codex);
    assert.equal((await other.call('approval_resolve', { approval_id: id, decision: 'deny' })).isError, undefined);
  });

  it('a session belongs to the credential that opened it: another agent\'s credential gets 403', async () => {
    const r = await rawRequest(h.port, { headers: { ...MCP_HEADERS, authorization: `Bearer ${codex}`, host: `127.0.0.1:${h.port}` }, body: INIT_BODY });
    assert.equal(r.status, 200, r.body);
    const session = r.headers['mcp-session-id'] as string;
    const list = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });
    for (const other of [claude, h.token.value]) {
      const wrong = await rawRequest(h.port, { headers: { ...MCP_HEADERS, authorization: `Bearer ${other}`, host: `127.0.0.1:${h.port}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-11-25' }, body: list });
      assert.equal(wrong.status, 403, wrong.body);
    }
  });

  it('lists the agents with their sessions; revoking one closes its sessions at once and its credential gets 401', async () => {
    const mine = await client(codex);
    assert.equal((await mine.call('workspace_info', {})).isError, undefined);
    const listed = directory.list().find((a) => a.id === 'codex');
    assert.ok(listed && listed.sessions >= 1 && listed.connected_at !== undefined && listed.last_activity !== undefined, JSON.stringify(listed));
    const before = h.host.sessionCount;
    const { closed } = await directory.revoke('codex');
    assert.ok(closed >= 1);
    assert.equal(h.host.agents().find((a) => a.id === 'codex'), undefined);
    assert.equal(h.host.sessionCount, before - closed, 'only its sessions');
    assert.deepEqual(directory.list().map((a) => a.id), ['claude-code']);
    const init = await rawRequest(h.port, { headers: { ...MCP_HEADERS, authorization: `Bearer ${codex}`, host: `127.0.0.1:${h.port}` }, body: INIT_BODY });
    assert.equal(init.status, 401);
    await assert.rejects(mine.call('workspace_info', {}));
    // The other agent and the window's token keep working.
    assert.equal((await (await client(claude)).call('workspace_info', {})).isError, undefined);
    assert.equal((await (await client(h.token.value)).call('workspace_info', {})).isError, undefined);
  });
});

describe('works: not your own review across sessions (real assembly, two agents)', function () {
  this.timeout(120_000);
  let dir: string;
  let a: AssembledServices;
  const codex = { id: 'codex', name: 'codex' };
  const claude = { id: 'claude-code', name: 'claude-code' };
  type Outcome = { kind: string; value?: Record<string, unknown>; body?: { code: string; message: string; details?: Record<string, unknown> } };
  const call = async (caller: Caller, name: string, args: Record<string, unknown>): Promise<Outcome> => (await a.dispatcher.call(name, args, new AbortController().signal, caller)) as Outcome;

  before(async () => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-agentworks-')));
    const repo = makeRepo(path.join(dir, 'alpha'), { 'a.txt': 'one\n' });
    fs.mkdirSync(path.join(dir, 'storage'));
    a = await assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(new InMemoryWorkspaceSource([{ root: repo, name: 'alpha', preferredId: 'alpha', profile: 'exec' }])), path.join(dir, 'storage'), {
        worktrees: new GitWorktreeFactory({ dir: path.join(dir, 'storage', 'worktrees') }),
      }),
    );
  });
  after(async () => {
    await a.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the agent that made a work can neither review nor commit it from a new session; another agent approves and commits, recorded as that agent', async () => {
    const opened = await call({ session: 'c1', agent: codex }, 'work_open', { workspace_id: 'alpha', title: 'agents' });
    assert.equal(opened.kind, 'result', JSON.stringify(opened.body));
    const workId = String(opened.value?.work_id);
    assert.deepEqual(a.steering.work(workId)?.agent, codex);
    const patched = await call({ session: 'c2', agent: codex }, 'apply_patch', {
      workspace_id: 'alpha', work_id: workId, operation_key: 'k1',
      expected_versions: { 'a.txt': contentVersion(Buffer.from('one\n')) },
      patch: '*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch\n',
    });
    assert.equal(patched.kind, 'result', JSON.stringify(patched.body));
    const frozen = await call({ session: 'c2', agent: codex }, 'work_review', { work_id: workId, action: 'freeze' });
    const digest = String(frozen.value?.digest);
    for (const action of ['approve', 'reject'] as const) {
      const own = await call({ session: 'c3-fresh', agent: codex }, 'work_review', { work_id: workId, action, digest });
      assert.equal(own.body?.code, 'PERMISSION_DENIED', JSON.stringify(own));
      assert.equal(own.body?.details?.reason, 'self_review');
      assert.equal(own.body?.details?.by, 'agent');
    }
    const approved = await call({ session: 'k1', agent: claude }, 'work_review', { work_id: workId, action: 'approve', digest });
    assert.equal(approved.kind, 'result', JSON.stringify(approved.body));
    assert.equal(a.steering.work(workId)?.review?.by, 'agent:claude-code');
    assert.equal(a.steering.work(workId)?.review?.agent, 'claude-code');
    const commit = await call({ session: 'c4-fresh', agent: codex }, 'work_review', { work_id: workId, action: 'commit' });
    assert.equal(commit.body?.code, 'PERMISSION_DENIED', JSON.stringify(commit));
    assert.equal(commit.body?.details?.reason, 'self_review');
    const committed = await call({ session: 'k2', agent: claude }, 'work_review', { work_id: workId, action: 'commit' });
    assert.equal(committed.kind, 'result', JSON.stringify(committed.body));
    assert.equal((committed.value?.commits as unknown[]).length, 1);
  });
});

describe('the panel lists the agents and revokes one', () => {
  it('shows each agent (never a credential), re-posts on a change, and revokes a known agent through the command only', async () => {
    const s = fakeStorage();
    const creds = new AgentCredentials(s.secrets, s.memento);
    const directory = new AgentDirectory(creds, silentLogger);
    const codex = (await creds.issue('codex')).credential;
    const commands: { command: string; args: unknown[] }[] = [];
    const controller = new PanelController({
      approvals: new FakeApprovals(),
      activity: new FakeActivity(),
      agents: directory,
      log: new InMemoryLogger(),
      debounceMs: 10,
      executeCommand: (command, ...args) => {
        commands.push({ command, args });
        return Promise.resolve(undefined);
      },
    });
    try {
      const posted: HostMessage[] = [];
      const token = controller.attach({ post: (m) => void posted.push(m), setBadge: () => undefined });
      await controller.handleMessage({ type: 'ready' }, token);
      const last = (): PanelState | undefined => controller.lastPosted();
      assert.deepEqual(last()?.agents, [{ id: 'codex', name: 'codex', sessions: 0 }]);
      assert.ok(!JSON.stringify(posted).includes(codex));
      await creds.issue('claude-code');
      for (let i = 0; i < 200 && last()?.agents?.length !== 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(last()?.agents?.map((a) => a.id), ['codex', 'claude-code']);
      const unknown = await controller.handleMessage({ type: 'revokeAgent', requestId: 'r1', agentId: 'nobody' }, token);
      assert.equal(unknown?.type === 'reply' && unknown.ok, false);
      assert.equal(commands.length, 0);
      const done = await controller.handleMessage({ type: 'revokeAgent', requestId: 'r2', agentId: 'codex' }, token);
      assert.equal(done?.type === 'reply' && done.ok, true);
      assert.deepEqual(commands, [{ command: 'codespace.revokeAgent', args: [{ id: 'codex' }] }]);
      assert.equal(parsePageMessage({ type: 'revokeAgent', requestId: 'r3', agentId: 'a\u0000' }).ok, false);
      assert.equal(parsePageMessage({ type: 'revokeAgent', requestId: 'r3', agentId: 'codex', credential: 'x' }).ok, false);
    } finally {
      controller.dispose();
      directory.dispose();
    }
  });
});
