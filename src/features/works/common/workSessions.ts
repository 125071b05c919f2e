/**
 * Which work each MCP session has open (opened or adopted). Sessions end with a reload, works do not: a new session
 * adopts a work by naming it. A session's entry for a work that is no longer open is dropped when read.
 */
export class WorkSessions {
  /** MCP session id → the work it has open. */
  private readonly sessions = new Map<string, string>();

  /** `isOpen`: whether the work exists and is open. */
  constructor(private readonly isOpen: (workId: string) => boolean) {}

  /** The session has the work open from now on (it opened it). */
  set(session: string, workId: string): void {
    this.sessions.set(session, workId);
  }

  /** The work a session has open, if it is still open. */
  workOf(session: string | undefined): string | undefined {
    if (session === undefined) return undefined;
    const id = this.sessions.get(session);
    if (id !== undefined && !this.isOpen(id)) {
      this.sessions.delete(session);
      return undefined;
    }
    return id;
  }

  /** A session adopts an open work by naming it (after a reload, a new session takes the work on). */
  adopt(session: string | undefined, workId: string): void {
    if (session === undefined) return;
    if (this.isOpen(workId)) this.sessions.set(session, workId);
  }

  /** Forgets a closed session; its works stay. */
  end(session: string): void {
    this.sessions.delete(session);
  }

  /** The work closed: no session has it open any more. */
  closeWork(workId: string): void {
    for (const [s, id] of this.sessions) if (id === workId) this.sessions.delete(s);
  }
}
