import * as path from 'node:path';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { EditorLocation, LanguageFeatures, TextPosition } from './languageFeatures';
import { confine, failureCode, isInside, readCheckedFile } from '../../../base/paths';
import type { Workspace } from '../../../kernel/workspaces';
import { decodeText, hasBom } from '../../patches';
import { contentVersion } from '../../patches';
import type { EditorToolDeps } from './editorTools';
import { LANGUAGE_LIMITS, MAX_LANGUAGE_FILE_BYTES } from './languageSchemas';
import type { LocationView } from './languageSchemas';

/**
 * Shared by the editor tools (diagnostics, symbols, navigation, editor_context, rename_symbol): the bounds, the
 * position checks and the one place where a location the editor reports becomes something an agent may see.
 */
export { LANGUAGE_LIMITS, MAX_LANGUAGE_FILE_BYTES, locationSchema, positionInput, positionSchema, rangeSchema } from './languageSchemas';
export type { LocationView } from './languageSchemas';

/** The port, or UNAVAILABLE in a host without an editor. */
export function featuresOf(deps: Pick<EditorToolDeps, 'language'>): LanguageFeatures {
  if (!deps.language) {
    throw new ToolError('UNAVAILABLE', 'Language features need the VS Code editor; this host has none.', {
      hint: 'Use find, read and exec_command (for example the project\'s type checker) instead.',
    });
  }
  return deps.language;
}

/** A workspace file read from disk through the confined file system, with its lines. */
export interface CheckedFile {
  readonly ws: Workspace;
  readonly rel: string;
  readonly abs: string;
  readonly bytes: Uint8Array;
  readonly version: string;
  /** Decoded content without the BOM. */
  readonly text: string;
  /** Line texts without their endings ("\r\n" and "\n" end lines, as the editor counts them). */
  readonly lines: readonly string[];
}

export function splitLines(text: string): string[] {
  return text.split(/\r\n|\n/);
}

/** Reads a workspace file the way `read` does (confined, verified descriptor); not text is NOT_TEXT. */
export async function readWorkspaceFile(deps: Pick<EditorToolDeps, 'fs'>, ws: Workspace, input: string, field = 'path'): Promise<CheckedFile> {
  const { rel, abs, bytes } = await readCheckedFile(deps.fs, ws.root, input, { maxBytes: MAX_LANGUAGE_FILE_BYTES, limit: 'max_language_file_bytes' });
  const text = decodeText(hasBom(bytes) ? bytes.subarray(3) : bytes);
  if (text === undefined) {
    throw new ToolError('NOT_TEXT', `${rel} is not UTF-8 text.`, { details: { path: rel, field } });
  }
  return { ws, rel, abs, bytes, version: contentVersion(bytes), text, lines: splitLines(text) };
}

/** Checks a 1-based position against the file: INVALID_ARGUMENTS naming `line` or `character` when it is beyond. */
export function checkPosition(file: CheckedFile, line: number, character: number): TextPosition {
  if (line > file.lines.length) {
    throw new InvalidArgumentsError(`line ${line} is past the end of ${file.rel}, which has ${file.lines.length} line(s).`, { field: 'line', details: { total_lines: file.lines.length } });
  }
  const length = (file.lines[line - 1] as string).length;
  if (character > length + 1) {
    throw new InvalidArgumentsError(`character ${character} is past the end of line ${line} of ${file.rel}, which has ${length} character(s); character is 1-based.`, {
      field: 'character',
      details: { line_length: length },
    });
  }
  return { line, character };
}


