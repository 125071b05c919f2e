/**
 * The text of a thrown value for a log line or an error message: an Error's message, anything else as a string.
 * Every `catch` that turns an error into words goes through here, so the words are the same everywhere.
 */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The same, with the stack when there is one: for the log, where the place of a failure matters. */
export function describeErrorWithStack(err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err);
}

/** A thrown value as an Error (a rejection's reason must be one). */
export function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
