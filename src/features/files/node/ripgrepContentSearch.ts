import * as fs from 'node:fs';
import type { ContentSearch, ContentSearchRequest, ContentSearchResult, SearchEngineInfo, SearchSettings } from '../common/contentSearch';
import { DEFAULT_SEARCH_SETTINGS } from '../common/contentSearch';
import { ToolError } from '../../../base/errors';
import { RipgrepSearch } from './ripgrepSearch';

/** Whether `p` is an executable regular file (checked once per engine, at start). */
export function isExecutableFile(p: string): boolean {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Content search on a ripgrep binary at a known path: VS Code's own copy (src/features/files/vscode) or, in plain-Node
 * hosts (unit tests, the bench), one given explicitly such as the system's /usr/bin/rg. A missing binary makes
 * every search fail with SEARCH_UNAVAILABLE at once: there is no slow fallback.
 */
export class RipgrepContentSearch implements ContentSearch {
  private readonly rg: RipgrepSearch | undefined;
  private readonly info: SearchEngineInfo;

  constructor(options: {
    /** The binary to run; or, without it, the first executable of `candidates` (VS Code's possible locations). */
    readonly rgPath?: string | undefined;
    readonly candidates?: readonly string[];
    readonly source: 'vscode' | 'explicit';
    /** Settings per folder root (default: VS Code's defaults). */
    readonly settings?: (root: string) => SearchSettings;
    /** Why there is no path, when rgPath is undefined. */
    readonly missingReason?: string;
    /** Caps the request's time bound (tests of the timeout path). */
    readonly maxTimeoutMs?: number;
  }) {
    this.maxTimeoutMs = options.maxTimeoutMs ?? Infinity;
    this.settingsOf = options.settings ?? (() => DEFAULT_SEARCH_SETTINGS);
    const rgPath = options.rgPath ?? options.candidates?.find(isExecutableFile);
    if (rgPath !== undefined && isExecutableFile(rgPath)) {
      this.rg = new RipgrepSearch(rgPath);
      this.info = { available: true, kind: 'ripgrep', path: rgPath, source: options.source };
    } else {
      const reason = rgPath === undefined ? (options.missingReason ?? 'No ripgrep path was given.') : `No executable ripgrep at ${rgPath}.`;
      this.info = { available: false, kind: 'ripgrep', source: 'none', reason };
    }
  }

  private readonly settingsOf: (root: string) => SearchSettings;
  private readonly maxTimeoutMs: number;

  /** How the latest search's rg ended (diagnostics and tests). */
  get lastExit(): RipgrepSearch['lastExit'] {
    return this.rg?.lastExit;
  }

  engine(): SearchEngineInfo {
    return this.info;
  }

  settings(root: string): SearchSettings {
    return this.settingsOf(root);
  }

  search(request: ContentSearchRequest): Promise<ContentSearchResult> {
    if (!this.rg) {
      return Promise.reject(new ToolError('SEARCH_UNAVAILABLE', `Content search is unavailable: ${this.info.reason ?? 'no ripgrep'}`, { hint: 'The developer can check the CodeSpace log; use find and read meanwhile.' }));
    }
    return this.rg.run({ ...request, timeoutMs: Math.min(request.timeoutMs, this.maxTimeoutMs) });
  }
}
