import type { Disposable } from '../../../base/disposable';
import type { EditorDiagnostic, LanguageFeatures } from './languageFeatures';
import type { Logger } from '../../../base/logger';
import { describeErrorWithStack } from '../../../base/describeError';

/** One file an edit wrote, at the content version the edit left it in. */
export interface FollowedFile {
  readonly workspace_id: string;
  /** Relative to the workspace root, with `/`. */
  readonly path: string;
  readonly abs: string;
  /** The version (sha256 of the bytes) the edit wrote. */
  readonly version: string;
}

/** What the language servers reported about one edited file, for the version the edit wrote. */
export interface FileReport extends FollowedFile {
  /** The servers re-reported the file and went quiet within the limit; false for an early report or at the limit. */
  readonly settled: boolean;
  readonly diagnostics: readonly EditorDiagnostic[];
}

export interface DiagnosticsFeedOptions {
  readonly language: LanguageFeatures | undefined;
  /** How long one round follows its files at most (`codespace.diagnostics.settleMs`); 0: edits are not followed. */
  readonly settleMs: () => number;
  /** The file's version on disk now (undefined when it is gone or unreadable). */
  readonly versionOf: (workspaceId: string, rel: string) => Promise<string | undefined>;
  readonly logger: Logger;
}

/** Most files one round follows (each may need a background tab in the editor). */
export const MAX_FOLLOWED_FILES = 20;
/**
 * Largest file an edit has followed. Checking a file in the editor copies all of its text into the extension host and
 * on to the language server: for a 5 MB TypeScript file that held up the extension host for over a second (measured
 * with `npm run bench:editor`, patch group), after the edit had answered. A larger file is checked only on request.
 */
export const MAX_FOLLOWED_FILE_BYTES = 1024 * 1024;
/** Sessions whose undelivered reports are kept, and reports kept per session; the oldest go first. */
const MAX_SESSIONS = 256;
const MAX_REPORTS_PER_SESSION = 200;

/**
 * Diagnostics that never hold up an edit. An edit answers at once; the files it wrote are handed to the feed, which
 * asks the language servers about them in the background (one round at a time, every file edited meanwhile in the
 * next round) and keeps each file's report for the sessions that edited it, until the agent's next result carries
 * it (`take`) or `diagnostics` asks for it (`await`).
 *
 * The first report a server makes on a file's new content is handed on at once (`settled: false`), without waiting for
 * the round's quiet period; the settled report follows when it says something else.
 *
 * Reports are tagged with the version the edit wrote. A report is kept only while the file on disk still has that
 * version: a file edited again is followed again, and the report about the older content is dropped, however late
 * the language server sends it. Files no language server reports on (`reportsOn`) are never followed.
 */
export class DiagnosticsFeed implements Disposable {
  /** Waiting for the next round, by absolute path (a newer edit replaces an older one). */
  private readonly queued = new Map<string, { file: FollowedFile; sessions: Set<string> }>();
  /** In the round that runs now. */
  private readonly inFlight = new Map<string, { file: FollowedFile; sessions: Set<string> }>();
  /** Undelivered reports by session, then by absolute path. */
  private readonly undelivered = new Map<string, Map<string, FileReport>>();
  /** The last report of each file, for `await` callers without a session. */
  private readonly latest = new Map<string, FileReport>();
  private readonly waiters = new Set<() => void>();
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;

  constructor(private readonly options: DiagnosticsFeedOptions) {}

  /** Whether an edit of this file is followed: the editor is there, following is on, and a server reports on it. */
  follows(abs: string): boolean {
    const { language } = this.options;
    return language !== undefined && this.options.settleMs() > 0 && language.reportsOn(abs);
  }

  /** Hands the files an edit wrote to the feed (those it follows), for this session. Returns at once. */
  follow(session: string | undefined, files: readonly FollowedFile[]): FollowedFile[] {
    const followed = files.filter((f) => this.follows(f.abs));
    if (followed.length === 0 || this.abort.signal.aborted) return followed;
    this.enqueue(session, followed);
    return followed;
  }

