/**
 * The path-taking tools of the catalogue, found by their arguments, and arguments that name a given path: shared by
 * the unit test and the test inside VS Code, so a tool added later is tested in both without being named.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import type { z } from 'zod';
import { toolCatalogue } from '../../../src/app/catalogue';
import type { ToolContract } from '../../../src/kernel/tool';

const sha256 = (s: string): string => `sha256:${createHash('sha256').update(s).digest('hex')}`;
const v4a = (...lines: string[]): string => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n');

/** How a tool takes a path, by argument name: what it expects there. */
const PATH_ARGUMENTS: Record<string, 'file' | 'folder'> = { path: 'file', paths: 'file', cwd: 'folder', patch: 'file', request: 'file' };

/** The tools of the catalogue that take a path, with the kind they expect. */
export function pathTools(): { tool: ToolContract; expect: 'file' | 'folder' }[] {
  return toolCatalogue().flatMap((tool) => {
    const keys = Object.keys(tool.input as Record<string, unknown>).filter((k) => k in PATH_ARGUMENTS);
    return keys.length === 0 ? [] : [{ tool, expect: PATH_ARGUMENTS[keys[0] as string] as 'file' | 'folder' }];
  });
}

let keys = 0;
/** Arguments for `tool` that name `target` where it takes a path, and a valid value for every other required one. */
export function argsFor(tool: ToolContract, workspaceId: string, target: string): Record<string, unknown> {
  const patch = v4a(`*** Update File: ${target}`, '@@', '-x', '+y');
  const unique = `${Date.now().toString(36)}-${++keys}`;
  const values: Record<string, () => unknown> = {
    workspace_id: () => workspaceId,
    path: () => target,
    paths: () => [target],
    cwd: () => target,
    patch: () => patch,
    expected_versions: () => ({ [target]: sha256('x\n') }),
    request: () => ({ workspace_id: workspaceId, patch, expected_versions: { [target]: sha256('x\n') }, operation_key: `held-${unique}` }),
    command: () => ['true'],
    line: () => 1,
    character: () => 1,
    new_name: () => 'renamed',
    title: () => 'A fix',
    direction: () => 'incoming',
    operation_key: () => `key-${unique}`,
    // A patch or rename that passes the path check stays a preview: the workspace is the same for every case.
    check_only: () => true,
  };
  const args: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(tool.input as Record<string, z.ZodTypeAny>)) {
    if (schema.isOptional() && !(name in PATH_ARGUMENTS) && name !== 'check_only') continue;
    const value = values[name];
    assert.ok(value, `${tool.name} takes "${name}": give it a value in pathToolArgs.ts`);
    args[name] = value();
  }
  return args;
}

/** The hostile set: what each kind of path must answer, from a tool expecting a file and from one expecting a folder. */
export const HOSTILE_PATHS: readonly { name: string; file: string; folder: string; kind?: RegExp }[] = [
  { name: 'fifo', file: 'NOT_TEXT', folder: 'NOT_FOUND', kind: /named pipe/ },
  { name: 'sock', file: 'NOT_TEXT', folder: 'NOT_FOUND', kind: /socket/ },
  { name: 'fifo-link', file: 'NOT_TEXT', folder: 'NOT_FOUND', kind: /named pipe/ },
  { name: 'folder', file: 'IS_DIRECTORY', folder: 'ok' },
  { name: 'ok.txt', file: 'ok', folder: 'NOT_FOUND' },
  { name: 'missing', file: 'NOT_FOUND', folder: 'NOT_FOUND' },
  { name: 'folder/missing/deeper', file: 'NOT_FOUND', folder: 'NOT_FOUND' },
  { name: 'out-link', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
  { name: 'out-folder', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
  { name: 'out-folder/secret.txt', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
  { name: 'dev-link', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
  { name: 'dangling', file: 'PATH_OUTSIDE_WORKSPACE', folder: 'PATH_OUTSIDE_WORKSPACE' },
];

/**
 * Makes the hostile set in `dir` (inside the workspace; `outside` is a folder outside it holding secret.txt): a named
 * pipe, a listening socket, a folder, links out (to a file, a folder, /dev/zero, nowhere) and a link to the pipe.
 * `ok.txt` is the caller's. dispose() closes the socket.
 */
export async function makeHostilePaths(dir: string, outside: string): Promise<{ dispose(): Promise<void> }> {
  execFileSync('mkfifo', [path.join(dir, 'fifo')]);
  const socket = net.createServer();
  await new Promise<void>((resolve) => socket.listen(path.join(dir, 'sock'), resolve));
  await fsp.mkdir(path.join(dir, 'folder'));
  await fsp.writeFile(path.join(dir, 'folder', 'in.txt'), 'x\n');
  await fsp.symlink(path.join(outside, 'secret.txt'), path.join(dir, 'out-link'));
  await fsp.symlink(outside, path.join(dir, 'out-folder'));
  await fsp.symlink('/dev/zero', path.join(dir, 'dev-link'));
  await fsp.symlink('fifo', path.join(dir, 'fifo-link'));
  await fsp.symlink(path.join(outside, 'gone'), path.join(dir, 'dangling'));
  return { dispose: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}
