// The GitHub Pull Requests extension (GitHub.vscode-pull-request-github) as the delivery's first route to a pull
// request. Read in microsoft/vscode-pull-request-github at commit 849821a34981608ca9705439e458ffe5527fe480:
// - its exported API (src/api/api.d.ts, returned by `activate` in src/extension.ts) creates no pull request. It has
//   `getGitProvider(uri)` (the git provider whose repositories contain uri, each with `rootUri` and `state.HEAD`) and
//   `getRepositoryDescription(uri)` (the GitHub repository of the folder holding uri and, as `pullRequest`, the pull
//   request of its checked-out branch: src/api/api1.ts);
// - the command `pr.create` (src/commands.ts) takes `{ repoPath, compareBranch }` and opens the extension's "Create
//   Pull Request" view for that branch (src/view/createPullRequestHelper.ts): the developer checks base, title and
//   description there and clicks Create. Given a path it has no repository at, it asks which repository instead, so
//   it is called only for a repository the extension sees at that root with HEAD on the task branch.
// So a delivery finds the branch's pull request through the API and, when there is none, opens the view prefilled with
// the task branch; delivering again finds the pull request the developer created there, and never opens a second.
import * as vscode from 'vscode';
import type { PullRequestOpener, PullRequestRequest } from '../common/pullRequestOpener';

export const PULL_REQUEST_EXTENSION_ID = 'GitHub.vscode-pull-request-github';
const NAME = 'the GitHub Pull Requests extension';

/** The members of the extension's API used here, with its names and shapes. */
interface PrRepository {
  readonly rootUri: vscode.Uri;
  readonly state: { readonly HEAD?: { readonly name?: string } };
}

interface PrApi {
  getGitProvider(uri: vscode.Uri): { readonly repositories: readonly PrRepository[] } | undefined;
  getRepositoryDescription(uri: vscode.Uri): Promise<{ readonly owner: string; readonly repositoryName: string; readonly defaultBranch: string; readonly pullRequest?: { readonly url: string; readonly number: number } } | undefined>;
}

function isPrApi(x: unknown): x is PrApi {
  const o = x as Partial<Record<keyof PrApi, unknown>> | undefined;
  return typeof o === 'object' && o !== null && typeof o.getGitProvider === 'function' && typeof o.getRepositoryDescription === 'function';
}

/** The extension's API when it serves the repository at `top` with HEAD on `branch`; throws why not. */
async function serving(req: PullRequestRequest): Promise<{ api: PrApi; root: vscode.Uri }> {
  const ext = vscode.extensions.getExtension<unknown>(PULL_REQUEST_EXTENSION_ID);
  if (!ext) throw new Error('it is not installed');
  const api = ext.isActive ? ext.exports : await ext.activate();
  if (!isPrApi(api)) throw new Error('its API has no getGitProvider and getRepositoryDescription');
  const root = vscode.Uri.file(req.top);
  const repo = api.getGitProvider(root)?.repositories.find((r) => r.rootUri.toString() === root.toString());
  if (!repo) throw new Error(`it has no repository at ${req.top}`);
  const head = repo.state.HEAD?.name;
  if (head !== req.branch) throw new Error(`it sees ${req.top} on ${head ?? 'no branch'}, not on ${req.branch}`);
  return { api, root };
}

/** The delivery's pull request opener through the GitHub Pull Requests extension, when it is installed. */
export function pullRequestExtensionOpener(): PullRequestOpener {
  return {
    name: NAME,
    present: () => vscode.extensions.getExtension(PULL_REQUEST_EXTENSION_ID) !== undefined,
    find: async (req) => {
      const { api, root } = await serving(req);
      const described = await api.getRepositoryDescription(root);
      if (!described) throw new Error(`it knows no GitHub repository for ${req.top} (not signed in to GitHub, or no GitHub remote)`);
      return described.pullRequest?.url;
    },
    open: async (req) => {
      const { root } = await serving(req);
      await vscode.commands.executeCommand('pr.create', { repoPath: root.fsPath, compareBranch: req.branch });
      return { pending: `opened in ${NAME}'s Create Pull Request view for ${req.branch} (base ${req.base}): create it there; delivering again records it` };
    },
  };
}
