import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { FileContent, FileStat, FindOptions, FindResult, Within, WorkspaceFs } from '../../../src/base/workspaceFs';
import type { FolderInfo } from '../../../src/kernel/workspaceSource';
import type { ContentSearch } from '../../../src/features/files/common/contentSearch';
import { InMemoryWorkspaceSource } from '../../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../../src/kernel/workspaces';
import type { AnyTool } from '../../../src/kernel/tool';
import type { Limits } from '../../../src/kernel/limits';
import { DEFAULT_LIMITS } from '../../../src/kernel/limits';
import { createToolServer } from '../../../src/mcp/toolServer';
import type { AssembledServices } from '../../../src/app/assembleServices';
import { assembleServices } from '../../../src/app/assembleServices';
import { unitAssembleOptions } from './assembleOptions';
import { NodeWorkspaceFs } from '../../../src/kernel/node/nodeWorkspaceFs';

/** Makes a temp folder holding `files` (path → content); returns its real absolute path. */
export async function makeTree(files: Record<string, string | Uint8Array>, prefix = 'codespace-ws-'): Promise<string> {
  const dir = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), prefix)));
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(dir, rel);
    await fsp.mkdir(path.dirname(abs), { recursive: true });
    await fsp.writeFile(abs, content);
  }
  return dir;
}

export async function removeTree(dir: string): Promise<void> {
  await fsp.rm(dir, { recursive: true, force: true });
}

/** A WorkspaceFs that records every path it is asked about, to prove a refused path was never touched. */
export class SpyWorkspaceFs implements WorkspaceFs {
  readonly calls: string[] = [];
  constructor(private readonly inner: WorkspaceFs = new NodeWorkspaceFs()) {}
  private note(op: string, p: string): void { this.calls.push(`${op} ${p}`); }
  stat(p: string): Promise<FileStat | undefined> { this.note('stat', p); return this.inner.stat(p); }
  lstat(p: string): Promise<FileStat | undefined> { this.note('lstat', p); return this.inner.lstat(p); }
  realpath(p: string): Promise<string> { this.note('realpath', p); return this.inner.realpath(p); }
  inspect(p: string, o: Within & { expect: 'file' | 'folder' }): Promise<FileStat> { this.note('inspect', p); return this.inner.inspect(p, o); }
  readFile(p: string, o: Within & { maxBytes: number }): Promise<FileContent> { this.note('readFile', p); return this.inner.readFile(p, o); }
  writeFile(p: string, d: Uint8Array, o: Within & { mode?: number; tag: string }): Promise<void> { this.note('writeFile', p); return this.inner.writeFile(p, d, o); }
  removeTemp(p: string, tag: string, o: Within): Promise<boolean> { this.note('removeTemp', p); return this.inner.removeTemp(p, tag, o); }
  deleteFile(p: string, o: Within): Promise<void> { this.note('deleteFile', p); return this.inner.deleteFile(p, o); }
  removeEmptyFolder(p: string, o: Within): Promise<void> { this.note('removeEmptyFolder', p); return this.inner.removeEmptyFolder(p, o); }
  readLink(p: string): Promise<string> { this.note('readLink', p); return this.inner.readLink(p); }
  createLink(t: string, p: string, o: Within): Promise<void> { this.note('createLink', p); return this.inner.createLink(t, p, o); }
  find(root: string, pattern: string, o: FindOptions): Promise<FindResult> { this.note('find', root); return this.inner.find(root, pattern, o); }
  dirty = new Set<string>();
  isDirty(p: string): boolean { return this.dirty.has(p); }
}

export interface Harness {
  client: Client;
  services: AssembledServices;
  source: InMemoryWorkspaceSource;
  fs: SpyWorkspaceFs;
  limits: { current: Limits };
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/**
 * A real SDK client linked in-process to a server over the tool catalogue, on the services the extension
 * assembles (its durable state in a fresh temp folder), or on `assembled` when given (its owner closes it).
 */
export async function connectHarness(
  folders: FolderInfo[],
  options: { trusted?: boolean; tools?: AnyTool[]; assembled?: AssembledServices; source?: InMemoryWorkspaceSource; fs?: SpyWorkspaceFs; contentSearch?: ContentSearch; disabledToolGroups?: () => readonly unknown[]; enabledToolGroups?: () => readonly unknown[] } = {},
): Promise<Harness> {
  const source = options.source ?? new InMemoryWorkspaceSource(folders, options.trusted ?? true);
  const fs = options.fs ?? new SpyWorkspaceFs();
  const limits = { current: { ...DEFAULT_LIMITS } };
  let storage: string | undefined;
  let assembled = options.assembled;
  if (!assembled) {
    storage = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-storage-'));
    assembled = await assembleServices(
      unitAssembleOptions(new WorkspaceRegistry(source), storage, {
        fs,
        limits: () => limits.current,
        ...(options.contentSearch ? { contentSearch: options.contentSearch } : {}),
        ...(options.disabledToolGroups ? { disabledToolGroups: options.disabledToolGroups } : {}),
        ...(options.enabledToolGroups ? { enabledToolGroups: options.enabledToolGroups } : {}),
      }),
    );
  }
  const services = assembled;
  const dispatcher = options.tools ? assembled.dispatcherWith(options.tools) : assembled.dispatcher;
  const server = createToolServer({ ...assembled.serving, dispatcher, version: '0.0.0-test' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: 'unit-test', version: '1.0.0' });
  await server.connect(serverSide);
  await client.connect(clientSide);
  const owned = options.assembled ? undefined : assembled;
  return {
    client,
    services,
    source,
    fs,
    limits,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: async () => {
      await client.close();
      await server.close();
      if (owned) await owned.shutdown();
      if (storage) await fsp.rm(storage, { recursive: true, force: true });
    },
  };
}

/** The structured error of a failed tool call, or a thrown assertion when the call did not fail. */
export function toolError(result: CallToolResult): { code: string; message: string; hint?: string; details?: Record<string, unknown> } {
  if (!result.isError) throw new Error(`expected a tool error, got ${JSON.stringify(result.structuredContent)}`);
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('a tool error carries its body as text');
  return (JSON.parse(first.text) as { error: { code: string; message: string } }).error;
}

export function ok<T = Record<string, unknown>>(result: CallToolResult): T {
  if (result.isError) throw new Error(`tool failed: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent as T;
}
