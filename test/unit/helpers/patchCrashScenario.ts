/**
 * The two-file patch the crash tests apply, shared by the parent test and the child that kills itself
 * (helpers/patchCrashChild.ts), so a retry in the parent sends exactly the arguments the child sent.
 */
import { createHash } from 'node:crypto';

export const CRASH_KEY = 'crash-key-1';

/** Before: both files exist. The patch updates both. */
export const CRASH_FILES = {
  'src/a.ts': 'export const a = 1;\nexport const keep = true;\n',
  'src/b.ts': 'export function b(): number {\n  return 1;\n}\n',
} as const;

export const CRASH_AFTER = {
  'src/a.ts': 'export const a = 2;\nexport const keep = true;\n',
  'src/b.ts': 'export function b(): number {\n  return 2;\n}\n',
} as const;

export const CRASH_PATCH = [
  '*** Begin Patch',
  '*** Update File: src/a.ts',
  '@@',
  '-export const a = 1;',
  '+export const a = 2;',
  ' export const keep = true;',
  '*** Update File: src/b.ts',
  '@@ export function b(): number {',
  '-  return 1;',
  '+  return 2;',
  ' }',
  '*** End Patch',
].join('\n');

function version(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

export const CRASH_EXPECTED_VERSIONS: Record<string, string> = {
  'src/a.ts': version(CRASH_FILES['src/a.ts']),
  'src/b.ts': version(CRASH_FILES['src/b.ts']),
};

/** The apply_patch arguments (without workspace_id). */
export const CRASH_ARGS = { patch: CRASH_PATCH, expected_versions: CRASH_EXPECTED_VERSIONS, operation_key: CRASH_KEY } as const;

export type CrashPoint = 'before-write' | 'after-first-write' | 'before-finish';
export const CRASH_POINTS: readonly CrashPoint[] = ['before-write', 'after-first-write', 'before-finish'];