function bounded(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

/**
 * Turns locations the editor reports into what an agent may see: a location inside a workspace folder (its real
 * path, too: a link out of the folder is outside) gets the workspace id, the relative path and a context line read
 * through the confined file system; anything else (a library's declaration file, a virtual document) is only
 * counted in `outside`.
 */
export class LocationMapper {
  private readonly files = new Map<string, Promise<string[] | undefined | 'outside'>>();
  private readonly realRoots = new Map<string, Promise<string | undefined>>();
  outside = 0;

  constructor(private readonly deps: Pick<EditorToolDeps, 'workspaces' | 'fs'>) {}

  /** The workspace folder (deepest root) holding `abs`, textually; undefined when none does. */
  workspaceOf(abs: string): { ws: Workspace; rel: string } | undefined {
    let best: Workspace | undefined;
    for (const ws of this.deps.workspaces.list()) {
      if (isInside(ws.root, abs) && (!best || ws.root.length > best.root.length)) best = ws;
    }
    if (!best) return undefined;
    const rel = path.relative(best.root, abs).split(path.sep).join('/');
    return rel === '' ? undefined : { ws: best, rel };
  }

  private realRoot(ws: Workspace): Promise<string | undefined> {
    let p = this.realRoots.get(ws.id);
    if (!p) {
      p = this.deps.fs.realpath(ws.root).then(
        (r) => r,
        () => undefined,
      );
      this.realRoots.set(ws.id, p);
    }
    return p;
  }

  /** The file's lines, undefined when it cannot be shown (too large, not text), 'outside' when it escapes. */
  private lines(ws: Workspace, abs: string): Promise<string[] | undefined | 'outside'> {
    let p = this.files.get(abs);
    if (!p) {
      p = (async () => {
        const realRoot = await this.realRoot(ws);
        if (realRoot === undefined) return 'outside';
        try {
          const { bytes } = await this.deps.fs.readFile(abs, { within: realRoot, maxBytes: LANGUAGE_LIMITS.maxContextFileBytes });
          const text = decodeText(hasBom(bytes) ? bytes.subarray(3) : bytes);
          return text === undefined ? undefined : splitLines(text);
        } catch (err) {
          const code = failureCode(err);
          return code === 'EFBIG' || code === 'EACCES' || code === 'EPERM' ? undefined : 'outside';
        }
      })();
      this.files.set(abs, p);
    }
    return p;
  }

  /** Confines one path (textually and by its real location); undefined when it is outside. */
  async confinePath(abs: string | undefined): Promise<{ ws: Workspace; rel: string } | undefined> {
    if (abs === undefined) return undefined;
    const where = this.workspaceOf(abs);
    if (!where) return undefined;
    const realRoot = await this.realRoot(where.ws);
    if (realRoot === undefined) return undefined;
    try {
      await confine(this.deps.fs, where.ws.root, where.rel, { realRoot });
      return where;
    } catch {
      return undefined;
    }
  }

  /** One location, or undefined (counted) when it is outside every workspace folder. */
  async map(loc: EditorLocation, withContext = true): Promise<LocationView | undefined> {
    const where = loc.path === undefined ? undefined : this.workspaceOf(loc.path);
    if (!where || loc.path === undefined) {
      this.outside++;
      return undefined;
    }
    if (!withContext) {
      if (!(await this.confinePath(loc.path))) {
        this.outside++;
        return undefined;
      }
      return { workspace_id: where.ws.id, path: where.rel, range: loc.range };
    }
    const lines = await this.lines(where.ws, loc.path);
    if (lines === 'outside') {
      this.outside++;
      return undefined;
    }
    const text = lines?.[loc.range.start.line - 1];
    return { workspace_id: where.ws.id, path: where.rel, range: loc.range, ...(text !== undefined ? { context: bounded(text.trim(), LANGUAGE_LIMITS.maxContextChars) } : {}) };
  }

  /** Maps a list in order, keeping at most `max` of those inside; `truncated` when more were inside. */
  async mapAll(locs: readonly EditorLocation[], max: number, withContext = true): Promise<{ locations: LocationView[]; truncated: boolean }> {
    const locations: LocationView[] = [];
    let truncated = false;
    for (const loc of locs) {
      const view = await this.map(loc, withContext);
      if (!view) continue;
      if (locations.length >= max) {
        truncated = true;
        continue;
      }
      locations.push(view);
    }
    return { locations, truncated };
  }
}

export function boundedText(text: string, max: number): { text: string; truncated: boolean } {
  return text.length <= max ? { text, truncated: false } : { text: text.slice(0, max), truncated: true };
}

/** A location as text that sorts by path and position (and tells every distinct location apart). */
export function locationKey(l: EditorLocation): string {
  return `${l.path ?? ''}\0${String(l.range.start.line).padStart(9, '0')}:${String(l.range.start.character).padStart(9, '0')}:${l.range.end.line}:${l.range.end.character}`;
}

/** Sorts locations by workspace, path and position, and drops exact duplicates. */
export function sortLocations(locs: readonly EditorLocation[]): EditorLocation[] {
  const key = locationKey;
  const seen = new Set<string>();
  return [...locs]
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0))
    .filter((l) => {
      const k = key(l);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
}
