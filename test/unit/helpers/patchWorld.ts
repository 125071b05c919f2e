/**
 * A real patch stack for unit tests: temp workspace + temp storage folder, the services the extension assembles
 * (assembleServices: FileJournal → OperationLedger → PatchService) on NodeWorkspaceFs, and a real MCP client
 * (connectHarness over InMemoryTransport). The file system is wrapped twice: BreakableFs can make writes fail
 * from the n-th one on (a disk that turns read-only), and SpyWorkspaceFs records calls and holds the `dirty` set.
 */
import type { ContentSearch } from '../../../src/features/files/common/contentSearch';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PatchFaults } from '../../../src/features/patches/common/patchService';
import type { FileContent, FileStat, FindOptions, FindResult, Within, WorkspaceFs } from '../../../src/base/workspaceFs';
import type { Profile } from '../../../src/kernel/workspaceSource';
import { InMemoryWorkspaceSource } from '../../../src/kernel/workspaceSource';
import { WorkspaceRegistry } from '../../../src/kernel/workspaces';
import type { ApprovalPolicy } from '../../../src/kernel/approvals/approvalService';
import type { ReviewMode } from '../../../src/kernel/approvals/holdPolicy';
import type { AssembleOptions, AssembledServices } from '../../../src/app/assembleServices';
import { assembleServices } from '../../../src/app/assembleServices';
import { unitAssembleOptions } from './assembleOptions';
import type { IsolationSettings } from '../../../src/features/processes/node/sandbox/commandSandbox';
import { NodeWorkspaceFs } from '../../../src/kernel/node/nodeWorkspaceFs';
import type { Harness } from './workspaceFixture';
import { SpyWorkspaceFs, connectHarness, ok, toolError } from './workspaceFixture';

export const WS_ID = 'proj';

export function sha256(bytes: Uint8Array | string): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** `*** Begin Patch` + sections + `*** End Patch`. */
export function v4a(...sections: string[]): string {
  return ['*** Begin Patch', ...sections, '*** End Patch'].join('\n');
}

/**
 * NodeWorkspaceFs whose writes and deletes start failing once `writesLeft` reaches 0 (Infinity: never).
 * Models a disk that fails in the middle of a patch and stays broken, so the restore fails too.
 */
export class BreakableFs implements WorkspaceFs {
  writesLeft = Number.POSITIVE_INFINITY;
  constructor(private readonly inner: WorkspaceFs = new NodeWorkspaceFs()) {}
  private spend(op: string, p: string): void {
    if (this.writesLeft <= 0) throw Object.assign(new Error(`EIO: injected ${op} failure on ${path.basename(p)}`), { code: 'EIO' });
    this.writesLeft--;
  }
  stat(p: string): Promise<FileStat | undefined> { return this.inner.stat(p); }
  lstat(p: string): Promise<FileStat | undefined> { return this.inner.lstat(p); }
  realpath(p: string): Promise<string> { return this.inner.realpath(p); }
  inspect(p: string, o: Within & { expect: 'file' | 'folder' }): Promise<FileStat> { return this.inner.inspect(p, o); }
  readFile(p: string, o: Within & { maxBytes: number }): Promise<FileContent> { return this.inner.readFile(p, o); }
  async writeFile(p: string, d: Uint8Array, o: Within & { mode?: number; tag: string }): Promise<void> { this.spend('write', p); return this.inner.writeFile(p, d, o); }
  removeTemp(p: string, tag: string, o: Within): Promise<boolean> { return this.inner.removeTemp(p, tag, o); }
  async deleteFile(p: string, o: Within): Promise<void> { this.spend('delete', p); return this.inner.deleteFile(p, o); }
  removeEmptyFolder(p: string, o: Within): Promise<void> { return this.inner.removeEmptyFolder(p, o); }
  readLink(p: string): Promise<string> { return this.inner.readLink(p); }
  createLink(t: string, p: string, o: Within): Promise<void> { return this.inner.createLink(t, p, o); }
  find(root: string, pattern: string, o: FindOptions): Promise<FindResult> { return this.inner.find(root, pattern, o); }
  isDirty(p: string): boolean { return this.inner.isDirty(p); }
}

export interface FileSnap {
  readonly hash: string;
  readonly mtimeMs: number;
  readonly mode: number;
}

/** Every file and symlink below `dir` (not following links): hash, mtime and mode, by relative path. */
export async function snapshotTree(dir: string): Promise<Record<string, FileSnap | 'dir' | 'link'>> {
  const out: Record<string, FileSnap | 'dir' | 'link'> = {};
  const walk = async (abs: string, rel: string): Promise<void> => {
    for (const e of await fsp.readdir(abs, { withFileTypes: true })) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      const a = path.join(abs, e.name);
      if (e.isSymbolicLink()) out[r] = 'link';
      else if (e.isDirectory()) {
        out[r] = 'dir';
        await walk(a, r);
      } else {
        const st = await fsp.stat(a);
        out[r] = { hash: sha256(await fsp.readFile(a)), mtimeMs: st.mtimeMs, mode: st.mode & 0o7777 };
      }
    }
  };
  await walk(dir, '');
  return out;
}

