/**
 * Whether agents' commands run in a sandbox, as workspace_info reports it. The adapter (src/features/processes/node/sandbox) decides
 * each command from the same settings and probe result, so what is reported is what the next command gets.
 */
export interface IsolationStatus {
  readonly command_sandbox: {
    readonly enabled: boolean;
    readonly kind: 'bubblewrap' | 'none';
    /** Why there is no sandbox (setting off, bwrap missing, user namespaces forbidden...). */
    readonly reason?: string;
  };
  /**
   * `blocked` / `allowed` inside the sandbox, or `domains`: only the allowed domains, through the network proxy;
   * `unknown` without a sandbox.
   */
  readonly network: 'blocked' | 'allowed' | 'domains' | 'unknown';
  /** With `domains`: the allow-list as applied (`name` or `*.name` patterns). */
  readonly allowed_domains?: readonly string[];
  /** Isolation is required but unavailable: every command is refused (EXEC_DISABLED). */
  readonly refusing: boolean;
  /**
   * With a sandbox and a workspace root asked about: the workspace entries the next command cannot change, relative
   * to the root. `read-only-dir` / `read-only-file`: exists, mounted read-only; `masked-missing`: does not exist and
   * cannot be created; `writable-pinned`: writable but cannot be moved or removed (`.git` when commands may commit).
   */
  readonly protected?: readonly ProtectedPath[];
  /** With a sandbox and a workspace root asked about: whether the sandbox could establish all it protects there. */
  readonly protection?: ProtectionState;
  /** With a sandbox: whether a repository a command creates could make the editor's git run what it planted. */
  readonly new_repositories?: NewRepositoryExposure;
  /** With a sandbox: what commands may write in `.git` (`codespace.exec.gitWrites`). */
  readonly git_writes?: 'none' | 'commit';
  /** With a sandbox: the bound on processes of one command tree, or null with the reason there is none. */
  readonly max_processes?: { readonly limit: number | null; readonly reason?: string };
  /**
   * With a sandbox: whether commands are kept from opening Unix sockets (`codespace.exec.unixSockets`): `blocked`
   * with `method` `seccomp`: `socket(AF_UNIX)` fails with EPERM, so no socket outside (file or abstract) can be
   * reached; otherwise why not (the setting is `allow`, or the filter cannot be applied and commands are refused).
   */
  readonly unix_sockets?: { readonly blocked: boolean; readonly method?: 'seccomp'; readonly reason?: string };
}

/**
 * Whether the protection listed in `protected` is all there is to it. `gaps`: each reason it is not (the nested
 * repository scan reached a bound or met a folder it cannot read, a protected file has other names...).
 * `commands`: what the next command gets; `refused` unless `codespace.exec.incompleteProtection` is `protectKnown`.
 */
export interface ProtectionState {
  readonly complete: boolean;
  readonly gaps: readonly string[];
  readonly on_incomplete: 'refuse' | 'protectKnown';
  readonly commands: 'run' | 'refused' | 'run-protecting-known';
}

/**
 * The editor's git and repositories that did not exist when a command started (`git init sub`, a `.git` file, a
 * submodule listed in `.gitmodules`): `closed` when VS Code's git extension opens none of them by itself
 * (`git.autoRepositoryDetection` false and `git.detectSubmodules` false); `open` otherwise, with the settings that
 * open them. `remaining`: what no setting covers.
 */
export interface NewRepositoryExposure {
  readonly editor_git: 'closed' | 'open';
  readonly settings: Readonly<Record<string, unknown>>;
  readonly reason?: string;
  readonly remaining: readonly string[];
}

export interface ProtectedPath {
  readonly path: string;
  readonly kind: 'read-only-dir' | 'read-only-file' | 'masked-missing' | 'writable-pinned';
}

export interface CommandIsolation {
  /**
   * The state for the next command (probes the sandbox first when the settings call for one not yet probed); with
   * `root` (a workspace folder's path) also what is protected there.
   */
  status(root?: string): Promise<IsolationStatus>;
}

/** No sandbox at all (plain-Node tests, platforms without one). */
export const NO_ISOLATION: CommandIsolation = {
  status: () => Promise.resolve({ command_sandbox: { enabled: false, kind: 'none', reason: 'Command isolation is off.' }, network: 'unknown', refusing: false }),
};
