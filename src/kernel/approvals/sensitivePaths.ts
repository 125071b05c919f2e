/**
 * Paths through which an agent could raise its own rights: editor and task settings (.vscode/), git hooks and
 * config (.git/), CI workflows (.github/workflows/), environment files (.env*), and other agents' configuration
 * (.codex/, .claude/, .cursor/). A patch touching one is held for the reviewer under approvals `sensitive`.
 *
 * Matched at any depth (a nested repository or package has its own .git and .vscode) and without regard to case
 * (on a case-insensitive disk `.VSCode/settings.json` is `.vscode/settings.json`).
 */
const SENSITIVE_FOLDERS = new Set(['.vscode', '.git', '.codex', '.claude', '.cursor']);

export function isSensitivePath(relPath: string): boolean {
  const parts = relPath.toLowerCase().split('/').filter((p) => p !== '' && p !== '.');
  for (const [i, part] of parts.entries()) {
    const last = i === parts.length - 1;
    if (!last && SENSITIVE_FOLDERS.has(part)) return true;
    // The folder itself named as a file (".git" is a file in a worktree; writing it redirects the repository).
    if (last && SENSITIVE_FOLDERS.has(part)) return true;
    if (!last && part === '.github' && parts[i + 1] === 'workflows') return true;
    if (last && part.startsWith('.env')) return true;
  }
  return false;
}

/** The sensitive ones among `paths`, in order, without repeats. */
export function sensitivePaths(paths: readonly string[]): string[] {
  return [...new Set(paths.filter(isSensitivePath))];
}
