import type { Journal, JournalLoadIssue, JournalRecord } from '../../base/journal';
import { sameLines } from '../../base/journalStore';
import { SerialQueue } from '../../base/serialQueue';

/**
 * One durable ledger file for every record kind: patch operations, approval holds and commands each see their own
 * section of one journal (by line type) through the ordinary Journal interface, so each owner loads, appends and
 * compacts its records as if the file were its own. A section's rewrite replaces only that section's lines and
 * keeps every other line, including kinds no section claims (a newer version's, kept verbatim).
 *
 * Every operation of every section runs in one queue, so a rewrite (load, filter, replace) never races another
 * section's append.
 */
export class SharedJournal {
  private readonly queue = new SerialQueue();
  private issues: readonly JournalLoadIssue[] = [];

  constructor(private readonly inner: Journal) {}

  /** The section holding lines whose `type` is one of `types`. */
  section(types: readonly string[]): Journal {
    const mine = (r: JournalRecord): boolean => types.includes(r.type as string);
    const issues = (): readonly JournalLoadIssue[] => this.issues;
    return {
      load: () => this.run(async () => (await this.loadAll()).filter(mine)),
      append: (record) => this.run(() => this.inner.append(record)),
      rewrite: (records) =>
        this.run(async () => {
          const all = await this.loadAll();
          const current = all.filter(mine);
          // The section already holds exactly these lines (an owner compacting at open with nothing to drop): the
          // file stays as it is, without a rewrite's two fsyncs. A file with a torn or unreadable line is rewritten.
          if (this.issues.length === 0 && sameLines(current, records)) return;
          await this.inner.rewrite([...all.filter((r) => !mine(r)), ...records]);
        }),
      get lastLoadIssues() {
        return issues();
      },
      // The file belongs to the SharedJournal's owner; a section only waits for its queued work.
      close: () => this.run(async () => undefined),
    };
  }

  /** Waits for queued work, then closes the file. */
  async close(): Promise<void> {
    await this.run(async () => undefined);
    await this.inner.close();
  }

  private async loadAll(): Promise<JournalRecord[]> {
    const all = await this.inner.load();
    this.issues = this.inner.lastLoadIssues;
    return all;
  }

  private run<T>(fn: () => Promise<T>): Promise<T> {
    return this.queue.run(fn);
  }
}
