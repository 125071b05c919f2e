/** Variables of the editor's own process that must not leak into agents' commands. */
const HOST_ONLY = /^(VSCODE_|ELECTRON_|CODESPACE_)/;

/**
 * The environment children start from: the host's, without the editor's internal variables, with the operator's
 * overrides applied (a string sets, `null` removes). Secrets are removed later by the supervisor as well.
 */
export function childBaseEnvironment(host: Readonly<Record<string, string | undefined>>, overrides: Readonly<Record<string, string | null>>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(host)) if (v !== undefined && !HOST_ONLY.test(k)) env[k] = v;
  for (const [k, v] of Object.entries(overrides)) {
    if (v === null) delete env[k];
    else env[k] = v;
  }
  return env;
}