  /** Queues the files for the next round (replacing an older report of each) and starts the rounds if idle. */
  private enqueue(session: string | undefined, files: readonly FollowedFile[]): void {
    for (const file of files) {
      const sessions = new Set<string>([...(this.queued.get(file.abs)?.sessions ?? []), ...(this.inFlight.get(file.abs)?.sessions ?? [])]);
      if (session !== undefined) sessions.add(session);
      this.queued.set(file.abs, { file, sessions });
      // A report of this path's older content is no longer news to anyone.
      this.latest.delete(file.abs);
      for (const reports of this.undelivered.values()) reports.delete(file.abs);
    }
    // The round starts after the edit's answer has gone out: none of its work is the edit's to pay.
    this.running ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.loop())
      .finally(() => {
        this.running = undefined;
      });
  }

  /** Whether the file waits for or is in a round. */
  pending(abs: string): boolean {
    return this.queued.has(abs) || this.inFlight.has(abs);
  }

  /** Takes every report not yet delivered to this session (they are delivered once). */
  take(session: string | undefined): FileReport[] {
    if (session === undefined) return [];
    const reports = this.undelivered.get(session);
    if (!reports || reports.size === 0) return [];
    this.undelivered.delete(session);
    return [...reports.values()];
  }

  /**
   * For `diagnostics`: waits (at most `timeoutMs`) until none of these files is followed any more, and returns the
   * report of each followed one (taking it from the session's undelivered reports), or 'pending' for one still
   * followed when the time was up. Files the feed has not followed are absent from the answer.
   */
  async await(session: string | undefined, abs: readonly string[], timeoutMs: number, signal?: AbortSignal): Promise<Map<string, FileReport | 'pending'>> {
    if (timeoutMs > 0 && !signal?.aborted && !this.abort.signal.aborted) {
      // A report that did not settle (the servers had not reported on the new content in time) is followed again for
      // a caller who can wait: asking again gets a new check, not the same unsettled answer at once.
      const stale = abs.map((a) => this.latest.get(a)).filter((r): r is FileReport => r !== undefined && !r.settled && !this.pending(r.abs));
      if (stale.length > 0) this.enqueue(session, stale.map(({ workspace_id, path, abs: a, version }) => ({ workspace_id, path, abs: a, version })));
    }
    const watched = abs.filter((a) => this.pending(a) || this.latest.has(a));
    const busy = (): boolean => watched.some((a) => this.pending(a));
    if (busy() && timeoutMs > 0 && !signal?.aborted) {
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(timer);
          this.waiters.delete(check);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        const check = (): void => {
          if (!busy()) done();
        };
        const timer = setTimeout(done, timeoutMs);
        this.waiters.add(check);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    const out = new Map<string, FileReport | 'pending'>();
    const mine = session !== undefined ? this.undelivered.get(session) : undefined;
    for (const a of watched) {
      if (this.pending(a)) {
        out.set(a, 'pending');
        continue;
      }
      const report = mine?.get(a) ?? this.latest.get(a);
      mine?.delete(a);
      // Only while the file still holds the version the report is about (the developer may have edited it since).
      if (report && (await this.options.versionOf(report.workspace_id, report.path).catch(() => undefined)) === report.version) out.set(a, report);
    }
    return out;
  }

  dispose(): void {
    this.abort.abort();
    this.queued.clear();
    this.wake();
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }

  private async loop(): Promise<void> {
    while (this.queued.size > 0 && !this.abort.signal.aborted) {
      const batch = [...this.queued.entries()].slice(0, MAX_FOLLOWED_FILES);
      for (const [abs, entry] of batch) {
        this.queued.delete(abs);
        this.inFlight.set(abs, entry);
      }
      try {
        await this.round(batch.map(([, e]) => e));
      } finally {
        for (const [abs] of batch) this.inFlight.delete(abs);
        this.wake();
      }
    }
  }

  private async round(entries: readonly { file: FollowedFile; sessions: Set<string> }[]): Promise<void> {
    const { language, logger } = this.options;
    if (!language) return;
    /** The early report each file's sessions were handed in this round; none once the round has its answer. */
    const early = { reports: new Map<string, FileReport>(), closed: false };
    let result: { settled: boolean; files: readonly { path: string; diagnostics: readonly EditorDiagnostic[] }[] };
    try {
      result = await language.settle(
        entries.map((e) => e.file.abs),
        {
          timeoutMs: Math.max(0, this.options.settleMs()),
          requireChange: true,
          signal: this.abort.signal,
          onReport: (abs, diagnostics) => {
            const entry = entries.find((e) => e.file.abs === abs);
            if (entry) void this.early(entry, diagnostics, early);
          },
        },
      );
    } catch (err) {
      logger.error('[diagnostics] following an edit failed', describeErrorWithStack(err));
      return;
    } finally {
      early.closed = true;
    }
    for (const { file, sessions } of entries) {
      // Edited again meanwhile: the next round follows the newer content; this report is about the older one.
      if (this.queued.has(file.abs)) continue;
      const now = await this.options.versionOf(file.workspace_id, file.path).catch(() => undefined);
      if (now !== file.version || this.queued.has(file.abs)) {
        logger.debug(`[diagnostics] ${file.path} changed since the edit; its report is dropped`);
        continue;
      }
      const report: FileReport = { ...file, settled: result.settled, diagnostics: result.files.find((f) => f.path === file.abs)?.diagnostics ?? [] };
      this.remember(this.latest, file.abs, report, 4 * MAX_REPORTS_PER_SESSION);
      const before = early.reports.get(file.abs);
      for (const session of sessions) {
        // A session that already took the early report gets the settled one only when it says something else.
        const taken = before !== undefined && this.undelivered.get(session)?.get(file.abs) !== before;
        if (taken && report.settled && sameDiagnostics(before.diagnostics, report.diagnostics)) continue;
        this.deliver(session, report);
      }
    }
  }

  /**
   * A server reported on a file's new content before the round settled: the sessions get what is known now on their
   * next answer (`settled: false`), without waiting for the quiet period; the settled report follows if it differs.
   */
  private async early(entry: { file: FollowedFile; sessions: Set<string> }, diagnostics: readonly EditorDiagnostic[], early: { reports: Map<string, FileReport>; closed: boolean }): Promise<void> {
    const { file, sessions } = entry;
    if (early.closed || this.queued.has(file.abs)) return;
    const now = await this.options.versionOf(file.workspace_id, file.path).catch(() => undefined);
    // Edited again, or the round has its answer meanwhile (its report is the one to deliver).
    if (now !== file.version || this.queued.has(file.abs) || early.closed) return;
    const report: FileReport = { ...file, settled: false, diagnostics };
    early.reports.set(file.abs, report);
    for (const session of sessions) this.deliver(session, report);
  }

  private deliver(session: string, report: FileReport): void {
    let reports = this.undelivered.get(session);
    if (!reports) {
      reports = new Map();
      this.remember(this.undelivered, session, reports, MAX_SESSIONS);
    }
    this.remember(reports, report.abs, report, MAX_REPORTS_PER_SESSION);
  }

  /** Sets a key as the newest of a bounded map, dropping the oldest beyond `max`. */
  private remember<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
    map.delete(key);
    map.set(key, value);
    while (map.size > max) map.delete(map.keys().next().value as K);
  }
}

/** Whether two reports list the same diagnostics, in the same order. */
function sameDiagnostics(a: readonly EditorDiagnostic[], b: readonly EditorDiagnostic[]): boolean {
  return a.length === b.length && a.every((d, i) => JSON.stringify(d) === JSON.stringify(b[i]));
}