export interface WorldOptions {
  /** Content search for the `search` tool (default none: SEARCH_UNAVAILABLE). */
  readonly contentSearch?: ContentSearch;
  readonly profile?: Profile;
  readonly trusted?: boolean;
  readonly faults?: PatchFaults;
  readonly occupant?: (workspaceId: string) => { process_id: string; command: readonly string[] } | undefined;
  /** Approval settings, read on every call (default: the extension's defaults). */
  readonly approvals?: () => ApprovalPolicy;
  /** `codespace.review.mode` per workspace (default: `before`). */
  readonly reviewMode?: (workspaceId: string) => ReviewMode;
  /** A work's baseline for the review after the write (default: none). */
  readonly reviewBaseline?: AssembleOptions['reviewBaseline'];
  /** Command sandbox settings (default: no sandbox). */
  readonly isolation?: IsolationSettings;
  /** Reuse these folders (a restart); otherwise fresh temp folders are made. */
  readonly dirs?: { tmp: string; root: string; storage: string };
}

export interface PatchWorld {
  readonly tmp: string;
  readonly root: string;
  readonly storage: string;
  readonly spy: SpyWorkspaceFs;
  readonly breakable: BreakableFs;
  readonly assembled: AssembledServices;
  readonly harness: Harness;
  abs(rel: string): string;
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  read(rel: string): Promise<{ content: string; version: string }>;
  /** apply_patch that must succeed at the protocol and tool level (status may still be failed). */
  apply<T = ApplyResult>(args: Record<string, unknown>): Promise<T>;
  /** apply_patch that must fail with a tool error. */
  applyError(args: Record<string, unknown>): Promise<ReturnType<typeof toolError>>;
  status(query: { operation_key: string } | { operation_id: string }): Promise<StatusResult>;
  /** writeFile / deleteFile calls the spy saw. */
  writes(): string[];
  /** Closes client, server and services; keeps the folders. */
  close(): Promise<void>;
  /** close() and remove the temp folders. */
  dispose(): Promise<void>;
}

export interface ApplyResult {
  status: string;
  operation_id: string;
  files: { path: string; kind: string; move_to?: string; before_version?: string; after_version?: string; diff?: string; state?: string }[];
  reason?: string;
  hint?: string;
}

export interface StatusResult {
  operation_id: string;
  operation_key: string;
  kind: string;
  workspace_id: string;
  status: string;
  created_at: string;
  finished_at?: string;
  files: { path: string; kind: string; before_version?: string; after_version?: string }[];
  changes: { path: string; kind: string; before_hash: string | null; after_hash: string | null }[];
  events: { type: string; at: string; status?: string; reason?: string; evidence?: { path: string; expected_before: string | null; expected_after: string | null; found: string | null }[] }[];
}

export async function makeDirs(): Promise<{ tmp: string; root: string; storage: string }> {
  const tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-patch-')));
  const root = path.join(tmp, WS_ID);
  const storage = path.join(tmp, 'storage');
  await fsp.mkdir(root);
  return { tmp, root, storage };
}

export async function writeFiles(root: string, files: Record<string, string | Uint8Array>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const abs = path.join(root, ...rel.split('/'));
    await fsp.mkdir(path.dirname(abs), { recursive: true });
    await fsp.writeFile(abs, content);
  }
}

/** Assembles the real services on the given (or fresh) folders and connects a real MCP client to them. */
export async function openPatchWorld(files: Record<string, string | Uint8Array> = {}, options: WorldOptions = {}): Promise<PatchWorld> {
  const dirs = options.dirs ?? (await makeDirs());
  const { tmp, root, storage } = dirs;
  await writeFiles(root, files);
  const source = new InMemoryWorkspaceSource([{ root, name: WS_ID, profile: options.profile ?? 'write' }], options.trusted ?? true);
  const workspaces = new WorkspaceRegistry(source);
  const breakable = new BreakableFs();
  const spy = new SpyWorkspaceFs(breakable);
  const assembled = await assembleServices(
    unitAssembleOptions(workspaces, storage, {
      fs: spy,
      ...(options.faults ? { faults: options.faults } : {}),
      ...(options.occupant ? { occupant: options.occupant } : {}),
      ...(options.approvals ? { approvalPolicy: options.approvals } : {}),
      ...(options.reviewMode ? { reviewMode: options.reviewMode } : {}),
      ...(options.reviewBaseline ? { reviewBaseline: options.reviewBaseline } : {}),
      ...(options.isolation ? { isolation: options.isolation } : {}),
      ...(options.contentSearch ? { contentSearch: options.contentSearch } : {}),
    }),
  );
  const harness = await connectHarness([], { assembled, source, fs: spy });
  let closed = false;
  const world: PatchWorld = {
    tmp,
    root,
    storage,
    spy,
    breakable,
    assembled,
    harness,
    abs: (rel) => path.join(root, ...rel.split('/')),
    call: (name, args) => harness.call(name, args),
    read: async (rel) => ok<{ content: string; version: string }>(await harness.call('read', { workspace_id: WS_ID, path: rel })),
    apply: async <T>(args: Record<string, unknown>) => ok<T>(await harness.call('apply_patch', { workspace_id: WS_ID, ...args })),
    applyError: async (args) => toolError(await harness.call('apply_patch', { workspace_id: WS_ID, ...args })),
    status: async (query) => ok<StatusResult>(await harness.call('operation_status', query)),
    writes: () => spy.calls.filter((c) => c.startsWith('writeFile ') || c.startsWith('deleteFile ')),
    close: async () => {
      if (closed) return;
      closed = true;
      await harness.close();
      await assembled.shutdown();
    },
    dispose: async () => {
      await world.close();
      await fsp.rm(tmp, { recursive: true, force: true });
    },
  };
  return world;
}
