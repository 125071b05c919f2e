// A delivery's route to a pull request that is tried before the GitHub CLI: the adapter decides what it is (in the
// editor, the GitHub Pull Requests extension: src/features/works/vscode/pullRequestExtension.ts).

/** What an opener is asked for: the pushed task branch of the repository at `top`, against `base`. */
export interface PullRequestRequest {
  readonly top: string;
  readonly remote: string;
  readonly branch: string;
  readonly base: string;
  readonly title: string;
  readonly body: string;
}

/**
 * A route to a branch's pull request tried before `gh` (in the editor: the GitHub Pull Requests extension). `find`
 * and `open` throw when the route cannot serve the repository; the delivery then falls back to `gh`.
 */
export interface PullRequestOpener {
  /** Who it is, for notes ("the GitHub Pull Requests extension"). */
  readonly name: string;
  /** False when the route is not there at all (not installed): it is passed over without a note. */
  present(): boolean;
  /** The URL of the branch's pull request when one exists, else undefined. */
  find(req: PullRequestRequest): Promise<string | undefined>;
  /**
   * Opens the pull request: `url` when it was created, `pending` (what the developer does, and where) when it was left
   * to the developer in a view; undefined when nothing was done.
   */
  open(req: PullRequestRequest): Promise<{ readonly url: string } | { readonly pending: string } | undefined>;
}
