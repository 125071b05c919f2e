/**
 * Path globs in the editor's dialect: `*` and `?` stay inside one path segment, `**` spans segments,
 * `{a,b}` alternates, `[abc]` is a class. A pattern without `/` matches at the root only (`*.ts`); use
 * `**\/*.ts` for every folder, as in VS Code's `workspace.findFiles`.
 */
export function globToRegExp(pattern: string): RegExp {
  let re = '';
  let i = 0;
  let braceDepth = 0;
  while (i < pattern.length) {
    const c = pattern[i] as string;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        const atSegmentStart = i === 0 || pattern[i - 1] === '/';
        const atSegmentEnd = i + 2 === pattern.length || pattern[i + 2] === '/';
        if (atSegmentStart && atSegmentEnd) {
          if (pattern[i + 2] === '/') {
            re += '(?:[^/]+/)*';
            i += 3;
          } else {
            re += '.*';
            i += 2;
          }
          continue;
        }
        re += '[^/]*';
        i += 2;
        continue;
      }
      re += '[^/]*';
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '{') {
      braceDepth++;
      re += '(?:';
    } else if (c === '}' && braceDepth > 0) {
      braceDepth--;
      re += ')';
    } else if (c === ',' && braceDepth > 0) {
      re += '|';
    } else if (c === '[') {
      const close = pattern.indexOf(']', i + 1);
      if (close === -1) {
        re += '\\[';
      } else {
        let body = pattern.slice(i + 1, close).replace(/\\/g, '\\\\');
        if (body.startsWith('!')) body = '^' + body.slice(1);
        re += `[${body}]`;
        i = close;
      }
    } else {
      re += c.replace(/[.+^$()|\\/]/g, (m) => '\\' + m);
    }
    i++;
  }
  return new RegExp(`^${re}$`);
}

/** Default exclusions of the editor's `files.exclude`, used where the editor's own settings are not at hand. */
export const DEFAULT_EXCLUDES = ['**/.git', '**/.svn', '**/.hg', '**/CVS', '**/.DS_Store', '**/Thumbs.db'];
