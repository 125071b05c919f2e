import { z } from 'zod';

/**
 * The editor tools' bounds and the schemas of positions, ranges and locations: plain declarations with no other
 * import, so every module may read them while it loads (the patches and editor modules import each other's indexes).
 */
export const LANGUAGE_LIMITS = {
  /** Locations one definition/references/workspace_symbols call returns. */
  maxLocations: 200,
  /** Diagnostics one call returns. */
  maxDiagnostics: 500,
  /** Characters of one diagnostic message. */
  maxMessageChars: 2000,
  /** Document symbols (all levels) and their nesting. */
  maxSymbols: 1000,
  maxSymbolDepth: 8,
  /** Characters of hover text. */
  maxHoverChars: 8000,
  /** Characters of a location's context line. */
  maxContextChars: 200,
  /** Characters of the selected text editor_context returns. */
  maxSelectionChars: 16 * 1024,
  /** Files a diagnostics call may name. */
  maxPaths: 100,
  /** Files read to show context lines (larger files get locations without context). */
  maxContextFileBytes: 8 * 1024 * 1024,
} as const;

/** Largest file a position or a rename is checked against. */
export const MAX_LANGUAGE_FILE_BYTES = 64 * 1024 * 1024;

export const positionSchema = z.object({ line: z.number(), character: z.number() });
export const rangeSchema = z.object({ start: positionSchema, end: positionSchema });

export const locationSchema = z.object({
  workspace_id: z.string(),
  path: z.string(),
  range: rangeSchema,
  context: z.string().optional().describe('The text of the range\'s first line, trimmed and bounded.'),
});

export type LocationView = z.infer<typeof locationSchema>;

export const positionInput = {
  line: z.number().int().min(1),
  character: z.number().int().min(1),
};
