/**
 * Content search for the core (`search` tool). The engine is ripgrep: in the editor the copy VS Code itself ships
 * (found under its application root), in plain-Node hosts one given explicitly. The adapter spawns it with an
 * argument array (never a shell) in the verified workspace root and streams its JSON output; the editor layer
 * supplies the exclude and ignore-file settings VS Code's own search uses for that folder.
 */

/** The editor's search settings for one folder, as VS Code's search reads them. */
export interface SearchSettings {
  /** `files.exclude` and `search.exclude` globs set to true (root-relative, VS Code's glob dialect). */
  readonly excludes: readonly string[];
  /** `search.useIgnoreFiles`: honour `.gitignore`, `.ignore` and `.rgignore`. */
  readonly useIgnoreFiles: boolean;
  /** `search.useParentIgnoreFiles`: also those of the folders above the root. */
  readonly useParentIgnoreFiles: boolean;
  /** `search.followSymlinks` as set. Reported only: CodeSpace never follows links (they may lead outside). */
  readonly followSymlinks: boolean;
}

/** The defaults of VS Code 1.100 (files.exclude + search.exclude), for hosts without an editor. */
export const DEFAULT_SEARCH_SETTINGS: SearchSettings = {
  excludes: ['**/.git', '**/.svn', '**/.hg', '**/.DS_Store', '**/Thumbs.db', '**/node_modules', '**/bower_components', '**/*.code-search'],
  useIgnoreFiles: true,
  useParentIgnoreFiles: false,
  followSymlinks: true,
};

export interface ContentSearchRequest {
  /** The workspace root's real path: the engine's working folder, the only place it looks. */
  readonly root: string;
  readonly query: string;
  /** Query is a regular expression (Rust regex syntax); otherwise a literal. */
  readonly regex: boolean;
  readonly caseSensitive: boolean;
  /** Root-relative globs a file must match (any of them); empty: every file. */
  readonly include: readonly string[];
  /** Root-relative globs to leave out, on top of the settings' excludes. */
  readonly exclude: readonly string[];
  readonly settings: SearchSettings;
  /** Matching lines to collect; the engine is stopped as soon as one more is seen (so `truncated` is exact). */
  readonly maxResults: number;
  /** Lines of context before and after each match. */
  readonly contextLines: number;
  /** Most characters kept of one line (match or context); longer lines are cut and flagged. */
  readonly maxLineChars: number;
  /** Most bytes of line text kept in total; past it the search stops, truncated. */
  readonly maxTotalBytes: number;
  /** Wall-clock bound: past it the engine is killed and what was found is returned, `timed_out`. */
  readonly timeoutMs: number;
  /** Aborted when the client cancels: the engine is killed at once. */
  readonly signal: AbortSignal;
  /** Called as matches arrive (throttled by the caller). */
  readonly onMatches?: (matches: number, files: number) => void;
}

export interface ContextLine {
  readonly line: number;
  readonly text: string;
}

export interface ContentMatch {
  /** Root-relative, `/`-separated. */
  readonly path: string;
  /** 1-based line number. */
  readonly line: number;
  /** 1-based column of the first match on the line, in UTF-16 code units (as editors and `read` count). */
  readonly column: number;
  /** Column just past that match. */
  readonly end_column: number;
  /** The line without its terminator, at most maxLineChars characters. */
  readonly text: string;
  /** Present when the line was cut to maxLineChars. */
  readonly text_truncated?: true;
  readonly before?: ContextLine[];
  readonly after?: ContextLine[];
}

export interface ContentSearchResult {
  readonly matches: ContentMatch[];
  /** There is more: max results, the byte budget or the timeout stopped the search. */
  readonly truncated: boolean;
  readonly timed_out: boolean;
  /** Messages of the engine about files it could not read (permissions, vanished), at most a few. */
  readonly errors: string[];
  /** Matching lines left out because their JSON record was over the engine adapter's line bound. */
  readonly skipped_long_lines: number;
  /** Files with matches left out because their names are not valid UTF-8 (lossy form); the tool counts them. */
  readonly unrepresentable?: readonly string[];
}

/** Which engine runs, for workspace_info and the search result. */
export interface SearchEngineInfo {
  readonly available: boolean;
  readonly kind: 'ripgrep';
  /** Where it is: VS Code's bundled copy or the one a plain-Node host was given. */
  readonly path?: string;
  readonly source: 'vscode' | 'explicit' | 'none';
  /** Why it is missing. */
  readonly reason?: string;
}

export interface ContentSearch {
  engine(): SearchEngineInfo;
  /** The editor's search settings for the folder at `root`. */
  settings(root: string): SearchSettings;
  /**
   * Runs one search. Throws ToolError SEARCH_UNAVAILABLE when the engine is missing, INVALID_ARGUMENTS when the
   * engine refuses the pattern (syntax, size), CANCELLED when the signal aborts.
   */
  search(request: ContentSearchRequest): Promise<ContentSearchResult>;
}

/** No engine: every search fails clearly, never slowly. */
export const NO_CONTENT_SEARCH: ContentSearch = {
  engine: () => ({ available: false, kind: 'ripgrep', source: 'none', reason: 'No ripgrep was configured for this host.' }),
  settings: () => DEFAULT_SEARCH_SETTINGS,
  search: () => Promise.reject(new Error('unreachable: the search tool checks engine().available first')),
};
